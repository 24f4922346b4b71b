"""Harbor ATIF trajectories and the completed tau2 reader (issue 35 item 1): steps, tool calls,
tokens, cost, step latency from timestamps, who called each tool. Expected values are computed here
from the raw JSON (the ATIF files are built from the RFC's examples: tests/data/harness/atif/README.md)."""

from __future__ import annotations

import json
import statistics
import warnings
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis.harnesses._atif import read_atif
from dabench_analysis.load._formats import detect_format
from dabench_analysis.tables.timing import tool_usage
from dabench_analysis.trajectory import recovery, tool_fit

DATA = Path(__file__).parent / "data" / "harness"
ATIF = sorted((DATA / "atif").glob("*.json"))
TAU2 = DATA / "tau2-bench" / "airline_grok-3.json"


def _flat(raw: dict) -> list[tuple[dict, dict]]:
    """(step, its trajectory): the root's steps but copied ones, each embedded subagent's steps
    right after the step referring to it."""
    subs = {t["trajectory_id"]: t for t in raw.get("subagent_trajectories", [])}
    out = []
    for s in raw["steps"]:
        if not s.get("is_copied_context"):
            out.append((s, raw))
            for r in (s.get("observation") or {}).get("results", []):
                for ref in r.get("subagent_trajectory_ref") or []:
                    sub = subs.pop(ref.get("trajectory_id"), None)
                    out += [(x, sub) for x in (sub or {}).get("steps", [])]
    return out


@pytest.mark.parametrize("path", ATIF, ids=lambda p: p.stem)
def test_atif_steps_calls_tokens_cost_and_latency_as_in_the_file(path):
    raw = json.loads(path.read_text())
    flat = _flat(raw)
    steps = [s for s, _ in flat]
    calls = [c for s in steps for c in s.get("tool_calls") or []]
    metrics = [s.get("metrics") or {} for s in steps]
    times = [datetime.fromisoformat(s["timestamp"]) if "timestamp" in s else None for s in steps]
    run = da.load_run(path)
    assert detect_format(path) == "atif"
    t, c = run.trajectory, run.tool_calls
    nested = len(flat) > len([s for s in raw["steps"] if not s.get("is_copied_context")])
    assert t["step_id"].tolist() == (list(range(1, len(steps) + 1)) if nested
                                     else [s["step_id"] for s in steps])
    assert t["agent"].tolist() == [tr["agent"]["name"] if s["source"] == "agent" else s["source"]
                                   for s, tr in flat]
    assert c["call_id"].tolist() == [x["tool_call_id"] for x in calls]
    assert c["tool_name"].tolist() == [x["function_name"] for x in calls]
    assert set(c["actor"]) == {"agent"} and c["success"].isna().all()  # ATIF has no flag
    assert t["prompt_tokens"].sum() == sum(m.get("prompt_tokens", 0) for m in metrics)
    assert t["completion_tokens"].sum() == sum(m.get("completion_tokens", 0) for m in metrics)
    assert t["cost"].sum() == pytest.approx(sum(m.get("cost_usd", 0) for m in metrics))
    gaps = [(b - a).total_seconds() if a and b else None for a, b in pairwise(times)]
    got = t["duration_seconds"].iloc[1:].tolist()
    assert [g for g in got if g == g] == pytest.approx([g for g in gaps if g is not None])
    assert [g != g for g in got] == [g is None for g in gaps]  # NaN where a timestamp is missing
    stamped = [x for x in times if x]
    assert run.tasks.loc[0, "execution_time"] == (stamped[-1] - stamped[0]).total_seconds()
    fm = raw.get("final_metrics")
    if fm:
        assert run.tasks.loc[0, "cost"] == pytest.approx(fm["total_cost_usd"])
        assert run.tasks.loc[0, "total_tokens"] == (fm["total_prompt_tokens"]
                                                   + fm["total_completion_tokens"])
    assert run.tasks.loc[0, "final_score"] == raw["extra"]["reward"]


def test_atif_v17_copied_context_and_embedded_subagents_are_named():
    rec = read_atif(DATA / "atif" / "news_compaction_v1.7.json")
    checks = {f.check: f.message for f in rec.findings}
    assert checks["copied_context"].startswith("1 step(s)")
    assert rec.steps[1]["raw_response"].endswith("[image images/step_1_input.png]")
    sub = [s for s in rec.steps if s.get("trace_id") == "compact-001"]  # the embedded subagent
    delegating = next(s for s in rec.steps if s["raw_response"] == "Context compaction performed")
    assert [s["parent_step_id"] for s in sub] == [delegating["step_id"]]
    assert [s["agent"] for s in sub] == ["summarizer"]
    assert rec.steps[3]["metadata_json"] == {"llm_call_count": 0}


@pytest.mark.parametrize("minor", range(8))
def test_every_atif_version_1_0_to_1_7_is_read(tmp_path, minor):
    raw = json.loads((DATA / "atif" / "stock_price_v1.5.json").read_text())
    raw["schema_version"] = f"ATIF-v1.{minor}"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    assert len(da.load_run(p).trajectory) == 3


def test_an_atif_version_outside_1_0_to_1_7_is_a_finding_and_zero_steps(tmp_path):
    raw = json.loads((DATA / "atif" / "stock_price_v1.5.json").read_text())
    raw["schema_version"] = "ATIF-v2.0"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    rec = read_atif(p)
    assert rec.steps is None and rec.calls is None
    f = [f for f in rec.findings if f.check == "unknown_version"]
    assert f and f[0].severity == "error" and "ATIF-v2.0" in f[0].message
    with pytest.raises(da.RunLoadError, match="1 problem"):
        da.load_run(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(da.load_run(p, strict=False).trajectory) == 0


def test_an_atif_step_without_a_required_field_is_named(tmp_path):
    raw = json.loads((DATA / "atif" / "stock_price_v1.5.json").read_text())
    del raw["steps"][1]["source"]
    del raw["steps"][1]["tool_calls"][0]["function_name"]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    found = [(f.check, f.row, f.column) for f in read_atif(p).findings]
    assert ("missing_field", 2, "source") in found
    assert ("missing_field", 2, "function_name") in found


def test_an_atif_file_without_an_outcome_is_not_evaluated(tmp_path):
    raw = json.loads((DATA / "atif" / "stock_price_v1.5.json").read_text())
    del raw["extra"]["reward"]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    with pytest.raises(da.RunLoadError, match="not evaluated"):
        da.load_run(p)


def _tau2_raw() -> list[dict]:
    return json.loads(TAU2.read_text())["simulations"]


def test_tau2_step_latency_tokens_and_cost_per_message():
    sims = _tau2_raw()
    gaps, prompt, completion, cost = [], 0, 0, 0.0
    for s in sims:
        ms = s["messages"]
        ts = [datetime.fromisoformat(x) for x in [s["start_time"], *(m["timestamp"] for m in ms)]]
        gaps += [(b - a).total_seconds() for a, b in pairwise(ts)]
        prompt += sum((m.get("usage") or {}).get("prompt_tokens", 0) for m in ms)
        completion += sum((m.get("usage") or {}).get("completion_tokens", 0) for m in ms)
        cost += sum(m.get("cost") or 0 for m in ms)
    t = da.load_run(TAU2).trajectory
    assert t["duration_seconds"].median() == pytest.approx(statistics.median(gaps))
    assert t["duration_seconds"].notna().sum() == len(gaps) == len(t)  # the first: from start_time
    assert t["prompt_tokens"].sum() == prompt and t["completion_tokens"].sum() == completion
    assert t["tokens"].sum() == prompt + completion
    assert t["cost"].sum() == pytest.approx(cost)


def test_tau2_calls_by_actor_and_the_agent_only_default(tmp_path):
    sims = _tau2_raw()
    want = {}
    for s in sims:
        for m in s["messages"]:
            for c in m.get("tool_calls") or []:
                who = {"assistant": "agent", "user": "user"}[c.get("requestor", m["role"])]
                want[who] = want.get(who, 0) + 1
    run = da.load_run(TAU2)
    assert run.tool_calls["actor"].value_counts().to_dict() == want
    # a simulated user's call, as tau2 telecom writes them: left out by default, with a note
    data = json.loads(TAU2.read_text())
    sim = next(s for s in data["simulations"] if s["messages"])
    sim["messages"] += [
        {"role": "user", "content": None, "timestamp": "2025-10-13T00:09:00", "tool_calls": [
            {"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "u1", "content": "ok", "requestor": "user", "error": False,
         "timestamp": "2025-10-13T00:09:01"}]
    p = tmp_path / "tau2.json"
    p.write_text(json.dumps(data))
    mixed = da.load_run(p)
    assert mixed.tool_calls["actor"].value_counts().to_dict() == {**want, "user": 1}
    usage = tool_usage(mixed)
    assert "toggle_airplane_mode" not in set(usage["tool_name"])
    assert usage["note"].iloc[0].startswith("1 tool call(s) of user left out")
    assert "toggle_airplane_mode" in set(tool_usage(mixed, actor=None)["tool_name"])
    fit = tool_fit(mixed)
    assert "toggle_airplane_mode" not in set(fit["tool"])
    assert fit["note"].str.endswith("1 tool call(s) of user left out (actor='agent'; "
                                    "actor=None keeps all)").all()
    assert "toggle_airplane_mode" in set(tool_fit(mixed, actor=None)["tool"])


def test_recovery_counts_the_agents_errors_only_by_default(tmp_path):
    """A failed call of the simulated user (and its tool message) is not the agent's error."""
    data = json.loads(TAU2.read_text())
    sim = next(s for s in data["simulations"] if s["messages"])
    agent_errors = sum(1 for m in sim["messages"] if m["role"] == "tool" and m.get("error"))
    sim["messages"] += [
        {"role": "user", "content": None, "timestamp": "2025-10-13T00:09:00", "tool_calls": [
            {"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "u1", "content": "failed", "requestor": "user", "error": True,
         "timestamp": "2025-10-13T00:09:01"}]
    data["simulations"] = [sim]
    p = tmp_path / "tau2.json"
    p.write_text(json.dumps(data))
    run = da.load_run(p, strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own, every = recovery(run), recovery(run, actor=None)
    tools = {name: set(t.loc[t["level"] == "tool", "group"]) for name, t in
             (("own", own), ("every", every))}
    assert "toggle_airplane_mode" in tools["every"] - tools["own"]
    n_own = own.loc[own["level"] == "all", "n_errors"].sum()
    assert every.loc[every["level"] == "all", "n_errors"].sum() > n_own >= agent_errors
    assert "of user left out" in own["note"].iloc[0]
