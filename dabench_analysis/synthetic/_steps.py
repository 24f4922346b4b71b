"""The simulated steps of one task: trajectory rows, tool-call failures and the replay snapshot\n(used by :mod:`dabench_analysis.synthetic._evalv2`).\n"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from dabench_analysis import schema


@dataclass(frozen=True)
class Task:
    """A benchmark task shared by every run evaluated on it."""

    task_id: str
    difficulty: str
    task_type: str
    documents_required: bool
    source_count: int
    source_types: str
    hardness: float  # latent task difficulty, shared across systems (pairs runs)
    question: str


_STAGE_TOOLS = {
    "UNDERSTAND": ("list_context", "read_json", "read_knowledge", "read_csv", "read_excel",
                   "read_document", "search_documents", "describe_table", "sample_rows",
                   "profile_column"),
    "EXECUTE": ("execute_python", "execute_sql", "execute_python", "execute_python"),
    "VERIFY": ("validate_answer",),
    "SUMMARIZE": ("submit_answer",),
}


_TOOL_CATEGORY = {a: ("exploration" if a in _STAGE_TOOLS["UNDERSTAND"] else
                      "execution" if a.startswith("execute") else "verification"
                      if a == "validate_answer" else "output") for a in schema.columns.ACTIONS}


_WORDS = ("the table", "column", "rows", "join", "filter", "revenue", "region", "quarter",
          "customer", "order", "mean", "count", "document", "schema", "result", "check",
          "value", "group by", "date", "null")


def _text(rng: np.random.Generator, mean_len: int) -> str:
    if mean_len <= 0:
        return ""
    n_words = max(3, int(rng.poisson(mean_len / 6)))
    return " ".join(_WORDS[k] for k in rng.integers(0, len(_WORDS), n_words))


def _r(x: float, d: int = 4) -> float:
    return float(round(float(x), d))


def _step(rng, stage: str, agent: str, tool: str | None, level: int, text_len: int,
          action_input: str | None = None) -> dict:
    """One step's draws: tokens, duration (s) and its free text (``action_input`` given: a
    repeated call, same input)."""
    is_tool = tool is not None
    return {
        "stage": stage, "agent": agent, "tool": tool,
        "tokens": int(rng.integers(40, 160) if is_tool else rng.integers(300, 1400)
                      * (1 + 0.25 * level)),
        "duration": _r(rng.gamma(2.0, 0.4 + 0.3 * level) if is_tool
                       else rng.gamma(2.0, 1.2 + 0.4 * level), 3),
        "thought": _text(rng, text_len), "observation": _text(rng, 2 * text_len),
        "raw_response": _text(rng, 3 * text_len),
        "action_input": _text(rng, text_len // 2) if action_input is None else action_input}


def _explore(rng, task: Task, level: int, extra: int = 0) -> list[tuple]:
    return [("UNDERSTAND", "StrategicCoordinator", None)] + [
        ("UNDERSTAND", "SchemaAgent", t) for t in
        rng.choice(_STAGE_TOOLS["UNDERSTAND"][:8 if task.documents_required else 6],
                   size=int(extra + rng.poisson(1 + level)))]


def _attempt(rng, out: dict, level: int) -> list[tuple]:
    """One execution attempt: an EXECUTE block, then the VERIFY block that judges it."""
    plan = [("EXECUTE", "Executor", t) for t in
            rng.choice(_STAGE_TOOLS["EXECUTE"], size=int(1 + rng.poisson(1 + 0.6 * level)))]
    if out["critic"]:
        plan += [("VERIFY", "Critic", None)]
    if rng.random() < 0.7:
        plan += [("VERIFY", "Verifier", "validate_answer")]
    return plan + [("VERIFY", "StrategicCoordinator", None)]


def _steps(rng, task: Task, out: dict, text_len: int,
           mean_steps: float | None = None) -> list[dict]:
    """Trajectory steps, block by block, consistent with the task's counts: PLAN blocks =
    1 + replan_count (a replan goes back to UNDERSTAND, then plans again, before executing;
    seed 000 §Trajectory Metrics: UNDERSTAND→PLAN→REPLAN→EXECUTE), EXECUTE blocks =
    execution_attempts = 1 + retries (each retry re-executes after VERIFY:
    EXECUTE→VERIFY→RETRY); tool steps carry a tool name.

    With ``mean_steps``, a task whose plan is shorter gets Poisson(mean_steps - length) extra
    Executor tool steps in its first EXECUTE block (no extra draws when None)."""
    level = schema.DIFFICULTY_ORDER.index(task.difficulty)
    plan = _explore(rng, task, level, extra=2)
    for replan in range(1 + out["replans"]):
        if replan:
            plan += _explore(rng, task, level)
        plan += [("PLAN", "Planner", None)] * int(1 + rng.integers(0, 2))
    first_execute_end = len(plan)
    for attempt in range(1 + out["retries"]):
        block = _attempt(rng, out, level)
        if attempt == 0:
            first_execute_end = len(plan) + sum(s[0] == "EXECUTE" for s in block)
        plan += block
    plan += [("SUMMARIZE", "Summarizer", "submit_answer")]
    if mean_steps is not None and mean_steps > len(plan):
        extra = int(rng.poisson(mean_steps - len(plan)))
        plan[first_execute_end:first_execute_end] = [
            ("EXECUTE", "Executor", t) for t in rng.choice(_STAGE_TOOLS["EXECUTE"], size=extra)]
    return [_step(rng, stage, agent, tool, level, text_len) for stage, agent, tool in plan]


def _tool_failures(rng, steps: list[dict], out: dict, skill: float) -> None:
    p_fail = 0.12 - 0.04 * skill
    for s in steps:
        s["failed"] = bool(s["tool"] is not None and s["tool"] != "submit_answer"
                           and rng.random() < p_fail + (0.25 if not out["exec_ok"]
                                                        and s["stage"] == "EXECUTE" else 0))
    if not out["exec_ok"]:  # a crashed task has at least one failed execution call
        ex = [s for s in steps if s["stage"] == "EXECUTE"]
        if ex and not any(s["failed"] for s in ex):
            ex[-1]["failed"] = True


def _repeats(rng, task: Task, steps: list[dict], skill: float, text_len: int) -> list[dict]:
    """Occasional loops: an exploration or execution call issued again right away with the
    same input (after a failure, more often by a weaker system; rarely after a success), as
    the repeated identical steps of MAS failure studies (arXiv:2503.13657). Each repeat is a
    step of its own block's stage (blocks and their counts are unchanged); step ids are
    numbered 1..n afterwards."""
    level = schema.DIFFICULTY_ORDER.index(task.difficulty)
    p_after_fail = max(0.05, 0.3 - 0.15 * skill)
    out = []
    for s in steps:
        out.append(s)
        if s["stage"] not in ("UNDERSTAND", "EXECUTE") or s["tool"] is None:
            continue
        if rng.random() < (p_after_fail if s["failed"] else 0.01):
            again = _step(rng, s["stage"], s["agent"], s["tool"], level, text_len,
                          action_input=s["action_input"])
            again["failed"] = bool(rng.random() < 0.5)
            out.append(again)
    for i, s in enumerate(out, start=1):
        s["step_id"] = i
    return out


def _trajectory_rows(row: dict, steps: list[dict], t0: datetime) -> tuple[list, list]:
    traj, calls, elapsed = [], [], 0.0
    for s in steps:
        elapsed += s["duration"]
        ts = (t0 + timedelta(seconds=elapsed)).isoformat().replace("+00:00", "Z")
        tool = s["tool"]
        traj.append({
            "run_id": row["run_id"], "task_id": row["task_id"], "trace_id": row["trace_id"],
            "step_id": s["step_id"], "parent_step_id": s["step_id"] - 1 or None,
            "stage": s["stage"], "legacy_stage": {"UNDERSTAND": "EXPLORATION", "PLAN": "PLANNING",
                                                  "EXECUTE": "EXECUTION"}.get(s["stage"],
                                                                              s["stage"]),
            "phase": "explore" if s["stage"] == "UNDERSTAND" else s["stage"].lower(),
            "agent": s["agent"], "trajectory_agent": s["agent"],
            "agent_type": "coordinator" if s["agent"] == "StrategicCoordinator" else "specialist"
            if s["agent"] == "SchemaAgent" else "worker",
            "tool": tool, "action": tool or ("planner" if s["agent"] == "Planner" else "reason"),
            "coordinator_checkpoint": s["stage"] if s["agent"] == "StrategicCoordinator" else None,
            "confidence": row["confidence_score"] if s["stage"] == "SUMMARIZE" else None,
            "decision": "PROCEED" if s["agent"] == "StrategicCoordinator" else None,
            "review_type": "critic" if s["agent"] == "Critic" else None,
            "verification_status": ("passed" if row["critic_verification_passed"] else "failed")
            if s["agent"] == "Critic" else None,
            "specialist_selected": "schema" if s["agent"] == "SchemaAgent" else None,
            "success": not s.get("failed", False), "duration_seconds": s["duration"],
            "tokens": s["tokens"], "retries": 0, "timestamp": ts,
            "elapsed_seconds": round(elapsed, 3), "thought": s["thought"],
            "action_input": s["action_input"] if tool else None,
            "observation": s["observation"], "raw_response": s["raw_response"],
            "metadata_json": json.dumps({"stage": s["stage"]})})
        if tool:
            failed = s.get("failed", False)
            calls.append({
                "run_id": row["run_id"], "task_id": row["task_id"], "trace_id": row["trace_id"],
                "step_id": s["step_id"], "call_id": f"{row['task_id']}-c{len(calls) + 1}",
                "tool_name": tool, "tool_category": _TOOL_CATEGORY[tool], "success": not failed,
                "latency_seconds": s["duration"], "tokens": s["tokens"], "retry_count": 0,
                "input_size": len(s["action_input"]), "output_size": len(s["observation"]),
                "error_type": ("KeyError" if tool.startswith("execute") else "IOError")
                if failed else None,
                "error_message": ("KeyError: 'column_name'" if tool.startswith("execute")
                                  else "source not readable") if failed else None,
                "timestamp": ts, "metadata_json": json.dumps({"attempt": 1})})
    return traj, calls


def _replay(task: Task, row: dict, steps: list[dict], calls: list[dict], rng) -> dict:
    """The task's ``task_replay.json`` (seed 000 §Data Model Schema 4, V2.1 item 6); ``rng``
    draws only the agents' confidences, so the metrics do not depend on it."""
    component = sum(s["duration"] for s in steps)
    fa = None
    if row["failure_category"] is not None:
        # evidence: the failed calls of the attributed stage, else its last step (AGGREGATE:
        # the summary), else the first failed calls, else the last step
        stage = {"AGGREGATE": "SUMMARIZE"}.get(row["failure_stage"], row["failure_stage"])
        in_stage = {s["step_id"] for s in steps if s["stage"] == stage}
        ev = [c["step_id"] for c in calls if not c["success"] and c["step_id"] in in_stage][:3] \
            or sorted(in_stage)[-1:] or [c["step_id"] for c in calls if not c["success"]][:3] \
            or [steps[-1]["step_id"]]
        fa = {k: row[k] for k in ("failure_category", "root_cause", "failure_stage",
                                  "failure_agent", "failure_reason")}
        fa |= {"evidence_trace_step_ids": ev, "suggested_fix": "Validate assumptions about "
               f"{row['root_cause'].split(':')[0]} before executing",
               "evidence_summary": f"Step {ev[0]}: {row['failure_reason']}",
               "execution_success": row["execution_success"],
               "tool_failure_count": row["tool_failures"]}
    return {
        "task_id": task.task_id, "trace_id": row["trace_id"], "run_id": row["run_id"],
        "difficulty": task.difficulty, "question": task.question,
        "available_sources": task.source_types.split(";"),
        "execution_attempts": [{"attempt_number": k + 1, "plan": {"steps": 3},
                                "code_executed": "df.groupby('region')['revenue'].sum()",
                                "stdout": "", "stderr": "", "success": k == row[
                                    "execution_attempts"] - 1 and row["execution_success"]}
                               for k in range(row["execution_attempts"])],
        "agent_executions": [{"agent_name": s["agent"], "checkpoint": s["stage"],
                              "decision": "PROCEED", "confidence": _r(rng.beta(8, 2), 2),
                              "duration": s["duration"], "tokens": s["tokens"]}
                             for s in steps if s["tool"] is None],
        "tool_calls": [{k: c[k] for k in ("call_id", "step_id", "tool_name", "success")}
                       for c in calls],
        "coordinator_decisions": [row["coordinator_final_decision"]],
        "coordinator_final_decision": row["coordinator_final_decision"],
        "verification_passed": int(row["verification_passed"]),
        "verifier_output": {"passed": row["critic_verification_passed"],
                            "score": row["critic_verification_score"]},
        "final_answer_csv": "region,revenue\nnorth,100\n",
        "evaluation_result": {"final_score": row["final_score"], "answer_f1": row["answer_f1"]},
        "failure_attribution": fa, "outcome_status": row["outcome_status"],
        "unaccounted_overhead_time_seconds": round(row["execution_time"] - component, 3),
        "time_accounting_ratio": round(component / row["execution_time"], 4),
    }
