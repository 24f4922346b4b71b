# Over 400 lines (<= 500): the guide's per-task rules, their labels and the one pass that checks
# them; most of the length is the rule table.
"""The guide's per-task rules as vectorised checks on one reconciliation frame per run.

Private to :mod:`dabench_analysis.validate`. One row per task of ``task_metrics.csv``: every
catalogue column typed (flags ``boolean``, numbers ``Float64``, text ``string``), what the other
files say about the task (``tc_*`` from tool_calls.csv, ``traj_*`` from trajectory.csv,
``rp:<field>`` from its task_replay.json) and the value each formula expects (``x_<column>``).
Each rule of :data:`dabench_analysis.schema.checks.CHECKS` (severity, tolerance and guide
section there) is one vectorised test; a task whose inputs are missing passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._findings import Finding
from dabench_analysis.schema.checks import CALIBRATION_EDGES, CHECKS

TOKEN_TOLERANCE = CHECKS["token_conservation"].tolerance
#: §Key Metrics 11: analyst_score = 0.4 autonomy + 0.3 tool_efficiency + 0.3 verification_score.
ANALYST_WEIGHTS = {"autonomy_score": 0.4, "tool_efficiency": 0.3, "verification_score": 0.3}
#: §Critical Invariants: warn if time_accounting_ratio < 0.05 (95 % unaccounted).
TIME_RATIO_WARN = 0.05
#: §Troubleshooting "Health score < 7": time accounting gaps > 50 %, tool failure rate > 10 %.
GAP_LIMIT, TOOL_FAILURE_LIMIT = 0.5, 0.10
#: §Key Metrics 2: coordinator_interventions = coordinator_calls - 3 (calls beyond the baseline).
BASELINE_COORDINATOR_CALLS = 3
#: A confidence within this many units in the last place of a bucket edge is on it.
EDGE_ULPS = 8
STAGE_TIME_COLUMNS = [f"{p}_time" for p in schema.STAGES.values()]
_INVARIANT_CHECKS = frozenset(CHECKS)


@dataclass(frozen=True)
class Invariant:
    """One per-task rule: ``test(rec)`` is True where it holds or cannot be checked.

    ``column``: the field its findings name (a task_metrics column; a replay field when ``file``
    is "replay"); ``shows``: the rec columns its message prints beside it; ``needs``: the rec
    columns without which it is not run.
    """

    check: str
    column: str
    test: Callable[[pd.DataFrame], pd.Series]
    shows: tuple[str, ...]
    needs: tuple[str, ...]
    file: str = "task"

    @property
    def severity(self) -> str:
        return CHECKS[self.check].severity

    @property
    def key(self) -> str:
        return f"{self.check}:{self.column}"


def _holds(cond: pd.Series) -> pd.Series:
    return cond.astype("boolean").fillna(True).astype(bool)


def _tol(check: str) -> float:
    return (CHECKS[check].tolerance or 0.0) + 1e-12


def _rule(check: str, col: str, test: Callable[[pd.DataFrame], pd.Series],
          *shows: str) -> Invariant:
    """``test(rec)`` true where the rule holds; <NA> (inputs missing) counts as holding."""
    return Invariant(check, col, lambda r: _holds(test(r)), shows, (col, *shows))


def _near(check: str, col: str, expected: str, *shows: str) -> Invariant:
    """``|col - expected| <= tolerance`` of the check (``col == expected`` without one)."""
    return _rule(check, col, lambda r: (r[col] - r[expected]).abs() <= _tol(check)
                 if CHECKS[check].tolerance else r[col] == r[expected], expected, *shows)


def _f1(p: pd.Series, r: pd.Series) -> pd.Series:
    return (2 * p * r / (p + r)).mask((p + r) == 0, 0.0)


def _per(num: pd.Series, den: pd.Series) -> pd.Series:
    return num / den.where(den > 0)


def _at_least(x: pd.Series, edge: float) -> pd.Series:
    """``x >= edge`` on the decimal scale: within EDGE_ULPS units in the last place is on it."""
    return x >= edge - EDGE_ULPS * np.finfo(float).eps


def _expected_outcome(r: pd.DataFrame) -> pd.Series:
    """V2.1 item 4: correct if final_score >= 0.8; partial if executed and 0 < score < 0.8;
    failed otherwise; <NA> where the inputs do not decide."""
    score, ex = r["final_score"], r["execution_success"]
    # The guide's rule checks what the harness wrote: the outcome rule at the guide's constant,
    # never the analysis' success threshold (schema._outcome).
    outcome = schema.correct(score, schema.SUCCESS_THRESHOLD)
    correct, below = outcome.fillna(False), (~outcome).fillna(False)
    partial = (below & (score > 0) & ex).fillna(False)
    failed = (below & ((score <= 0) | ~ex)).fillna(False)
    out = np.select([correct, partial, failed], ["correct", "partial", "failed"], "")
    return pd.Series(out, index=r.index, dtype="string").replace("", pd.NA)


def _autonomy(r: pd.DataFrame) -> pd.Series:
    """1 - replan_count / max_replans, max_replans the run's one value (see schema.checks)."""
    replans, auto = r["replan_count"], r["autonomy_score"]
    m = (replans / (1 - auto)).where(((replans > 0) & (auto < 1)).fillna(False)).median()
    top = round(float(m)) if pd.notna(m) and round(float(m)) > 0 else pd.NA
    return (1 - replans / top).clip(0, 1).mask(replans == 0, 1.0)


def _understanding(r: pd.DataFrame) -> None:
    """§Key Metrics 5: activation of the required specialists, discovery, their maximum."""
    s, d, doc = (r[f"{k}_agent_used"].astype("Float64") for k in schema.columns.SPECIALISTS)
    docs = r["documents_required"].astype("Float64")
    act = (s + d + (doc * docs).mask(docs == 0, 0.0)) / (2 + docs)
    act_max = act.fillna(np.maximum((s + d) / 2, (s + d + doc) / 3))
    disc = (_per(r["relevant_tables_found"], r["tables_discovered"])
            + _per(r["relevant_columns_found"], r["columns_discovered"])) / 2
    r["x_du_max"] = (0.5 * act_max + 0.5).clip(upper=1.0)
    r["x_data_understanding_score"] = (0.5 * act + 0.5 * disc).clip(0, 1).mask(  # inflated: 1
        (r["data_understanding_score"] > r["x_du_max"] + _tol("data_understanding_inflation"))
        .fillna(False))
    r["x_specialist_participation"] = (s + d + doc) / 3


def _derive(r: pd.DataFrame) -> None:
    """The value each formula expects, ``x_<column>``, and the time accounting."""
    for v in ("answer", "column", "row"):
        r[f"x_{v}_f1"] = _f1(r[f"{v}_precision"], r[f"{v}_recall"])
    least = r[["pred_rows", "gold_rows"]].min(axis=1, skipna=False)
    for col, num, den in (("column_precision", r["matched_columns"], "pred_cols"),
                          ("column_recall", r["matched_columns"], "gold_cols"),
                          ("row_precision", least, "pred_rows"), ("row_recall", least, "gold_rows"),
                          ("tool_diversity", r["unique_tools_used"], "tool_calls"),
                          ("tool_efficiency", r["useful_tool_calls"], "tool_calls"),
                          ("tool_selection_accuracy", (r["useful_tool_calls"]
                                                       - r["tool_failures"]).clip(lower=0),
                           "tool_calls")):
        r[f"x_{col}"] = _per(num, r[den])
    r["x_replan_count"] = r["x_planner_revisions"] = (r["plan_attempts"] - 1).clip(lower=0)
    r["x_planner_dead_ends"] = (r["execution_attempts"] - 1).clip(lower=0)
    r["x_plan_execution_alignment"] = pd.Series(1.0, r.index, "Float64").where(
        r["first_try_success"].fillna(False))
    r["x_autonomy_score"] = _autonomy(r)
    r["x_coordinator_interventions"] = (r["coordinator_calls"] - BASELINE_COORDINATOR_CALLS).clip(lower=0)
    r["x_wasted_tool_calls"] = r["tool_calls"] - r["useful_tool_calls"]
    _understanding(r)
    r["x_triggered"] = r["verification_steps"] > 0
    r["x_approved"] = r["coordinator_final_decision"] == "APPROVE_FINAL"
    # final_answer_correct and confidence_correct as the guide defines them, at its 0.8 (they
    # check what the harness wrote, not the analysis' success threshold).
    r["x_correct"] = correct = schema.correct(r["final_score"], schema.SUCCESS_THRESHOLD)
    conf = r["confidence_score"]
    r["x_confidence_correct"] = _at_least(conf, schema.SUCCESS_THRESHOLD) & correct
    binary, score = (conf - correct.astype("Float64")).abs(), (conf - r["final_score"]).abs()
    err = r["confidence_error"]  # either reading of "correctness" (see schema.checks)
    r["x_confidence_error"] = binary.where(((err - binary).abs() <= (err - score).abs())
                                           .fillna(True), score)
    k = sum(_at_least(conf, e).astype("Int64") for e in CALIBRATION_EDGES).fillna(-1)
    r["x_calibration_bucket"] = pd.Series(pd.Categorical.from_codes(
        k.astype(int), schema.columns.CALIBRATION_BUCKETS), index=r.index).astype("string")
    r["x_analyst_score"] = sum(w * r[c] for c, w in ANALYST_WEIGHTS.items())
    r["x_outcome_status"] = _expected_outcome(r)
    stages = r[STAGE_TIME_COLUMNS]
    r["component_time"] = stages.sum(axis=1, min_count=1).mask(stages.isna().all(axis=1))
    r["time_ratio"] = r["component_time"] / r["execution_time"].where(r["execution_time"] > 0)
    r["overhead"] = r["execution_time"] - r["component_time"]


def _coordinator_ok(r: pd.DataFrame) -> pd.Series:
    d = r["coordinator_final_decision"]
    return _holds(r["coordinator_interventions"] == r["replan_count"] + r["x_planner_dead_ends"]) \
        & _holds(~(d == "REPLAN") | r["replan_requested"]) \
        & _holds(~(d == "RETRY_EXECUTION") | r["retry_requested"])


_E, _W, _S = "execution_attempts", "coordinator_final_decision", "data_understanding_score"
_FORMULAS = {  # check -> (column, the rec column it must equal); tolerance: CHECKS
    "tool_call_count_mismatch": ("tool_calls", "tc_rows"),
    "tool_failure_count_mismatch": ("tool_failures", "tc_failed"),
    "verification_outcome_mismatch": ("aat_verification_passed", "x_approved", _W),
    "trajectory_length_count": ("trajectory_length", "traj_steps"),
    "unique_tools_count": ("unique_tools_used", "tc_unique"),
    "planner_steps_count": ("planner_steps", "traj_planner"),
    "schema_exploration_steps_count": ("schema_exploration_steps", "traj_explore"),
    **{f"{c}_formula": (c, f"x_{c}") for c in (
        "answer_f1", "column_f1", "row_f1", "column_precision", "column_recall", "row_precision",
        "row_recall", "tool_diversity", "tool_efficiency", "tool_selection_accuracy",
        "wasted_tool_calls", "confidence_correct", "calibration_bucket", "analyst_score",
        "specialist_participation", "replan_count", "planner_revisions", "planner_dead_ends",
        "coordinator_interventions", "plan_execution_alignment", "confidence_error",
        "data_understanding_score")},
    "outcome_status_mismatch": ("outcome_status", "x_outcome_status"),
    "relevant_tables_heuristic": ("relevant_tables_found", "tables_discovered"),
    "relevant_columns_heuristic": ("relevant_columns_found", "matched_columns"),
    "verification_triggered_consistent": ("verification_triggered", "x_triggered",
                                          "verification_steps"),
    "legacy_verification_passed": ("verification_passed", "critic_verification_passed"),
    "legacy_verification_score": ("verification_score", "critic_verification_score"),
    "final_answer_correct_consistent": ("final_answer_correct", "x_correct", "final_score"),
}
INVARIANTS = (
    *[_near(check, *spec) for check, spec in _FORMULAS.items()],
    _rule("token_conservation", "total_tokens", lambda r: (r["traj_tokens"] - r["total_tokens"])
          .abs() < TOKEN_TOLERANCE, "traj_tokens"),
    _rule("time_accounting_low", "execution_time", lambda r: ~((r["time_ratio"] < TIME_RATIO_WARN)
          & (r["execution_time"] > 0)), "component_time", "time_ratio"),
    _rule("time_accounting_concurrent", "execution_time",
          lambda r: r["component_time"] <= r["execution_time"], "component_time"),
    _rule("missing_trajectory", "task_id", lambda r: r["traj_steps"].notna(), "traj_steps"),
    _rule("tool_steps_match", "tool_calls", lambda r: r["tc_rows"] == r["traj_tool_steps"],
          "tc_rows", "traj_tool_steps"),
    _rule("first_try_success_formula", "first_try_success", lambda r: ~r["first_try_success"]
          | (r["execution_success"] & (r[_E] == 1)), "execution_success", _E),
    _rule("autonomy_score_formula", "autonomy_score", lambda r: _holds(
          (r["autonomy_score"] - r["x_autonomy_score"]).abs() <= _tol("autonomy_score_formula"))
          & _holds(~(r["replan_count"] > 0) | (r["autonomy_score"] < 1)), "replan_count",
          "x_autonomy_score"),
    _rule("user_interventions_zero", "user_intervention_count",
          lambda r: r["user_intervention_count"] == 0),
    _rule("data_understanding_inflation", _S, lambda r: r[_S] <= r["x_du_max"]
          + _tol("data_understanding_inflation"), "x_du_max"),
    _rule("recovery_success_consistent", "recovery_success",
          lambda r: ~r["recovery_success"] | r["failure_detected"], "failure_detected"),
    *[_rule(f"recovered_after_{k}_consistent", f"recovered_after_{k}", lambda r, k=k: ~r[
        f"recovered_after_{k}"] | (~r["initial_answer_correct"] & r["final_answer_correct"]
                                   & r[f"{k}_requested"]), "initial_answer_correct",
            "final_answer_correct", f"{k}_requested") for k in ("replan", "retry")],
    _rule("branching_factor_range", "branching_factor", lambda r: r["branching_factor"] >= 1),
    _rule("unknown_failure_with_bucket", "failure_category", lambda r: r["outcome_error_type"]
          .isna() | (r["failure_category"].fillna("UNKNOWN_FAILURE") != "UNKNOWN_FAILURE"),
          "outcome_error_type"),
    _rule("replan_count_consistent", "replan_requested", lambda r: _holds(
          r["replan_requested"] == (r["replan_count"] > 0)) & _holds(
          ~r["replan_successful"] | r["replan_requested"]), "replan_count", "replan_successful"),
    _rule("retry_count_consistent", "retry_requested", lambda r: _holds(
          r["retry_requested"] == (r[_E] > 1)) & _holds(
          ~r["retry_successful"] | r["retry_requested"]), _E, "retry_successful"),
    _rule("coordinator_metrics_consistent", "coordinator_interventions", _coordinator_ok,
          "replan_count", _E, _W, "replan_requested", "retry_requested"),
)


_DTYPES = {"flag": "boolean", "id": "string", "text": "string", "enum": "string",
           "timestamp": "string"}


def _typed(tasks: pd.DataFrame, name: str) -> pd.Series:
    dtype = _DTYPES.get(schema.TASK_COLUMNS[name].kind, "Float64")
    if name not in tasks:
        return pd.Series(pd.NA, index=tasks.index, dtype=dtype)
    return tasks[name].astype(object).astype(dtype) if dtype == "boolean" \
        else tasks[name].astype(dtype)


def _side_counts(rec: pd.DataFrame, traj: pd.DataFrame | None,
                 calls: pd.DataFrame | None) -> None:
    """What tool_calls.csv and trajectory.csv say about each task (<NA>: not checkable); a
    run of repeated trials (a ``trial`` in the tasks and the side table) per task and trial."""
    na = pd.Series(pd.NA, index=rec.index, dtype="Float64")

    def keys(table: pd.DataFrame) -> list[str]:
        return ["task_id", "trial"] if "trial" in table and rec["trial"].notna().any() \
            else ["task_id"]

    def per_task(values: pd.Series, table: pd.DataFrame, how: str | Callable = "sum") -> pd.Series:
        by = keys(table)
        grouped = values.groupby([table[k] for k in by])
        agg = grouped.agg(how) if isinstance(how, str) else how(grouped)
        if len(by) == 1:
            return rec["task_id"].map(agg).astype("Float64")
        at = pd.MultiIndex.from_frame(rec[by].astype(object))
        return pd.Series(agg.reindex(at).to_numpy(), index=rec.index).astype("Float64")
    rec["tc_rows"] = rec["tc_failed"] = rec["tc_unique"] = na
    if calls is not None:
        rec["tc_rows"] = per_task(calls["task_id"], calls, "size").fillna(0)
        if "tool_name" in calls:
            rec["tc_unique"] = per_task(calls["tool_name"], calls, "nunique").fillna(0)
        if "success" in calls:  # a task with a call of unknown outcome: not checkable
            ok = calls["success"].astype("boolean")
            unknown = per_task(ok.isna().astype(int), calls).fillna(0)
            rec["tc_failed"] = per_task((~ok).fillna(False).astype(int), calls).fillna(0) \
                .mask(unknown > 0)
    rec["traj_steps"] = rec["traj_tokens"] = rec["traj_planner"] = na
    rec["traj_explore"] = rec["traj_tool_steps"] = na
    if traj is None:
        return
    rec["traj_steps"] = per_task(traj["task_id"], traj, "size")
    if "tokens" in traj:
        rec["traj_tokens"] = per_task(traj["tokens"], traj, lambda g: g.sum(min_count=1))
    for col, name, value in (("action", "traj_planner", "planner"),
                             ("phase", "traj_explore", "explore"), ("tool", "traj_tool_steps", "")):
        if col in traj:
            text = traj[col].astype("string").str.strip()
            hit = (text.fillna("") != "") if not value else (text == value).fillna(False)
            rec[name] = per_task(hit.astype(int), traj)


def reconciliation_frame(tasks: pd.DataFrame, trajectory: pd.DataFrame | None,
                         tool_calls: pd.DataFrame | None,
                         replay: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per task with the values every invariant compares (NA: not checkable);
    ``replay``: ``rp:<field>`` columns on the index of ``tasks``."""
    rec = pd.DataFrame({n: _typed(tasks, n) for n in schema.TASK_COLUMNS}, index=tasks.index)
    _derive(rec)
    _side_counts(rec, trajectory, tool_calls)
    return rec if replay is None else rec.join(replay)


_LABELS = {"component_time": "per-stage time", "time_ratio": "time accounting ratio",
           "overhead": "execution_time - per-stage time"}
#: The side-file column each ``tc_*`` / ``traj_*`` value is counted from (not-assessable notes).
SOURCES = {
    **{f"tc_{key}": f"{schema.TOOL_CALLS_FILE} {col}" for key, col in (
        ("rows", "task_id"), ("failed", "success"), ("unique", "tool_name"))},
    **{f"traj_{key}": f"{schema.TRAJECTORY_FILE} {col}" for key, col in (
        ("steps", "task_id"), ("tokens", "tokens"), ("planner", "action"), ("explore", "phase"),
        ("tool_steps", "tool"))}}


def _fmt(v: object) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return "<NA>"
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() else f"{v:.6g}"
    return str(v)


def _label(col: str) -> str:
    return "expected" if col.startswith("x_") else _LABELS.get(col) or col.replace(
        "tc_", f"{schema.TOOL_CALLS_FILE} ").replace("traj_", f"{schema.TRAJECTORY_FILE} ")


def _renamed(text: str, side_files: Mapping[str, str] | None) -> str:
    """``text`` with the eval-v2 side files named as this run's files (another harness's steps
    and tool calls come from its own file, not from trajectory.csv and tool_calls.csv)."""
    for file, name in (side_files or {}).items():
        text = text.replace(file, name)
    return text


def _finding(inv: Invariant, row: pd.Series, source_row: int, task_file: str,
             side_files: Mapping[str, str] | None = None) -> Finding:
    if inv.file == "replay":  # shows: the replay value, the task_metrics column
        msg = (f"{row['task_id']}: {schema.REPLAY_FILE} {inv.column} = "
               f"{_fmt(row[inv.shows[0]])} "
               f"but {task_file} row {source_row} has {_label(inv.shows[1])} = "
               f"{_fmt(row[inv.shows[1]])}")
        return Finding(inv.severity, f"{row['task_id']}/{schema.REPLAY_FILE}", None, inv.column,
                       inv.check, msg)
    shown = "".join(f", {_label(c)} {_fmt(row[c])}" for c in inv.shows)
    return Finding(inv.severity, task_file, source_row, inv.column, inv.check, _renamed(
        f"{row['task_id']}: {inv.column} = {_fmt(row[inv.column])}{shown} "
        f"(rule: {CHECKS[inv.check].rule})", side_files))


def _outcome(inv: Invariant, rec: pd.DataFrame) -> pd.Series | str:
    """Where ``inv`` holds (a bool per task), or why it could not be evaluated."""
    try:
        out = inv.test(rec)
    except Exception as exc:  # noqa: BLE001 - a rule that cannot run is reported, not raised
        return f"{type(exc).__name__}: {exc}"
    if not isinstance(out, pd.Series) or len(out) != len(rec) or not out.index.equals(rec.index):
        return f"returned {type(out).__name__}, not one value per task"
    return out.astype("boolean").fillna(True).astype(bool)


def check_invariants(rec: pd.DataFrame, source_rows: list[int], task_file: str,
                     invariants: Sequence[Invariant] = INVARIANTS, *,
                     report_skipped: bool = True,
                     side_files: Mapping[str, str] | None = None) -> tuple[list[Finding], pd.Series]:
    """Run ``invariants``; return the findings and, per task, whether an error-level one failed.

    An invariant whose inputs are missing for every task (a column absent from task_metrics.csv
    or from a side file, see :data:`SOURCES`) is not run; with ``report_skipped`` it is
    reported once as ``invariant_skipped`` (info, "not assessable"). Task findings name ``task_file``, the
    task's row and column; replay findings ``<task_id>/task_replay.json`` and the field.
    ``side_files`` (``trajectory.csv`` / ``tool_calls.csv`` -> a name) names the files the
    steps and tool calls came from in the messages, for another harness's run (default: the
    eval-v2 names).
    """
    findings: list[Finding] = []
    failed = pd.Series(False, index=rec.index)
    if rec.empty:
        return findings, failed
    run = [i for i in invariants if not any(rec[c].isna().all() for c in i.needs)]
    findings += [Finding("info", task_file, None, i.column, "invariant_skipped",
                         f"{i.check} not checked (not assessable): no values for "
                         + _renamed(' / '.join(SOURCES.get(c, c) for c in i.needs), side_files))
                 for i in invariants if report_skipped and i not in run]
    for inv in run:
        held = _outcome(inv, rec)
        if isinstance(held, str):
            findings.append(Finding("warning", task_file, None, inv.column, inv.check,
                                    f"{inv.check} could not be checked: {held[:200]}"))
            continue
        if held.all():
            continue
        idx = rec.index[~held.to_numpy()]
        findings += [_finding(inv, row, source_rows[i], task_file, side_files)
                     for i, row in rec.loc[idx].iterrows()]

        if inv.severity == "error":
            failed |= rec.index.isin(idx)
    return findings, failed
