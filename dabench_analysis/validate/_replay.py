"""``task_*/task_replay.json`` checks (seed 000 §Replay Artifacts, V2.1 item 6): each replay
against the field catalogue (:data:`dabench_analysis.schema.replay.REPLAY_FIELDS`: required
fields, types) and against its task's row of ``task_metrics.csv`` (identity, coordinator
decision, verification flag, scores, outcome, attempts, failure attribution, tool calls, time
accounting).

Private to :mod:`dabench_analysis.validate`. Structure findings are written while reading; the
values to compare become ``rp:<field>`` columns of the reconciliation frame, and each compared
field is one :class:`~dabench_analysis.validate._invariants.Invariant` (a vectorised check) whose
findings name ``<task_id>/task_replay.json``, the field and both values.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._replay import replay_file
from dabench_analysis.load._run import Run
from dabench_analysis.schema import REPLAY_FILE
from dabench_analysis.schema.checks import CHECKS, CONTROL_CHARACTERS
from dabench_analysis.schema.replay import REPLAY_FIELDS, REPLAY_TYPES, ReplayField
from dabench_analysis.validate._invariants import Invariant, _holds, _tol, check_invariants

#: The fields compared with task_metrics, in catalogue order.
COMPARED: tuple[ReplayField, ...] = tuple(f for f in REPLAY_FIELDS.values() if f.metric)


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole(v: object) -> bool:
    return _number(v) and float(v).is_integer()


_TYPE_OK = {
    "string": lambda v, f: isinstance(v, str),
    "integer": lambda v, f: _whole(v),
    "number": lambda v, f: _number(v),
    "seconds": lambda v, f: _number(v),
    "score": lambda v, f: _number(v) and 0 <= v <= 1,
    "flag": lambda v, f: isinstance(v, bool) or (_number(v) and v in (0, 1)),
    "enum": lambda v, f: isinstance(v, str) and v in f.values,
    "list": lambda v, f: isinstance(v, list),
    "list[int]": lambda v, f: isinstance(v, list) and all(_whole(x) for x in v),
    "object": lambda v, f: isinstance(v, dict),
    "object|null": lambda v, f: v is None or isinstance(v, dict),
}


def _column(f: ReplayField) -> str:
    return f"rp:{f.path}"


def _dtype(f: ReplayField) -> str:
    if f.measure == "present" or f.type in ("string", "enum"):
        return "string"
    return "boolean" if f.type == "flag" and f.measure == "value" else "Float64"


def _value(f: ReplayField, v: object) -> object:
    """What is compared: the value, a list's length, or object / null."""
    if f.measure == "length":
        return len(v)
    if f.measure == "present":
        return "object" if isinstance(v, dict) else "null"
    return bool(v) if f.type == "flag" else v


def _type_text(f: ReplayField) -> str:
    return REPLAY_TYPES[f.type] + (f" ({', '.join(f.values)})" if f.values else "")


def _items(f: ReplayField, data: dict, tid: str, where: str, out: dict,
           findings: list[Finding]) -> None:
    """A field of every item of a list (``a[].b``); ``failed`` counts items not successful."""
    name, key = f.path.split("[].")
    items = data.get(name)
    if not isinstance(items, list):
        return  # the list itself is reported
    lacking = sum(not isinstance(i, dict) or i.get(key) is None for i in items)
    bad = [(k, i[key]) for k, i in enumerate(items, 1)
           if isinstance(i, dict) and i.get(key) is not None and not _TYPE_OK[f.type](i[key], f)]
    if lacking and f.required:
        findings.append(Finding("error", where, None, f.path, "replay_field_missing",
                                f"{tid}: {f.path} is missing in {lacking} of {len(items)} "
                                "item(s)"))
    if bad:
        k, v = bad[0]
        findings.append(Finding("error", where, None, f.path, "replay_field_type",
                                f"{tid}: {f.path} = {v!r} in item {k} is not {_type_text(f)}"
                                + (f" ({len(bad)} items)" if len(bad) > 1 else "")))
    if f.measure == "failed" and not lacking and not bad:
        out[f.path] = sum(not bool(i[key]) for i in items)


def check_structure(data: dict, tid: str, findings: list[Finding]) -> dict[str, object]:
    """Check one parsed replay against the catalogue; return the values to compare by path.

    Required fields missing or null (``failure_attribution`` may be null): ``replay_field_missing``;
    a value of the wrong type: ``replay_field_type`` (both errors). Children are checked only
    when their parent is an object (or a list) of the right type.
    """
    where, out = f"{tid}/{REPLAY_FILE}", {}
    for f in REPLAY_FIELDS.values():
        if "[]." in f.path:
            _items(f, data, tid, where, out, findings)
            continue
        parent, _, key = f.path.rpartition(".")
        holder = data.get(parent) if parent else data
        if not isinstance(holder, dict):
            continue  # the parent is missing, null or not an object: reported on the parent
        v = holder.get(key)
        if key not in holder or (v is None and f.type != "object|null"):
            if f.required:
                findings.append(Finding("error", where, None, f.path, "replay_field_missing",
                                        f"{tid}: required field {f.path} is "
                                        f"{'null' if key in holder else 'missing'}"))
            continue
        if not _TYPE_OK[f.type](v, f):
            findings.append(Finding("error", where, None, f.path, "replay_field_type",
                                    f"{tid}: {f.path} = {v!r} is not {_type_text(f)}"))
        elif f.metric:
            out[f.path] = _value(f, v)
    return out


def _texts(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every text in a parsed JSON value, with its field path (``a.b[2]``)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _texts(v, f"{path}[{i}]")


def control_in_replay(data: dict, where: str) -> list[Finding]:
    """``control_characters`` (schema.checks) for a replay's text: one finding per file naming
    the fields whose text holds a NUL, another C0 control or a lone surrogate (kept as read;
    written as escapes such as ``\\x00``)."""
    hit = [p for p, text in _texts(data) if CONTROL_CHARACTERS.search(text)]
    if not hit:
        return []
    return [Finding(CHECKS["control_characters"].severity, where, None, hit[0],
                    "control_characters", f"{len(hit)} text field(s) hold control characters "
                    f"(NUL, other C0 controls, lone surrogates), kept as read and written as "
                    f"escapes such as \\x00: {', '.join(hit[:5])}"
                    + (f" and {len(hit) - 5} more" if len(hit) > 5 else ""))]


def replay_frame(run: Run, findings: list[Finding]) -> pd.DataFrame:
    """The ``rp:<field>`` values of every task's replay, on the index of ``run.tasks``.

    Unreadable replays (error), structure findings (:func:`check_structure`), tasks without a
    replay (one info) and replay folders of unknown tasks (warning) are appended to
    ``findings``; a task without a readable replay has <NA> throughout (not compared).
    """
    rows: dict[object, dict] = {}
    n_missing = 0
    for idx, tid, path in zip(run.tasks.index, run.tasks["task_id"], run.tasks["replay_path"],
                              strict=True):
        try:
            found = None if path is pd.NA or path is None else replay_file(run.path, path)
            if found is None:
                n_missing += 1
                continue
            data = run.replays[str(tid)]  # the run's one read of the file (its manifest stamp)
        except (RunLoadError, KeyError) as exc:
            findings.append(Finding("error", f"{tid}/{REPLAY_FILE}", None, None,
                                    "replay_unreadable", str(exc).strip("'").split(": ", 1)[-1]))
            continue
        rows[idx] = check_structure(data, str(tid), findings)
        findings += control_in_replay(data, f"{tid}/{REPLAY_FILE}")
    if n_missing:
        findings.append(Finding("info", run.task_file, None, "replay_path", "replay_missing",
                                f"{n_missing} of {len(run.tasks)} task(s) have no "
                                f"{REPLAY_FILE}"))
    known = set(run.tasks["task_id"].dropna().astype(str))
    for p in sorted(run.path.glob(f"*/{REPLAY_FILE}")):
        if p.parent.name not in known:
            findings.append(Finding("warning", f"{p.parent.name}/{REPLAY_FILE}", None, None,
                                    "replay_unknown_task", "replay of a task that is not in "
                                    f"{run.task_file}"))
    frame = pd.DataFrame.from_dict(rows, orient="index").reindex(run.tasks.index)
    return pd.DataFrame({_column(f): (frame[f.path] if f.path in frame else pd.Series(
        pd.NA, index=run.tasks.index, dtype=object)).astype(object).astype(_dtype(f))
        for f in COMPARED}, index=run.tasks.index)


def _invariant(f: ReplayField) -> Invariant:
    rp, metric = _column(f), f.metric
    if f.measure == "present":
        def test(r: pd.DataFrame) -> pd.Series:
            return (r[rp] == "object") == r[metric].notna()
    elif _dtype(f) == "Float64":
        def test(r: pd.DataFrame) -> pd.Series:
            return (r[rp] - r[metric]).abs() <= _tol(f.check)
    else:
        def test(r: pd.DataFrame) -> pd.Series:
            return r[rp] == r[metric]
    return Invariant(f.check, f.path, lambda r: _holds(test(r)), (rp, metric), (rp, metric),
                     file="replay")


#: One invariant per compared field: the replay value equals the task's (tolerance: CHECKS).
REPLAY_INVARIANTS: tuple[Invariant, ...] = tuple(_invariant(f) for f in COMPARED)


def check_replays(rec: pd.DataFrame, source_rows: list[int],
                  task_file: str) -> tuple[list[Finding], pd.Series]:
    """Compare every replay with its task's row (:data:`REPLAY_INVARIANTS`).

    Returns the findings and, per task, whether an error-level comparison failed.
    """
    return check_invariants(rec, source_rows, task_file, REPLAY_INVARIANTS,
                            report_skipped=False)


def failed_tasks(findings: list[Finding]) -> set[str]:
    """Task ids whose replay has an error finding (unreadable, missing field, wrong type)."""
    return {f.file.rsplit("/", 1)[0] for f in findings
            if f.severity == "error" and f.file.endswith(f"/{REPLAY_FILE}")}
