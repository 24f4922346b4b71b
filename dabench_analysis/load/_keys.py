"""Missing and repeated keys within one file of a stack: the findings and the rows a file
cannot keep.

A task file's key is ``task_id`` (``task_id, trial`` when the harness repeats tasks; ``run_id,
task_id`` in a table of several runs, where a row without a run_id is in the file's own run). A
row with no value in a key column is an error (``missing_key``, naming the file, every such row
and the column) and is left out of every statistic: the one rule for every reader (eval-v2
folder, Inspect, tau-bench, tables). A repeated key is ``duplicate_task_id`` (the first row is
kept; a repeat within one run of a table of several runs); a side file's key is its catalogue's
``keys`` (``duplicate_key``: a later row equal to an earlier one in every column is left out, as
after ``cat a.csv a.csv``; rows that differ are all kept; a side row without a key is kept).
Called by :func:`dabench_analysis.load._rules.convert` with its per-file findings (``out``:
``out.stack`` the stacked files, ``out.findings`` one list per file).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis.load._findings import Finding
from dabench_analysis.schema._files import FileKind


def repeated_keys(table: pa.Table, kind: FileKind, out) -> np.ndarray:
    """Repeated keys within each file of a stack, and the rows to drop.

    Parameters
    ----------
    table : pyarrow.Table
        The stacked files of one kind, typed (one row per data row, files in stack order).
    kind : FileKind
        Its ``keys`` (e.g. ``task_id``; ``task_id, step_id`` for trajectory.csv) and
        ``key_severity``.
    out
        The caller's per-file findings: ``out.stack`` (names, starts, rows, ``files()``) and
        ``out.findings`` (one list per file, appended to: one finding per repeated key).

    Returns
    -------
    numpy.ndarray of bool
        Rows to drop: in task files no task_id or a later repeat of one; in side files a later
        row equal to an earlier one in every column (``cat a.csv a.csv``: counted once). A
        side file without one of its key columns (another harness version) is not checked.
    """
    n = table.num_rows
    keys = [k for k in kind.keys if k in table.column_names]
    drop = np.zeros(n, dtype=bool)
    if not keys or n == 0 or (not kind.is_tasks and len(keys) < len(kind.keys)):
        return drop
    code = np.repeat(np.arange(len(out.stack.names), dtype=np.int64), np.diff(out.stack.starts))
    valid = np.ones(n, dtype=bool)
    for k in keys:
        enc = pc.dictionary_encode(table.column(k)).combine_chunks()
        idx = enc.indices.to_numpy(zero_copy_only=False)
        if k != "run_id":  # a row without a run_id belongs to the file's own run
            valid &= ~pd.isna(idx)
        code = code * (len(enc.dictionary) + 1) + np.nan_to_num(idx, nan=-1).astype(np.int64) + 1
    if kind.is_tasks and not valid.all():
        _missing(table, keys, out)
        drop |= ~valid
    keyed = code[valid]
    if pd.Index(keyed).is_unique:  # pyarrow's count_distinct: a ~300 B/row hash table
        return drop
    repeats = pd.Series(code).where(valid).duplicated(keep="first").to_numpy() & valid
    if not kind.is_tasks:  # only a repeat equal to its first row in every column
        dup = np.flatnonzero(pd.Series(code).where(valid).duplicated(keep=False).to_numpy()
                             & valid)
        rows = table.take(pa.array(dup)).to_pandas().astype(str)
        rows.insert(0, "_code", code[dup])
        same = np.zeros(n, dtype=bool)
        same[dup] = rows.duplicated(keep="first").to_numpy()
        repeats &= same
    _describe(table, keys, kind, code, valid, out, repeats)
    return drop | repeats


def _missing(table: pa.Table, keys: Sequence[str], out) -> None:
    """One ``missing_key`` error per file and key column for the task rows without a value in
    it, each row quoted by its other key values (its ``task_id`` when ``trial`` is missing)."""
    for k in keys:
        if k == "run_id":  # a row without a run_id belongs to the file's own run
            continue
        mask = np.asarray(pc.is_null(table.column(k)).to_numpy(zero_copy_only=False), bool)
        if not mask.any():
            continue
        others = [o for o in keys if o != k]
        shown = pa.array([None] * table.num_rows, pa.large_string())
        if others:
            shown = pc.binary_join_element_wise(
                *(pc.cast(table.column(o), pa.large_string()) for o in others),
                pa.scalar("/", pa.large_string()))
        quoted = f" ({'/'.join(others)} in brackets)" if others else ""
        out.rows(mask, shown, k, "missing_key",
                 f"no {k}, a key of the task rows ({', '.join(keys)}): the row is left out of "
                 f"every statistic{quoted}")


def _describe(table: pa.Table, keys: Sequence[str], kind: FileKind, code: np.ndarray,
                         valid: np.ndarray, out, dropped: np.ndarray) -> None:
    s = pd.Series(code).where(valid)
    dup = s.duplicated(keep=False).to_numpy() & valid
    pos = np.flatnonzero(dup)
    check = "duplicate_task_id" if [k for k in keys if k != "run_id"] == ["task_id"] \
        else "duplicate_key"
    values = {k: table.column(k).take(pa.array(pos)).to_pylist() for k in keys}
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(pos):
        groups.setdefault(int(code[p]), []).append(i)
    reused: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
    for members in groups.values():
        first = pos[members[0]]
        f = int(out.stack.files(np.array([first]))[0])
        rows = tuple(int(out.stack.rows[pos[i]]) for i in members)
        gone = [int(out.stack.rows[pos[i]]) for i in members if dropped[pos[i]]]
        what = ", ".join(f"{k} {values[k][members[0]]!r}" for k in keys)
        if not kind.is_tasks and not gone:  # a harness reusing an id: one finding per file
            reused.setdefault(f, []).append((what, rows))
            continue
        note = (" (the first is kept)" if kind.is_tasks else
                f"; row(s) {', '.join(map(str, gone))} repeat an earlier row in every column "
                "and are left out, so nothing is counted twice")
        out.findings[f].append(Finding(kind.key_severity, out.stack.names[f], rows[1], keys[-1],
                                       check, f"{what} appears in rows "
                                       f"{', '.join(map(str, rows))}{note}", rows))
    for f, ids in reused.items():
        out.findings[f].append(_reused(out.stack.names[f], keys, kind.key_severity, check, ids))


def _reused(name: str, keys: Sequence[str], severity: str, check: str,
            ids: list[tuple[str, tuple[int, ...]]]) -> Finding:
    """One finding for a side file's keys repeated by rows that differ (a harness reusing a
    call id within a trace): every row kept, each told apart by its position in the file."""
    within = ", ".join(k for k in keys[:-1] if k != "run_id") or "file"
    rows = tuple(sorted({r for _, rs in ids for r in rs}))
    shown = "; ".join(f"{what} in rows {', '.join(map(str, rs))}" for what, rs in ids[:3])
    more = f"; {len(ids) - 3} more" if len(ids) > 3 else ""
    return Finding(severity, name, None, keys[-1], check,
                   f"{len(ids)} {keys[-1]} value(s) reused within a trace ({within}) by rows "
                   f"that differ: rows kept, told apart by position ({len(rows)} rows: "
                   f"{shown}{more})", rows)
