"""The frontier's cost per solved task counts the bootstrap replicates in which a run solves
nothing (cost per solve +inf; an unbounded interval is inf, never a finite number from the
replicates that remain), and a lone costed run is refused with the reason (issue 36, item 6)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis.schema.needs import Skipped
from dabench_analysis.tables.frontier import pareto_front


def _rare_sweep(n_tasks: int = 40) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Three runs on 40 tasks; 'rare' solves 2 tasks (the others 20 and 30)."""
    ok = np.zeros((n_tasks, 3))
    ok[:2, 0] = 1            # rare
    ok[:20, 1] = 1           # mid
    ok[:30, 2] = 1           # best
    cost = np.tile([100.0, 300.0, 900.0], (n_tasks, 1)) + np.arange(n_tasks)[:, None]
    rows = [{"run_id": r, "task_id": f"t{i:02d}", "final_score": ok[i, j],
             "total_tokens": cost[i, j]}
            for j, r in enumerate(["rare", "mid", "best"]) for i in range(n_tasks)]
    return pd.DataFrame(rows), ok, cost


def test_zero_solve_replicates_count_as_infinite_cost():
    t, ok, cost = _rare_sweep()
    n_boot, seed = 2000, 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = da.tables.sweep.frontier(t, n_boot=n_boot, seed=seed).set_index("run_id")
    # the documented bootstrap: the shared tasks (task_id order) drawn with replacement,
    # the same draw for every run: numpy directly
    idx = np.random.default_rng(seed).integers(0, 40, size=(n_boot, 40))
    solved, spent = ok[idx].sum(axis=1), cost[idx].sum(axis=1)
    no_solve = (solved == 0).sum(axis=0)
    assert out.loc[["rare", "mid", "best"], "n_boot_no_solve"].tolist() == no_solve.tolist()
    # 13.2 % of replicates (expected 2000 (38/40)^40 = 257): beyond the 2.5 % upper tail
    assert no_solve.tolist() == [263, 0, 0]
    per = np.where(solved > 0, spent / np.where(solved > 0, solved, 1), np.inf)
    # the upper 97.5 % point lies among the infinite replicates: unbounded
    assert np.sort(per[:, 0])[int(np.ceil(0.975 * (n_boot - 1)))] == np.inf
    assert out.loc["rare", "cost_per_solved_ci_high"] == np.inf
    # what the defect reported: the percentile of the finite replicates only
    dropped = np.percentile(per[np.isfinite(per[:, 0]), 0], 97.5)
    assert dropped == pytest.approx(4897.6)
    # the lower bound (inf as a huge finite number does not reach it) and the other runs
    # (no zero-solve replicate): numpy's percentile
    assert out.loc["rare", "cost_per_solved_ci_low"] == pytest.approx(
        np.percentile(np.where(np.isinf(per[:, 0]), 1e300, per[:, 0]), 2.5))
    assert out.loc["rare", "cost_per_solved_ci_low"] == pytest.approx(946.375)
    finite = np.percentile(per[:, 1:], [2.5, 97.5], axis=0)
    assert out.loc[["mid", "best"], "cost_per_solved_ci_low"].tolist() == pytest.approx(finite[0])
    assert out.loc[["mid", "best"], "cost_per_solved_ci_high"].tolist() == pytest.approx(finite[1])
    assert out.loc["rare", "cost_per_solved"] == pytest.approx(cost[:, 0].sum() / 2)
    # the package's number rule shows it as such
    from dabench_analysis.schema.numbers import format_interval
    row = out.loc["rare"]
    assert format_interval(row["cost_per_solved"], row["cost_per_solved_ci_low"],
                           row["cost_per_solved_ci_high"]).endswith(", inf]")


def test_a_lone_run_is_on_its_frontier_and_the_table_refuses_it():
    """The definition (no other run dominates it) puts a lone point on its frontier;
    the table refuses a plane of one costed run with the reason (a report's skip note)."""
    assert pareto_front([0.3], [120.0]).tolist() == [True]
    t, _, _ = _rare_sweep()
    with pytest.raises(Skipped, match="needs two runs .* only mid has one"):
        da.tables.sweep.frontier(t[t["run_id"] == "mid"], n_boot=50)


def test_cost_per_solved_of_the_sample_runs():
    """The guide's worked example: the shipped sample runs, total_tokens, n_boot 2000, seed 0;
    the csv read directly and bootstrapped with numpy (tasks in task_id order)."""
    import csv
    from pathlib import Path

    sample = Path(__file__).resolve().parents[1] / "data" / "sample_runs"
    runs = ["proposed_aat", "baseline_react"]
    cols = {}
    for r in runs:
        with (sample / r / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
            rows = sorted(csv.DictReader(fh), key=lambda x: x["task_id"])
        cols[r] = ([float(float(x["final_score"]) >= 0.8) for x in rows],
                   [float(x["total_tokens"]) for x in rows])
    ok = np.array([cols[r][0] for r in runs]).T
    cost = np.array([cols[r][1] for r in runs]).T
    idx = np.random.default_rng(0).integers(0, 80, size=(2000, 80))
    per = cost[idx].sum(axis=1) / ok[idx].sum(axis=1)
    assert (ok[idx].sum(axis=1) > 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = da.tables.sweep.frontier(da.load_runs([sample / r for r in runs],
                                                    progress=False)).set_index("run_id")
    assert out.loc[runs, "n_boot_no_solve"].tolist() == [0, 0]
    assert out.loc[runs, "cost_per_solved"].tolist() == pytest.approx(
        cost.sum(axis=0) / ok.sum(axis=0))
    assert out.loc[runs, "cost_per_solved_ci_low"].tolist() == pytest.approx(
        np.percentile(per, 2.5, axis=0))
    assert out.loc[runs, "cost_per_solved_ci_high"].tolist() == pytest.approx(
        np.percentile(per, 97.5, axis=0))
    assert [round(v) for v in out.loc["proposed_aat", ["cost_per_solved",
            "cost_per_solved_ci_low", "cost_per_solved_ci_high"]]] == [7483, 6421, 8794]
    assert [round(v) for v in out.loc["baseline_react", ["cost_per_solved",
            "cost_per_solved_ci_low", "cost_per_solved_ci_high"]]] == [9269, 7598, 11585]
