"""The seed's cross-file invariants as pandera checks on one reconciliation frame per run,
and the health components computed from it.

Private to :mod:`dabench_analysis.validate`. One row per task of ``task_metrics.csv``, with what
the other files say about it (tool-call rows and failures from ``tool_calls.csv``, the token sum
from ``trajectory.csv``, the score in ``task_replay.json``). Each invariant of seed 000
(§Critical Invariants, §Hardening Features 1 "Artifact Reconciliation", V2.1 item 4) is one
vectorised :class:`pandera.Check`; a task whose inputs are missing passes (it is not checkable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from dabench_analysis import schema
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.replay import read_replay, replay_file
from dabench_analysis.load.run import Run

#: seed 000 §Critical Invariants: abs(trajectory_tokens - metrics_tokens) < 100.
TOKEN_TOLERANCE = 100


#: analyst_score = 0.4 autonomy_score + 0.3 tool_efficiency + 0.3 verification_score (§Key
#: Metrics 11), to this absolute tolerance.
ANALYST_WEIGHTS = {"autonomy_score": 0.4, "tool_efficiency": 0.3, "verification_score": 0.3}


ANALYST_TOLERANCE = 1e-3


#: §Critical Invariants: warn if time_accounting_ratio < 0.05 (95 % unaccounted).
TIME_RATIO_WARN = 0.05


REPLAY_TOLERANCE = 1e-6


#: §Troubleshooting "Health score < 7": time accounting gaps > 50 %, tool failure rate > 10 %.
GAP_LIMIT, TOOL_FAILURE_LIMIT = 0.5, 0.10


STAGE_TIME_COLUMNS = [f"{p}_time" for p in schema.STAGES.values()]


@dataclass(frozen=True)
class Invariant:
    """One per-task invariant: ``test(rec)`` is True where it holds or cannot be checked."""

    check: str
    column: str
    severity: str
    test: Callable[[pd.DataFrame], pd.Series]
    message: str  # str.format over the row of the reconciliation frame
    needs: tuple[str, ...]


def _holds(cond: pd.Series) -> pd.Series:
    return cond.astype("boolean").fillna(True).astype(bool)


def _expected_outcome(rec: pd.DataFrame) -> pd.Series:
    """V2.1 item 4: correct if final_score >= 0.8; partial if executed and 0 < score < 0.8;
    failed otherwise; <NA> where the inputs do not decide."""
    score = rec["final_score"].astype("Float64")
    ex = rec["execution_success"].astype("boolean")
    correct = (score >= schema.SUCCESS_THRESHOLD).fillna(False)
    below = (score < schema.SUCCESS_THRESHOLD).fillna(False)
    partial = (below & (score > 0) & ex).fillna(False)
    failed = (below & ((score <= 0) | ~ex)).fillna(False)
    out = np.select([correct, partial, failed], ["correct", "partial", "failed"], "")
    return pd.Series(out, index=rec.index, dtype="string").replace("", pd.NA)


INVARIANTS = (
    Invariant("tool_call_count_mismatch", "tool_calls", "error",
              lambda r: _holds(r["tc_rows"] == r["tool_calls"]),
              "{task_id}: tool_calls = {tool_calls} but tool_calls.csv has {tc_rows} row(s)",
              ("tool_calls", "tc_rows")),
    Invariant("tool_failure_count_mismatch", "tool_failures", "error",
              lambda r: _holds(r["tc_failed"] == r["tool_failures"]),
              "{task_id}: tool_failures = {tool_failures} but tool_calls.csv has {tc_failed} "
              "failed call(s)", ("tool_failures", "tc_failed")),
    Invariant("token_conservation", "total_tokens", "error",
              lambda r: _holds((r["traj_tokens"] - r["total_tokens"]).abs() < TOKEN_TOLERANCE),
              "{task_id}: total_tokens = {total_tokens} but trajectory.csv sums to "
              "{traj_tokens} (|difference| must be < 100)", ("total_tokens", "traj_tokens")),
    Invariant("verification_outcome_mismatch", "aat_verification_passed", "error",
              lambda r: _holds(r["aat_verification_passed"].astype("boolean") == (
                  r["coordinator_final_decision"].astype("string") == "APPROVE_FINAL")),
              "{task_id}: aat_verification_passed = {aat_verification_passed} but "
              "coordinator_final_decision = {coordinator_final_decision}",
              ("aat_verification_passed", "coordinator_final_decision")),
    Invariant("analyst_score_formula", "analyst_score", "error",
              lambda r: _holds((r["analyst_score"] - r["analyst_expected"]).abs()
                               <= ANALYST_TOLERANCE),
              "{task_id}: analyst_score = {analyst_score} but 0.4 autonomy_score + 0.3 "
              "tool_efficiency + 0.3 verification_score = {analyst_expected:.6g}",
              ("analyst_score", "analyst_expected")),
    Invariant("outcome_status_mismatch", "outcome_status", "error",
              lambda r: _holds(r["outcome_status"].astype("string") == r["outcome_expected"]),
              "{task_id}: outcome_status = {outcome_status} but final_score = {final_score} and "
              "execution_success = {execution_success} make it {outcome_expected}",
              ("outcome_status", "outcome_expected")),
    Invariant("time_accounting_low", "execution_time", "warning",
              lambda r: _holds(~((r["time_ratio"] < TIME_RATIO_WARN) & (r["execution_time"] > 0))),
              "{task_id}: per-stage time {component_time:.3g} s is {time_ratio:.2%} of the "
              "wall-clock execution_time {execution_time:.3g} s (< 5 %: time mostly unaccounted)",
              ("execution_time", "component_time")),
    Invariant("time_accounting_concurrent", "execution_time", "info",
              lambda r: _holds(r["component_time"] <= r["execution_time"]),
              "{task_id}: per-stage time {component_time:.3g} s exceeds the wall-clock "
              "execution_time {execution_time:.3g} s (concurrent execution)",
              ("execution_time", "component_time")),
    Invariant("replay_score_mismatch", "final_score", "error",
              lambda r: _holds((r["replay_score"] - r["final_score"]).abs() <= REPLAY_TOLERANCE),
              "{task_id}: final_score = {final_score} but task_replay.json has "
              "evaluation_result.final_score = {replay_score}", ("final_score", "replay_score")),
)


_INVARIANT_CHECKS = {i.check for i in INVARIANTS} | {"unknown_task_id", "missing_trajectory"}


_SCHEMA = pa.DataFrameSchema(checks=[pa.Check(i.test, name=i.check) for i in INVARIANTS],
                             name="eval-v2 cross-file invariants")


def _num(tasks: pd.DataFrame, col: str, dtype: str = "Float64") -> pd.Series:
    if col in tasks:
        return tasks[col].astype(dtype) if dtype else tasks[col]
    return pd.Series(pd.NA, index=tasks.index, dtype=dtype or "object")


def reconciliation_frame(tasks: pd.DataFrame, trajectory: pd.DataFrame | None,
                         tool_calls: pd.DataFrame | None,
                         replay_scores: pd.Series | None) -> pd.DataFrame:
    """One row per task with the values every invariant compares (NA: not checkable)."""
    rec = pd.DataFrame({"task_id": tasks["task_id"].astype("string")}, index=tasks.index)
    for col in ("tool_calls", "tool_failures", "total_tokens"):
        rec[col] = _num(tasks, col, "Int64")
    for col in ("final_score", "analyst_score", "execution_time", *ANALYST_WEIGHTS):
        rec[col] = _num(tasks, col)
    for col in ("aat_verification_passed", "execution_success"):
        rec[col] = _num(tasks, col, "boolean")
    for col in ("coordinator_final_decision", "outcome_status"):
        rec[col] = _num(tasks, col, "")
    rec["analyst_expected"] = sum(w * rec[c] for c, w in ANALYST_WEIGHTS.items())
    rec["outcome_expected"] = _expected_outcome(rec)
    stages = [c for c in STAGE_TIME_COLUMNS if c in tasks]
    rec["component_time"] = (tasks[stages].astype("Float64").sum(axis=1, min_count=1)
                             if stages else pd.Series(pd.NA, index=tasks.index, dtype="Float64"))
    wall = rec["execution_time"].where(rec["execution_time"] > 0)
    rec["time_ratio"] = rec["component_time"] / wall
    by_task = rec["task_id"]
    na = pd.Series(pd.NA, index=rec.index, dtype="Int64")
    rec["tc_rows"] = rec["tc_failed"] = rec["traj_tokens"] = na
    if tool_calls is not None:
        rec["tc_rows"] = by_task.map(tool_calls.groupby("task_id").size()).fillna(0) \
            .astype("Int64")
        if "success" in tool_calls:
            ok = tool_calls["success"].astype("boolean")
            per_task = pd.DataFrame({"failed": ~ok, "unknown": ok.isna()}).groupby(
                tool_calls["task_id"]).sum()  # a call of unknown outcome: not checkable
            failed = per_task["failed"].where(per_task["unknown"] == 0)
            rec["tc_failed"] = by_task.map(failed).astype("Float64").fillna(0).astype("Int64")
            rec.loc[by_task.isin(failed.index[failed.isna()]).fillna(False), "tc_failed"] = pd.NA
    if trajectory is not None and "tokens" in trajectory:
        tokens = trajectory.groupby("task_id")["tokens"].sum(min_count=1)
        rec["traj_tokens"] = by_task.map(tokens).astype("Int64")
    rec["replay_score"] = (by_task.map(replay_scores).astype("Float64")
                           if replay_scores is not None else
                           pd.Series(pd.NA, index=rec.index, dtype="Float64"))
    return rec


def check_invariants(rec: pd.DataFrame, source_rows: list[int],
                     task_file: str) -> tuple[list[Finding], pd.Series]:
    """Run every invariant; return the findings and, per task, whether an error-level one failed.

    Invariants whose inputs are missing for every task are reported once as
    ``invariant_skipped`` (info).
    """
    findings: list[Finding] = []
    failed = pd.Series(False, index=rec.index)
    for inv in INVARIANTS:
        if rec.empty or any(rec[c].isna().all() for c in inv.needs):
            if not rec.empty:
                findings.append(Finding("info", task_file, None, inv.column, "invariant_skipped",
                                        f"{inv.check} not checked: no values for "
                                        f"{' / '.join(inv.needs)}"))
    try:
        _SCHEMA.validate(rec, lazy=True)
        return findings, failed
    except SchemaErrors as exc:
        cases = exc.failure_cases
    by_check = {i.check: i for i in INVARIANTS}
    for check, grp in cases.groupby("check", sort=False):
        inv = by_check[check]
        idx = pd.Index(grp["index"].dropna().unique())
        sub = rec.loc[idx].astype(object).where(rec.loc[idx].notna(), "<NA>")
        for i, row in sub.iterrows():
            try:
                msg = inv.message.format(**row)
            except (ValueError, TypeError):
                msg = f"{row['task_id']}: {inv.check}"
            findings.append(Finding(inv.severity, task_file, source_rows[i], inv.column,
                                    inv.check, msg))
        if inv.severity == "error":
            failed |= rec.index.isin(idx)
    return findings, failed


def orphan_findings(task_ids: pd.Series, table: pd.DataFrame, file: str) -> list[Finding]:
    """Task ids in a side table that task_metrics.csv does not have (one finding per id)."""
    if table is None or table.empty or "task_id" not in table:
        return []
    known = set(task_ids.dropna().astype(str))
    ids = table["task_id"].astype("string")
    orphan = ids.notna() & ~ids.isin(known)
    out = []
    for tid, idx in table.index[orphan.to_numpy()].to_series().groupby(ids[orphan]):
        rows = tuple(int(i) + 1 for i in idx)
        out.append(Finding("error", file, rows[0], "task_id", "unknown_task_id",
                           f"task_id {tid!r} ({len(rows)} row(s)) is not in task_metrics.csv",
                           rows))
    return out


def missing_steps(rec: pd.DataFrame, trajectory: pd.DataFrame | None, source_rows: list[int],
                  task_file: str) -> list[Finding]:
    """Tasks without any trajectory step (§Hardening Features 1: trajectory completeness)."""
    if trajectory is None or trajectory.empty:
        return []
    have = set(trajectory["task_id"].dropna().astype(str))
    miss = ~rec["task_id"].isin(have).fillna(False).to_numpy()
    if not miss.any():
        return []
    ids = rec["task_id"][miss].tolist()
    rows = tuple(source_rows[i] for i in np.flatnonzero(miss))
    shown = ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return [Finding("warning", task_file, rows[0] if len(rows) == 1 else None, "task_id",
                    "missing_trajectory", f"no trajectory.csv steps for {shown}", rows)]


def replay_scores(run: Run, findings: list) -> pd.Series:
    """task_id -> ``evaluation_result.final_score`` of each readable replay (§Replay Artifacts).

    Unreadable replays (error), replays without a numeric score (warning), tasks without a
    replay (info) and replay folders of unknown tasks (warning) are appended to ``findings``.
    """
    scores = {}
    n_missing = 0
    for tid, path in zip(run.tasks["task_id"], run.tasks["replay_path"], strict=True):
        where = f"{tid}/task_replay.json"
        try:
            found = None if path is pd.NA else replay_file(run.path, path)
            if found is None:
                n_missing += 1
                continue
            data = read_replay(found)
        except RunLoadError as exc:
            findings.append(Finding("error", where, None, None, "replay_unreadable",
                                    str(exc).split(": ", 1)[-1]))
            continue
        score = (data.get("evaluation_result") or {}).get("final_score") \
            if isinstance(data.get("evaluation_result"), dict) else None
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            findings.append(Finding("warning", where, None, "evaluation_result.final_score",
                                    "replay_score_missing", "no numeric "
                                    "evaluation_result.final_score; not compared"))
            continue
        scores[str(tid)] = float(score)
    if n_missing:
        findings.append(Finding("info", run.task_file, None, "replay_path", "replay_missing",
                                f"{n_missing} of {len(run.tasks)} task(s) have no "
                                "task_replay.json"))
    known = set(run.tasks["task_id"].dropna().astype(str))
    for p in sorted(run.path.glob("*/task_replay.json")):
        if p.parent.name not in known:
            findings.append(Finding("warning", f"{p.parent.name}/task_replay.json", None, None,
                                    "unknown_task_id", "replay of a task that is not in "
                                    f"{run.task_file}"))
    return pd.Series(scores, dtype="float64")
