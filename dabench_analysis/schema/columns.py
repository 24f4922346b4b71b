# Over 400 lines: the catalogue is data (158 task-metric, 30 trajectory and 17 tool-call columns);
# splitting it by file kind would scatter one table of the eval-v2 guide over three files.
"""The eval-v2 column catalogue: every column once, with dtype, group, unit and meaning.

Loaders, validation, tables and axis labels read this catalogue instead of scattering column
names through the code. Sections cited as "seed 000 §…" (or "the guide") refer to the eval-v2
guide the project was created from (``docs/implementation/EVALUATION.md`` of the harness, not
shipped here): the documentation's eval-v2 column reference (``docs/reference/eval-v2.md``)
describes it in our words, lists its sections, and renders this catalogue as tables.

Notes
-----
The seed is not fully consistent, and the catalogue settles it as follows:

* ``schema_agent_called`` / ``domain_agent_called`` / ``document_agent_called`` (§AAT Architecture
  Metrics) and ``*_agent_used`` (§Version History, Phase 0 Task 4) name the same flags. The
  canonical name is ``*_used``; the loader renames ``*_called`` (see :data:`ALIASES`).
* §Per-Stage Metrics names ``execution_time/calls/tokens`` for the EXECUTE stage, but
  ``execution_time`` is already the wall-clock time of the task (§Execution Metrics, and the time
  accounting invariant). The stage columns are therefore ``execution_stage_time``,
  ``execution_stage_calls`` and ``execution_stage_tokens``.
* trajectory.csv is announced as "Columns (24)" but 30 are named, tool_calls.csv as "Columns (15)"
  with 17 named; the catalogue keeps every named column.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Column", "TASK_COLUMNS", "TRAJECTORY_COLUMNS", "TOOL_CALL_COLUMNS", "ALIASES", "ENUMS",
    "DIFFICULTY_ORDER", "FAILURE_CATEGORIES", "FAILURE_STAGES", "SEVERITIES",
    "CALIBRATION_BUCKETS", "COORDINATOR_DECISIONS", "OUTCOME_STATUSES", "STAGES", "ACTIONS",
    "SPECIALISTS", "GROUPS", "group", "column",
    "TEXT_TRAJECTORY_COLUMNS",
    "IDENTIFICATION", "CORRECTNESS", "EXECUTION", "AUTONOMY", "COST", "MAIN_METRICS",
    "CORRELATION_METRICS", "SUCCESS_THRESHOLD", "OTHER_HARNESS_COLUMNS",
]

#: Answer accuracy threshold on ``final_score`` (seed 000 §Breakdown by Difficulty).
SUCCESS_THRESHOLD: float = 0.8

#: Flag spellings, the package's one vocabulary (compared after stripping, ignoring case).
#: Accepted without comment: eval-v2 writes 0/1, pandas and pyarrow write True/False.
FLAG_TRUE: tuple[str, ...] = ("1", "true", "True", "TRUE")
FLAG_FALSE: tuple[str, ...] = ("0", "false", "False", "FALSE")
#: Unambiguous but not what eval-v2 writes: read with a warning finding when loading.
FLAG_COERCED: dict[str, bool] = {"1.0": True, "0.0": False, "yes": True, "no": False, "y": True,
                                 "n": False, "t": True, "f": False, "pass": True, "fail": False}
#: Text read as missing in flag and numeric columns (text columns: see the loader).
NULL_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "none",
                                "<NA>")

DIFFICULTY_ORDER = ("Easy", "Medium", "Hard", "Extreme")
FAILURE_CATEGORIES = (
    "PLANNING_FAILURE", "DATA_UNDERSTANDING_FAILURE", "TOOL_SELECTION_FAILURE",
    "TOOL_EXECUTION_FAILURE", "REASONING_FAILURE", "VERIFICATION_FAILURE", "AGGREGATION_FAILURE",
    "ANSWER_FORMAT_FAILURE", "SCHEMA_MISMATCH_FAILURE", "UNKNOWN_FAILURE",
)
FAILURE_STAGES = ("UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "AGGREGATE")
SEVERITIES = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
CALIBRATION_BUCKETS = ("very_low", "low", "medium", "high", "very_high")
COORDINATOR_DECISIONS = ("APPROVE_FINAL", "RETRY_EXECUTION", "REPLAN")
OUTCOME_STATUSES = ("correct", "partial", "failed")
#: Trajectory stages (seed 000 §Trajectory Metrics patterns) and their task_metrics prefixes.
STAGES = {"UNDERSTAND": "understanding", "PLAN": "planning", "EXECUTE": "execution_stage",
          "VERIFY": "verification", "SUMMARIZE": "summary"}
#: Tools of the per-action group (seed 000 §Per-Action Metrics: 28 columns = 14 tools x 2).
ACTIONS = ("list_context", "read_json", "read_knowledge", "execute_python", "read_csv",
           "read_excel", "read_document", "search_documents", "execute_sql", "describe_table",
           "sample_rows", "profile_column", "validate_answer", "submit_answer")
SPECIALISTS = ("schema", "domain", "document")

ENUMS: dict[str, tuple[str, ...]] = {
    "difficulty": DIFFICULTY_ORDER,
    "failure_category": FAILURE_CATEGORIES,
    "failure_stage": FAILURE_STAGES,
    "severity": SEVERITIES,
    "calibration_bucket": CALIBRATION_BUCKETS,
    "coordinator_final_decision": COORDINATOR_DECISIONS,
    "outcome_status": OUTCOME_STATUSES,
}
#: Enums whose order means something (ordered categoricals).
ORDERED_ENUMS = {"difficulty", "severity", "calibration_bucket", "failure_stage", "outcome_status"}


@dataclass(frozen=True)
class Column:
    """One column of an eval-v2 CSV.

    Attributes
    ----------
    name : str
        Column name exactly as eval-v2 writes it.
    kind : str
        ``id``, ``text``, ``timestamp``, ``score`` (float in [0, 1]), ``float`` (unbounded),
        ``seconds``, ``count`` (non-negative integer), ``tokens``, ``cost`` (US dollars, >= 0),
        ``flag`` ({0, 1}) or ``enum``.
    group : str
        Schema category of seed 000 (Correctness, Autonomy, …).
    unit : str
        ``[0, 1]``, ``{0, 1}``, ``s``, ``tokens``, ``count``, ``bytes`` or ``""``.
    higher_is_better : bool or None
        Direction for ranking; None where it has none.
    description : str
        One line, with its seed section.
    required : bool
        The column's tier. Required columns are the few without which nothing can be computed
        (task_metrics: ``task_id`` and ``final_score``; trajectory:
        ``task_id``, ``step_id``; tool calls: ``task_id``, ``tool_name``): a file without one is
        rejected. Every other column is optional: an analysis that needs an absent one is skipped
        with a note (:mod:`dabench_analysis.schema.needs`).
    """

    name: str
    kind: str
    group: str
    unit: str
    higher_is_better: bool | None
    description: str
    required: bool = False

    @property
    def dtype(self) -> str | pd.CategoricalDtype:
        """The pandas dtype the loader gives this column (built once per column)."""
        return _dtype(self.kind, self.name)


@functools.cache
def _dtype(kind: str, name: str) -> str | pd.CategoricalDtype:
    if kind == "enum":
        import pandas as pd  # here, not at import: the CLI's --help reads this module

        return pd.CategoricalDtype(ENUMS[name], ordered=name in ORDERED_ENUMS)
    return {"id": "string", "text": "string", "timestamp": "string", "score": "float64",
            "float": "float64", "seconds": "float64", "cost": "float64", "count": "Int64",
            "tokens": "Int64",
            "flag": "boolean", "bytes": "Int64"}[kind]


_UNITS = {"score": "[0, 1]", "flag": "{0, 1}", "seconds": "s", "tokens": "tokens",
          "count": "count", "bytes": "bytes", "cost": "USD"}


def _c(name, kind, group, desc, hib=None, required=False):
    return Column(name, kind, group, _UNITS.get(kind, ""), hib, desc, required)


_T = [
    # 1. Identification (seed 000 §Data Model Schema 1)
    _c("run_id", "id", "Identification",
       "Run identifier (absent: the run is named after its folder or file)"),
    _c("task_id", "id", "Identification", "Task identifier, e.g. task_38", required=True),
    _c("trace_id", "id", "Identification", "Agent trace identifier"),
    _c("difficulty", "enum", "Identification", "Easy < Medium < Hard < Extreme"),
    _c("timestamp", "timestamp", "Identification", "ISO 8601 time the task was evaluated"),
    _c("trial", "count", "Identification",
       "Repeated trial of the task (Inspect epoch, tau-bench trial; absent: one trial)"),
    # 2. Task Metadata
    _c("task_type", "text", "Task Metadata", "Task family (aggregation, join, ...)"),
    _c("source_count", "count", "Task Metadata", "Number of data sources"),
    _c("source_types", "text", "Task Metadata", "Source kinds, ';'-separated (csv;json;pdf)"),
    _c("requires_cross_source_reasoning", "flag", "Task Metadata", "Needs several sources"),
    _c("ground_truth_available", "flag", "Task Metadata", "Gold answer exists"),
    _c("documents_required", "flag", "Task Metadata",
       "Task needs the document specialist (§Data Understanding formula)"),
    # 3. Correctness (§Key Metrics 1)
    _c("final_score", "score", "Correctness", "Overall score from the evaluator", True, True),
    *[_c(f"{lvl}_{m}", "score", "Correctness", f"{lvl.capitalize()}-level {m}", True)
      for lvl in ("answer", "column", "row") for m in ("precision", "recall", "f1")],
    _c("matched_columns", "count", "Correctness", "Predicted columns matching gold"),
    _c("pred_rows", "count", "Correctness", "Rows in the prediction"),
    _c("pred_cols", "count", "Correctness", "Columns in the prediction"),
    _c("gold_rows", "count", "Correctness", "Rows in the gold answer"),
    _c("gold_cols", "count", "Correctness", "Columns in the gold answer"),
    # 4. Execution (§Execution Metrics)
    _c("execution_success", "flag", "Execution", "Code ran without crashes", True),
    _c("execution_time", "seconds", "Execution", "Wall-clock time of the task", False),
    _c("total_tokens", "tokens", "Execution", "Total LLM tokens used", False),
    _c("cost", "cost", "Execution", "Cost of the task in US dollars (another harness's field)",
       False),
    _c("llm_calls", "count", "Execution", "Number of LLM invocations"),
    _c("tool_calls", "count", "Execution", "Number of tool invocations"),
    _c("tool_failures", "count", "Execution", "Failed tool invocations", False),
    # 5. Autonomy (§Key Metrics 2)
    _c("first_try_success", "flag", "Autonomy", "Succeeded with one attempt", True),
    _c("replan_count", "count", "Autonomy", "max(0, plan_attempts - 1)", False),
    _c("user_intervention_count", "count", "Autonomy", "Manual interventions (0: autonomous)"),
    _c("autonomy_score", "score", "Autonomy", "1 - replans / max_replans", True),
    _c("coordinator_interventions", "count", "Autonomy", "coordinator_calls - 3"),
    # 6. Planning (§Key Metrics 3)
    _c("planner_steps", "count", "Planning", "count(action = planner)"),
    _c("planner_revisions", "count", "Planning", "max(0, plan_attempts - 1)"),
    _c("planner_dead_ends", "count", "Planning", "execution_attempts - 1"),
    _c("plan_execution_alignment", "score", "Planning", "1.0 if first try else decay", True),
    _c("plan_attempts", "count", "Planning", "Plans generated"),
    # 7. Tool Usage (§Key Metrics 4)
    _c("unique_tools_used", "count", "Tool Usage", "|{tools}|"),
    _c("tool_diversity", "score", "Tool Usage", "unique_tools / total_calls"),
    _c("useful_tool_calls", "count", "Tool Usage", "explore + final_exec calls"),
    _c("wasted_tool_calls", "count", "Tool Usage", "total - useful", False),
    _c("tool_efficiency", "score", "Tool Usage", "useful / total", True),
    _c("tool_retry_count", "count", "Tool Usage", "Tool retries"),
    _c("tool_selection_accuracy", "score", "Tool Usage", "(useful - failures) / total", True),
    _c("execution_attempts", "count", "Tool Usage", "Code execution attempts"),
    # 8. Data Understanding (§Key Metrics 5)
    _c("tables_discovered", "count", "Data Understanding", "Tables found while exploring"),
    _c("columns_discovered", "count", "Data Understanding", "Columns found while exploring"),
    _c("relevant_tables_found", "count", "Data Understanding", "Relevant tables"),
    _c("relevant_columns_found", "count", "Data Understanding", "Relevant columns"),
    _c("schema_exploration_steps", "count", "Data Understanding", "count(phase = explore)"),
    _c("data_understanding_score", "score", "Data Understanding",
       "0.5 specialist activation + 0.5 discovery", True),
    # 9. Verification (§Key Metrics 6)
    _c("verification_triggered", "flag", "Verification", "Critic steps > 0"),
    _c("verification_steps", "count", "Verification", "count(critic actions)"),
    _c("verification_passed", "flag", "Verification", "Legacy (= critic_verification_passed)"),
    _c("verification_failures_detected", "count", "Verification", "Issues found by verification"),
    _c("verification_score", "score", "Verification", "Legacy (= critic_verification_score)", True),
    _c("critic_verification_passed", "flag", "Verification", "Step-level critic passed"),
    _c("critic_verification_score", "score", "Verification", "critic_passed / critic_checks", True),
    _c("critic_failures_detected", "count", "Verification", "Critic issues detected"),
    _c("aat_verification_triggered", "flag", "Verification", "AAT verifier ran"),
    _c("aat_verification_passed", "flag", "Verification",
       "AAT approval; 1 exactly when coordinator_final_decision = APPROVE_FINAL"),
    _c("aat_verification_score", "score", "Verification", "AAT verifier confidence", True),
    # 10. Recovery (§Key Metrics 7 and Phase 0 Task 2)
    _c("failure_detected", "flag", "Recovery", "A failure occurred"),
    _c("failure_stage", "enum", "Recovery", "First failing AAT phase (V2.1 taxonomy)"),
    _c("recovery_success", "flag", "Recovery", "Recovered after a failure", True),
    _c("recovery_depth", "count", "Recovery", "Attempts until success"),
    _c("recovery_success_rate", "score", "Recovery", "successes / attempts", True),
    _c("initial_answer_correct", "flag", "Recovery", "First attempt correct (Phase 0 Task 2)"),
    _c("final_answer_correct", "flag", "Recovery", "Final answer correct (Phase 0 Task 2)", True),
    _c("recovered_after_replan", "flag", "Recovery", "Wrong first, right after a replan"),
    _c("recovered_after_retry", "flag", "Recovery", "Wrong first, right after a retry"),
    # 11. Trajectory (§Key Metrics 8)
    _c("trajectory_length", "count", "Trajectory", "count(steps)"),
    _c("trajectory_summary", "text", "Trajectory", "Pattern, e.g. UNDERSTAND→PLAN→EXECUTE"),
    _c("branching_factor", "float", "Trajectory", "avg(children per node), >= 1"),
    _c("max_execution_depth", "count", "Trajectory", "max(depth in tree)"),
    _c("critic_loops", "count", "Trajectory", "count(critic iterations)"),
    _c("trajectory_efficiency", "score", "Trajectory", "useful_steps / total_steps", True),
    # 12. Failure Taxonomy (§Key Metrics 9, §Failure Attribution)
    _c("failure_category", "enum", "Failure Taxonomy", "Structured failure category"),
    _c("root_cause", "text", "Failure Taxonomy", "Specific error cause"),
    _c("recoverable_failure", "flag", "Failure Taxonomy", "Can be recovered"),
    _c("severity", "enum", "Failure Taxonomy", "LOW < MEDIUM < HIGH < CRITICAL"),
    _c("failure_reason", "text", "Failure Taxonomy", "Why the task failed"),
    _c("failure_agent", "text", "Failure Taxonomy", "Agent blamed (Planner, Executor, ...)"),
    _c("outcome_status", "enum", "Failure Taxonomy", "correct / partial / failed (V2.1 item 4)"),
    _c("outcome_error_type", "text", "Failure Taxonomy", "Evaluation bucket (low_recall, ...)"),
    # 13. Confidence (§Key Metrics 10)
    _c("confidence_score", "score", "Confidence", "Agent's stated confidence"),
    _c("confidence_correct", "flag", "Confidence", "conf >= 0.8 and correct"),
    _c("confidence_error", "score", "Confidence", "|conf - correctness|", False),
    _c("calibration_bucket", "enum", "Confidence", "very_low (0-0.2) ... very_high (0.8-1.0)"),
    # 14. Composite (§Key Metrics 11)
    _c("analyst_score", "score", "Composite",
       "0.4 autonomy_score + 0.3 tool_efficiency + 0.3 verification_score", True),
    # 15. AAT Architecture (§AAT Architecture Metrics, Phase 0 Tasks 3-4)
    _c("coordinator_calls", "count", "AAT Architecture", "Strategic coordinator invocations"),
    _c("coordinator_final_decision", "enum", "AAT Architecture",
       "APPROVE_FINAL / RETRY_EXECUTION / REPLAN"),
    _c("coordinator_checkpoints", "count", "AAT Architecture", "Coordinator checkpoints passed"),
    *[_c(f"{s}_agent_used", "flag", "AAT Architecture", f"{s.capitalize()} specialist invoked")
      for s in SPECIALISTS],
    _c("specialist_participation", "score", "AAT Architecture", "Share of specialists used"),
    _c("replan_requested", "flag", "AAT Architecture", "Coordinator requested a replan"),
    _c("replan_successful", "flag", "AAT Architecture", "The replan led to a correct answer"),
    _c("retry_requested", "flag", "AAT Architecture", "Coordinator requested a retry"),
    _c("retry_successful", "flag", "AAT Architecture", "The retry led to a correct answer"),
    # Research metrics (§Research Metrics (KDD Paper))
    _c("cross_source_reasoning_success", "flag", "Research", "Multi-source reasoning succeeded"),
    _c("explanation_quality_score", "score", "Research", "Explanation quality", True),
    _c("reproducibility_score", "score", "Research", "Result stability under replay", True),
    # 16. Per-Stage Metrics
    *[_c(f"{p}_{m}", k, "Per-Stage", f"{m.capitalize()} in the {s} stage")
      for s, p in STAGES.items()
      for m, k in (("time", "seconds"), ("calls", "count"), ("tokens", "tokens"))],
    # 17. Per-Action Metrics
    *[_c(f"{a}_{m}", k, "Per-Action", f"{a} {m}") for a in ACTIONS
      for m, k in (("calls", "count"), ("time", "seconds"))],
    # Annotations: human failure labels (not eval-v2 columns; e.g. Who&When, arXiv:2505.00212)
    _c("mistake_step", "count", "Annotations", "Annotation, not eval-v2: the step_id (1-based, "
       "the trajectory's numbering) of the labelled decisive mistake"),
    _c("mistake_agent", "text", "Annotations",
       "Annotation, not eval-v2: the agent labelled responsible for the failure"),
    _c("mistake_reason", "text", "Annotations", "Annotation, not eval-v2: the label's reason"),
    _c("mistake_category", "text", "Annotations",
       "Annotation, not eval-v2: the mistake's category, where the labels give one (optional)"),
]

TASK_COLUMNS: dict[str, Column] = {c.name: c for c in _T}
#: Catalogue columns eval-v2 does not write: read from other harnesses' output (repeated
#: trials, a cost in dollars; on steps a message's prompt, completion and cached tokens and its
#: cost; on steps and tool calls who acted, ``actor``: the agent or tau2's simulated user) or from
#: human annotations (the Annotations group).
ANNOTATION_COLUMNS: tuple[str, ...] = ("mistake_step", "mistake_agent", "mistake_reason",
                                       "mistake_category")
OTHER_HARNESS_COLUMNS: tuple[str, ...] = ("trial", "cost", "prompt_tokens", "completion_tokens",
                                          "cached_tokens", "actor", *ANNOTATION_COLUMNS)

#: Names other eval-v2 versions (or the guide itself) use, read as the catalogue's name and reported
#: with an info finding. ``*_agent_called``: §AAT Architecture Metrics; ``execution_calls`` /
#: ``execution_tokens``: §Per-Stage Metrics' pattern for the EXECUTE stage (see the module notes;
#: ``execution_time`` is not aliased: it is the wall clock).
ALIASES: dict[str, str] = {
    **{f"{s}_agent_called": f"{s}_agent_used" for s in SPECIALISTS},
    "execution_calls": "execution_stage_calls",
    "execution_tokens": "execution_stage_tokens",
}

_TRAJ = [
    ("run_id", "id"), ("task_id", "id"), ("trace_id", "id"), ("step_id", "count"),
    ("parent_step_id", "count"), ("stage", "text"), ("legacy_stage", "text"), ("phase", "text"),
    ("agent", "text"), ("trajectory_agent", "text"), ("agent_type", "text"), ("tool", "text"),
    ("action", "text"), ("coordinator_checkpoint", "text"), ("confidence", "score"),
    ("decision", "text"), ("review_type", "text"), ("verification_status", "text"),
    ("specialist_selected", "text"), ("success", "flag"), ("duration_seconds", "seconds"),
    ("tokens", "tokens"), ("retries", "count"), ("timestamp", "timestamp"),
    ("prompt_tokens", "tokens"), ("completion_tokens", "tokens"), ("cached_tokens", "tokens"),
    ("cost", "cost"), ("actor", "text"), ("elapsed_seconds", "seconds"), ("thought", "text"), ("action_input", "text"),
    ("observation", "text"), ("raw_response", "text"), ("metadata_json", "text"),
]
TRAJECTORY_COLUMNS: dict[str, Column] = {
    n: _c(n, k, "Trajectory", "seed 000 §Data Model Schema 2",
          required=n in ("task_id", "step_id")) for n, k in _TRAJ}
#: Heavy free-text columns left out of trajectories unless asked for.
TEXT_TRAJECTORY_COLUMNS = ("thought", "action_input", "observation", "raw_response",
                           "metadata_json")

_TOOL = [
    ("run_id", "id"), ("task_id", "id"), ("trace_id", "id"), ("step_id", "count"),
    ("call_id", "id"), ("tool_name", "text"), ("tool_category", "text"), ("success", "flag"),
    ("latency_seconds", "seconds"), ("tokens", "tokens"), ("retry_count", "count"),
    ("input_size", "bytes"), ("output_size", "bytes"), ("error_type", "text"),
    ("error_message", "text"), ("timestamp", "timestamp"), ("metadata_json", "text"),
    ("actor", "text"),
]
TOOL_CALL_COLUMNS: dict[str, Column] = {
    n: _c(n, k, "Tool Calls", "seed 000 §Data Model Schema 3",
          required=n in ("task_id", "tool_name")) for n, k in _TOOL}

GROUPS: tuple[str, ...] = tuple(dict.fromkeys(c.group for c in _T))


def group(name: str) -> list[str]:
    """Column names of one schema group, in catalogue order.

    Parameters
    ----------
    name : str
        A group of :data:`GROUPS`, e.g. ``"Correctness"``.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For an unknown group.

    Examples
    --------
    >>> group("Composite")
    ['analyst_score']
    """
    if name not in GROUPS:
        raise ValueError(f"unknown group {name!r}; known: {', '.join(GROUPS)}")
    return [c.name for c in _T if c.group == name]


def column(name: str) -> Column:
    """The catalogue entry of a task_metrics column (aliases accepted).

    Raises
    ------
    KeyError
        For a column the catalogue does not know.

    Examples
    --------
    >>> column("schema_agent_called").name
    'schema_agent_used'
    """
    name = ALIASES.get(name, name)
    if name not in TASK_COLUMNS:
        raise KeyError(f"column {name!r} is not in the eval-v2 catalogue")
    return TASK_COLUMNS[name]


IDENTIFICATION = group("Identification")
CORRECTNESS = group("Correctness")
EXECUTION = group("Execution")
AUTONOMY = group("Autonomy")
#: Cost columns: time and tokens.
COST = ["execution_time", "total_tokens", "llm_calls", "tool_calls"]
#: Table 1 metrics (seed 000 §Recommended Metrics for Publication).
MAIN_METRICS = ["final_score", "analyst_score", "answer_f1", "autonomy_score", "tool_efficiency"]
#: The six metrics of the seed's correlation analysis.
CORRELATION_METRICS = ["final_score", "analyst_score", "autonomy_score", "tool_efficiency",
                       "verification_score", "data_understanding_score"]


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str = "tasks") -> None:
    """Raise a clear error if ``frame`` lacks any of ``columns``: the package's one column check.

    Parameters
    ----------
    frame : DataFrame
        Any frame (task metrics, trajectory, tool calls, research-eval cases, ...).
    columns : sequence of str
        Column names the caller needs.
    what : str
        How the frame is named in the message (``"tasks"``, ``"cases"``, ...).

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        Naming every missing column and (up to 30 of) the columns present.

    Examples
    --------
    >>> import pandas as pd
    >>> require_columns(pd.DataFrame({"final_score": [1.0]}), ["final_score"])
    >>> require_columns(pd.DataFrame({"final_score": [1.0]}), ["final_scor"])
    Traceback (most recent call last):
    ...
    ValueError: column 'final_scor' not in tasks; known: final_score
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        known = ", ".join(map(str, frame.columns[:30])) + (", …" if frame.shape[1] > 30 else "")
        noun = "column" if len(missing) == 1 else "columns"
        raise ValueError(f"{noun} {', '.join(repr(m) for m in missing)} not in {what}; "
                         f"known: {known}")


def check_threshold(threshold, *, name: str = "threshold", scale: str = "final_score") -> float:
    """Check a success threshold on a [0, 1] score scale and return it as a float.

    Parameters
    ----------
    threshold : float
        A task counts as correct when its score is ``>= threshold``.
    name : str
        The argument's name, for the message.
    scale : str
        The column the threshold applies to, for the message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Unless ``0 < threshold <= 1``: 0 would count every task as correct, a value above 1 none
        (80 is a percentage; the message suggests 0.8). Also for NaN, booleans and non-numbers.

    Notes
    -----
    The one check every public function with a threshold on a [0, 1] scale calls, so that the
    analysis' ``threshold`` (a report's ``threshold`` parameter) reaches each table with the same meaning. Judge scores on
    the 0–9 scale use ``pass_threshold`` and are not checked here.

    Examples
    --------
    >>> check_threshold(0.8)
    0.8
    >>> check_threshold(80)
    Traceback (most recent call last):
    ...
    ValueError: threshold must be in (0, 1] on the final_score scale, got 80; did you mean 0.8?
    """
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise ValueError(f"{name} must be a number in (0, 1] on the {scale} scale, got "
                         f"{threshold!r}")
    t = float(threshold)
    if not 0 < t <= 1:  # also False for NaN
        hint = f"; did you mean {t / 100:g}?" if 1 < t <= 100 else ""
        raise ValueError(f"{name} must be in (0, 1] on the {scale} scale, got {t:g}{hint}")
    return t
