"""Multi-agent structure and the agent's own loop flags (issue 35 items 2 and 4) on the
trimmed Who&When Magentic-One runs, expected counts computed here from the raw JSON.

Rules applied to each file's ``history``: the speaker is ``role`` with a bracketed suffix
dropped (``Orchestrator (-> WebSurfer)`` is ``Orchestrator``); the next message of X after an
``Orchestrator (-> X)`` message (the next one only) was delegated by the Orchestrator; a
message flags a loop when its content holds ``"is_in_loop": {... "answer": true}``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import dabench_analysis as da

HC = Path(__file__).parent / "data" / "harness" / "whowhen" / "Hand-Crafted"
FLAG = re.compile(r'"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*true')


def _speaker(m: dict) -> str:
    return re.sub(r"\s*\(.*\)\s*$", "", m.get("name") or m["role"])


def test_agent_attribution_magentic_one():
    acted, delegated, flagged, per_task = Counter(), Counter(), Counter(), {}
    for f in sorted(HC.glob("*.json")):
        hist = json.loads(f.read_text())["history"]
        per_task[f.stem] = sum(bool(FLAG.search(m["content"])) for m in hist)
        pending = set()
        for m in hist:
            acted[_speaker(m)] += 1
            flagged[_speaker(m)] += bool(FLAG.search(m["content"]))
            if _speaker(m) in pending:
                pending.discard(_speaker(m))
                delegated["Orchestrator"] += 1
            if to := re.match(r"Orchestrator \(-> (.*)\)$", m["role"]):
                pending.add(to.group(1))
    run = da.load_run(HC)
    aa = da.trajectory.agent_attribution(run).set_index("agent")
    assert {a: int(aa.loc[a, "steps_acted"]) for a in acted} == dict(acted)
    assert int(aa.loc["Orchestrator", "steps_delegated"]) == delegated["Orchestrator"] > 0
    assert {a: int(aa.loc[a, "flagged_acted"]) for a in acted} == dict(flagged)
    assert aa["failures_acted"].isna().all()  # the files record no outcome per step
    lt = da.trajectory.loop_tasks(run).set_index("task_id")
    assert lt["n_flagged"].astype(int).to_dict() == per_task
    assert lt["n_loops"].isna().all()  # no action inputs: repeats unknown, not 0
