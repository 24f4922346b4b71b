"""The simulated steps of one task: trajectory rows, tool-call failures and the replay snapshot\n(used by :mod:`dabench_analysis.synthetic.evalv2`).\n"""

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
                      if a == "validate_answer" else "output") for a in schema.ACTIONS}


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


def _steps(rng, task: Task, out: dict, text_len: int,
           mean_steps: float | None = None) -> list[dict]:
    """Trajectory steps, stage by stage; tool steps carry a tool name.

    With ``mean_steps``, a task whose plan is shorter gets Poisson(mean_steps - length) extra
    Executor tool steps after its first EXECUTE block (no extra draws when None, so the default
    output is unchanged)."""
    level = schema.DIFFICULTY_ORDER.index(task.difficulty)
    plan = [("UNDERSTAND", "StrategicCoordinator", None)]
    plan += [("UNDERSTAND", "SchemaAgent", t) for t in
             rng.choice(_STAGE_TOOLS["UNDERSTAND"][:8 if task.documents_required else 6],
                        size=int(2 + rng.poisson(1 + level)))]
    for attempt in range(1 + out["replans"] + out["retries"]):
        if attempt == 0 or attempt <= out["replans"]:
            plan += [("PLAN", "Planner", None)] * int(1 + rng.integers(0, 2))
        plan += [("EXECUTE", "Executor", t) for t in
                 rng.choice(_STAGE_TOOLS["EXECUTE"], size=int(1 + rng.poisson(1 + 0.6 * level)))]
        if attempt == 0:
            first_execute_end = len(plan)
        if out["critic"]:
            plan += [("VERIFY", "Critic", None)]
        if rng.random() < 0.7:
            plan += [("VERIFY", "Verifier", "validate_answer")]
        plan += [("VERIFY", "StrategicCoordinator", None)]
    plan += [("SUMMARIZE", "Summarizer", "submit_answer")]
    if mean_steps is not None and mean_steps > len(plan):
        extra = int(rng.poisson(mean_steps - len(plan)))
        plan[first_execute_end:first_execute_end] = [
            ("EXECUTE", "Executor", t) for t in rng.choice(_STAGE_TOOLS["EXECUTE"], size=extra)]
    steps = []
    for i, (stage, agent, tool) in enumerate(plan, start=1):
        is_tool = tool is not None
        steps.append({
            "stage": stage, "agent": agent, "tool": tool, "step_id": i,
            "tokens": int(rng.integers(40, 160) if is_tool else rng.integers(300, 1400)
                          * (1 + 0.25 * level)),
            "duration": _r(rng.gamma(2.0, 0.4 + 0.3 * level) if is_tool
                           else rng.gamma(2.0, 1.2 + 0.4 * level), 3),
            "thought": _text(rng, text_len), "observation": _text(rng, 2 * text_len),
            "raw_response": _text(rng, 3 * text_len), "action_input": _text(rng, text_len // 2)})
    return steps


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
        ev = [c["step_id"] for c in calls if not c["success"]][:3] or [steps[-1]["step_id"]]
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
