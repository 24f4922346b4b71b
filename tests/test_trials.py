"""Repeated trials (pass@k, pass^k, flakiness), pairing checks and the cost–accuracy frontier
(issue 26 items 3-6), and the reports on other harnesses' output.

Expected values are computed here from the formulas, with the standard library and numpy: the
tau-bench rewards straight from the shipped JSON (math.comb), Wilson intervals from statsmodels,
the frontier and its bootstrap from the generated runs with numpy.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import dabench_analysis as da
from dabench_analysis.schema.needs import Skipped
from dabench_analysis.stats._trials import pass_at_k, pass_hat_k
from dabench_analysis.tables import trials

sys.path.insert(0, str(Path(__file__).parent))
from notebook_runs import cli_report, figures_not_rendered, run_cells  # noqa: E402

DATA = Path(__file__).parent / "data" / "harness"
TAU = DATA / "tau-bench" / "gpt-4o-airline.json"
INSPECT = DATA / "inspect_ai"
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _tau_counts() -> dict[int, tuple[int, int]]:
    """task -> (trials n, successes c) from the raw JSON (reward 1 is a success)."""
    out: dict[int, list[float]] = {}
    for r in json.loads(TAU.read_text(encoding="utf-8")):
        out.setdefault(r["task_id"], []).append(r["reward"])
    return {t: (len(v), sum(x == 1.0 for x in v)) for t, v in out.items()}


# --- estimators ---------------------------------------------------------------------------------

def test_estimators_equal_their_binomial_forms():
    n, c = np.array([5, 5, 5, 3, 10]), np.array([0, 2, 5, 1, 7])
    for k in (1, 2, 3, 5):
        # Chen et al. 2021 eq. 1 and Yao et al. 2024 §4, with math.comb (nan where k > n)
        at = [1 - math.comb(ni - ci, k) / math.comb(ni, k) if k <= ni else np.nan
              for ni, ci in zip(n, c, strict=True)]
        hat = [math.comb(ci, k) / math.comb(ni, k) if k <= ni else np.nan
               for ni, ci in zip(n, c, strict=True)]
        np.testing.assert_allclose(pass_at_k(n, c, k), at, rtol=1e-12)
        np.testing.assert_allclose(pass_hat_k(n, c, k), hat, rtol=1e-12)
    with pytest.raises(ValueError, match=r"\[0, n\]"):
        pass_at_k([2], [3], 1)


def test_tau_bench_pass_hat_k_reproduces_the_published_values():
    counts = _tau_counts()
    assert len(counts) == 50 and {n for n, _ in counts.values()} == {4}
    want = {k: sum(math.comb(c, k) / math.comb(n, k) for n, c in counts.values()) / 50
            for k in (1, 2, 3, 4)}
    want_at = {k: sum(1 - math.comb(n - c, k) / math.comb(n, k) for n, c in counts.values())
               / 50 for k in (1, 2, 3, 4)}
    table = trials.pass_k(da.load_run(TAU), n_boot=500, seed=1)
    assert table["k"].tolist() == [1, 2, 3, 4] and set(table["n_tasks"]) == {50}
    assert set(table["n_trials"]) == {4} and set(table["unit"]) == {"run"}
    assert table["pass_hat_k"].tolist() == pytest.approx([want[k] for k in (1, 2, 3, 4)])
    assert table["pass_at_k"].tolist() == pytest.approx([want_at[k] for k in (1, 2, 3, 4)])
    # shared/realdata README (tau-bench, gpt-4o airline): pass^1 0.42, pass^2 0.27, pass^4 0.20
    got = dict(zip(table["k"], table["pass_hat_k"].round(2), strict=True))
    assert (got[1], got[2], got[4]) == (0.42, 0.27, 0.20)
    assert (table["pass_hat_k_ci_low"] < table["pass_hat_k"]).all()
    assert (table["pass_hat_k"] < table["pass_hat_k_ci_high"]).all()


def test_pass_k_intervals_resample_tasks():
    counts = _tau_counts()
    per_task = np.array([math.comb(c, 2) / math.comb(n, 2) for n, c in counts.values()])
    table = trials.pass_k(da.load_run(TAU), ks=[2], n_boot=4000, seed=3)
    # a percentile bootstrap of the task mean, written here with numpy, is close to the BCa one
    rng = np.random.default_rng(0)
    boot = per_task[rng.integers(0, 50, size=(4000, 50))].mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    assert table["pass_hat_k_ci_low"].iloc[0] == pytest.approx(lo, abs=0.03)
    assert table["pass_hat_k_ci_high"].iloc[0] == pytest.approx(hi, abs=0.03)


def test_flakiness_counts_mixed_tasks_with_a_wilson_interval():
    counts = _tau_counts()
    flaky = sum(0 < c < n for n, c in counts.values())
    out = trials.flakiness(da.load_run(TAU)).iloc[0]
    assert (out["n_tasks"], out["n_flaky"]) == (50, flaky)
    assert out["n_always"] == sum(c == n for n, c in counts.values())
    assert out["n_never"] == sum(c == 0 for n, c in counts.values())
    lo, hi = proportion_confint(flaky, 50, method="wilson")  # statsmodels' Wilson
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((lo, hi))


def test_configurations_repeated_with_seeds_are_trials(rng):
    ok = rng.random((3, 20)) < 0.6  # 3 seeds x 20 tasks of one configuration
    t = pd.concat([pd.DataFrame({"run_id": f"r{s}", "task_id": [f"t{i}" for i in range(20)],
                                 "final_score": ok[s].astype(float)}) for s in range(3)])
    configs = pd.DataFrame({"run_id": ["r0", "r1", "r2"], "config": ["x"] * 3, "seed": [1, 2, 3]})
    table = trials.pass_k(t, configs=configs, n_boot=200)
    c = ok.sum(axis=0)
    assert table["run_id"].tolist() == ["x"] * 3 and set(table["unit"]) == {"configuration"}
    assert table["pass_hat_k"].tolist() == pytest.approx(
        [np.mean([math.comb(ci, k) / math.comb(3, k) for ci in c]) for k in (1, 2, 3)])
    alone = trials.pass_k(t, n_boot=200)  # without configurations: three runs of one trial
    assert alone["run_id"].tolist() == ["r0", "r1", "r2"] and set(alone["k"]) == {1}


def test_uneven_trials_leave_short_tasks_out_of_larger_k():
    t = pd.DataFrame({"task_id": ["a"] * 3 + ["b"] * 2, "trial": [1, 2, 3, 1, 2],
                      "final_score": [1.0, 1.0, 0.0, 1.0, 1.0]})
    table = trials.pass_k(t, n_boot=200)
    assert table["n_tasks"].tolist() == [2, 2, 1]
    # k = 3: only task a, C(2, 3) / C(3, 3) = 0
    assert table["pass_hat_k"].tolist()[2] == 0.0 and "1 task(s)" in table["note"].iloc[2]


# --- pairing checks -----------------------------------------------------------------------------

def test_pairing_checks_count_what_pairing_would_hide():
    t = pd.DataFrame({
        "run_id": ["a"] * 6 + ["b"] * 3,
        "task_id": ["t1", "t1", "t2", "t2", "t3", "t3", "t1", "t2", "t4"],
        "trial": [1, 2, 1, 1, 1, 2, 1, 1, 1]})  # a: t2's trial 1 twice (a duplicate)
    out = da.tables.sweep.task_counts(t).set_index("run_id")
    assert out.loc["a", ["n_own", "n_shared", "n_rows", "n_duplicates", "n_only_here"]].tolist() \
        == [3, 2, 6, 1, 1]
    assert out.loc["a", ["trials_min", "trials_max", "n_uneven"]].tolist() == [1, 2, 1]
    assert out.loc["b", ["n_own", "n_only_here", "trials_max"]].tolist() == [3, 1, 1]
    assert out["mixed"].tolist() == [True, True]  # a repeats tasks, b does not
    with pytest.raises(ValueError, match="never averaged"):
        da.tables.sweep.leaderboard(t.assign(final_score=1.0), n_boot=10)


# --- frontier -----------------------------------------------------------------------------------

def _generated(rng, n_tasks=40):
    """Four runs: accuracy rises with cost, one run is dominated (costly and weak)."""
    spec = {"cheap": (0.45, 100), "mid": (0.65, 400), "best": (0.85, 1600), "waste": (0.5, 900)}
    rows = []
    for run, (p, tokens) in spec.items():
        for i in range(n_tasks):
            rows.append({"run_id": run, "task_id": f"t{i:02d}",
                         "final_score": float(rng.random() < p),
                         "total_tokens": int(rng.poisson(tokens))})
    return pd.DataFrame(rows)


def _front(acc, cost):
    """Brute force: i is on the frontier when no j has acc >= and cost <=, one strictly."""
    n = len(acc)
    return np.array([not any(acc[j] >= acc[i] and cost[j] <= cost[i]
                             and (acc[j] > acc[i] or cost[j] < cost[i])
                             for j in range(n) if j != i) for i in range(n)])


def test_frontier_on_generated_runs(rng):
    t = _generated(rng)
    n_boot, seed = 300, 5
    out = da.tables.sweep.frontier(t, n_boot=n_boot, seed=seed).set_index("run_id")
    runs = ["cheap", "mid", "best", "waste"]
    w_ok = t.pivot(index="task_id", columns="run_id", values="final_score")[runs].to_numpy()
    w_cost = t.pivot(index="task_id", columns="run_id", values="total_tokens")[runs].to_numpy(
        float)
    acc, cost = w_ok.mean(axis=0), w_cost.mean(axis=0)
    assert out.loc[runs, "accuracy"].tolist() == pytest.approx(acc)
    assert out.loc[runs, "mean_cost"].tolist() == pytest.approx(cost)
    assert out.loc[runs, "cost_per_solved"].tolist() == pytest.approx(
        w_cost.sum(axis=0) / w_ok.sum(axis=0))
    assert out.loc[runs, "on_frontier"].tolist() == _front(acc, cost).tolist()
    assert not out.loc["waste", "on_frontier"]
    # the bootstrap as documented: rng.integers(0, n_tasks, (n_boot, n_tasks)), tasks in
    # task_id order, the same draw for every run
    idx = np.random.default_rng(seed).integers(0, 40, size=(n_boot, 40))
    b_acc, b_cost = w_ok[idx].mean(axis=1), w_cost[idx].mean(axis=1)
    p = np.mean([_front(a, c) for a, c in zip(b_acc, b_cost, strict=True)], axis=0)
    assert out.loc[runs, "p_frontier"].tolist() == pytest.approx(p)
    per = w_cost[idx].sum(axis=1) / w_ok[idx].sum(axis=1)
    assert out.loc[runs, "cost_per_solved_ci_low"].tolist() == pytest.approx(
        np.percentile(per, 2.5, axis=0))
    assert out.loc[runs, "accuracy_ci_high"].tolist() == pytest.approx(
        np.percentile(b_acc, 97.5, axis=0))


def test_frontier_of_one_run_is_not_computed(rng):
    t = _generated(rng)
    with pytest.raises(Skipped, match="needs two runs .* recorded total_tokens; only mid"):
        da.tables.sweep.frontier(t[t["run_id"] == "mid"], n_boot=50)


def test_frontier_of_runs_sharing_no_task_is_not_computed(rng):
    """Runs of two benchmarks (no task in common): not computed, with the reason (the sweep
    of an eval-v2 run and a tau-bench file failed here); the figure of a table without a
    point says so instead of drawing."""
    t = _generated(rng)
    t = t.assign(task_id=t["task_id"] + "_" + t["run_id"])  # every task its run's own
    with pytest.raises(Skipped, match="no task that every costed run has") as exc:
        da.tables.sweep.frontier(t, n_boot=50)
    assert exc.value.missing == ["a task every costed run has with a total_tokens"]
    out = pd.DataFrame({"run_id": ["a", "b"], "accuracy": np.nan, "accuracy_ci_low": np.nan,
                        "accuracy_ci_high": np.nan, "mean_cost": np.nan,
                        "mean_cost_ci_low": np.nan, "mean_cost_ci_high": np.nan,
                        "on_frontier": False})
    ax = da.figures.frontier(out)
    try:
        assert not ax.lines and not ax.collections
        assert any("not computed" in x.get_text() for x in ax.texts)
    finally:
        mpl.pyplot.close(ax.figure)


def test_frontier_and_pass_k_figures_draw_what_the_tables_say(rng):
    t = _generated(rng)
    table = da.tables.sweep.frontier(t, n_boot=100)
    ax = da.figures.frontier(table)
    line = ax.lines[-1]
    on = table[table["on_frontier"]].sort_values("mean_cost")
    assert line.get_xdata().tolist() == on["mean_cost"].tolist()
    assert line.get_ydata().tolist() == on["accuracy"].tolist()
    assert ax.get_xlabel() == "Mean tokens per task" and ax.get_ylim() == (0, 1)
    labels = {x.get_text().split(" (")[0] for x in ax.texts}
    assert labels == set(table["run_id"])
    pk = trials.pass_k(da.load_run(TAU), n_boot=100)
    ax = da.figures.pass_k_curve(pk)
    assert ax.lines[0].get_xdata().tolist() == [1, 2, 3, 4]
    assert ax.lines[0].get_ydata().tolist() == pytest.approx(pk["pass_hat_k"].tolist())
    assert ax.get_ylabel().startswith("pass^k")


# --- reports on other harnesses -----------------------------------------------------------------

def test_run_reports_on_tau_bench_and_inspect(tmp_path):
    with figures_not_rendered(), warnings.catch_warnings(), mpl.rc_context():  # style kept
        warnings.simplefilter("ignore")
        ns = run_cells(NOTEBOOKS / "run_report.ipynb", {
            "run_dir": str(TAU.resolve()), "output_dir": str(tmp_path / "tau")})
        tau = ns["summary"]
        ns = run_cells(NOTEBOOKS / "run_report.ipynb", {
            "run_dir": str((INSPECT / "mmlu-summary-choices.eval").resolve()),
            "output_dir": str(tmp_path / "mmlu")})
        mmlu = ns["summary"]
    skipped = {s["section"]: s["missing"] for s in tau["skipped"]}
    assert "pass_k" not in skipped and "difficulty_breakdown" in skipped
    assert skipped["difficulty_breakdown"][0] == "difficulty"
    assert tau["n_tasks"] == 50 and tau["answer_accuracy"] == pytest.approx(0.42)
    # the interval over the 50 tasks (tables.answer_accuracy), as the run display shows it
    # (test_one_accuracy.py computes it from the raw JSON with scipy)
    assert [tau["answer_accuracy_ci_low"], tau["answer_accuracy_ci_high"]] == pytest.approx(
        [0.325, 0.525], abs=1e-9)
    assert tau["answer_accuracy_ci_method"].startswith("BCa bootstrap over tasks")
    assert {str(k): v for k, v in tau["pass_hat_k"].items()}["2"] == pytest.approx(0.2733, abs=1e-4)
    table = pd.read_csv(tmp_path / "tau" / "tables" / "pass_k.csv")
    assert table["pass_hat_k"].round(2).tolist() == [0.42, 0.27, 0.22, 0.20]
    assert (tmp_path / "tau" / "pass_k_curve.png").is_file()
    main = pd.read_csv(tmp_path / "tau" / "tables" / "main_results.csv")
    assert main["n"].tolist() == [50]  # one value per task: its mean over 4 trials
    assert {s["section"] for s in mmlu["skipped"]} >= {"pass_k", "flakiness"}  # one epoch
    assert mmlu["format"] == "inspect" and mmlu["n_tasks"] == 1


def test_sweep_and_compare_on_inspect_logs_skip_what_trials_would_average(tmp_path):
    logs = [INSPECT / "log_streaming.eval",
            INSPECT / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
            INSPECT / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"]
    with figures_not_rendered(), warnings.catch_warnings(), mpl.rc_context():  # style kept
        warnings.simplefilter("ignore")
        ns = run_cells(NOTEBOOKS / "sweep.ipynb", {
            "run_dirs": [str(p.resolve()) for p in logs], "output_dir": str(tmp_path / "s")})
        sweep = ns["summary"]
        ns = run_cells(NOTEBOOKS / "compare_runs.ipynb", {
            "baseline_dir": str(logs[0].resolve()), "proposed_dir": str(logs[1].resolve()),
            "output_dir": str(tmp_path / "c")})
        compare = ns["summary"]
    assert sweep["not_in_sweep"] == [str(logs[2].resolve())]  # written before scoring
    assert {"leaderboard", "pairwise", "flip_counts", "items"} <= {
        s["section"] for s in sweep["skipped"]}
    counts = pd.read_csv(tmp_path / "s" / "tables" / "task_counts.csv").set_index("run_id")
    assert counts.loc["log_streaming", ["n_own", "n_rows", "trials_max"]].tolist() == [2, 4, 2]
    assert counts["mixed"].all() and set(counts["n_shared"]) == {2}
    front = pd.read_csv(tmp_path / "s" / "tables" / "frontier.csv")
    assert set(front["cost"]) == {"total_tokens"} and set(front["n_tasks"]) == {2}
    assert {s["section"] for s in compare["skipped"]} == {
        "paired_comparison", "paired_by_difficulty", "mcnemar", "task_changes",
        "paired_difference", "results_paragraph", "trajectory_comparison"}


def test_cli_reports_other_harnesses_with_states_and_a_column_map(tmp_path):
    table = tmp_path / "results.csv"
    table.write_text("sample,passed\n" + "".join(f"q{i},{'pass' if i % 3 else 'fail'}\n"
                                                 for i in range(12)))
    unscored = INSPECT / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
    res = cli_report(tmp_path / "out", str(unscored), str(table), "--map", "task_id=sample",
                     "--map", "final_score=passed", "--jobs", "2")
    assert res["returncode"] == 0, res["stderr"]
    assert "not evaluated" in res["stderr"] and "written before scoring" in res["stderr"]
    summary = json.loads((tmp_path / "out" / "results" / "summary.json").read_text())
    assert summary["format"] == "table" and summary["answer_accuracy"] == pytest.approx(8 / 12)
    bad = cli_report(tmp_path / "out2", str(table), "--map", "final_score")
    assert bad["returncode"] == 2 and "NAME=COLUMN" in bad["stderr"]


def test_trial_and_frontier_tables_read_with_human_labels(rng):
    # what a reader sees: pass@k / pass^k headers (never "Pass at k"), the method in words
    # ("BCa"), the frontier's cost column by its label; the .csv keeps the machine names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pk = trials.pass_k(da.load_run(TAU), n_boot=100)
        front = da.tables.sweep.frontier(_generated(rng), n_boot=50)
    md = da.export.to_markdown(pk)
    assert "pass@k [95% CI]" in md and "pass^k [95% CI]" in md and "Trials (fewest)" in md
    assert "Pass at k" not in md and "pass_hat_k" not in md
    assert (pk["method"] == "unbiased estimator; BCa bootstrap over tasks").all()
    md = da.export.to_markdown(front)
    assert "Total tokens (tokens)" in md and "total_tokens" not in md
    assert "Mean cost per task [95% CI]" in md and "On the frontier" in md
    assert set(front["cost"]) == {"total_tokens"}  # the frame keeps the column's name
