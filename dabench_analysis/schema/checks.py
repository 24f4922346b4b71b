# Over 400 lines (<= 500): the catalogue of checks is one table, with the text check beside it.
"""The checks of :func:`dabench_analysis.validate_run` as data: one entry per check name with its
severity, tolerance, the eval-v2 guide's section (``docs/reference/eval-v2.md``) and its rule.

The validate layer reads severities and tolerances from here (never restating them), the tests
break each check once (``tests/test_validate_rules.py`` fails for an entry without a break
test), and :func:`checks_markdown` renders the table for the README.

Not listed: the loader's per-value checks (``flag_value``, ``range``, ``enum_value``, ...; see
:mod:`dabench_analysis.load._rules`), which enforce each column's documented range and
vocabulary while reading, and the availability notes of ``validate_run`` itself
(``missing_file``, ``absent_column``).

Notes
-----
Where the guide names a rule but not its formula, the rule here is our reading, said as such:

* coordinator consistency (§Recent Fixes names ``replan_count_consistent``,
  ``retry_count_consistent``, ``coordinator_metrics_consistent`` as diagnostic-only warnings):
  a replan is requested exactly when ``replan_count > 0``; a retry exactly when
  ``execution_attempts > 1`` (each coordinator retry is one more execution attempt, §Key
  Metrics 3 ``planner_dead_ends = execution_attempts - 1``); every intervention is a replan or
  a retry; a final decision REPLAN / RETRY_EXECUTION means that intervention was requested.
* ``autonomy_score = 1 - replans / max_replans`` (§Key Metrics 2): eval-v2 does not write
  ``max_replans``; it is taken as the run's one value, the median of ``replan_count / (1 -
  autonomy_score)`` over tasks with replans, rounded to an integer.
* ``calibration_bucket`` (§Key Metrics 10): very_low (0-0.2) ... very_high (0.8-1.0). The guide's
  ``confidence_correct`` counts conf >= 0.8 as high, so a bucket includes its lower edge and 1.0
  is very_high: edges are compared with ``>=`` against the decimals 0.2, 0.4, 0.6, 0.8 (never
  ``int(conf / 0.2)``, which puts 0.6 in medium); a value within 8 units in the last place of
  an edge is on it, as in ``stats.binning``.
* ``confidence_error = |conf - correctness|``: the guide does not say whether correctness is
  the 0/1 outcome (final_score >= 0.8) or final_score; either is accepted.
* ``control_characters`` (ours; the guide says nothing of text encoding): a NUL or another
  invisible control character in free text is kept in the frames as read and reported as a
  warning, once per file and column with its rows; the files the toolkit writes show it as
  ``\\x00``.
* ``run_id`` (§Data Model Schema 1-3, Identification): every file of a run directory names
  the run, so task_metrics.csv holds one value and the side files' rows carry it (when
  task_metrics.csv itself is mixed, a side-file row is compared with its set of values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

__all__ = ["CALIBRATION_EDGES", "CHECKS", "CONTROL_CHARACTERS", "Check", "control_mask", "checks_markdown",
           "checks_reading", "checks_table"]

#: Lower edges of the low ... very_high calibration buckets (§Key Metrics 10).
CALIBRATION_EDGES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)

TM, TRAJ, CALLS, REPLAY = ("task_metrics.csv", "trajectory.csv", "tool_calls.csv",
                           "task_replay.json")

#: Characters of free text a reader cannot see and some writers refuse (LaTeX stops at NUL and
#: DEL, a lone surrogate cannot be encoded as UTF-8): the C0 controls except tab, line feed and
#: carriage return (the text's own layout), DEL, the C1 controls (U+0080-U+009F), and UTF-16
#: surrogates not paired (JSON's ``"\ud800"``). ``control_characters`` finds them; every
#: writer shows them as escapes (:func:`dabench_analysis.export.visible`).
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
#: The same controls in UTF-8 bytes (a file is scanned before its text columns are read).
CONTROL_BYTES = re.compile(b"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")
#: The same for Arrow-backed strings (which cannot hold a lone surrogate).
_CONTROL_PATTERN = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"


def control_mask(values: pd.Series) -> pd.Series:
    r"""Which values are text holding a :data:`CONTROL_CHARACTERS` character.

    Parameters
    ----------
    values : Series
        Any dtype; only text cells (``str``) can hit.

    Returns
    -------
    Series of bool
        Same index; False for missing and non-text values.

    Examples
    --------
    >>> control_mask(pd.Series(["ok", "a\x00b", None, 3, "tab\tand\nline"])).tolist()
    [False, True, False, False, False]
    """
    if isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow":
        return values.str.contains(_CONTROL_PATTERN, regex=True, na=False).astype(bool)
    texts = [v if isinstance(v, str) else "" for v in values.tolist()]
    hit = CONTROL_CHARACTERS.search("\n".join(texts)) is not None  # "\n" is none: one search
    return pd.Series([hit and CONTROL_CHARACTERS.search(v) is not None for v in texts],
                     index=values.index, dtype=bool)


@dataclass(frozen=True)
class Check:
    """One check of ``validate_run``.

    Attributes
    ----------
    name : str
        The ``check`` of its findings.
    severity : {"error", "warning", "info"}
    section : str
        Where the guide (seed 000) states the rule.
    rule : str
        The rule in one line.
    tolerance : float or None
        Largest absolute difference accepted (None: compared exactly).
    unit : str
        Unit of the tolerance ("" for [0, 1] scores, " s", " tokens").
    strict : bool
        The difference must be strictly below ``tolerance`` (token conservation: < 100).
    file : str
        The file its findings name: task_metrics.csv, trajectory.csv, tool_calls.csv or
        ``<task>/task_replay.json``.
    threshold : str
        For a check with a threshold rather than a tolerance, the threshold in words.
    reads : tuple of str
        Columns of trajectory.csv / tool_calls.csv it reads, as ``"<file>:<column>"``: a file
        without one of them (another harness version) leaves the check not assessable, and
        ``validate_run`` names the check beside the absent column.
    """

    name: str
    severity: str
    section: str
    rule: str
    tolerance: float | None = None
    unit: str = ""
    strict: bool = False
    file: str = TM
    threshold: str = ""
    reads: tuple[str, ...] = ()

    @property
    def tolerance_text(self) -> str:
        """``"exact"``, ``"<= 0.001"``, ``"< 100 tokens"`` or the threshold."""
        if self.threshold:
            return self.threshold
        if self.tolerance is None:
            return "exact"
        return f"{'<' if self.strict else '<='} {self.tolerance:g}{self.unit}"


_K1, _K2, _K3, _K4 = ("§Key Metrics 1 (Correctness)", "§Key Metrics 2 (Autonomy)",
                      "§Key Metrics 3 (Planning)", "§Key Metrics 4 (Tool Usage)")
_K5, _K6, _K7, _K8 = ("§Key Metrics 5 (Data Understanding Metrics)",
                      "§Key Metrics 6 (Verification Metrics)", "§Key Metrics 7 (Recovery)",
                      "§Key Metrics 8 (Trajectory)")
_K10, _CI, _RA = ("§Key Metrics 10 (Confidence & Calibration)", "§Critical Invariants",
                  "§Replay Artifacts (Hardening Features 2; Data Model 4)")
_COORD = "§Recent Fixes (coordinator consistency, diagnostic-only warnings)"
_MAS = "V2.1 Phase 0 Task 2 (MAS recovery effectiveness)"
_E3 = 1e-3


def _in(file: str, *columns: str) -> tuple[str, ...]:
    return tuple(f"{file}:{c}" for c in columns)


_TC_ID, _TRAJ_ID = _in(CALLS, "task_id"), _in(TRAJ, "task_id")


def _c(name, severity, section, rule, tolerance=None, **kw) -> Check:
    return Check(name, severity, section, rule, tolerance, **kw)


_CHECKS = [
    # Cross-file reconciliation (§Critical Invariants, §Hardening Features 1)
    _c("tool_call_count_mismatch", "error", _CI, "tool_calls = number of tool_calls.csv rows "
       "of the task", reads=_TC_ID),
    _c("tool_failure_count_mismatch", "error", _CI, "tool_failures = number of failed "
       "tool_calls.csv rows of the task", reads=_in(CALLS, "task_id", "success")),
    _c("token_conservation", "error", _CI, "|sum of trajectory.csv tokens - total_tokens| < 100",
       100, unit=" tokens", strict=True, reads=_in(TRAJ, "task_id", "tokens")),
    _c("verification_outcome_mismatch", "error", f"{_CI}; {_K6}", "aat_verification_passed = 1 "
       "exactly when coordinator_final_decision = APPROVE_FINAL"),
    _c("time_accounting_low", "warning", _CI, "per-stage time / execution_time >= 0.05 (else "
       "95 % of the wall clock is unaccounted)", threshold="ratio < 0.05"),
    _c("time_accounting_concurrent", "info", _CI, "per-stage time <= execution_time (more means "
       "concurrent execution)", threshold="ratio > 1"),
    _c("unknown_task_id", "error", "§Hardening Features 1 (Artifact Reconciliation)",
       "every task_id of trajectory.csv and tool_calls.csv is in task_metrics.csv",
       file=f"{TRAJ}, {CALLS}", reads=_TRAJ_ID + _TC_ID),
    _c("run_id_mixed", "error", "§Data Model Schema 1 (Identification: run_id)",
       "task_metrics.csv holds one run_id value (a run directory is one run)"),
    _c("run_id_mismatch", "error", "§Data Model Schema 2 and 3 (Identification: run_id)",
       "the run_id of every trajectory.csv and tool_calls.csv row (when the file has the "
       "column) is task_metrics.csv's", file=f"{TRAJ}, {CALLS}",
       reads=_in(TRAJ, "run_id") + _in(CALLS, "run_id")),
    _c("missing_trajectory", "warning", "§Hardening Features 1 (trajectory completeness)",
       "every task has trajectory.csv steps", reads=_TRAJ_ID),
    _c("parent_step_invalid", "warning", "§Data Model Schema 2 (Identification)", "parent_step_id"
       " names a step of the same task, and following parents never returns to a step",
       file=TRAJ, reads=_in(TRAJ, "task_id", "step_id", "parent_step_id")),
    _c("missing_time_data", "warning", "§Troubleshooting (Missing trajectory duration)",
       "trajectory.csv duration_seconds is filled (empty: time validation from it is skipped)",
       file=TRAJ),
    _c("trajectory_length_count", "error", _K8, "trajectory_length = number of trajectory.csv "
       "steps of the task", reads=_TRAJ_ID),
    _c("tool_steps_match", "warning", "§Data Model Schema 3 (tool_calls.csv)", "tool_calls.csv "
       "rows of a task = its trajectory.csv steps with a tool",
       reads=_TC_ID + _in(TRAJ, "task_id", "tool")),
    _c("unique_tools_count", "error", _K4, "unique_tools_used = |{tool_name}| of the task's "
       "tool_calls.csv rows", reads=_in(CALLS, "task_id", "tool_name")),
    _c("planner_steps_count", "warning", _K3, "planner_steps = count(trajectory.csv action = "
       "\"planner\")", reads=_in(TRAJ, "task_id", "action")),
    _c("schema_exploration_steps_count", "warning", _K5, "schema_exploration_steps = "
       "count(trajectory.csv phase = \"explore\")", reads=_in(TRAJ, "task_id", "phase")),
    _c("control_characters", "warning", "docs: Faults", "free text holds no control "
       "character (C0 but tab and line ends, DEL, C1) and no lone surrogate; kept as read, written as "
       "visible escapes (\\x00)"),
    _c("invariant_skipped", "info", "docs: Reports (inputs)", "a check "
       "whose inputs are absent for every task is listed once, not run"),
    # 1. Correctness
    *[_c(f"{lvl}_f1_formula", "error", _K1, f"{lvl}_f1 = 2 P R / (P + R) of {lvl}_precision "
         f"and {lvl}_recall (0 when P + R = 0)", _E3) for lvl in ("answer", "column", "row")],
    _c("column_precision_formula", "error", _K1, "column_precision = matched_columns / "
       "pred_cols", _E3),
    _c("column_recall_formula", "error", _K1, "column_recall = matched_columns / gold_cols", _E3),
    _c("row_precision_formula", "error", _K1, "row_precision = min(pred_rows, gold_rows) / "
       "pred_rows", _E3),
    _c("row_recall_formula", "error", _K1, "row_recall = min(pred_rows, gold_rows) / gold_rows",
       _E3),
    # 2. Autonomy, 3. Planning
    _c("first_try_success_formula", "error", _K2, "first_try_success = 1 only with "
       "execution_success = 1 and execution_attempts = 1 (succeeded and attempts = 1)"),
    _c("replan_count_formula", "error", _K2, "replan_count = max(0, plan_attempts - 1)"),
    _c("autonomy_score_formula", "error", _K2, "autonomy_score = 1 - replan_count / max_replans "
       "(max_replans: the run's one value; 1 without replans)", _E3),
    _c("coordinator_interventions_formula", "error", _K2, "coordinator_interventions = "
       "max(0, coordinator_calls - 3)"),
    _c("user_interventions_zero", "warning", _K2, "user_intervention_count = 0 (autonomous)"),
    _c("planner_revisions_formula", "error", _K3, "planner_revisions = max(0, plan_attempts - 1)"),
    _c("planner_dead_ends_formula", "error", _K3, "planner_dead_ends = max(0, "
       "execution_attempts - 1)"),
    _c("plan_execution_alignment_formula", "error", _K3, "plan_execution_alignment = 1.0 when "
       "first_try_success = 1", _E3),
    # 4. Tool usage
    _c("tool_diversity_formula", "error", _K4, "tool_diversity = unique_tools_used / tool_calls",
       _E3),
    _c("wasted_tool_calls_formula", "error", _K4, "wasted_tool_calls = tool_calls - "
       "useful_tool_calls"),
    _c("tool_efficiency_formula", "error", _K4, "tool_efficiency = useful_tool_calls / "
       "tool_calls", _E3),
    _c("tool_selection_accuracy_formula", "error", _K4, "tool_selection_accuracy = "
       "max(0, useful_tool_calls - tool_failures) / tool_calls", _E3),
    # 5. Data understanding
    _c("data_understanding_inflation", "error", f"§Troubleshooting; {_K5}",
       "data_understanding_score <= min(1, 0.5 specialist_activation + 0.5), its theoretical "
       "maximum", _E3),
    _c("data_understanding_score_formula", "error", _K5, "data_understanding_score = 0.5 "
       "activated / (2 + documents_required) + 0.5 (relevant_tables_found / tables_discovered "
       "+ relevant_columns_found / columns_discovered) / 2", _E3),
    _c("relevant_tables_heuristic", "warning", _K5, "relevant_tables_found = tables_discovered "
       "(heuristic: all discovered)"),
    _c("relevant_columns_heuristic", "warning", _K5, "relevant_columns_found = matched_columns"),
    # 6. Verification
    _c("verification_triggered_consistent", "error", _K6, "verification_triggered = 1 exactly "
       "when verification_steps (critic actions) > 0"),
    _c("legacy_verification_passed", "error", _K6, "verification_passed = "
       "critic_verification_passed (legacy)"),
    _c("legacy_verification_score", "error", _K6, "verification_score = "
       "critic_verification_score (legacy)", 1e-6),
    # 7. Recovery and MAS effectiveness
    _c("recovery_success_consistent", "error", _K7, "recovery_success = 1 only with "
       "failure_detected = 1 (recovered after a failure)"),
    _c("final_answer_correct_consistent", "error", f"{_MAS}; V2.1 item 4",
       "final_answer_correct = 1 exactly when final_score >= 0.8"),
    _c("recovered_after_replan_consistent", "error", _MAS, "recovered_after_replan = 1 only with "
       "initial_answer_correct = 0, final_answer_correct = 1 and replan_requested = 1"),
    _c("recovered_after_retry_consistent", "error", _MAS, "recovered_after_retry = 1 only with "
       "initial_answer_correct = 0, final_answer_correct = 1 and retry_requested = 1"),
    # 8. Trajectory, 9. Failure taxonomy
    _c("branching_factor_range", "error", _K8, "branching_factor >= 1"),
    _c("unknown_failure_with_bucket", "warning", "V2.1 item 1 (Deterministic Failure "
       "Attribution)", "no failure_category UNKNOWN_FAILURE (or missing) when "
       "outcome_error_type is set"),
    _c("outcome_status_mismatch", "error", "V2.1 item 4", "outcome_status correct if "
       "final_score >= 0.8; partial if execution_success and 0 < final_score < 0.8; failed "
       "otherwise"),
    # 10. Confidence, 11. Composite, AAT
    _c("confidence_correct_formula", "error", _K10, "confidence_correct = 1 exactly when "
       "confidence_score >= 0.8 and final_score >= 0.8"),
    _c("confidence_error_formula", "error", _K10, "confidence_error = |confidence_score - "
       "correctness| (correctness: 0/1 outcome or final_score)", _E3),
    _c("calibration_bucket_formula", "error", _K10, "calibration_bucket from confidence_score: "
       "very_low [0, 0.2), low [0.2, 0.4), medium [0.4, 0.6), high [0.6, 0.8), very_high "
       "[0.8, 1]"),
    _c("analyst_score_formula", "error", "§Key Metrics 11 (Composite)", "analyst_score = 0.4 "
       "autonomy_score + 0.3 tool_efficiency + 0.3 verification_score", _E3),
    _c("specialist_participation_formula", "error", "§AAT Architecture Metrics",
       "specialist_participation = (schema + domain + document _agent_used) / 3", _E3),
    _c("replan_count_consistent", "warning", _COORD, "replan_requested = 1 exactly when "
       "replan_count > 0; replan_successful = 1 only with replan_requested = 1"),
    _c("retry_count_consistent", "warning", _COORD, "retry_requested = 1 exactly when "
       "execution_attempts > 1; retry_successful = 1 only with retry_requested = 1"),
    _c("coordinator_metrics_consistent", "warning", _COORD, "coordinator_interventions = "
       "replan_count + execution_attempts - 1; a final REPLAN / RETRY_EXECUTION was requested"),
    # Replay artifacts (task_*/task_replay.json)
    _c("replay_unreadable", "error", _RA, "task_replay.json is a readable JSON object",
       file=REPLAY),
    _c("replay_missing", "info", _RA, "a task without task_replay.json is counted once",
       file=TM),
    _c("replay_unknown_task", "warning", _RA, "every replay folder is a task of "
       "task_metrics.csv", file=REPLAY),
    _c("replay_field_missing", "error", _RA, "every required field of the replay catalogue is "
       "present and not null", file=REPLAY),
    _c("replay_field_type", "error", _RA, "every field present has its catalogued type "
       "(flags 0/1, scores in [0, 1], enums)", file=REPLAY),
    _c("replay_identity_mismatch", "error", _RA, "task_id, run_id, trace_id and difficulty "
       "equal the task's row", file=REPLAY),
    _c("replay_decision_mismatch", "error", f"{_RA}; {_CI}", "coordinator_final_decision "
       "equals the task's", file=REPLAY),
    _c("replay_verification_mismatch", "error", _RA, "verification_passed equals the task's",
       file=REPLAY),
    _c("replay_score_mismatch", "error", _RA, "evaluation_result.final_score and .answer_f1 "
       "equal the task's", 1e-6, file=REPLAY),
    _c("replay_outcome_mismatch", "error", "V2.1 item 6 (Complete Replay Artifacts)",
       "outcome_status equals the task's", file=REPLAY),
    _c("replay_attempts_mismatch", "error", _RA, "len(execution_attempts) = the task's "
       "execution_attempts", file=REPLAY),
    _c("replay_attribution_mismatch", "error", "§Failure Attribution; V2.1 item 6",
       "failure_attribution is null exactly when failure_category is empty; its fields equal "
       "the task's", file=REPLAY),
    _c("replay_tool_calls_mismatch", "error", _RA, "tool_calls lists the task's tool_calls "
       "calls, tool_failures of them failed", file=REPLAY),
    _c("replay_overhead_mismatch", "warning", f"V2.1 item 6; {_CI}",
       "unaccounted_overhead_time_seconds = execution_time - per-stage time", 0.01, unit=" s",
       file=REPLAY),
    _c("replay_time_ratio_mismatch", "warning", f"V2.1 item 6; {_CI}", "time_accounting_ratio "
       "= per-stage time / execution_time", _E3, file=REPLAY),
]

#: Every check of ``validate_run`` (besides the loader's), by name.
CHECKS: dict[str, Check] = {c.name: c for c in _CHECKS}


def checks_reading(column: str) -> list[str]:
    """Names of the checks that read a column of trajectory.csv or tool_calls.csv.

    Parameters
    ----------
    column : str
        ``"<file>:<column>"``, e.g. ``"tool_calls.csv:success"``.

    Returns
    -------
    list of str
        In catalogue order; each is not assessable on a file without the column.

    Examples
    --------
    >>> checks_reading("tool_calls.csv:success")
    ['tool_failure_count_mismatch']
    """
    return [c.name for c in _CHECKS if column in c.reads]


def checks_table() -> pd.DataFrame:
    """The catalogue as a frame.

    Returns
    -------
    DataFrame
        One row per check, in catalogue order: ``check``, ``severity``, ``tolerance`` (text:
        "exact", "<= 0.001", "< 100 tokens"), ``section`` (of seed 000), ``rule``, ``file``.

    Examples
    --------
    >>> checks_table().set_index("check").loc["token_conservation", "tolerance"]
    '< 100 tokens'
    """
    return pd.DataFrame([{"check": c.name, "severity": c.severity, "tolerance": c.tolerance_text,
                          "section": c.section, "rule": c.rule, "file": c.file}
                         for c in CHECKS.values()])


def checks_markdown() -> str:
    """The catalogue as the Markdown table of the README (check, severity, tolerance, section,
    rule).

    Returns
    -------
    str
        A header, a separator and one line per check; ``|`` in the text is escaped.

    Examples
    --------
    >>> checks_markdown().splitlines()[0]
    '| check | severity | tolerance | guide section | rule |'
    """
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| check | severity | tolerance | guide section | rule |", "|---|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.severity} | {cell(c.tolerance_text)} | {cell(c.section)} | "
              f"{cell(c.rule)} |" for c in CHECKS.values()]
    return "\n".join(lines)
