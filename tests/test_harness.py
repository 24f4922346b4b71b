"""Readers of other harnesses (issue 26 items 1, 2, 6): Inspect logs, tau-bench results and
per-task tables become the same Run as an eval-v2 folder.

Expected values come from the shipped files themselves (tests/data/harness/, see its README):
the tau-bench JSON read with the standard library's json, the Inspect logs through inspect_ai's
own reader (read_eval_log, value_to_float), never through this package's readers.
"""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dabench_analysis as da
from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.load._formats import detect_format

pytest.importorskip("inspect_ai")
from inspect_ai.event import ToolEvent  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool  # noqa: E402
from inspect_ai.scorer import value_to_float  # noqa: E402
from inspect_ai.tool import ToolCall, ToolCallError  # noqa: E402

DATA = Path(__file__).parent / "data" / "harness"
TAU = DATA / "tau-bench" / "gpt-4o-airline.json"
INSPECT = DATA / "inspect_ai"
UNSCORED = INSPECT / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
SCORED = INSPECT / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
EPOCHS = INSPECT / "log_streaming.eval"
CHOICE = INSPECT / "mmlu-summary-choices.eval"


def _raw_tau() -> list[dict]:
    return json.loads(TAU.read_text(encoding="utf-8"))


# --- format detection ---------------------------------------------------------------------------

def test_formats_are_detected_from_the_content(tmp_path):
    assert detect_format(TAU) == "tau-bench"
    assert {detect_format(p) for p in INSPECT.glob("*.eval")} == {"inspect"}
    assert detect_format(Path("data/sample_runs/baseline_react")) == "eval-v2"
    renamed = tmp_path / "results.txt"  # the content decides, not the name
    shutil.copy(TAU, renamed)
    assert detect_format(renamed) == "tau-bench"
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    assert detect_format(tmp_path / "t.csv") == "table"
    (tmp_path / "x.bin").write_bytes(b"\x00\x01")
    assert detect_format(tmp_path / "x.bin") is None
    with pytest.raises(RunLoadError, match="not a run this toolkit reads"):
        da.load_run(tmp_path / "x.bin")


# --- tau-bench ----------------------------------------------------------------------------------

def test_tau_bench_rewards_trials_and_user_cost_as_in_the_file():
    raw = _raw_tau()
    run = da.load_run(TAU)
    assert run.format == "tau-bench" and run.run_id == "gpt-4o-airline"  # named after the file
    t = run.tasks
    assert len(t) == 200 and t["task_id"].nunique() == 50 and run.trials == 4
    nan = float("nan")
    got = {(str(r.task_id), int(r.trial)): (r.final_score, repr(r.user_cost))
           for r in t.itertuples()}
    want = {(str(r["task_id"]), r["trial"]): (r["reward"], repr(
        nan if r["info"]["user_cost"] is None else r["info"]["user_cost"])) for r in raw}
    assert got == want
    assert str(t["trial"].dtype) == "Int64" and str(t["user_cost"].dtype) == "float64"
    assert "difficulty" not in t and "run_id" in t  # no difficulty: still a run


def test_tau_bench_messages_become_steps_and_tool_calls():
    raw = [r for r in _raw_tau() if r["traj"]]
    run = da.load_run(TAU, include_text=True)
    assert run.recorded == {"trajectory", "tool_calls"}
    steps, calls = run.trajectory, run.tool_calls
    assert len(steps) == sum(len(r["traj"]) for r in raw)
    n_calls = sum(len(m.get("tool_calls") or []) for r in raw for m in r["traj"])
    assert len(calls) == n_calls
    # tau-bench's environment answers a failed call with "Error: ..."
    failed = sum(str(m.get("content")).startswith("Error") for r in raw for m in r["traj"]
                 if m["role"] == "tool")
    assert int((~calls["success"].astype(bool)).sum()) == failed and failed > 0
    first = raw[0]["traj"]
    mine = steps[(steps["task_id"] == str(raw[0]["task_id"]))
                 & (steps["trial"] == raw[0]["trial"])].sort_values("step_id")
    assert mine["agent"].tolist() == [m["role"] for m in first]
    assert mine["observation"].iloc[1] == first[1]["content"]


def test_tau2_bench_results_are_read(tmp_path):
    sims = [{"id": f"s{i}", "task_id": f"t{i % 2}", "trial": i // 2, "duration": 2.5 + i,
             "agent_cost": 0.01 * (i + 1), "user_cost": 0.002, "termination_reason": "user_stop",
             "reward_info": {"reward": float(i % 3 == 0)},
             "messages": [{"role": "assistant", "content": None, "turn_idx": 0,
                           "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"q": 1},
                                           "requestor": "assistant"}]},
                          {"role": "tool", "id": "c1", "content": "nope", "error": True,
                           "requestor": "assistant", "turn_idx": 1}]} for i in range(4)]
    p = tmp_path / "tau2.json"
    p.write_text(json.dumps({"timestamp": "x", "info": {"num_trials": 2}, "tasks": [],
                             "simulations": sims}))
    run = da.load_run(p)
    assert run.format == "tau-bench" and run.trials == 2
    assert run.tasks["final_score"].tolist() == [1.0, 0.0, 0.0, 1.0]
    assert run.tasks["cost"].tolist() == pytest.approx([0.01, 0.02, 0.03, 0.04])
    assert run.tasks["execution_time"].tolist() == [2.5, 3.5, 4.5, 5.5]
    assert run.tool_calls["success"].tolist() == [False] * 4  # tau2's own error flag


def test_tau_bench_refuses_nan_naming_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('[{"task_id": 0, "trial": 0, "reward": NaN, "traj": []}]')
    with pytest.raises(RunLoadError, match="bad.json.*NaN is not JSON"):
        da.load_run(p, format="tau-bench")


# --- Inspect ------------------------------------------------------------------------------------

def test_inspect_samples_epochs_scores_and_usage_through_inspect_ai():
    to_float = value_to_float()
    for path in (SCORED, EPOCHS, CHOICE):
        log = read_eval_log(str(path))
        run = da.load_run(path)
        assert run.format == "inspect" and run.run_id == path.stem
        assert run.meta["model"] == log.eval.model and run.meta["task"] == log.eval.task
        scorer = log.results.scores[0].name
        want = {(str(s.id), s.epoch): (to_float(s.scores[scorer].value),
                                       sum(u.total_tokens for u in s.model_usage.values()))
                for s in log.samples}
        got = {(r.task_id, int(r.trial)): (r.final_score, int(r.total_tokens))
               for r in run.tasks.itertuples()}
        assert got == want
        # the log's own accuracy (Inspect's metric) is the share of C
        assert run.tasks["final_score"].mean() == pytest.approx(
            log.results.scores[0].metrics["accuracy"].value)
    assert da.load_run(EPOCHS).trials == 2  # 2 epochs: repeated trials


def test_a_partial_score_is_half_and_below_the_default_threshold(tmp_path):
    log = read_eval_log(str(SCORED))
    for s in log.samples[:2]:
        s.scores["match"] = s.scores["match"].model_copy(update={"value": "P"})
    p = tmp_path / "partial.eval"
    write_eval_log(log, str(p))
    run = da.load_run(p)
    assert run.tasks["final_score"].iloc[:2].tolist() == [0.5, 0.5]  # value_to_float("P")
    assert not da.schema.correct(run.tasks["final_score"].iloc[:2], 0.8).any()


def test_a_log_without_scores_is_not_evaluated():
    log = read_eval_log(str(UNSCORED))
    assert log.samples and not any(s.scores for s in log.samples)  # written before scoring
    with pytest.raises(RunLoadError, match="not evaluated"):
        da.load_run(UNSCORED)
    runs = da.load_runs(str(INSPECT), progress=False)  # a folder of logs
    assert sorted(runs.run_ids) == sorted(p.stem for p in (SCORED, EPOCHS, CHOICE))
    assert runs.skipped["path"].tolist() == [str(UNSCORED)]
    assert runs.skipped["reason"].iloc[0].startswith("not evaluated")
    vr = da.validate_run(UNSCORED)
    assert vr.state == "not evaluated" and np.isnan(vr.health.harness_score)


def _log_with_tool_events(path: Path) -> Path:
    """log_streaming.eval with a tool call added to its first sample, built with inspect_ai's
    own classes and written with its own writer (no shipped log has tool events)."""
    log = read_eval_log(str(EPOCHS))
    s = log.samples[0]
    calls = [ToolCall(id="c1", function="bash", arguments={"cmd": "ls"}),
             ToolCall(id="c2", function="python", arguments={"code": "1/0"})]
    s.messages = [*s.messages, ChatMessageAssistant(content="", tool_calls=calls),
                  ChatMessageTool(content="a b", tool_call_id="c1", function="bash"),
                  ChatMessageTool(content="", tool_call_id="c2", function="python",
                                  error=ToolCallError("timeout", "took too long"))]
    s.events = [*s.events,
                ToolEvent(id="c1", function="bash", arguments={"cmd": "ls"}, result="a b",
                          working_time=0.25),
                ToolEvent(id="c2", function="python", arguments={"code": "1/0"},
                          error=ToolCallError("timeout", "took too long"), working_time=30.0)]
    write_eval_log(log, str(path))
    return path


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_tool_events_become_tool_calls(tmp_path, suffix):
    p = _log_with_tool_events(tmp_path / f"tools{suffix}")
    log = read_eval_log(str(p))
    events = [e for e in log.samples[0].events if e.event == "tool"]
    run = da.load_run(p, include_text=True)
    assert detect_format(p) == "inspect" and run.recorded == {"trajectory", "tool_calls"}
    calls = run.tool_calls
    assert calls["call_id"].tolist() == [e.id for e in events]
    assert calls["tool_name"].tolist() == [e.function for e in events]
    assert calls["success"].tolist() == [e.error is None for e in events]
    assert calls["latency_seconds"].tolist() == [e.working_time for e in events]
    assert calls["error_type"].tolist()[1] == "timeout"
    steps = run.trajectory[(run.trajectory["task_id"] == str(log.samples[0].id))
                           & (run.trajectory["trial"] == log.samples[0].epoch)]
    assert steps["agent"].tolist() == [m.role for m in log.samples[0].messages]
    assert steps["action"].tolist()[-3:] == ["tool_call", "tool_result", "tool_result"]


def test_inspect_reader_without_inspect_ai_says_how_to_install(monkeypatch):
    for mod in ("inspect_ai", "inspect_ai.log", "inspect_ai.scorer"):
        monkeypatch.setitem(sys.modules, mod, None)  # as if not installed
    with pytest.raises(RunLoadError) as info:
        da.load_run(EPOCHS)
    assert "reading Inspect logs needs inspect-ai: pip install 'dabench-analysis[inspect]'" \
        in str(info.value)


# --- per-task tables ----------------------------------------------------------------------------

def test_load_table_csv_maps_columns_and_pass_fail(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text("sample_id,passed,tokens,usd,model\nq1,pass,120,0.01,m\nq2,FAIL,80,0.02,m\n"
                 "q3,true,100,,m\n")
    run = da.load_table(p, task_id="sample_id", final_score="passed", total_tokens="tokens",
                        cost="usd")
    assert run.run_id == "results" and run.format == "table"
    assert run.tasks["task_id"].tolist() == ["q1", "q2", "q3"]
    assert run.tasks["final_score"].tolist() == [1.0, 0.0, 1.0]
    assert run.tasks["total_tokens"].tolist() == [120, 80, 100]
    assert run.tasks["cost"].iloc[:2].tolist() == [0.01, 0.02] and pd.isna(run.tasks["cost"][2])
    assert run.tasks["model"].tolist() == ["m"] * 3  # the table's own column, kept
    assert any(f.check == "outcome_flag" and f.severity == "info" for f in run.findings)


def test_load_table_bad_value_names_file_row_and_column(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("id,score\na,0.5\nb,7\n")
    with pytest.raises(RunLoadError) as err:
        da.load_table(p, task_id="id", final_score="score")
    found = [f for f in err.value.findings if f.severity == "error"]
    assert [(f.file, f.row, f.column, f.check) for f in found] == [
        ("r.csv", 2, "final_score", "range")]
    with pytest.raises(RunLoadError, match=r"missing.*final_score='<score column>'"):
        da.load_table(p, task_id="id")
    with pytest.raises(ValueError, match="not a catalogue column"):
        da.load_table(p, task_id="id", final_score="score", tokens="x")


def test_load_table_jsonl_and_parquet_give_the_csv_run(tmp_path):
    rows = [{"sample": "a", "ok": True, "trial": 1, "model": "x"},
            {"sample": "a", "ok": False, "trial": 2, "model": "x"},
            {"sample": "b", "ok": True, "trial": 1, "model": "y"},
            {"sample": "b", "ok": True, "trial": 2, "model": "y"}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "r.parquet")
    pd.DataFrame(rows).to_csv(tmp_path / "r.csv", index=False)
    loaded = [da.load_table(tmp_path / f"r.{ext}", task_id="sample", final_score="ok",
                            trial="trial", run_id="model") for ext in ("csv", "jsonl", "parquet")]
    for runs in loaded:
        assert isinstance(runs, da.Runs) and runs.run_ids == ["x", "y"]
        assert runs["x"].tasks["final_score"].tolist() == [1.0, 0.0]
        assert runs["y"].trials == 2 and str(runs["y"].tasks["trial"].dtype) == "Int64"
    first = loaded[0].tasks  # the table's model column is the runs' run_id
    for other in loaded[1:]:
        pd.testing.assert_frame_equal(other.tasks, first)


def test_load_table_jsonl_refuses_nan_naming_the_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"task_id": "a", "final_score": 1}\n{"task_id": "b", "final_score": NaN}\n')
    with pytest.raises(RunLoadError, match=r"r.jsonl, line 2: .*NaN is not JSON"):
        da.load_table(p)


def test_a_repeated_task_without_a_trial_column_is_an_error(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("task_id,final_score\na,1\na,0\n")
    with pytest.raises(RunLoadError, match="duplicate_task_id"):
        da.load_table(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_table(p, strict=False)
    assert run.tasks["final_score"].tolist() == [1.0]  # the first kept, the repeat reported


# --- fewer required columns ---------------------------------------------------------------------

def test_an_eval_v2_run_without_difficulty_and_run_id_loads(tmp_path, drop_columns):
    run_dir = tmp_path / "no_labels"
    shutil.copytree("data/sample_runs/proposed_aat", run_dir)
    drop_columns(run_dir, {"difficulty", "run_id"})
    run = da.load_run(run_dir)
    assert run.run_id == "no_labels" and len(run.tasks) == 80  # named after its folder
    assert not [f for f in run.findings if f.severity == "error"]
    found = da.validate_run(run_dir).findings
    row = found[(found["check"] == "absent_column") & (found["column"] == "difficulty")]
    assert row["severity"].tolist() == ["warning"]
    assert "disables " in row["message"].iloc[0]
    assert "tables.paper.difficulty_breakdown" in row["message"].iloc[0]


def test_another_harness_run_names_what_its_file_holds_and_lacks():
    """Files present/absent of an Inspect log: its file and the step-level records it holds;
    never the eval-v2 files it could not have (the report said 'trajectory.csv absent' beside
    'trajectory present')."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(INSPECT / "log_streaming.eval")
    assert run.files_present == ["log_streaming.eval (inspect)", "trajectory"]
    assert run.files_absent == ["tool_calls"]  # no shipped log has tool events (issue 26)


def test_validate_a_trials_file_counts_traces_and_names_the_file_they_came_from():
    """tau-bench's file (50 tasks x 4 trials, the `traj` of four trials kept, README): a trace
    without steps is one trial, not one task id (a trial of task 0 without steps was counted
    as having them when another of its trials had), the steps are named as coming from the
    harness's file, not from trajectory.csv, and the size is stated in tasks and trials.
    Expected values from the raw JSON."""
    import io

    from rich.console import Console

    from dabench_analysis.report._cli import validate_command

    path = DATA / "tau-bench" / "gpt-4o-airline.json"
    raw = json.loads(path.read_text())
    no_steps = sum(1 for r in raw if not r["traj"])  # 196
    n_tasks = len({r["task_id"] for r in raw})  # 50
    most = max(pd.Series([r["task_id"] for r in raw]).value_counts())  # 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = da.validate_run(path)
    missing = report.findings[report.findings["check"] == "missing_trajectory"]
    assert len(missing) == no_steps == 196
    side = report.findings[report.findings["check"].isin(["missing_trajectory",
                                                          "missing_time_data"])]
    assert set(side["file"]) == {path.name}
    assert not side["message"].str.contains("trajectory.csv").any()
    assert report.size == f"{n_tasks} tasks, up to {most} trials each"
    buf = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        validate_command([str(path)], console=Console(file=buf, width=300))
    assert f"(evaluated, {n_tasks} tasks, up to {most} trials each)" in buf.getvalue()
    one = DATA / "inspect_ai" / "mmlu-summary-choices.eval"
    assert len(read_eval_log(str(one)).samples) == 1  # inspect_ai's own reader
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert da.load_run(one).size == "1 task"
