"""The seeded generator: byte-for-byte regeneration and the seed's invariants on the sample runs."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import schema
from dabench_analysis.load import load_run
from dabench_analysis.synthetic import SAMPLE_RUNS, generate_run, generate_sample_runs

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample_runs"

RUNS = sorted(SAMPLE_RUNS)


def _all_files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def test_sample_runs_regenerate_byte_for_byte(tmp_path):
    generate_sample_runs(tmp_path)
    committed, fresh = _all_files(SAMPLE_DIR), _all_files(tmp_path)
    assert committed == fresh
    _, mismatch, errors = filecmp.cmpfiles(SAMPLE_DIR, tmp_path, [str(p) for p in committed],
                                           shallow=False)
    assert mismatch == [] and errors == []


@pytest.fixture(scope="module", params=RUNS)
def run(request):
    return load_run(SAMPLE_DIR / request.param)


def test_shape_and_catalogue(run):
    t = run.tasks
    assert len(t) == 80
    assert set(schema.TASK_COLUMNS) - set(schema.columns.OTHER_HARNESS_COLUMNS) <= set(t.columns)
    assert set(t["difficulty"].astype(str)) == set(schema.DIFFICULTY_ORDER)
    assert t["task_type"].nunique() >= 4
    assert t["documents_required"].sum() >= 10
    written = [set(c) - set(schema.columns.OTHER_HARNESS_COLUMNS)
               for c in (schema.TRAJECTORY_COLUMNS, schema.TOOL_CALL_COLUMNS)]
    assert run.trajectory.shape[1] == len(written[0]) - len(schema.columns.TEXT_TRAJECTORY_COLUMNS)
    assert run.tool_calls.shape[1] == len(written[1])


def test_tool_call_rows_and_failures_match(run):
    per_task = run.tool_calls.groupby("task_id").agg(
        rows=("call_id", "size"), fails=("success", lambda s: int((~s.astype(bool)).sum())))
    t = run.tasks.set_index("task_id")
    assert (per_task["rows"] == t.loc[per_task.index, "tool_calls"]).all()
    assert (per_task["fails"] == t.loc[per_task.index, "tool_failures"]).all()
    assert set(per_task.index) == set(t.index)


def test_token_conservation_within_100(run):
    traj = run.trajectory.groupby("task_id")["tokens"].sum()
    total = run.tasks.set_index("task_id")["total_tokens"]
    assert (traj - total.loc[traj.index]).abs().max() < 100


def test_verification_matches_coordinator_decision(run):
    t = run.tasks
    approve = t["coordinator_final_decision"] == "APPROVE_FINAL"
    assert (t["aat_verification_passed"].astype(bool) == approve).all()


def test_analyst_score_formula(run):
    t = run.tasks
    expected = 0.4 * t["autonomy_score"] + 0.3 * t["tool_efficiency"] + 0.3 * t["verification_score"]
    assert np.allclose(t["analyst_score"], expected, atol=1e-6)


def test_outcome_status_rule(run):
    t = run.tasks
    s, ok = t["final_score"], t["execution_success"].astype(bool)
    expected = np.where(s >= 0.8, "correct", np.where(ok & (s > 0), "partial", "failed"))
    assert (t["outcome_status"].astype(str).to_numpy() == expected).all()


def test_wall_clock_covers_component_time(run):
    t = run.tasks
    component = sum(t[f"{p}_time"] for p in schema.STAGES.values())
    assert (t["execution_time"] >= component).all()
    assert (component / t["execution_time"]).between(0.05, 1).all()


def test_failures_carry_taxonomy(run):
    t = run.tasks
    failed = t[t["final_score"] < 0.8]
    assert failed["failure_category"].notna().all()
    assert failed["root_cause"].notna().all()
    assert failed["failure_stage"].notna().all()
    assert t.loc[t["final_score"] >= 0.8, "failure_category"].isna().all()


def test_replay_agrees_with_metrics(run):
    for task_id in ["task_1", "task_40", "task_80"]:
        replay = run.replay(task_id)
        row = run.tasks.set_index("task_id").loc[task_id]
        assert replay["evaluation_result"]["final_score"] == pytest.approx(row["final_score"])
        assert (replay["failure_attribution"] is None) == (row["final_score"] >= 0.8)


def test_harder_tasks_score_lower_and_cost_more():
    t = load_run(SAMPLE_DIR / "baseline_react").tasks
    by = t.groupby("difficulty", observed=True)[["final_score", "execution_time", "total_tokens"]].mean()
    assert by.loc["Easy", "final_score"] > by.loc["Hard", "final_score"] > by.loc["Extreme", "final_score"]
    assert by["execution_time"].is_monotonic_increasing
    assert by["total_tokens"].is_monotonic_increasing


def test_proposed_wins_on_average_not_everywhere():
    base = load_run(SAMPLE_DIR / "baseline_react").tasks.set_index("task_id")["final_score"]
    prop = load_run(SAMPLE_DIR / "proposed_aat").tasks.set_index("task_id")["final_score"]
    diff = prop - base.loc[prop.index]
    assert diff.mean() > 0.05
    assert (diff < 0).sum() >= 5


def test_same_tasks_in_both_runs():
    a = pd.read_csv(SAMPLE_DIR / "baseline_react" / "task_metrics.csv")
    b = pd.read_csv(SAMPLE_DIR / "proposed_aat" / "task_metrics.csv")
    assert a["task_id"].tolist() == b["task_id"].tolist()
    assert a["difficulty"].tolist() == b["difficulty"].tolist()
    replay = json.loads((SAMPLE_DIR / "proposed_aat" / "task_3" / "task_replay.json").read_text())
    assert replay["task_id"] == "task_3"


def test_mean_steps_lengthens_trajectories_and_keeps_invariants(tmp_path):
    """``mean_steps`` (the benchmark's 30-step sweep) moves the mean trajectory length to about
    the target while every per-task count still follows the steps and the run validates."""
    from dabench_analysis import validate_run

    short = generate_run(tmp_path, run_id="short", n_tasks=150, seed=4, replays=False)
    long = generate_run(tmp_path, run_id="long", n_tasks=150, seed=4, mean_steps=30,
                        replays=False)
    n_short = len(pd.read_csv(short / "trajectory.csv"))
    traj = pd.read_csv(long / "trajectory.csv")
    tasks = pd.read_csv(long / "task_metrics.csv")
    assert n_short / 150 < 20
    assert 28 <= len(traj) / 150 <= 32
    per_task = traj.groupby("task_id").size()
    assert tasks.set_index("task_id")["trajectory_length"].sort_index().equals(per_task)
    assert tasks["tool_calls"].sum() == len(pd.read_csv(long / "tool_calls.csv"))
    assert validate_run(long).ok
