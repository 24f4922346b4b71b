"""The CSV files of a run as files: task ids the side files name that task_metrics.csv lacks,
steps without a duration, the ``run_id`` every file must share, the catalogue columns a
trajectory.csv or tool_calls.csv from another harness version lacks, and control characters in
free text.

Private to :mod:`dabench_analysis.validate` (:func:`~dabench_analysis.validate.validate_run`
calls each); severities come from :data:`dabench_analysis.schema.CHECKS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis.load._csv import read_header
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.schema import TASK_FILE, TOOL_CALLS_FILE, TRAJECTORY_FILE
from dabench_analysis.schema._declared import needing as sections_needing
from dabench_analysis.schema._declared import using as sections_using
from dabench_analysis.schema.checks import (
    CHECKS,
    CONTROL_BYTES,
    CONTROL_CHARACTERS,
    checks_reading,
    control_mask,
)
from dabench_analysis.schema.columns import OTHER_HARNESS_COLUMNS
from dabench_analysis.schema.needs import FILE_CATALOGUES


def orphan_findings(task_ids: pd.Series, table: pd.DataFrame, file: str, *,
                    task_file: str = TASK_FILE) -> list[Finding]:
    """Task ids in a side table (read from ``file``) that the task file ``task_file`` does not
    have (one finding per id)."""
    if table is None or table.empty or "task_id" not in table:
        return []
    known = set(task_ids.dropna().astype(str))
    ids = table["task_id"].astype("string")
    orphan = ids.notna() & ~ids.isin(known)
    out = []
    for tid, idx in table.index[orphan.to_numpy()].to_series().groupby(ids[orphan]):
        rows = tuple(int(i) + 1 for i in idx)
        out.append(Finding("error", file, rows[0], "task_id", "unknown_task_id",
                           f"task_id {tid!r} ({len(rows)} row(s)) is not in {task_file}",
                           rows))
    return out


def missing_time(trajectory: pd.DataFrame | None, file: str) -> list[Finding]:
    """Steps without ``duration_seconds`` (§Troubleshooting "missing time data"): one finding,
    file-level when the column is absent or empty throughout, else naming each row."""
    if trajectory is None or trajectory.empty:
        return []
    col = "duration_seconds"
    empty = trajectory[col].isna() if col in trajectory else pd.Series(True, trajectory.index)
    rows = tuple(int(i) + 1 for i in trajectory.index[empty.to_numpy()])
    if not rows:
        return []
    everywhere = len(rows) == len(trajectory)
    return [Finding("warning", file, rows[0] if len(rows) == 1 else None, col,
                    "missing_time_data", f"missing time data: duration_seconds is empty in "
                    f"{'every step' if everywhere else f'{len(rows)} step(s)'}; time "
                    "validation from it is skipped", () if everywhere else rows)]


def _cycles(parents: dict[int, int]) -> list[list[int]]:
    """The cycles of one task's step -> parent map (each once, as its steps in order)."""
    seen: set[int] = set()
    out = []
    for start in parents:
        path, here = [], start
        while here in parents and here not in seen and here not in path:
            path.append(here)
            here = parents[here]
        if here in path:
            out.append(path[path.index(here):])
        seen.update(path)
    return out


def parent_findings(trajectory: pd.DataFrame | None, file: str) -> list[Finding]:
    """``parent_step_invalid`` (schema.checks): a ``parent_step_id`` that names no step of its
    task (one finding per row), and parents that lead back to a step (one finding per cycle,
    naming its rows). Rows whose ``step_id`` or ``parent_step_id`` is missing are not checked
    (a missing step_id is the loader's finding)."""
    cols = ["task_id", "step_id", "parent_step_id"]
    if trajectory is None or trajectory.empty or any(c not in trajectory for c in cols):
        return []
    t = trajectory[cols].dropna(subset=["task_id", "step_id"])
    t = t.assign(task_id=t["task_id"].astype("string"),
                 step_id=t["step_id"].astype("int64"))
    has = t[t["parent_step_id"].notna()].astype({"parent_step_id": "int64"})
    known = pd.MultiIndex.from_frame(t[["task_id", "step_id"]])
    points = pd.MultiIndex.from_arrays([has["task_id"], has["parent_step_id"]])
    severity = CHECKS["parent_step_invalid"].severity
    out = [Finding(severity, file, int(i) + 1, "parent_step_id", "parent_step_invalid",
                   f"task {task!r}: step {step} names parent_step_id {parent}, which is not a "
                   "step of the task")
           for i, task, step, parent in zip(has.index[~points.isin(known)],
                                            has["task_id"][~points.isin(known)],
                                            has["step_id"][~points.isin(known)],
                                            has["parent_step_id"][~points.isin(known)],
                                            strict=True)]
    loose = has[has["parent_step_id"] >= has["step_id"]]  # a cycle needs such a pointer
    for task in dict.fromkeys(loose["task_id"]):
        mine = has[has["task_id"] == task].drop_duplicates("step_id")
        row_of = dict(zip(mine["step_id"], mine.index, strict=True))
        for cycle in _cycles(dict(zip(mine["step_id"], mine["parent_step_id"], strict=True))):
            rows = tuple(sorted(int(row_of[s]) + 1 for s in cycle))
            out.append(Finding(severity, file, rows[0] if len(rows) == 1 else None,
                               "parent_step_id", "parent_step_invalid",
                               f"task {task!r}: parent_step_id forms a cycle through steps "
                               f"{' -> '.join(map(str, [*cycle, cycle[0]]))}", rows))
    return out


def _counts(values: pd.Series) -> str:
    """``'a' (40 rows), 'b' (40 rows)``, in order of first appearance."""
    n = values.value_counts(sort=False)
    return ", ".join(f"{v!r} ({n[v]} row{'s' if n[v] != 1 else ''})"
                     for v in dict.fromkeys(values))


def run_id_findings(run_ids: pd.Series, source_rows: Sequence[int], task_file: str,
                    sides: Mapping[str, pd.DataFrame | None], *, fill: str) -> list[Finding]:
    """``run_id_mixed`` and ``run_id_mismatch`` (schema.checks): one run_id per run directory.

    ``run_ids``: task_metrics' run_id per task (rows ``source_rows`` of ``task_file``);
    ``sides``: file name -> its frame (None: absent or unreadable); ``fill``: the run_id the
    loader wrote into empty cells (a side-file row holding it is not a mismatch when
    task_metrics.csv itself is mixed). One finding per file, at the first row that differs.
    """
    out: list[Finding] = []
    ids = run_ids.astype("string").dropna()
    values = list(dict.fromkeys(ids))
    if len(values) > 1:
        first = int(ids.ne(values[0]).to_numpy().argmax())
        row = source_rows[ids.index.get_loc(ids.index[first])]
        out.append(Finding(CHECKS["run_id_mixed"].severity, task_file, row, "run_id",
                           "run_id_mixed", f"{task_file} holds {len(values)} run_id values: "
                           f"{_counts(ids)}; it changes at row {row} from {values[0]!r} to "
                           f"{ids.iloc[first]!r} (a run directory holds one run)"))
    accepted = set(values) | ({fill} if len(values) > 1 else set())
    expected = " or ".join(repr(v) for v in values) or repr(fill)
    for file, table in sides.items():
        if table is None or "run_id" not in table or not accepted:
            continue
        col = table["run_id"].astype("string")
        bad = col.notna() & ~col.isin(accepted)
        if not bad.any():
            continue
        row = int(table.index[bad.to_numpy()][0]) + 1
        out.append(Finding(CHECKS["run_id_mismatch"].severity, file, row, "run_id",
                           "run_id_mismatch", f"{file} rows carry run_id {_counts(col[bad])} "
                           f"where {task_file} has {expected}; first at row {row}"))
    return out


#: Absent columns a check of this module reports itself (missing_time: time data missing).
_SELF_REPORTED = {(TRAJECTORY_FILE, "duration_seconds")}


def absent_side_columns(run_dir: Path, file: str) -> list[Finding]:
    """Optional catalogue columns absent from a side file's header, each with the report
    sections it disables (warning) or the checks it leaves not assessable (info); the rest in
    one info. Required columns are the loader's (``required_column``, an error); an absent
    ``duration_seconds`` is :func:`missing_time`'s."""
    try:
        header = {h.strip() for h in read_header(run_dir / file)}
    except RunLoadError:  # reported when the file was loaded
        return []
    out, unused = [], []
    for name, col in FILE_CATALOGUES[file].items():
        if col.required or name in header or (file, name) in _SELF_REPORTED \
                or name in OTHER_HARNESS_COLUMNS:  # eval-v2 does not write them
            continue
        off, reads = sections_needing(f"{file}:{name}"), checks_reading(f"{file}:{name}")
        used = sections_using(f"{file}:{name}")
        if not off and not reads and not used:
            unused.append(name)
            continue
        parts = ([f"disables {', '.join(off)}"] if off else []) + (
            [f"{', '.join(used)} run without it"] if used else []) + (
            [f"{', '.join(reads)} not assessable"] if reads else [])
        out.append(Finding("warning" if off else "info", file, None, name, "absent_column",
                           "optional column absent: " + "; ".join(parts)))
    if unused:
        out.append(Finding("info", file, None, None, "absent_column",
                           f"{len(unused)} optional catalogue columns absent, which no report "
                           f"section or check needs: {', '.join(unused)}"))
    return out


#: Bytes read at a time when a file is scanned for control characters.
_SCAN_BYTES = 1 << 23
#: Characters of a value shown on each side of its first control character.
_CONTEXT = 12


def _has_control_bytes(path: Path) -> bool:
    """True when the file holds a control character (C0 but tab and line ends, DEL, C1; a scan:
    its text columns are only read, with the heavy free text, when it does)."""
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_SCAN_BYTES):
                if CONTROL_BYTES.search(chunk):
                    return True
    except OSError:  # the loader reports an unreadable file
        return False
    return False


def _excerpt(value: str) -> str:
    hit = CONTROL_CHARACTERS.search(value).start()
    part = value[max(0, hit - _CONTEXT):hit + _CONTEXT + 1]
    return ("…" if hit > _CONTEXT else "") + repr(part)[1:-1] + (
        "…" if hit + _CONTEXT + 1 < len(value) else "")


def _control_in(frame: pd.DataFrame, file: str, rows: Sequence[int] | None) -> list[Finding]:
    """One finding per text column holding control characters; ``rows``: the 1-based file row
    of each frame row (None: the frame's 0-based index + 1)."""
    out = []
    for col in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            continue
        mask = control_mask(frame[col]).to_numpy()
        if not mask.any():
            continue
        where = mask.nonzero()[0]
        hit = tuple(int(rows[i]) if rows is not None else int(frame.index[i]) + 1 for i in where)
        shown = ", ".join(f"row {r} ({_excerpt(frame[col].iloc[i])})"
                          for r, i in zip(hit[:3], where[:3], strict=False))
        out.append(Finding(CHECKS["control_characters"].severity, file,
                           hit[0] if len(hit) == 1 else None, str(col), "control_characters",
                           f"{len(hit)} value(s) of {col} hold control characters (NUL, other "
                           f"C0 controls, DEL, C1 controls, lone surrogates), kept as read and written as escapes "
                           f"such as \\x00: {shown}" + (f" and {len(hit) - 3} more"
                                                         if len(hit) > 3 else ""), hit))
    return out


def control_findings(run, sides: Mapping[str, pd.DataFrame | None]) -> list[Finding]:
    """``control_characters`` (schema.checks): free text with a NUL, another C0 control (tab and
    line ends excepted) or a lone surrogate, in task_metrics.csv and in every text column of the
    side files (their heavy free text, which the loaded frames leave out, is read only when a
    scan of the file's bytes finds a control byte). The frames keep the text as read.

    ``run``: the loaded :class:`~dabench_analysis.load.Run`; ``sides``: file name -> its loaded
    frame (None: absent or unreadable). One finding per file and column, naming every row.
    """
    tasks = run.tasks.drop(columns=["replay_path"], errors="ignore")
    out = _control_in(tasks, run.task_file, list(run.source_rows))
    names = {TRAJECTORY_FILE: "trajectory", TOOL_CALLS_FILE: "tool_calls"}
    for file, table in sides.items():
        if table is None or file not in names or not _has_control_bytes(run.path / file):
            continue
        text = [c for c, spec in FILE_CATALOGUES[file].items() if spec.kind == "text"]
        frame = run.select(names[file], [c for c in table.columns] + text)
        out += _control_in(frame, file, None)
    return out
