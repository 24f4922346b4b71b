"""Damaged output of other harnesses (issue 33 items 1, 6, 7): tau-bench, tau2-bench and Inspect
files damaged as the eval-v2 tests damage task_metrics.csv (a missing key value, zero records,
declared-vs-read totals, tool calls without ids), and the real tau2 file.

Every damaged file is a copy of a real one (tests/data/harness/, see its README), changed with
json or zipfile; the expected values come from the raw JSON and zip members, never from this
package's readers.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis.load._findings import RunLoadError

pytest.importorskip("inspect_ai")

DATA = Path(__file__).parent / "data" / "harness"
TAU = DATA / "tau-bench" / "gpt-4o-airline.json"
TAU2 = DATA / "tau2-bench" / "airline_grok-3.json"
SCORED = DATA / "inspect_ai" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def _raw(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _write(tmp_path: Path, name: str, data) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _only(findings, check: str):
    found = [f for f in findings if f.check == check]
    assert len(found) == 1, findings
    return found[0]


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


# --- a missing key value: an error naming file, rows and field; the rows out only with it -------

def test_tau_bench_records_without_trial_among_others_are_named_and_left_out(tmp_path):
    raw = _raw(TAU)
    for r in raw[:20]:  # older records without the field, as in the issue
        del r["trial"]
    p = _write(tmp_path, "mixed.json", raw)
    with pytest.raises(RunLoadError, match="mixed.json") as info:
        da.load_run(p)
    f = _only(info.value.findings, "missing_key")
    assert (f.severity, f.file, f.column, f.rows) == ("error", "mixed.json", "trial",
                                                      tuple(range(1, 21)))
    assert "left out of every statistic" in f.message
    with pytest.warns(UserWarning, match="20 row\\(s\\) dropped"):
        run = da.load_run(p, strict=False)
    kept = [r for r in raw if "trial" in r]
    assert len(run.tasks) == len(kept) == 180
    assert run.tasks["final_score"].mean() == pytest.approx(_mean(r["reward"] for r in kept))
    assert [f.rows for f in run.findings if f.check == "missing_key"] == [
        tuple(range(1, 21)), (), ()]
    assert run.source_rows[:3] == [21, 22, 23]  # each kept task keeps its record's position
    # the steps and calls of a record left out are left out with it, and said so
    assert len(run.trajectory) == sum(len(r["traj"]) for r in kept)
    gone = sum(len(r["traj"]) for r in raw[:20])
    assert gone > 0 and f"{gone} trajectory row(s)" in " ".join(
        f.message for f in run.findings if f.check == "missing_key")


def test_tau2_simulations_without_task_id_or_trial_are_named(tmp_path):
    data = _raw(TAU2)
    del data["simulations"][2]["trial"]
    data["simulations"][5]["task_id"] = None
    p = _write(tmp_path, "tau2.json", data)
    with pytest.warns(UserWarning, match="2 row\\(s\\) dropped"):
        run = da.load_run(p, strict=False)
    found = {f.column: f.rows for f in run.findings if f.check == "missing_key"}
    assert found == {"trial": (3,), "task_id": (6,)}
    kept = [s for i, s in enumerate(data["simulations"]) if i not in (2, 5)]
    assert len(run.tasks) == len(kept)
    assert run.tasks["final_score"].mean() == pytest.approx(
        _mean(s["reward_info"]["reward"] for s in kept))


def test_load_table_with_a_trial_column_has_the_same_key_rule(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,try,score\na,0,1\na,1,0\nb,,1\nb,1,1\n", encoding="utf-8")
    with pytest.raises(RunLoadError) as info:
        da.load_table(p, task_id="id", trial="try", final_score="score")
    f = _only(info.value.findings, "missing_key")
    assert (f.file, f.row, f.column) == ("t.csv", 3, "trial")


def test_an_inspect_sample_without_an_id_is_refused_naming_the_log(tmp_path):
    dst = tmp_path / "noid.eval"
    with zipfile.ZipFile(SCORED) as zi, zipfile.ZipFile(dst, "w") as zo:
        for info in zi.infolist():
            body = zi.read(info)
            if info.filename.startswith("samples/") and b'"id"' in body:
                sample = json.loads(body)
                sample["id"] = None
                body = json.dumps(sample).encode()
            zo.writestr(info.filename, body, info.compress_type)
    with pytest.raises(RunLoadError, match="noid.eval: inspect_ai cannot read this log"):
        da.load_run(dst)


# --- a tau-bench file without trial: one trial per task -----------------------------------------

def test_tau_bench_without_trial_is_one_trial_per_task(tmp_path):
    first = [r for r in _raw(TAU) if r["trial"] == 0]
    for r in first:
        del r["trial"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = da.load_run(_write(tmp_path, "old.json", first))
    assert "trial" not in run.tasks and run.trials == 1 and len(run.tasks) == len(first) == 50
    assert run.tasks["final_score"].mean() == pytest.approx(_mean(r["reward"] for r in first))
    assert not [f for f in run.findings if f.severity == "error"]


# --- zero records -------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [[], {"info": {"num_trials": 4}, "tasks": [{"id": "0"}],
                                       "simulations": []}], ids=["tau-bench", "tau2"])
def test_a_results_file_without_records_is_a_clear_error(tmp_path, data):
    p = _write(tmp_path, "empty.json", data)
    with pytest.raises(RunLoadError, match="empty.json: the file holds no task rows") as info:
        da.load_run(p, strict=False, format="tau-bench")  # ``[]`` alone names no format
    assert _only(info.value.findings, "no_rows").file == "empty.json"


# --- declared vs read ---------------------------------------------------------------------------

def _without_samples(tmp_path: Path, drop) -> tuple[Path, dict, list[str]]:
    """A copy of the scored log without the sample members ``drop`` picks; its header and the
    sample members kept, read from the raw zip."""
    dst = tmp_path / "cut.eval"
    with zipfile.ZipFile(SCORED) as zi, zipfile.ZipFile(dst, "w") as zo:
        members = sorted(n for n in zi.namelist() if n.startswith("samples/"))
        gone = set(drop(members))
        for info in zi.infolist():
            if info.filename not in gone:
                zo.writestr(info.filename, zi.read(info), info.compress_type)
        header = json.loads(zi.read("header.json"))
    return dst, header, [m for m in members if m not in gone]


def test_an_inspect_log_missing_a_sample_member_says_declared_and_read(tmp_path):
    dst, header, kept = _without_samples(tmp_path, lambda members: members[3:4])
    declared = header["results"]["total_samples"]
    assert (declared, len(kept)) == (10, 9)
    run = da.load_run(dst)
    f = _only(run.findings, "declared_count")
    assert (f.severity, f.file) == ("warning", "cut.eval")
    assert f"declares {declared} task rows" in f.message and f"; {len(kept)} read" in f.message
    ids = sorted(json.loads(zipfile.ZipFile(dst).read(m))["id"] for m in kept)
    assert sorted(run.tasks["task_id"].astype(int)) == ids


def test_an_inspect_log_without_any_sample_member_is_a_clear_error(tmp_path):
    dst, header, _ = _without_samples(tmp_path, lambda members: members)
    with pytest.raises(RunLoadError, match="cut.eval") as info:
        da.load_run(dst, strict=False)
    f = _only(info.value.findings, "declared_count")
    assert f"declares {header['results']['total_samples']} task rows" in f.message
    assert "; 0 read" in f.message


def test_real_inspect_logs_read_what_they_declare():
    for p in (DATA / "inspect_ai").glob("*.eval"):
        total = json.loads(zipfile.ZipFile(p).read("header.json"))["results"]["total_samples"]
        n = sum(m.startswith("samples/") for m in zipfile.ZipFile(p).namelist())
        assert total == n  # a complete log: no finding
        try:
            run = da.load_run(p)
        except RunLoadError as exc:  # the log written before scoring
            assert "not evaluated" in str(exc)
            continue
        assert len(run.tasks) == n and not [f for f in run.findings
                                            if f.check == "declared_count"]


def test_a_complete_tau2_run_has_no_declared_count_finding(tmp_path):
    data = _raw(TAU2)
    data["simulations"] = [s for s in data["simulations"] if s["trial"] == 0]
    ran = {s["task_id"] for s in data["simulations"]}
    data["tasks"] = [t for t in data["tasks"] if t["id"] in ran]
    data["info"]["num_trials"] = 1
    run = da.load_run(_write(tmp_path, "full.json", data))
    assert len(run.tasks) == len(data["simulations"]) == len(data["tasks"])
    assert not [f for f in run.findings if f.check == "declared_count"]


# --- tool calls without ids ---------------------------------------------------------------------

def _parallel_without_ids(messages: list[dict]) -> list[dict]:
    """The trial's tool calls as one assistant message making every call at once (parallel
    calls, as OpenAI-style agents make them) and their answers after it in the same order, all
    without ids: what a harness writing no ids gives."""
    calls = [dict(c) for m in messages for c in m.get("tool_calls") or []]
    answers = [dict(m) for m in messages if m.get("role") == "tool"]
    for m in (*calls, *answers):
        for key in ("id", "tool_call_id"):
            m.pop(key, None)
    return [{"role": "assistant", "content": None, "tool_calls": calls}, *answers]


def test_tau_bench_calls_without_ids_keep_each_failure(tmp_path):
    rec = next(r for r in _raw(TAU) if r["traj"] and any(
        str(m.get("content")).startswith("Error") for m in r["traj"][:-2] if m["role"] == "tool"))
    answers = [not str(m.get("content")).startswith("Error") for m in rec["traj"]
               if m["role"] == "tool"]  # each call is answered in the order it was made
    assert False in answers[:-1]  # a failure that is not the last answer
    rec["traj"] = _parallel_without_ids(rec["traj"])
    run = da.load_run(_write(tmp_path, "noids.json", [rec]))
    calls = run.tool_calls
    assert len(calls) == len(answers) and calls["call_id"].is_unique
    order = calls["call_id"].str.split(".").str[1].astype(int).argsort()
    assert calls["success"].iloc[order].tolist() == answers


def test_tau2_calls_without_ids_keep_each_failure(tmp_path):
    data = _raw(TAU2)
    sim = max(data["simulations"], key=lambda s: sum(bool(m.get("error"))
                                                     for m in s["messages"]))
    failed = sum(bool(m.get("error")) for m in sim["messages"] if m["role"] == "tool")
    n_calls = sum(len(m.get("tool_calls") or []) for m in sim["messages"])
    assert (failed, n_calls) == (2, 14)
    sim["messages"] = _parallel_without_ids(sim["messages"])
    data["simulations"] = [sim]
    run = da.load_run(_write(tmp_path, "noids2.json", data))
    assert len(run.tool_calls) == n_calls
    assert int((~run.tool_calls["success"].astype(bool)).sum()) == failed


# --- the real tau2 file -------------------------------------------------------------------------

def test_tau2_real_file_tasks_costs_tool_calls_and_partial_run():
    data = _raw(TAU2)
    sims = data["simulations"]
    run = da.load_run(TAU2)
    assert run.format == "tau-bench" and len(run.tasks) == len(sims) == 41
    assert run.tasks["task_id"].nunique() == len({s["task_id"] for s in sims}) == 40
    assert run.trials == 2  # task 0 ran twice before the run stopped
    assert run.tasks["final_score"].mean() == pytest.approx(
        _mean(s["reward_info"]["reward"] for s in sims))  # 23/41
    assert run.tasks["cost"].sum() == pytest.approx(sum(s["agent_cost"] for s in sims))
    assert run.tasks["execution_time"].tolist() == pytest.approx([s["duration"] for s in sims])
    msgs = [m for s in sims for m in s["messages"]]
    assert len(run.trajectory) == len(msgs)
    assert len(run.tool_calls) == sum(len(m.get("tool_calls") or []) for m in msgs)
    failed = sum(bool(m.get("error")) for m in msgs if m["role"] == "tool")
    assert int((~run.tool_calls["success"].astype(bool)).sum()) == failed == 3
    f = _only(run.findings, "declared_count")
    declared = len(data["tasks"]) * data["info"]["num_trials"]
    assert (f.severity, declared) == ("info", 200)
    assert f"declares {declared} task rows" in f.message and f"; {len(sims)} read" in f.message
