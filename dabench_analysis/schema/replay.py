"""The ``task_*/task_replay.json`` catalogue: every field, its type, whether it is required, and
the task_metrics value it must equal.

Sources (seed 000): §Data Model Schema 4 (the replay's structure, the example every field marked
*required* comes from), §Hardening Features 2 "Replay Artifacts" (what a snapshot holds: tool
calls with success/failure among them), §Failure Attribution (the attribution's fields),
§Quick Analysis "Debug Failed Task" (reads ``coordinator_final_decision`` and
``verification_passed``) and V2.1 item 6 "Complete Replay Artifacts" (run context and time
accounting). Fields the structure example does not show are optional: replays of other
eval-v2 versions may lack them, and they are type-checked and compared only when present.

Paths: ``a.b`` is field ``b`` of object ``a``; ``a[].b`` is field ``b`` of every item of list
``a`` (required there only when the parent is present).

Notes
-----
``harness_health_status`` and ``run_quality_status`` (V2.1 item 6) are type-checked but not
compared: they are run-level, from eval-v2's health formula, which the guide does not give (ours
is :func:`dabench_analysis.validate_run`'s). ``failure_stage`` is free text here because the
guide's own example uses the pre-V2.1 ``"execution"``; task_metrics holds the V2.1 enum, and the
two are compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from dabench_analysis.schema.columns import (
    COORDINATOR_DECISIONS,
    DIFFICULTY_ORDER,
    FAILURE_CATEGORIES,
    OUTCOME_STATUSES,
)

__all__ = ["REPLAY_FIELDS", "REPLAY_TYPES", "HEALTH_STATUSES", "ReplayField", "replay_field"]

#: V2.1 item 2 status words (harness health and run quality).
HEALTH_STATUSES = ("HEALTHY", "DEGRADED", "UNHEALTHY")

#: type -> what a JSON value of that type is.
REPLAY_TYPES: dict[str, str] = {
    "string": "a JSON string",
    "integer": "a whole number (not a boolean)",
    "number": "a finite number (not a boolean)",
    "seconds": "a finite number of seconds (negative: concurrent execution)",
    "score": "a finite number in [0, 1]",
    "flag": "true/false or 0/1",
    "enum": "one of the field's values",
    "list": "a JSON array",
    "list[int]": "a JSON array of whole numbers",
    "object": "a JSON object",
    "object|null": "a JSON object or null",
}


@dataclass(frozen=True)
class ReplayField:
    """One field of ``task_replay.json``.

    Attributes
    ----------
    path : str
        ``task_id``, ``evaluation_result.final_score``, ``execution_attempts[].success``.
    type : str
        A key of :data:`REPLAY_TYPES`.
    required : bool
        Missing or null: a ``replay_field_missing`` error.
    description : str
        One line, with its seed section.
    metric : str or None
        The task_metrics column (or quantity the validator derives: ``overhead``,
        ``time_ratio``) this field must equal; None if not comparable.
    check : str or None
        Name of the check comparing them (:data:`dabench_analysis.schema.checks.CHECKS`).
    measure : {"value", "length", "failed", "present"}
        What is compared: the value, a list's length, the number of items whose ``success``
        is false, or whether an ``object|null`` field is an object.
    values : tuple of str
        Allowed values of an ``enum``.
    """

    path: str
    type: str
    required: bool
    description: str
    metric: str | None = None
    check: str | None = None
    measure: str = "value"
    values: tuple[str, ...] = ()


def _f(path, type_, required, description, metric=None, check=None, measure="value",
       values=()):
    return ReplayField(path, type_, required, description, metric, check, measure, tuple(values))


_S4, _H2, _FA, _V6 = ("§Data Model Schema 4", "§Hardening Features 2", "§Failure Attribution",
                      "V2.1 item 6")
_ID, _AT = "replay_identity_mismatch", "replay_attribution_mismatch"

_FIELDS = [
    _f("task_id", "string", True, f"Task identifier ({_S4})", "task_id", _ID),
    _f("trace_id", "string", True, f"Agent trace identifier ({_S4})", "trace_id", _ID),
    _f("run_id", "string", True, f"Run identifier ({_S4})", "run_id", _ID),
    _f("difficulty", "enum", True, f"Task difficulty ({_S4})", "difficulty", _ID,
       values=DIFFICULTY_ORDER),
    _f("question", "string", True, f"The task's question ({_S4}; {_H2}: question & context)"),
    _f("available_sources", "list", True, f"Data sources of the task ({_S4})"),
    _f("execution_attempts", "list", True, f"Every execution attempt ({_S4}; {_H2})",
       "execution_attempts", "replay_attempts_mismatch", "length"),
    _f("execution_attempts[].attempt_number", "integer", True, f"1, 2, ... ({_S4})"),
    _f("execution_attempts[].plan", "object", True, f"The attempt's plan ({_S4})"),
    _f("execution_attempts[].code_executed", "string", True, f"Code run ({_S4})"),
    _f("execution_attempts[].stdout", "string", True, f"Its standard output ({_S4})"),
    _f("execution_attempts[].stderr", "string", True, f"Its standard error ({_S4})"),
    _f("execution_attempts[].success", "flag", True, f"Whether the attempt ran ({_S4})"),
    _f("agent_executions", "list", True, f"Per-agent executions, MAS observability ({_S4}; "
       f"{_H2})"),
    _f("agent_executions[].agent_name", "string", True, f"Agent, e.g. StrategicCoordinator "
       f"({_S4})"),
    _f("agent_executions[].checkpoint", "string", True, f"Checkpoint or stage ({_S4})"),
    _f("agent_executions[].decision", "string", True, f"Decision, e.g. PROCEED ({_S4})"),
    _f("agent_executions[].confidence", "score", True, f"Agent confidence ({_S4})"),
    _f("agent_executions[].duration", "number", True, f"Seconds ({_S4})"),
    _f("agent_executions[].tokens", "integer", True, f"LLM tokens ({_S4})"),
    _f("coordinator_decisions", "list", True, f"Coordinator decisions in order ({_S4}; {_H2})"),
    _f("coordinator_final_decision", "enum", False, "Final coordinator decision (§Quick "
       "Analysis: Debug Failed Task)", "coordinator_final_decision", "replay_decision_mismatch",
       values=COORDINATOR_DECISIONS),
    _f("verification_passed", "flag", False, "Legacy critic verification flag (§Quick "
       "Analysis: Debug Failed Task)", "verification_passed", "replay_verification_mismatch"),
    _f("verifier_output", "object", True, f"Verifier output ({_S4}; {_H2})"),
    _f("final_answer_csv", "string", True, f"The final answer as CSV text ({_S4}; {_H2})"),
    _f("evaluation_result", "object", True, f"Evaluation result ({_S4}; {_H2})"),
    _f("evaluation_result.final_score", "score", True, f"Final score ({_S4})", "final_score",
       "replay_score_mismatch"),
    _f("evaluation_result.answer_f1", "score", True, f"Cell-level F1 ({_S4})", "answer_f1",
       "replay_score_mismatch"),
    _f("failure_attribution", "object|null", True, f"Structured attribution; null for a "
       f"correct task ({_S4}; {_FA})", "failure_category", _AT, "present"),
    _f("failure_attribution.failure_category", "enum", True, f"Category ({_FA})",
       "failure_category", _AT, values=FAILURE_CATEGORIES),
    _f("failure_attribution.root_cause", "string", True, f"Root cause ({_FA})", "root_cause",
       _AT),
    _f("failure_attribution.failure_stage", "string", True, f"Stage ({_FA}; V2.1 taxonomy)",
       "failure_stage", _AT),
    _f("failure_attribution.failure_agent", "string", True, f"Agent blamed ({_FA})",
       "failure_agent", _AT),
    _f("failure_attribution.evidence_trace_step_ids", "list[int]", True, f"Trajectory step ids "
       f"({_FA})"),
    _f("failure_attribution.suggested_fix", "string", True, f"Suggested fix ({_FA})"),
    _f("failure_attribution.failure_reason", "string", False, f"Why it failed ({_FA})",
       "failure_reason", _AT),
    _f("failure_attribution.evidence_summary", "string", False, f"Evidence in words ({_FA})"),
    _f("failure_attribution.execution_success", "flag", False, f"Code ran ({_FA})",
       "execution_success", _AT),
    _f("failure_attribution.tool_failure_count", "integer", False, f"Failed tool calls "
       f"({_FA})", "tool_failures", _AT),
    _f("tool_calls", "list", False, f"Tool calls with success/failure ({_H2})", "tool_calls",
       "replay_tool_calls_mismatch", "length"),
    _f("tool_calls[].tool_name", "string", True, f"Tool ({_H2})"),
    _f("tool_calls[].success", "flag", True, f"Whether the call succeeded ({_H2})",
       "tool_failures", "replay_tool_calls_mismatch", "failed"),
    _f("outcome_status", "enum", False, f"correct / partial / failed ({_V6})", "outcome_status",
       "replay_outcome_mismatch", values=OUTCOME_STATUSES),
    _f("harness_health_status", "enum", False, f"Run context: harness health ({_V6})",
       values=HEALTH_STATUSES),
    _f("run_quality_status", "enum", False, f"Run context: run quality ({_V6})",
       values=HEALTH_STATUSES),
    _f("unaccounted_overhead_time_seconds", "seconds", False, f"execution_time - component "
       f"time ({_V6}; §Critical Invariants)", "overhead", "replay_overhead_mismatch"),
    _f("time_accounting_ratio", "number", False, f"component time / execution_time ({_V6}; "
       "§Critical Invariants)", "time_ratio", "replay_time_ratio_mismatch"),
]

#: Every catalogued field of task_replay.json, by path, parents before their fields.
REPLAY_FIELDS: dict[str, ReplayField] = {f.path: f for f in _FIELDS}


def replay_field(path: str) -> ReplayField:
    """The catalogue entry of a replay field.

    Raises
    ------
    KeyError
        For a path the catalogue does not know.

    Examples
    --------
    >>> replay_field("evaluation_result.final_score").metric
    'final_score'
    """
    if path not in REPLAY_FIELDS:
        raise KeyError(f"replay field {path!r} is not in the catalogue; known: "
                       f"{', '.join(REPLAY_FIELDS)}")
    return REPLAY_FIELDS[path]
