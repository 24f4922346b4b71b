"""One eval-v2 CSV file (task metrics, trajectory or tool calls) read into a typed frame with its
findings, column-name resolution (aliases) and the column requests of the loaders.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa

from dabench_analysis import schema
from dabench_analysis.load.coerce import check_domain
from dabench_analysis.load.csv import arrow_error, read_header, typed_read
from dabench_analysis.load.findings import Finding, RunLoadError


def _keys(catalogue: Mapping[str, schema.Column]) -> tuple[tuple[str, ...], str, str]:
    """Unique key of a catalogue's rows, severity of a duplicate, and what the loader does."""
    if catalogue is schema.TASK_COLUMNS:
        return ("task_id",), "error", " (load_run keeps the first)"
    if catalogue is schema.TRAJECTORY_COLUMNS:
        return ("task_id", "step_id"), "warning", ""
    if catalogue is schema.TOOL_CALL_COLUMNS:
        return ("task_id", "call_id"), "warning", ""
    return (), "error", ""


def read_table(
    path: str | os.PathLike[str],
    catalogue: Mapping[str, schema.Column],
    *,
    columns: Sequence[str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[Finding]]:
    """Parse one eval-v2 CSV into catalogue dtypes, collecting findings instead of raising.

    Parameters
    ----------
    path : path-like
        The CSV file (UTF-8, comma-separated, header line; CRLF line ends, a byte-order mark
        and newlines inside quoted values are accepted).
    catalogue : mapping of str to Column
        :data:`~dabench_analysis.schema.TASK_COLUMNS`, ``TRAJECTORY_COLUMNS`` or
        ``TOOL_CALL_COLUMNS`` (or any mapping of :class:`~dabench_analysis.schema.Column`).
    columns : sequence of str, optional
        Load only these catalogue columns (plus the required ones); default all.
    aliases : mapping, optional
        Old column name -> catalogue name, renamed on read (e.g. ``schema_agent_called``).

    Returns
    -------
    frame : DataFrame
        One row per valid data row; catalogue columns typed, unknown columns kept as
        ``string``. The index is the 0-based data row of the file (gaps where rows were
        dropped). Missing values: in text and id columns (and unknown columns) only an empty
        cell; ``NA``, ``None``, ``null``... are kept as written, byte for byte, like every
        quoted value (any length, CR/LF/CR LF inside). In number, flag, enum and timestamp
        columns the spellings of :data:`~dabench_analysis.schema.NULL_VALUES`.
    findings : list of Finding
        ``error``: values rejected (set to missing), rows with the wrong number of fields or a
        repeated header (dropped), bytes that are not UTF-8, missing required columns or
        values, duplicated task_ids. ``warning``: values coerced (yes/no flags, lower-case
        enums), duplicated step/call keys, a file without data rows. ``info``: unknown
        columns, missing flag values.

    Raises
    ------
    RunLoadError
        When the file as a whole cannot be read (unreadable, empty, header not UTF-8, wrong
        delimiter, duplicated header names).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "task_metrics.csv"
    >>> _ = p.write_text("task_id,difficulty,final_score,execution_success\\nt1,Easy,0.9,1\\n")
    >>> df, found = read_table(p, schema.TASK_COLUMNS)
    >>> df.dtypes.astype(str).tolist()
    ['string', 'category', 'float64', 'boolean']
    >>> [f.check for f in found]
    ['required_column']
    """
    path = Path(path)
    name = path.name
    header = read_header(path)
    findings: list[Finding] = []
    canon = column_names(header, catalogue, dict(aliases or {}), name, findings)
    wanted = None if columns is None else \
        set(columns) | {c for c, s in catalogue.items() if s.required}
    include = [h for h in header if wanted is None or canon[h] in wanted]
    specs = {h: catalogue[canon[h]] for h in include if canon[h] in catalogue}
    try:
        df = typed_read(path, header, specs, include, findings)
    except (pa.ArrowException, OSError) as exc:
        raise arrow_error(path, exc) from None
    df = df.rename(columns={h: canon[h] for h in df.columns if canon[h] != h})
    keys, severity, note = _keys(catalogue)
    df = check_domain(df, specs.values(), name, findings, keys=keys, key_severity=severity,
                      key_note=note)
    if df.empty:
        findings.append(Finding("warning", name, None, None, "no_rows",
                                "the file has a header but no data rows"))
    return df, findings


def requested_columns(columns: Sequence[str] | None) -> list[str] | None:
    """Check ``columns=`` of :func:`load_run` / ``load_runs``: a list of names (not one string).

    Raises
    ------
    TypeError
        If ``columns`` is a string or not an iterable of strings.
    """
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not hasattr(columns, "__iter__"):
        raise TypeError(f"columns must be a list of column names, got {columns!r}"
                        + (f" (did you mean [{columns!r}]?)" if isinstance(columns, str) else ""))
    cols = list(columns)
    bad = [c for c in cols if not isinstance(c, str)]
    if bad:
        raise TypeError(f"columns must be column names (str), got {bad[:3]!r}")
    return cols


def warn_absent(columns: Sequence[str] | None, loaded, where: str) -> None:
    """Warn about requested columns that are in no loaded file (a typo loads nothing)."""
    if columns is None:
        return
    have = set(loaded)
    absent = [c for c in columns if schema.ALIASES.get(c, c) not in have]
    if absent:
        warnings.warn(f"{where}: requested column(s) {absent} not found (not in the file; "
                      "names as eval-v2 writes them, see dabench_analysis.schema)",
                      stacklevel=3)


def _empty(catalogue: Mapping[str, schema.Column], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=catalogue[c].dtype) for c in columns})


def column_names(header: list[str], catalogue: Mapping, aliases: Mapping[str, str], name: str,
                 findings: list) -> dict[str, str]:
    """Header name -> catalogue name (whitespace stripped with a warning, aliases renamed; an
    alias beside its catalogue name is kept as text with a ``column_alias_duplicate`` warning)."""
    stripped = {h.strip() for h in header}
    canon = {}
    for h in header:
        c = h.strip()
        if c != h:
            findings.append(Finding("warning", name, None, h, "header_whitespace",
                                    f"column name {h!r} has surrounding spaces; read as {c!r}"))
        canon[h] = aliases[c] if c in aliases and aliases[c] not in stripped else c
        if canon[h] != c:
            findings.append(Finding("info", name, None, h, "column_alias",
                                    f"read as {canon[h]!r} (a name other eval-v2 versions use)"))
        if c in aliases and aliases[c] in stripped:
            findings.append(Finding(
                "warning", name, None, h, "column_alias_duplicate",
                f"both {c!r} and its catalogue name {aliases[c]!r} are present; "
                f"{aliases[c]!r} is used, {c!r} is kept as text"))
        elif canon[h] not in catalogue:
            findings.append(Finding("info", name, None, h, "unknown_column",
                                    "not in the eval-v2 catalogue; kept as text"))
    if len(set(canon.values())) < len(canon):
        groups: dict[str, list[str]] = {}
        for h, c in canon.items():
            groups.setdefault(c, []).append(h)
        clash = "; ".join(f"{sorted(hs)} -> {c!r}" for c, hs in groups.items() if len(hs) > 1)
        raise RunLoadError(f"{name}: column names collide once spaces are stripped and aliases "
                           f"renamed: {clash}")
    for c, s in catalogue.items():
        if s.required and c not in canon.values():
            sev, msg = (("info", "missing; filled from the folder name") if c == "run_id"
                        else ("error", "missing"))
            findings.append(Finding(sev, name, None, c, "required_column", msg))
    return canon
