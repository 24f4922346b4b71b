"""Readers of real agent traces (issue 35 item 1): mini-swe-agent SWE-bench trajectories and
Who&When AutoGen/AG2 group chats, on trimmed copies of the shared real files
(tests/data/harness/{mini-swe-agent,whowhen}/, see its README), and damaged copies of them.

Expected values come from the raw JSON and CSV (json, csv and re, a few lines each), never from
this package's readers.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.load._formats import detect_format

DATA = Path(__file__).parent / "data" / "harness"
SWE = DATA / "mini-swe-agent"
AG = DATA / "whowhen" / "Algorithm-Generated"
HC = DATA / "whowhen" / "Hand-Crafted"


def _swe_raw(folder: Path = SWE):
    """Per file: instance, messages; and the resolved column of results_summary.csv."""
    files = sorted(folder.glob("trajs/*/*.traj.json"))
    with open(folder / "results_summary.csv", newline="", encoding="utf-8") as fh:
        resolved = {r["instance_id"]: r["resolved"] == "True" for r in csv.DictReader(fh)}
    return [json.loads(f.read_text(encoding="utf-8")) for f in files], resolved


def test_swe_folder_and_file_are_detected():
    one = next(SWE.glob("trajs/*/*.traj.json"))
    assert detect_format(SWE) == "swe-agent" and detect_format(one) == "swe-agent"
    assert detect_format(AG) == "groupchat" and detect_format(HC) == "groupchat"
    assert detect_format(DATA / "whowhen") == "eval-v2"  # a folder of two runs


def test_swe_counts_match_the_raw_files():
    raws, resolved = _swe_raw()
    run = da.load_run(SWE)
    assistant = [(d["instance_id"], i, m, d["messages"][i + 1]["content"])
                 for d in raws for i, m in enumerate(d["messages"]) if m["role"] == "assistant"]
    ran = [(t, r) for t, _, m, r in assistant
           if len(re.findall(r"```bash\s*\n(.*?)\n```", m["content"], re.S)) == 1]
    codes = [re.search(r"<returncode>(-?\d+)</returncode>", r) for _, r in ran]
    failed = sum(1 for c in codes if c and c.group(1) != "0") + sum(
        1 for c, (_, r) in zip(codes, ran, strict=True) if not c and "timed out" in r[:300])
    assert len(run.tasks) == len(raws) == 5
    assert len(run.trajectory) == len(assistant) == 144
    assert len(run.tool_calls) == len(ran)
    assert int((~run.tool_calls["success"].astype(bool)).sum()) == failed == 10
    assert run.tool_calls["success"].notna().all()
    tokens = {d["instance_id"]: sum(m["extra"]["response"]["usage"]["total_tokens"]
                                    for m in d["messages"] if m["role"] == "assistant")
              for d in raws}
    got = run.tasks.set_index("task_id")
    assert got["total_tokens"].to_dict() == tokens
    assert got["cost"].to_dict() == pytest.approx(
        {d["instance_id"]: d["info"]["model_stats"]["instance_cost"] for d in raws})
    assert got["final_score"].mean() == pytest.approx(
        sum(resolved[d["instance_id"]] for d in raws) / len(raws)) == pytest.approx(0.4)
    first = raws[0]["messages"][2]["extra"]["response"]["created"]
    assert pd.Timestamp(run.trajectory["timestamp"].iloc[0]).timestamp() == first


def test_swe_submission_and_format_errors_are_read_as_documented():
    run = da.load_run(SWE)
    steps = run.trajectory
    assert (steps.groupby("task_id")["action"].last() == "submit").all()
    fmt = steps[steps["action"] == "format_error"]
    assert len(fmt) and not fmt["success"].any()
    assert not set(zip(fmt["task_id"], fmt["step_id"], strict=True)) & set(
        zip(run.tool_calls["task_id"], run.tool_calls["step_id"], strict=True))
    assert (run.tool_calls["error_type"] == "timeout").sum() == 1  # psf__requests-2317


def test_swe_task_without_a_resolved_entry_is_a_finding(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(SWE, folder)
    rows = (folder / "results_summary.csv").read_text(encoding="utf-8").splitlines(True)
    (folder / "results_summary.csv").write_text("".join(r for r in rows if "10880" not in r))
    with pytest.raises(RunLoadError) as info:
        da.load_run(folder)
    f = [f for f in info.value.findings if f.check == "missing_outcome"]
    assert [x.file for x in f] == ["django__django-10880.traj.json"]
    assert "django__django-10880" in f[0].message and f[0].row == 2
    with pytest.warns(UserWarning, match="rejected values set to missing"):
        run = da.load_run(folder, strict=False)
    score = run.tasks.set_index("task_id")["final_score"]
    assert pd.isna(score["django__django-10880"])  # missing, never scored 0
    assert int(score.notna().sum()) == 4
    assert "missing_outcome" in {f.check for f in run.findings}


def test_swe_malformed_message_and_zero_files(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(SWE, folder)
    p = next(folder.glob("trajs/django__django-16667/*.traj.json"))
    raw = json.loads(p.read_text(encoding="utf-8"))
    raw["messages"][4]["content"] = None
    p.write_text(json.dumps(raw), encoding="utf-8")
    run = da.load_run(folder)
    f = [f for f in run.findings if f.check == "malformed_message"]
    assert len(f) == 1 and f[0].file == p.name and f[0].column == "content"
    assert "message 4" in f[0].message
    empty = tmp_path / "empty"
    (empty / "trajs").mkdir(parents=True)
    with pytest.raises(RunLoadError, match="no trajectory file"):
        da.load_run(empty, format="swe-agent")


def _chat_raw(folder: Path):
    return {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in folder.glob("*.json")}


@pytest.mark.parametrize("folder", [AG, HC], ids=["captainagent", "magentic-one"])
def test_groupchat_counts_and_labels_match_the_raw_files(folder):
    raw = _chat_raw(folder)
    run = da.load_run(folder)
    assert sorted(run.tasks["task_id"]) == sorted(raw)
    assert len(run.trajectory) == sum(len(d["history"]) for d in raw.values())
    codes = [re.match(r"exitcode: (\d+)", m["content"]).group(1) for d in raw.values()
             for m in d["history"] if re.match(r"exitcode: (\d+)", m["content"])]
    assert len(run.tool_calls) == len(codes)
    if codes:
        assert int((~run.tool_calls["success"].astype(bool)).sum()) == sum(
            c != "0" for c in codes) == 3
    got = run.tasks.set_index("task_id")
    for tid, d in raw.items():
        assert got.loc[tid, "final_score"] == float(d.get("is_correct", d.get("is_corrected")))
        assert got.loc[tid, "mistake_step"] == int(d["mistake_step"]) + 1  # step_id numbering
        assert got.loc[tid, "mistake_agent"] == d["mistake_agent"]
        speaker = d["history"][int(d["mistake_step"])]
        step = run.trajectory.set_index(["task_id", "step_id"]).loc[
            (tid, int(d["mistake_step"]) + 1)]
        assert speaker.get("name", speaker["role"]).startswith(step["agent"])


def test_magentic_one_roles_are_agent_and_action():
    run = da.load_run(HC)
    steps = run.trajectory
    raw = _chat_raw(HC)
    roles = [m["role"] for d in raw.values() for m in d["history"]]
    assert (steps["agent"] == "Orchestrator").sum() == sum(r.startswith("Orchestrator")
                                                           for r in roles)
    sent = steps[steps["action"] == "-> WebSurfer"]
    assert len(sent) == roles.count("Orchestrator (-> WebSurfer)")
    child = steps[steps["parent_step_id"].notna()]
    parent = steps.set_index(["task_id", "step_id"]).loc[
        list(zip(child["task_id"], child["parent_step_id"].astype(int), strict=True)), "action"]
    assert len(child) and (parent.to_numpy() == ("-> " + child["agent"]).to_numpy()).all()
    assert run.tasks.set_index("task_id").loc["3", "mistake_category"] == "Tool failure"


def test_groupchat_faults(tmp_path):
    folder = tmp_path / "chats"
    shutil.copytree(AG, folder)
    raw = json.loads((folder / "4.json").read_text(encoding="utf-8"))
    del raw["is_correct"]
    raw["history"][1] = "not a message"
    raw["mistake_step"] = "99"
    (folder / "4.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.warns(UserWarning):
        run = da.load_run(folder, strict=False)
    checks = {(f.check, f.file) for f in run.findings}
    assert {("missing_outcome", "4.json"), ("malformed_message", "4.json"),
            ("bad_label", "4.json")} <= checks
    assert pd.isna(run.tasks.set_index("task_id").loc["4", "final_score"])
    raw["is_correct"] = False
    (folder / "4.json").write_text(json.dumps(raw), encoding="utf-8")
    run = da.load_run(folder)
    assert pd.isna(run.tasks.set_index("task_id").loc["4", "mistake_step"])
    assert 2 not in set(run.trajectory.query("task_id == '4'")["step_id"])
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(RunLoadError, match="no group-chat file"):
        da.load_run(empty, format="groupchat")


def test_one_trajectory_file_finds_the_list_above_and_a_parent_holds_two_chat_runs():
    one = SWE / "trajs" / "django__django-11149" / "django__django-11149.traj.json"
    run = da.load_run(one)
    _, resolved = _swe_raw()
    assert run.run_id == "django__django-11149" and run.format == "swe-agent"
    assert run.tasks["final_score"].tolist() == [float(resolved["django__django-11149"])]
    runs = da.load_runs(DATA / "whowhen", progress=False)
    assert runs.run_ids == ["Algorithm-Generated", "Hand-Crafted"]
    assert [len(r.tasks) for r in runs] == [len(list(AG.glob("*.json"))),
                                            len(list(HC.glob("*.json")))]
