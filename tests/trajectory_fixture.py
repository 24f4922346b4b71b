"""A hand-built run of five tasks whose trajectory statistics are counted by hand (closed form)
in tests/test_trajectory*.py.

Tasks (threshold 0.8; difficulty; task type; steps as stage/agent/tool/input, ``!`` = failed):

* t1 Easy agg 1.00: U(coord) U(read_csv a) P E(sql q1) V S            canonical
* t2 Easy agg 0.90: U(read_csv a) P E(sql q1 !) E(sql q1) V S          canonical, a loop
* t3 Hard agg 0.20: U P E(py x !) V E(py y !) V S                      a retry (RETRY)
* t4 Hard join 0.50: U(read_csv b) P(!) U P E(sql q) S                 a replan, no VERIFY
* t5 Medium join 0.85: no steps

Every step lasts ``step_id`` seconds, except where ``durations`` says otherwise.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

TASKS = [
    # task_id, difficulty, task_type, final_score, replan_count, execution_attempts, time
    ("t1", "Easy", "agg", 1.0, 0, 1, 10.0),
    ("t2", "Easy", "agg", 0.9, 0, 1, 20.0),
    ("t3", "Hard", "agg", 0.2, 0, 2, 30.0),
    ("t4", "Hard", "join", 0.5, 0, 1, 40.0),
    ("t5", "Medium", "join", 0.85, 0, 1, 5.0),
]
# task_id, step_id, stage, agent, tool, action_input, success
STEPS = [
    ("t1", 1, "UNDERSTAND", "Coordinator", "", "", 1),
    ("t1", 2, "UNDERSTAND", "SchemaAgent", "read_csv", "a", 1),
    ("t1", 3, "PLAN", "Planner", "", "", 1),
    ("t1", 4, "EXECUTE", "Executor", "sql", "q1", 1),
    ("t1", 5, "VERIFY", "Verifier", "", "", 1),
    ("t1", 6, "SUMMARIZE", "Summarizer", "", "", 1),
    ("t2", 1, "UNDERSTAND", "SchemaAgent", "read_csv", "a", 1),
    ("t2", 2, "PLAN", "Planner", "", "", 1),
    ("t2", 3, "EXECUTE", "Executor", "sql", "q1", 0),
    ("t2", 4, "EXECUTE", "Executor", "sql", "q1", 1),
    ("t2", 5, "VERIFY", "Verifier", "", "", 1),
    ("t2", 6, "SUMMARIZE", "Summarizer", "", "", 1),
    ("t3", 1, "UNDERSTAND", "Coordinator", "", "", 1),
    ("t3", 2, "PLAN", "Planner", "", "", 1),
    ("t3", 3, "EXECUTE", "Executor", "py", "x", 0),
    ("t3", 4, "VERIFY", "Verifier", "", "", 1),
    ("t3", 5, "EXECUTE", "Executor", "py", "y", 0),
    ("t3", 6, "VERIFY", "Verifier", "", "", 1),
    ("t3", 7, "SUMMARIZE", "Summarizer", "", "", 1),
    ("t4", 1, "UNDERSTAND", "SchemaAgent", "read_csv", "b", 1),
    ("t4", 2, "PLAN", "Planner", "", "", 0),
    ("t4", 3, "UNDERSTAND", "Coordinator", "", "", 1),
    ("t4", 4, "PLAN", "Planner", "", "", 1),
    ("t4", 5, "EXECUTE", "Executor", "sql", "q", 1),
    ("t4", 6, "SUMMARIZE", "Summarizer", "", "", 1),
]
#: The error message of t3's first failed call: longer than the 80 characters kept.
LONG_MESSAGE = "KeyError: 'region' " + "x" * 100
#: The replay evidence of the failed tasks.
EVIDENCE = {"t3": [5], "t4": [2, 4]}


def write_run(folder: Path, run_id: str = "hand", steps=STEPS, tasks=TASKS,
              durations: dict | None = None) -> Path:
    """Write the run to ``folder / run_id`` and return its path."""
    durations = durations or {}
    run = folder / run_id
    run.mkdir(parents=True)

    def write(name, header, rows):
        with (run / name).open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows([header, *rows])

    write("task_metrics.csv", ["run_id", "task_id", "difficulty", "task_type", "final_score",
                               "replan_count", "execution_attempts", "execution_time"],
          [(run_id, *t) for t in tasks])
    rows, calls = [], []
    for tid, sid, stage, agent, tool, text, ok in steps:
        rows.append((run_id, tid, sid, sid - 1 or "", stage, agent, tool, ok,
                     durations.get((tid, sid), float(sid)), 10 * sid, text))
        if tool:
            message = (LONG_MESSAGE if (tid, sid) == ("t3", 3) else "failed") if not ok else ""
            calls.append((run_id, tid, sid, f"{tid}-c{sid}", tool, ok,
                          durations.get((tid, sid), float(sid)), "KeyError" if not ok else "",
                          message))
    write("trajectory.csv", ["run_id", "task_id", "step_id", "parent_step_id", "stage",
                             "agent", "tool", "success", "duration_seconds", "tokens",
                             "action_input"], rows)
    write("tool_calls.csv", ["run_id", "task_id", "step_id", "call_id", "tool_name", "success",
                             "latency_seconds", "error_type", "error_message"], calls)
    for tid, ids in EVIDENCE.items():
        (run / tid).mkdir()
        (run / tid / "task_replay.json").write_text(json.dumps(
            {"task_id": tid, "failure_attribution": {"evidence_trace_step_ids": ids}}))
    return run


def _call(cid: str, q: int) -> dict:
    return {"role": "assistant", "content": None, "turn_idx": 0,
            "tool_calls": [{"id": cid, "name": "lookup", "arguments": {"q": q},
                            "requestor": "assistant"}]}


def _result(cid: str, error: bool) -> dict:
    return {"role": "tool", "id": cid, "content": "x", "error": error,
            "requestor": "assistant", "turn_idx": 1}


def write_tau2(path: Path, trials: int) -> Path:
    """tau2-bench results (another harness's run): tasks t0, t1, each tried ``trials`` times:
    lookup(q=1) fails, then lookup is called again (q=1: the same action, a loop; q=2 in t1's
    second trial: no loop) and succeeds. Rewards: t0 1, 0; t1 0, 1 (trial order)."""
    sims = []
    for task, rewards in (("t0", (1.0, 0.0)), ("t1", (0.0, 1.0))):
        for trial in range(trials):
            again = 2 if (task, trial) == ("t1", 1) else 1
            sims.append({"id": f"{task}-{trial}", "task_id": task, "trial": trial,
                         "reward_info": {"reward": rewards[trial]},
                         "messages": [_call("c1", 1), _result("c1", True), _call("c2", again),
                                      _result("c2", False)]})
    path.write_text(json.dumps({"timestamp": "x", "info": {"num_trials": trials}, "tasks": [],
                                "simulations": sims}))
    return path
