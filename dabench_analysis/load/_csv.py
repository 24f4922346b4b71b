# Over 400 lines (<= 500): the one CSV reader (header plan, parse, damaged rows) and its pool.
"""The one CSV reader of the load layer: a file's bytes -> an Arrow table with the catalogue's
column names, numbers parsed, every other cell as written, and the file's structural findings.

What it reads and reports (each finding names the file and the 1-based data row, the header
not counted; rows are CSV records, so a quoted value over several lines is one row):

- the header (:mod:`._header`): a byte-order mark is skipped; an empty file, a blank first
  line, a header that is not UTF-8, looks ';'- or tab-delimited or repeats a name is an error
  for the whole file (:class:`~dabench_analysis.load.RunLoadError`);
- a header line repeated in the data (``cat a.csv b.csv > c.csv``): the line is dropped, the
  rows after it kept (``repeated_header``);
- a row with too many or too few fields, a truncated last line (``column_count``), a stray
  delimiter at the end of some lines only (``trailing_delimiter``): the row is excluded. When
  every line ends with the delimiter the empty last field is ignored (info). A quote opened in
  a row and never closed (``unclosed_quote``): that row is excluded and the lines the reader
  took as part of its value are read again as rows (:mod:`._unclosed`);
- mixed line endings (CR LF and LF in one file): read, noted (``line_endings``, info);
- bytes that are not UTF-8: decoded with U+FFFD and reported by row and column (``encoding``).

Numbers are parsed by pyarrow's CSV reader (``float64``; the catalogue's rules then check
them); text, flags and enums are kept as written (``large_string``). When a number does not
parse, the whole file is read as text and :mod:`dabench_analysis.load._rules` parses it, so that
each rejected value is reported as written. pyarrow drops the LF of a CR LF pair that falls on
a read-block boundary, even inside a quoted value (apache/arrow#51368; shared pitfall P11):
:func:`block_size` chooses a block size that splits no pair.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from dabench_analysis.load import _unclosed as unclosed
from dabench_analysis.load._findings import Finding, RunLoadError, report_rows
from dabench_analysis.load._header import TEXT, TRAILING, Plan, header_of, plan, read_header
from dabench_analysis.schema import NULL_VALUES
from dabench_analysis.schema._files import FileKind

__all__ = ["BLOCK_SIZE", "Parsed", "block_size", "header_of", "memory_pool", "parse", "plan",
           "read_header"]

#: Files larger than this are parsed by pyarrow in threads of its own when the caller reads
#: one file at a time (smaller ones parse faster in the thread that reads them).
THREADED_BYTES = 1 << 23
#: pyarrow's read-block size: the first tried; the largest; block sizes tried below a start.
BLOCK_SIZE, MAX_BLOCK_SIZE, _SHIFTS = 1 << 22, 1 << 30, 256


@functools.cache
def memory_pool() -> pa.MemoryPool:
    """The pool a load's file bytes, parses and frames come from: pyarrow's jemalloc pool
    (freed pages kept 100 ms) where pyarrow has one, else its default. Under the default,
    mimalloc, the parses of 1.5 M trajectory steps in two threads cost 4-5 s of system time
    (page faults on fresh memory, transparent huge pages among them), under jemalloc 1.3-1.5 s:
    the load took 4.4-5.3 s against 2.1-2.3 s (bench/README, "The loader's memory pool"). The
    pipeline returns its free pages after the rules and after ``to_pandas`` (``release_unused``:
    the peak 20-30 MiB lower over 1.5 M steps).

    Returns
    -------
    pyarrow.MemoryPool
        The same pool on every call (``backend_name`` ``"jemalloc"``, else pyarrow's default).
    """
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc (its Windows wheels)
        return pa.default_memory_pool()
    if pa.default_memory_pool().backend_name != "jemalloc":  # else the user's own setting
        pa.jemalloc_set_decay_ms(100)  # pyarrow's default kept 70-90 MiB more at the peak
    return pool


@dataclass
class Parsed:
    """One file as read: ``table`` (frame names; numbers ``float64`` unless ``as_text``, every
    other cell as written), ``rows`` (1-based data row of each table row) and ``findings``."""

    table: pa.Table
    rows: np.ndarray
    findings: list[Finding]
    as_text: bool = False


def parse(data: bytes, kind: FileKind, columns: tuple[str, ...] | None = None,
          *, name: str | None = None, as_text: bool = False,
          has_cr: bool | None = None, odd_quotes: bool | None = None,
          threads: bool | None = None) -> Parsed:
    """Read one CSV file's bytes (see the module notes for what is read and reported).

    Parameters
    ----------
    data : bytes or memoryview
        The whole file.
    kind : FileKind
        Which file it is (:data:`~dabench_analysis.schema._files.TASKS`, ...).
    columns : tuple of str, optional
        Catalogue columns to read (the required ones always); None for all.
    name : str, optional
        The file's name in findings (default ``kind.file``).
    as_text : bool
        Read every column as text (numbers too).
    has_cr, odd_quotes : bool, optional
        Whether ``data`` holds a CR byte, and whether its quote characters add up to an odd
        number, if the caller knows (:func:`dabench_analysis.load._pipeline.scan`; else counted).
    threads : bool, optional
        Let pyarrow parse in threads of its own. Default: for a file over
        :data:`THREADED_BYTES` (a caller reading several files at once in threads passes False).

    Returns
    -------
    Parsed

    Raises
    ------
    RunLoadError
        When the file as a whole cannot be read (header errors, see :func:`header_of`; a
        file pyarrow cannot parse at all).

    Examples
    --------
    >>> from dabench_analysis.schema._files import TASKS
    >>> p = parse(b"task_id,final_score\\nt1,0.5\\ntask_id,final_score\\nt2,1\\n", TASKS)
    >>> p.as_text, p.table.column("final_score").to_pylist(), p.rows.tolist()
    (True, ['0.5', '1'], [1, 3])
    >>> [f.check for f in p.findings if f.severity != "info"]
    ['repeated_header']
    """
    name = name or kind.file
    header = header_of(data, name)
    pl = plan(tuple(header), kind, columns)
    findings = list(pl.findings)
    odd = odd_quotes if odd_quotes is not None else unclosed.odd(data)
    if threads is None:
        threads = len(data) > THREADED_BYTES
    table, bad, as_text = _read(data, name, pl, header, findings, as_text, (odd, threads))
    keep = np.ones(table.num_rows + len(bad), dtype=bool)
    trailing_all = _bad_rows(bad, keep, name, findings)
    if trailing_all:  # every data line ends with a stray delimiter: read it as an empty field
        table, bad, as_text = _read(data, name, pl, [*header, ""], findings, as_text,
                                    (odd, threads))
        keep = np.ones(table.num_rows + len(bad), dtype=bool)
        _bad_rows(bad, keep, name, findings)
    rows = np.flatnonzero(keep) + 1
    names = table.column_names  # once: a list of 150 names costs 0.1 ms
    table, rows = _repeated_header(table, rows, names, name, findings)
    if TRAILING in names:
        table = _drop_trailing(table, name, findings)
        names = [h for h in names if h != TRAILING]
    if has_cr if has_cr is not None else bytes(data).find(b"\r") >= 0:
        _line_endings(data, name, findings)
    canon = [pl.canon.get(h, h) for h in names]
    return Parsed(table if canon == names else table.rename_columns(canon), rows, findings,
                  as_text)


def block_size(data: bytes | memoryview, start: int = BLOCK_SIZE) -> int:
    """A read-block size for pyarrow's CSV reader that keeps every CR LF pair whole.

    pyarrow reads a file in buffers of ``block_size`` bytes and drops the LF of a CR LF pair
    split by a buffer boundary (file offset ``k * block_size``), even inside a quoted value
    (apache/arrow issue 51368). Tries ``start``, ``start - 1``, ... (256 sizes, two bytes
    read per boundary; two consecutive sizes never split the same pair). If none fits: the
    whole file as one buffer, or a RunLoadError above 1 GiB.

    Examples
    --------
    >>> data = b'a,b\\r\\n"x\\r\\ny",1\\r\\n'  # CR LF at 3-4, 7-8 and 13-14
    >>> block_size(data, 8), block_size(data, 9), block_size(data, 64)
    (6, 9, 64)
    """
    size = len(data)
    if size <= start:
        return start
    for block in range(start, max(start - _SHIFTS, 0), -1):
        if all(data[k - 1:k + 1] != b"\r\n" for k in range(block, size, block)):
            return block
    if size >= MAX_BLOCK_SIZE:  # pragma: no cover - no such file is known
        raise RunLoadError("no read-block size keeps the file's CR LF pairs whole")
    return size + 1  # pragma: no cover - one buffer: no boundary at all


def _read(data, name: str, pl: Plan, header: list[str], findings: list,
          as_text: bool, how: tuple[bool, bool]) -> tuple[pa.Table, list[tuple], bool]:
    """Typed read; the whole file as text when a number does not parse (or ``as_text``); as
    bytes, decoded with U+FFFD and reported, when a cell is not UTF-8. Bad records are
    ``(number, expected, actual, text, (lines, recovered))`` (:mod:`._unclosed`)."""
    names = [h if h != "" else TRAILING for h in header]
    include = [*pl.include, *([TRAILING] if TRAILING in names else [])]
    types = {**pl.types, TRAILING: TEXT}
    try:
        if not as_text:
            return (*_recovered(data, name, names, include, types, how), False)
    except pa.ArrowInvalid as exc:
        if "conversion error" not in str(exc) and "utf8" not in str(exc).lower():
            raise _unparsable(name, exc) from None
    text = dict.fromkeys(include, TEXT)
    try:
        return (*_recovered(data, name, names, include, text, how), True)
    except pa.ArrowInvalid as exc:
        if "utf8" not in str(exc).lower():
            raise _unparsable(name, exc) from None
    table, bad = _arrow(data, name, names, include, dict.fromkeys(include, pa.large_binary()),
                        threads=how[1])
    table = _decode(table, bad, name, findings)
    return table, [(*b, (1, False)) for b in bad], True


def _recovered(data, name: str, names: list[str], include: list[str],
               types: dict, how: tuple[bool, bool]) -> tuple[pa.Table, list[tuple]]:
    """:func:`_arrow`, reading around a quote that never closes (:mod:`._unclosed`). ``how``:
    whether the file's quotes add up to an odd number, and whether pyarrow uses threads."""
    odd, threads = how
    return unclosed.read(data, lambda d: _arrow(d, name, names, include, types, threads=threads),
                         len(names), odd_quotes=odd)


def _unparsable(name: str, exc: Exception) -> RunLoadError:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return RunLoadError(f"{name}: cannot parse: {msg}",
                        [Finding("error", name, None, None, "malformed_csv", msg)])


def _arrow(data, name: str, names: list[str], include: list[str],
           types: dict, *, threads: bool) -> tuple[pa.Table, list[tuple]]:
    """pyarrow's read of ``data``; rows with the wrong number of fields are skipped and
    returned as ``(record number, expected, actual, text)``.

    pyarrow reads fastest when it may cut the file into blocks at any newline
    (``newlines_in_values=False``). That read is exact when it reports nothing: a block cut
    inside a quoted value that spans lines makes the parser stop short ("out of sync with
    the chunker", apache/arrow#39857) or see rows with too few fields. So on either, the file
    is read again with values over several lines allowed, which is what tells a damaged row
    from a value with a line break.
    """
    try:
        table, bad = _arrow_read(data, name, names, include, types, multiline=False,
                                 threads=threads)
        if not bad:
            return table, bad
    except pa.ArrowInvalid as exc:
        if "conversion error" in str(exc) or "utf8" in str(exc).lower():
            raise
    return _arrow_read(data, name, names, include, types, multiline=True, threads=threads)


def _arrow_read(data, name: str, names: list[str], include: list[str], types: dict, *,
                multiline: bool, threads: bool,
                block: int | None = None) -> tuple[pa.Table, list[tuple]]:
    bad: list[tuple] = []
    undecodable: list = []
    block = block_size(data) if block is None else block

    def skip(row) -> str:
        bad.append((row.number, row.expected_columns, row.actual_columns, row.text))
        return "skip"

    try:
        with _undecodable_rows(skip, undecodable):
            table = pacsv.read_csv(
                pa.BufferReader(data),
                read_options=pacsv.ReadOptions(use_threads=threads, block_size=block,
                                               column_names=names, skip_rows=1),
                parse_options=pacsv.ParseOptions(newlines_in_values=multiline,
                                                 invalid_row_handler=skip),
                convert_options=pacsv.ConvertOptions(
                    column_types=types, include_columns=include, strings_can_be_null=False,
                    null_values=list(NULL_VALUES)),  # numbers only
                memory_pool=memory_pool())
    except pa.ArrowInvalid as exc:
        if "straddling object" in str(exc) and block < MAX_BLOCK_SIZE:  # a row over 2 blocks
            larger = block_size(data, min(4 * block, MAX_BLOCK_SIZE))
            if larger >= 2 * block:
                return _arrow_read(data, name, names, include, types, multiline=multiline,
                                   threads=threads, block=larger)
        if undecodable:
            msg = ("a line with the wrong number of fields holds bytes that are not UTF-8 "
                   "(truncated or Latin-1?); re-save the file as UTF-8")
            raise RunLoadError(f"{name}: cannot parse: {msg}",
                               [Finding("error", name, None, None, "encoding", msg)]) from None
        raise
    if bad and threads and any(b[0] is None for b in bad):  # row numbers need one thread
        return _arrow_read(data, name, names, include, types, multiline=multiline,
                           threads=False, block=block)
    return table, bad


def _bad_rows(bad: list[tuple], keep: np.ndarray, name: str, findings: list) -> bool:
    """Report rows with the wrong number of fields and mark them in ``keep`` (data-row
    positions). Returns True when every data row has exactly one stray delimiter at its end."""
    if not bad:
        return False
    trailing = [b for b in bad if b[2] == b[1] + 1 and b[3].rstrip("\r\n").endswith(",")]
    if len(trailing) == len(bad) == len(keep):
        return True
    opened = [b for b in bad if b[4][1]]
    other = [b for b in bad if b not in trailing and b not in opened]
    spans = sorted({b[4][0] for b in other if b[4][0] > 1})
    for group, check, what in (
            (other, "column_count", "; ".join(sorted({f"expected {e} fields, got {a}"
                                                      for _, e, a, *_ in other})[:3])
             + " (truncated or malformed line); row dropped"
             + (f" (one row runs over {', '.join(map(str, spans))} lines of the file: a quote "
                "opened and never closed? all its lines are dropped)" if spans else "")),
            (trailing, "trailing_delimiter", "a stray delimiter at the end of the line (one "
             "field too many); row dropped"),
            (opened, "unclosed_quote", "a quoted value opened in this row is never closed; "
             "the row is dropped and the lines after it are read as rows")):
        if group:
            rows = [b[0] - 1 for b in group]
            keep[np.asarray(rows) - 1] = False
            report_rows(findings, rows, [b[3][:60] for b in group], name, None, check, what)
    return False


def _repeated_header(table: pa.Table, rows: np.ndarray, columns: list[str], name: str,
                     findings: list) -> tuple[pa.Table, np.ndarray]:
    """Drop data rows that repeat the header line: every cell equal to its column's name. A
    column read as a number cannot hold its name (the file is then read as text), so only a
    table read wholly as text is looked at. ``columns``: the table's column names."""
    names = [h for h in columns if h != TRAILING]
    if len(names) < 2 or not all(pa.types.is_large_string(t) for h, t in
                                 zip(columns, table.schema.types, strict=True) if h != TRAILING):
        return table, rows
    hit = pc.equal(table.column(names[0]), names[0])
    if not pc.any(hit).as_py():
        return table, rows
    for h in names[1:]:
        hit = pc.and_(hit, pc.equal(table.column(h), h))
    mask = np.asarray(hit.to_numpy(zero_copy_only=False), dtype=bool)
    if not mask.any():
        return table, rows
    report_rows(findings, (rows[mask]).tolist(), [",".join(table.column_names)[:60]] * int(
        mask.sum()), name, None, "repeated_header",
        "the header line is repeated (concatenated files?); line dropped")
    return table.filter(pa.array(~mask)), rows[~mask]


def _drop_trailing(table: pa.Table, name: str, findings: list) -> pa.Table:
    col = table.column(TRAILING)
    if pc.max(pc.binary_length(col)).as_py() in (None, 0):
        findings.append(Finding("info", name, None, None, "trailing_delimiter",
                                "every line ends with a delimiter; the empty last field is "
                                "ignored"))
    return table.drop_columns([TRAILING])


def _line_endings(data: bytes | memoryview, name: str, findings: list) -> None:
    data = bytes(data)  # a file with a CR only
    crlf, lf = data.count(b"\r\n"), data.count(b"\n")
    if 0 < crlf < lf:
        findings.append(Finding("info", name, None, None, "line_endings",
                                f"mixed line endings ({crlf} CR LF, {lf - crlf} LF); read as "
                                "line ends"))


def _decode(table: pa.Table, bad: list, name: str, findings: list) -> pa.Table:
    """Binary columns -> text; undecodable cells reported and decoded with U+FFFD."""
    arrays = []
    keep = np.ones(table.num_rows + len(bad), dtype=bool)
    keep[[b[0] - 2 for b in bad if b[0]]] = False
    rows = np.flatnonzero(keep) + 1
    for col in table.column_names:
        arr = table.column(col)
        try:
            arrays.append(pc.cast(arr, TEXT))
            continue
        except pa.ArrowInvalid:
            pass
        raw = arr.to_pylist()
        text = [None if b is None else b.decode("utf-8", "replace") for b in raw]
        wrong = [i for i, b in enumerate(raw) if b is not None and "\ufffd" in
                 b.decode("utf-8", "replace")]
        report_rows(findings, rows[wrong].tolist(), [text[i] for i in wrong], name, col,
                    "encoding", "bytes that are not UTF-8 (Latin-1?), replaced by U+FFFD; "
                    "re-save the file as UTF-8")
        arrays.append(pa.chunked_array([pa.array(text, TEXT)]))
    return pa.Table.from_arrays(arrays, names=table.column_names)


_HOOK_LOCK = threading.Lock()
_HOOK_STATE: dict = {"active": 0, "saved": None}
_UNDECODABLE: dict[int, list] = {}  # id(row handler) -> where its decode errors go


def _dispatch_unraisable(unraisable) -> None:
    seen = _UNDECODABLE.get(id(unraisable.object))
    if seen is not None and isinstance(unraisable.exc_value, UnicodeDecodeError):
        seen.append(unraisable.exc_value)
    else:
        (_HOOK_STATE["saved"] or sys.__unraisablehook__)(unraisable)


@contextlib.contextmanager
def _undecodable_rows(handler, seen: list) -> Iterator[None]:
    """pyarrow decodes a malformed row's text before calling the row handler; when that text
    is not UTF-8 the error is 'unraisable'. Collect it in ``seen`` instead of printing a
    traceback. One dispatching hook is installed while any read is active (reads run in
    threads); the previous hook is restored when the last one ends."""
    with _HOOK_LOCK:
        if _HOOK_STATE["active"] == 0:
            _HOOK_STATE["saved"] = sys.unraisablehook
            sys.unraisablehook = _dispatch_unraisable
        _HOOK_STATE["active"] += 1
        _UNDECODABLE[id(handler)] = seen
    try:
        yield
    finally:
        with _HOOK_LOCK:
            del _UNDECODABLE[id(handler)]
            _HOOK_STATE["active"] -= 1
            if _HOOK_STATE["active"] == 0:
                if sys.unraisablehook is _dispatch_unraisable:
                    sys.unraisablehook = _HOOK_STATE["saved"]
                _HOOK_STATE["saved"] = None
