"""The Trajectories part of the reports (issue 23 item 10) on the session's shared sample report,
the trajectories notebook, the sections' skip notes, and the sample data's trajectories (item
11): expected values are computed here from the CSV files with plain pandas."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from notebook_runs import figures_not_rendered, run_cells
from trajectory_fixture import write_run, write_tau2

import dabench_analysis as da
from dabench_analysis.schema.needs import skips

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs"
RUN_TABLES = ["trajectory_variants", "trajectory_conformance", "trajectory_transitions",
              "trajectory_loops", "trajectory_loop_tasks", "trajectory_recovery",
              "first_failures", "first_failure_counts", "first_failure_agreement",
              "step_latency", "step_latency_tools", "solve_curve", "tool_fit"]
RUN_FIGURES = ["transition_graph", "trajectory_variants", "solve_curve", "step_latency"]


def loop_tasks_by_hand(run_dir: Path, window: int = 3) -> set[str]:
    """Tasks with a step whose tool and (non-empty) action_input equal one of the ``window``
    steps before it: the definition, in plain pandas."""
    t = pd.read_csv(run_dir / "trajectory.csv", dtype=str, keep_default_na=False)
    t["step_id"] = t["step_id"].astype(int)
    out = set()
    for task, g in t.sort_values(["task_id", "step_id"]).groupby("task_id"):
        acts = list(zip(g["tool"], g["action_input"], strict=True))
        for i, (tool, text) in enumerate(acts):
            if tool and text and (tool, text) in acts[max(0, i - window):i]:
                out.add(task)
    return out


@pytest.mark.parametrize("run", ["baseline_react", "proposed_aat"])
def test_run_reports_write_the_trajectory_tables_and_figures(sample_report, run):
    proc, out = sample_report
    assert proc.returncode == 0, proc.stderr
    folder = out / run
    for name in RUN_TABLES:
        for ext in ("csv", "tex", "md"):
            assert (folder / "tables" / f"{name}.{ext}").stat().st_size > 0, name
    for name in RUN_FIGURES:
        for ext in ("png", "pdf"):
            assert (folder / f"{name}.{ext}").stat().st_size > 0, name
    loops = pd.read_csv(folder / "tables" / "trajectory_loops.csv")
    pooled = loops[loops["difficulty"] == "all"].iloc[0]
    assert pooled["n_with_loop"] == len(loop_tasks_by_hand(SAMPLE / run))
    summary = json.loads((folder / "summary.json").read_text())
    assert not [s for s in summary["skipped"] if s["section"].startswith("trajectory")]
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "Trajectories" in html and "Transitions between blocks" in html


def test_comparison_and_sweep_have_their_trajectory_tables(sample_report):
    _, out = sample_report
    comp = pd.read_csv(out / "compare_baseline_react_vs_proposed_aat" / "tables"
                       / "trajectory_comparison.csv")
    comp = comp[comp["difficulty"] == "all"].set_index("measure")
    # loop rate of each run from the files: tasks with a loop / tasks with steps (80 each)
    for col, run in (("baseline", "baseline_react"), ("proposed", "proposed_aat")):
        assert comp.loc["loop_rate", col] == pytest.approx(
            len(loop_tasks_by_hand(SAMPLE / run)) / 80)
    per_run = pd.read_csv(out / "sweep" / "tables" / "trajectory_per_run.csv")
    per_run = per_run[per_run["difficulty"] == "all"]
    assert per_run["run_id"].tolist() == ["baseline_react", "proposed_aat"]
    steps = {r: len(pd.read_csv(SAMPLE / r / "trajectory.csv", usecols=["task_id"])) / 80
             for r in per_run["run_id"]}
    assert per_run["mean_steps"].tolist() == pytest.approx(list(steps.values()))


@pytest.mark.parametrize("run", ["baseline_react", "proposed_aat"])
def test_sample_blocks_agree_with_replans_and_attempts_and_show_loops(run):
    """Item 11: PLAN blocks = 1 + replan_count and EXECUTE blocks = execution_attempts for every
    task; loops, replans, retries and failed tool calls all occur."""
    tasks = pd.read_csv(SAMPLE / run / "task_metrics.csv").set_index("task_id")
    t = pd.read_csv(SAMPLE / run / "trajectory.csv").sort_values(["task_id", "step_id"])
    new_block = (t["stage"] != t.groupby("task_id")["stage"].shift()).to_numpy()
    blocks = t[new_block].groupby(["task_id", "stage"]).size().unstack(fill_value=0)
    assert (blocks["PLAN"] == 1 + tasks.loc[blocks.index, "replan_count"]).all()
    assert (blocks["EXECUTE"] == tasks.loc[blocks.index, "execution_attempts"]).all()
    assert (tasks["replan_count"] > 0).sum() > 0 and (tasks["execution_attempts"] > 1).sum() > 0
    assert len(loop_tasks_by_hand(SAMPLE / run)) > 0
    assert (pd.read_csv(SAMPLE / run / "tool_calls.csv")["success"] == 0).sum() > 0


def test_sections_are_skipped_with_their_note_without_trajectory(tmp_path):
    run_dir = write_run(tmp_path)
    (run_dir / "trajectory.csv").unlink()
    run = da.load_run(run_dir)
    tr = da.trajectory
    assert skips(tr.variants, run) == ["trajectory.csv"] and skips(tr.tool_fit, run) == []
    with pytest.raises(da.schema.Skipped, match="needs `trajectory.csv`, absent in this run"):
        tr.variants(run)


def test_a_missing_text_column_skips_only_the_loops(tmp_path):
    run_dir = write_run(tmp_path)
    t = pd.read_csv(run_dir / "trajectory.csv", dtype=str, keep_default_na=False)
    t.drop(columns="action_input").to_csv(run_dir / "trajectory.csv", index=False)
    run, tr = da.load_run(run_dir), da.trajectory
    assert skips(tr.variants, run) == []
    assert skips(tr.loops, run) == ["trajectory.csv:action_input"]
    # with the column, the section runs (its header is read: the text is not loaded)
    assert skips(tr.loops, da.load_run(write_run(tmp_path / "b"))) == []


def test_trajectories_notebook_runs_and_degrades(tmp_path):
    nb = ROOT / "notebooks" / "trajectories.ipynb"
    with figures_not_rendered():
        ns = run_cells(nb, {"run_dir": str(SAMPLE / "baseline_react"), "task_id": "task_3",
                            "by": "agent"})
    assert ns["has_steps"] and ns["task_id"] == "task_3"
    assert "Planner" in ns["variants"]["pattern"].iloc[0]
    assert ns["patterns"]["task_id"].eq("task_3").sum() == 1
    bare = tmp_path / "bare"
    shutil.copytree(SAMPLE / "baseline_react", bare)
    (bare / "trajectory.csv").unlink()
    with figures_not_rendered():
        ns = run_cells(nb, {"run_dir": str(bare), "task_id": "", "by": "stage"})
    assert ns["has_steps"] is False and "variants" not in ns
    assert ns["run"].run_id == "baseline_react"
    # another harness's file (tau2-bench, one trial): steps without stages
    with figures_not_rendered():
        ns = run_cells(nb, {"run_dir": str(write_tau2(tmp_path / "tau2.json", 1)), "task_id": "",
                            "by": "stage"})
    assert ns["has_steps"] and not ns["has_by"] and "variants" not in ns
    tr = da.trajectory  # what the notebook skipped, and why
    assert skips(tr.conformance, ns["run"]) == ["trajectory.csv:stage"]
    assert skips(tr.loops, ns["run"]) == [] and skips(tr.recovery, ns["run"]) == []
