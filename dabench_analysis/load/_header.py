"""The header of an eval-v2 CSV file and what it means: :func:`read_header` (bounded: never the
whole file), :func:`header_of` (from the file's first bytes) and :func:`plan` (catalogue names,
aliases, the columns read and their Arrow types, the header's findings), cached per header: the
files of one harness version share it.
"""

from __future__ import annotations

import csv
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.schema import Column
from dabench_analysis.schema._files import FileKind
from dabench_analysis.schema.rules import NUMBER_KINDS

#: Text as pandas holds it: ``to_pandas`` then shares the buffers.
TEXT = pa.large_string()
#: The name given to the empty field after a stray delimiter at the end of a line.
TRAILING = "\x00trailing"


def header_of(data: bytes | memoryview, name: str, *, max_bytes: int = 1 << 20) -> list[str]:
    """The column names on the first line of a CSV file's bytes.

    Raises
    ------
    RunLoadError
        An empty file, a blank first line, undecodable bytes, a header longer than
        ``max_bytes``, one that looks ';'-, tab- or '|'-delimited, or duplicated names.
    """
    first = bytes(data[:min(max_bytes + 1, 1 << 16)])  # not a copy of the whole file
    end = first.find(b"\n")
    if end < 0 and len(first) < min(len(data), max_bytes + 1):
        first = bytes(data[:max_bytes + 1])
        end = first.find(b"\n")
    line = first if end < 0 else first[:end + 1]
    if end < 0 and len(first) > max_bytes:
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
                       if bytes(data[len(line):len(line) + (1 << 16)]).strip()
                       else ("empty_file", "file is empty (no header line)"))
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
    dup = sorted(n for n, k in Counter(names).items() if k > 1 and n != "")
    if dup:
        raise RunLoadError(f"{name}: duplicated column name(s) {dup} in the header",
                           [Finding("error", name, None, d, "duplicate_column",
                                    "duplicated in the header") for d in dup])
    return names


def read_header(path, *, max_bytes: int = 1 << 20) -> list[str]:
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
    try:
        with open(path, "rb") as fh:
            head = fh.read(max_bytes + (1 << 16) + 1)
    except OSError as exc:
        raise RunLoadError(f"{path.name}: cannot read ({exc.strerror or exc})",
                           [Finding("error", path.name, None, None, "unreadable",
                                    str(exc))]) from None
    return header_of(head, path.name, max_bytes=max_bytes)


@dataclass(frozen=True)
class Plan:
    """What a header means for one file kind (files of one harness version share it).

    ``canon``: header name -> the name in the frame (catalogue name, alias resolved, spaces
    stripped); ``include``: header names read; ``specs``: header name -> catalogue entry;
    ``types``: header name -> Arrow type of the read; ``findings``: the header's own.
    """

    canon: dict[str, str]
    include: tuple[str, ...]
    specs: dict[str, Column]
    types: dict[str, pa.DataType]
    findings: tuple[Finding, ...]


@functools.lru_cache(maxsize=256)
def plan(header: tuple[str, ...], kind: FileKind, columns: tuple[str, ...] | None) -> Plan:
    """The :class:`Plan` of a header (cached: a sweep's files share a few headers).

    Raises
    ------
    RunLoadError
        Names that collide once spaces are stripped and aliases renamed.
    """
    found: list[Finding] = []
    canon = _column_names(header, kind, found)
    wanted = None if columns is None else set(columns) | set(kind.required)
    include = tuple(h for h in header if h != "" and (wanted is None or canon[h] in wanted))
    specs = {h: kind.catalogue[canon[h]] for h in include if canon[h] in kind.catalogue}
    types = {h: pa.float64() if h in specs and specs[h].kind in NUMBER_KINDS else TEXT
             for h in include}
    return Plan(canon, include, specs, types, tuple(found))


def _column_names(header: Sequence[str], kind: FileKind, found: list) -> dict[str, str]:
    """Header name -> frame name (spaces stripped with a warning, aliases renamed; an alias
    beside its catalogue name is kept as text with a ``column_alias_duplicate`` warning)."""
    name, aliases, catalogue = kind.file, kind.aliases, kind.catalogue
    stripped = {h.strip() for h in header}
    taken = stripped - set(aliases)  # a name renamed by an alias itself leaves its name free
    canon = {}
    for h in header:
        c = h.strip()
        if h == "":  # the empty name after a stray delimiter at the end of the header
            canon[h] = TRAILING
            continue
        if c != h:
            found.append(Finding("warning", name, None, h, "header_whitespace",
                                 f"column name {h!r} has surrounding spaces; read as {c!r}"))
        canon[h] = aliases[c] if c in aliases and aliases[c] not in taken else c
        if canon[h] != c:
            found.append(Finding("info", name, None, h, "column_alias",
                                 f"read as {canon[h]!r} (a name other eval-v2 versions use)"))
        if c in aliases and aliases[c] in taken:
            found.append(Finding("warning", name, None, h, "column_alias_duplicate",
                                 f"both {c!r} and its catalogue name {aliases[c]!r} are present;"
                                 f" {aliases[c]!r} is used, {c!r} is kept as text"))
        elif canon[h] not in catalogue:
            found.append(Finding("info", name, None, h, "unknown_column",
                                 "not in the eval-v2 catalogue; kept as text"))
    if len(set(canon.values())) < len(canon):
        groups: dict[str, list[str]] = {}
        for h, c in canon.items():
            groups.setdefault(c, []).append(h)
        clash = "; ".join(f"{sorted(hs)} -> {c!r}" for c, hs in groups.items() if len(hs) > 1)
        raise RunLoadError(f"{name}: column names collide once spaces are stripped and aliases "
                           f"renamed: {clash}")
    for c in kind.required:
        if c not in canon.values():
            sev, msg = (("info", "missing; filled from the folder name") if c == "run_id"
                        else ("error", "missing"))
            found.append(Finding(sev, name, None, c, "required_column", msg))
    return canon
