"""CSV reading for the load layer: the bounded header read, pyarrow reads typed from the
catalogue (every quoted value byte for byte, any length and line breaks: :func:`block_size`,
:func:`arrow_read`), and the text fallback for files pyarrow cannot type."""

from __future__ import annotations

import contextlib
import csv
import mmap
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from dabench_analysis.load.coerce import (
    INTEGER_KINDS,
    MAX_COUNT,
    arrow_missing,
    to_integer,
    type_column,
    type_enum,
)
from dabench_analysis.load.findings import Finding, RunLoadError, report
from dabench_analysis.schema import FLAG_FALSE, FLAG_TRUE, NULL_VALUES

_ENUM_TYPE = pa.dictionary(pa.int32(), pa.string())
MAX_TEXT_COLUMNS = 8  #: columns re-read as text one by one, then the whole file is read as text
#: pyarrow's read-block size: the first tried, the largest; block sizes tried below a start.
BLOCK_SIZE, MAX_BLOCK_SIZE, _SHIFTS = 1 << 22, 1 << 30, 256

#: Arrow types of the fast path. Counts are parsed as float64 and checked to be whole numbers
#: (pyarrow's int64 parser would silently accept hexadecimal such as 0x10).
PA_TYPES = {"flag": pa.bool_(), "count": pa.float64(), "tokens": pa.float64(),
            "bytes": pa.float64(), "score": pa.float64(), "float": pa.float64(),
            "seconds": pa.float64()}
PD_TYPES = {pa.bool_(): pd.BooleanDtype(), pa.int64(): pd.Int64Dtype(),
            pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}


def read_header(path: str | os.PathLike[str], *, max_bytes: int = 1 << 20) -> list[str]:
    """Read only the header line of a CSV file (at most ``max_bytes``, never the whole file).

    Parameters
    ----------
    path : path-like
        A CSV file, UTF-8 (a byte-order mark is allowed).
    max_bytes : int
        Longest header accepted.

    Returns
    -------
    list of str
        Column names.

    Raises
    ------
    RunLoadError
        Unreadable or empty file, a blank first line, undecodable bytes, a header longer than
        ``max_bytes``, one that looks ';'- or tab-delimited, or duplicated column names.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbftask_id,final_score\\r\\nt1,0.5\\r\\n")
    >>> read_header(p)
    ['task_id', 'final_score']
    """
    path = Path(path)
    name = path.name
    try:
        with open(path, "rb") as fh:
            line = fh.readline(max_bytes + 1)
            rest = fh.read(1 << 16) if not line.strip() else b""
    except OSError as exc:
        raise RunLoadError(f"{name}: cannot read ({exc.strerror or exc})",
                           [Finding("error", name, None, None, "unreadable", str(exc))]) from None
    if len(line) > max_bytes:
        raise RunLoadError(f"{name}: header line longer than {max_bytes} bytes (not a CSV "
                           "file?)", [Finding("error", name, None, None, "header", "too long")])
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise RunLoadError(f"{name}: header is not UTF-8 (byte {exc.start}); re-save the file "
                           "as UTF-8", [Finding("error", name, None, None, "encoding",
                                                "header not UTF-8")]) from None
    if not text.strip():  # a blank first line with more after it: not an empty file
        check, what = (("header", "the first line is blank; the header must be the first line")
                       if rest.strip() else ("empty_file", "file is empty (no header line)"))
        raise RunLoadError(f"{name}: {what}", [Finding("error", name, None, None, check, what)])
    try:
        names = next(csv.reader([text], strict=True))
    except csv.Error as exc:
        raise RunLoadError(f"{name}: the header line is not valid CSV ({exc})",
                           [Finding("error", name, None, None, "header", str(exc))]) from None
    if len(names) == 1:
        for sep, what in ((";", "';'"), ("\t", "tab"), ("|", "'|'")):
            if sep in names[0]:
                raise RunLoadError(f"{name}: header has one column but contains {what}: the file "
                                   f"looks {what}-delimited; eval-v2 writes comma-separated CSV",
                                   [Finding("error", name, None, None, "delimiter", what)])
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    if dup:
        raise RunLoadError(f"{name}: duplicated column name(s) {dup} in the header",
                           [Finding("error", name, None, d, "duplicate_column",
                                    "duplicated in the header") for d in dup])
    return names


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
    threads), and the previous hook is restored when the last one ends; other unraisable
    errors go to the previous hook."""
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


def block_size(path: str | os.PathLike[str], start: int = BLOCK_SIZE) -> int:
    """A read-block size for pyarrow's CSV reader that keeps every CR LF pair whole.

    pyarrow reads a file in buffers of ``block_size`` bytes and drops the LF of a CR LF pair
    split by a buffer boundary (file offset ``k * block_size``), even inside a quoted value
    (apache/arrow issue 51368). Tries ``start``, ``start - 1``, ... (:data:`_SHIFTS` sizes,
    two bytes read per boundary; two consecutive sizes never split the same pair). If none
    fits: the whole file as one buffer, or a RunLoadError above :data:`MAX_BLOCK_SIZE`.

    Parameters
    ----------
    path : path-like
    start : int
        Largest size, in bytes (a file of at most ``start`` bytes is one buffer).

    Returns
    -------
    int

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b'a,b\\r\\n"x\\r\\ny",1\\r\\n')  # CR LF at 3-4, 7-8 and 13-14
    >>> block_size(p, 8), block_size(p, 9), block_size(p, 64)
    (6, 9, 64)
    """
    size = os.path.getsize(path)
    if size <= start:
        return start
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for block in range(start, max(start - _SHIFTS, 0), -1):
            if all(data[k - 1:k + 1] != b"\r\n" for k in range(block, size, block)):
                return block
    if size >= MAX_BLOCK_SIZE:  # pragma: no cover - no such file is known
        raise RunLoadError(f"{Path(path).name}: no read-block size keeps its CR LF pairs whole")
    return size + 1  # pragma: no cover - one buffer: no boundary at all


def arrow_read(path: Path, column_types: dict, include: list[str], *, specs: Mapping,
               use_threads: bool = True, block: int | None = None, batched: bool = False,
               empty_null: bool = False) -> tuple[pa.Table, list[tuple]]:
    """Read with pyarrow, text nulled per ``specs`` (header -> catalogue entry; ``arrow_missing``).
    ``block``: :func:`block_size`, 4 times larger after a "straddling object" error. Rows with
    the wrong number of fields are skipped, returned as ``(record number, expected, actual,
    text)``; ``batched``: they raise and text is not nulled (``empty_null``: the reader nulls
    empty cells, and only those, in every column)."""
    bad: list[tuple] = []
    undecodable: list = []
    block = block_size(path, BLOCK_SIZE) if block is None else block

    def skip(row) -> str:
        bad.append((row.number, row.expected_columns, row.actual_columns, row.text))
        return "skip"

    try:
        with contextlib.nullcontext() if batched else _undecodable_rows(skip, undecodable):
            table = pacsv.read_csv(
                path,
                read_options=pacsv.ReadOptions(use_threads=use_threads, block_size=block),
                parse_options=pacsv.ParseOptions(newlines_in_values=True,
                                                 invalid_row_handler=None if batched else skip),
                convert_options=pacsv.ConvertOptions(
                    column_types=column_types, include_columns=include,
                    null_values=[""] if empty_null else list(NULL_VALUES), true_values=list(
                        FLAG_TRUE), false_values=list(FLAG_FALSE), strings_can_be_null=empty_null))
    except pa.ArrowInvalid as exc:
        larger = block_size(path, min(4 * block, MAX_BLOCK_SIZE)) \
            if "straddling object" in str(exc) else 0  # a row over more than two blocks
        if larger >= 2 * block:
            return arrow_read(path, column_types, include, specs=specs, use_threads=use_threads,
                              block=larger, batched=batched, empty_null=empty_null)
        if undecodable:
            msg = ("a line with the wrong number of fields holds bytes that are not UTF-8 "
                   "(truncated or Latin-1?); re-save the file as UTF-8")
            raise RunLoadError(f"{path.name}: cannot parse: {msg}",
                               [Finding("error", path.name, None, None, "encoding", msg)]) \
                from None
        raise
    if bad and any(b[0] is None for b in bad) and use_threads:  # row numbers need one thread
        return arrow_read(path, column_types, include, specs=specs, use_threads=False,
                          block=block, batched=batched, empty_null=empty_null)
    return (table if batched else arrow_missing(table, specs)), bad


def arrow_error(path: Path, exc: Exception) -> RunLoadError:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return RunLoadError(f"{path.name}: cannot parse: {msg}",
                        [Finding("error", path.name, None, None, "malformed_csv", msg)])


def bad_rows(bad: list[tuple], n_kept: int, name: str, findings: list) -> np.ndarray:
    """Report rows with the wrong number of fields; return the data-row index of kept rows."""
    if not bad:
        return np.arange(n_kept)
    rows = pd.Series([b[3][:60] for b in bad], index=[b[0] - 2 for b in bad])
    counts = {(b[1], b[2]) for b in bad}
    what = "; ".join(f"expected {e} fields, got {a}" for e, a in sorted(counts)[:3])
    report(findings, pd.Series(True, index=rows.index), rows, name, None, "column_count",
           f"{what} (truncated or malformed line); row dropped")
    all_rows = np.arange(n_kept + len(bad))
    return np.setdiff1d(all_rows, rows.index.to_numpy())


def _decode(table: pa.Table, index: np.ndarray, name: str, findings: list) -> pd.DataFrame:
    """Binary columns -> text; undecodable cells reported and decoded with U+FFFD."""
    out = {}
    for col in table.column_names:
        arr = table.column(col)
        try:
            out[col] = pc.cast(arr, pa.string()).to_pandas(types_mapper=PD_TYPES.get)
            out[col].index = index
            continue
        except pa.ArrowInvalid:
            pass
        raw = pd.Series(arr.to_pylist(), index=index, dtype=object)
        text = raw.map(lambda b: None if b is None else b.decode("utf-8", "replace"))
        bad = raw.map(lambda b: b is not None and "\ufffd" in b.decode("utf-8", "replace"))
        report(findings, bad, text, name, col, "encoding",
               "bytes that are not UTF-8 (Latin-1?), replaced by U+FFFD; re-save the file as UTF-8")
        out[col] = text.astype("string")
    return pd.DataFrame(out, index=index)


def arrow_types(specs: dict, include: list[str]) -> dict:
    """Arrow type of each included column on the fast path (text for unknown columns)."""
    types = {h: PA_TYPES.get(specs[h].kind, pa.string()) if h in specs else pa.string()
             for h in include}
    return types | {h: _ENUM_TYPE for h in include if h in specs and specs[h].kind == "enum"}


def typed_read(path: Path, header: list[str], specs: dict, include: list[str],
               findings: list) -> pd.DataFrame:
    """Read ``include`` with the catalogue types (pyarrow); a column that does not convert is
    re-read as text and typed in pandas, the others stay on the fast path. After
    :data:`MAX_TEXT_COLUMNS` such columns (or a UTF-8 error) the whole file is read as text."""
    types = arrow_types(specs, include)
    as_text: list[str] = []
    while True:
        try:
            table, bad = arrow_read(path, types, include, specs=specs)
        except pa.ArrowInvalid as exc:
            found = re.match(r"In CSV column #(\d+): CSV conversion error to (?!string)", str(exc))
            col = header[int(found.group(1))] if found else None
            if col is None or col not in specs or col in as_text \
                    or len(as_text) >= MAX_TEXT_COLUMNS:
                return typed_slow(path, header, specs, include, findings)
            as_text.append(col)
            types[col] = pa.string()
            continue
        big = too_big_counts(table, specs, as_text)
        if not big:
            break
        if len(as_text) + len(big) > MAX_TEXT_COLUMNS:
            return typed_slow(path, header, specs, include, findings)
        as_text += big  # re-read as text: the finding shows the value as written
        types |= {c: pa.string() for c in big}
    return _typed_frame(table, bad, specs, as_text, path.name, findings)


def beyond_exact(arr: pa.ChunkedArray) -> bool:
    """Whether a float64 count column holds a value of 2**53 or more (or infinite): its text may
    have been rounded when parsed; rejected (:data:`~dabench_analysis.load.coerce.MAX_COUNT`)."""
    low, high = (pc.min_max(arr)[k].as_py() for k in ("min", "max"))  # max |x|, no copy
    return low is not None and not max(abs(low), abs(high)) < MAX_COUNT


def too_big_counts(table: pa.Table, specs: dict, skip: Sequence[str] = ()) -> list[str]:
    """The count columns of ``table`` (read as float64) for which :func:`beyond_exact`."""
    return [col for col, arr in zip(table.column_names, table.columns, strict=True)
            if col in specs and specs[col].kind in INTEGER_KINDS and col not in skip
            and pa.types.is_floating(arr.type) and beyond_exact(arr)]


def _typed_frame(table: pa.Table, bad: list, specs: dict, as_text: list[str], name: str,
                 findings: list) -> pd.DataFrame:
    """Arrow table -> frame: counts cast to int64 in Arrow (safe cast: a fraction, an infinity
    or an overflow stays float64 and is reported by :func:`to_integer`), enums mapped onto the
    catalogue's levels, columns read as text typed in pandas."""
    arrays = []
    for col, arr in zip(table.column_names, table.columns, strict=True):
        if col in specs and specs[col].kind in INTEGER_KINDS and col not in as_text:
            with contextlib.suppress(pa.ArrowInvalid):
                arr = pc.cast(arr, pa.int64())
        arrays.append(arr)
    df = pa.table(arrays, names=table.column_names).to_pandas(types_mapper=PD_TYPES.get)
    df.index = bad_rows(bad, len(df), name, findings)
    for col, spec in specs.items():
        if col not in df:
            continue
        if col in as_text:
            df[col] = type_column(df[col], spec, name, findings)
        elif spec.kind == "enum":
            c = df[col]
            known = isinstance(c.dtype, pd.CategoricalDtype) and \
                set(c.cat.categories) <= set(spec.dtype.categories)
            df[col] = c.astype(spec.dtype) if known else \
                type_enum(c.astype("string"), spec, name, findings)
        elif spec.kind in INTEGER_KINDS and df[col].dtype != "Int64":
            df[col] = to_integer(df[col], spec, name, findings)
    return df


def _cast(text: pd.Series, spec, name: str, findings: list) -> pd.Series | None:
    """Vectorised pyarrow cast of a text column, or None if any value does not convert."""
    target = PA_TYPES.get(spec.kind)
    if target is None:
        return None
    try:
        arr = pc.cast(pa.Array.from_pandas(text, type=pa.string()), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    out = pd.Series(arr.to_pandas(types_mapper=PD_TYPES.get), index=text.index)
    return to_integer(out, spec, name, findings) if spec.kind in INTEGER_KINDS else out


def typed_slow(path: Path, header: list[str], specs: dict, include: list[str],
                findings: list) -> pd.DataFrame:
    try:
        table, bad = arrow_read(path, {c: pa.string() for c in header}, include,
                                specs=specs)
        raw = table.to_pandas(types_mapper=PD_TYPES.get)
        raw.index = bad_rows(bad, len(raw), path.name, findings)
    except pa.ArrowInvalid as exc:
        if "utf8" not in str(exc).lower():
            raise arrow_error(path, exc) from None
        table, bad = arrow_read(path, {c: pa.binary() for c in header}, include,
                                specs=specs)
        raw = _decode(table, bad_rows(bad, table.num_rows, path.name, findings), path.name,
                      findings)
    again = pd.Series(True, index=raw.index)
    for col in raw.columns:
        again &= raw[col].fillna("").eq(col)
    if len(raw.columns) > 1 and again.any():
        report(findings, again, raw[raw.columns[0]], path.name, None, "repeated_header",
               "the header line is repeated (concatenated files?); row dropped")
        raw = raw[~again]
    out = {}
    for col in raw.columns:
        spec = specs.get(col)
        cast = None if spec is None else _cast(raw[col], spec, path.name, findings)
        out[col] = raw[col] if spec is None else cast if cast is not None else \
            type_column(raw[col], spec, path.name, findings)
    return pd.DataFrame(out, index=raw.index)
