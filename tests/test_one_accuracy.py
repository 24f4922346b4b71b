"""One accuracy, one interval per page (issue 33, item 4): every place that shows a run's answer
accuracy (the notebook's run display, the key numbers and summary.json, index.html, the
leaderboard, the health's run quality, the Run's repr, pass@1) gives the estimate and interval of
:func:`dabench_analysis.tables.answer_accuracy`.

With repeated trials that is the interval over tasks (trials averaged within a task first), never
Wilson over trials as if they were independent: on main b52f60d the run display of the real
tau-bench file showed 0.420 [0.354, 0.489] (Wilson over 200 trials) and the key numbers
0.420 [0.325, 0.525] (over 50 tasks).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.proportion import proportion_confint

import dabench_analysis as da
from dabench_analysis import tables
from dabench_analysis.report._display import run_html, runs_html
from dabench_analysis.report._index import _summary_text
from dabench_analysis.report._summary import _trial_numbers
from dabench_analysis.validate._health import quality_components

TAU = Path(__file__).parent / "data" / "harness" / "tau-bench" / "gpt-4o-airline.json"
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "sample_runs"


def _tau_expected() -> tuple[float, float, float]:
    """From the raw JSON: each task's share of trials with reward >= 0.8 (tasks in the file's
    order), their mean, and the BCa bootstrap of that mean over the 50 tasks with 2000
    resamples from numpy's default_rng(0), as pass@1 of tables.trials.pass_k and the key
    numbers compute it (scipy.stats.bootstrap; Efron & Tibshirani 1993, ch. 14)."""
    per: dict[str, list[bool]] = {}
    for rec in json.loads(TAU.read_text(encoding="utf-8")):
        per.setdefault(str(rec["task_id"]), []).append(float(rec["reward"]) >= 0.8)
    means = np.array([np.mean(v) for v in per.values()])
    assert len(means) == 50 and sum(map(len, per.values())) == 200
    res = st.bootstrap((means,), np.mean, n_resamples=2000, method="BCa",
                       confidence_level=0.95, rng=np.random.default_rng(0))
    return float(means.mean()), float(res.confidence_interval.low), \
        float(res.confidence_interval.high)


@pytest.fixture(scope="module")
def tau():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return da.load_run(TAU)


def test_tau_bench_accuracy_is_over_tasks_everywhere(tau):
    est, low, high = _tau_expected()
    assert (round(est, 3), round(low, 3), round(high, 3)) == (0.42, 0.325, 0.525)
    acc = tables.answer_accuracy(tau)
    assert acc["answer_accuracy"] == pytest.approx(est, abs=1e-12)
    assert acc["answer_accuracy_ci_low"] == pytest.approx(low, abs=1e-12)
    assert acc["answer_accuracy_ci_high"] == pytest.approx(high, abs=1e-12)
    assert acc["answer_accuracy_ci_method"] == ("BCa bootstrap over tasks (trials averaged "
                                                "within a task)")
    assert (acc["n_tasks"], acc["n_trials"]) == (50, 200)
    # never the Wilson interval over the 200 trials (what the run display showed)
    wilson = proportion_confint(84, 200, method="wilson")
    assert acc["answer_accuracy_ci_low"] != pytest.approx(wilson[0], abs=1e-3)
    fields = ["answer_accuracy", "answer_accuracy_ci_low", "answer_accuracy_ci_high",
              "answer_accuracy_ci_method"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numbers = tables.key_numbers(tau)
        pass1 = tables.trials.pass_k(tau).iloc[0]  # pass@1: the same numbers
    assert {k: numbers[k] for k in fields} == {k: acc[k] for k in fields}
    assert [pass1["pass_at_k"], pass1["pass_at_k_ci_low"], pass1["pass_at_k_ci_high"]] == \
        pytest.approx([est, low, high], abs=1e-12)
    # what a reader sees: the run display (the report's header), the runs display, the
    # index line of the summary, the repr and the run quality's accuracy
    shown = "0.420 [0.325, 0.525]"
    assert shown in run_html(tau) and "0.354" not in run_html(tau)
    assert _summary_text(numbers).startswith(f"200 tasks, answer accuracy {shown}")
    assert "answer accuracy 0.420 (final_score >= 0.8)" in repr(tau)
    assert quality_components(tau.tasks)["answer_accuracy"] == pytest.approx(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        page = runs_html(da.load_runs([TAU], progress=False))
    assert f'white-space:nowrap">{shown}</td>' in page and "0.354" not in page


def test_summary_json_keeps_the_key_numbers_interval(tau):
    """The run report's summary.json: key_numbers' accuracy, not overwritten by another rule
    (the notebook calls this after its sections; a pass@1 table with other numbers is
    ignored for the accuracy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numbers = tables.key_numbers(tau)
    ctx = type("Ctx", (), {"results": {"pass_k": pd.DataFrame(
        {"k": [1], "pass_at_k": [0.0], "pass_at_k_ci_low": [0.0], "pass_at_k_ci_high": [0.0],
         "pass_hat_k": [0.42], "method": ["x"]})}, "value": lambda self, name: tau})()
    out = _trial_numbers(ctx, dict(numbers))
    assert out["answer_accuracy_ci_low"] == numbers["answer_accuracy_ci_low"]
    assert out["n_tasks"] == 50 and out["pass_hat_k"] == {1: 0.42}


def test_without_trials_the_wilson_interval_is_unchanged():
    """eval-v2 runs (one row per task): Wilson over tasks, as before, in the key numbers,
    Table 2's overall accuracy and the sweep leaderboard (the leaderboard on the shared tasks)."""
    runs = da.load_runs(SAMPLES, progress=False)
    for run in runs:
        t = run.tasks
        k = int((t["final_score"] >= 0.8).sum())
        n = int(t["final_score"].notna().sum())
        lo, hi = proportion_confint(k, n, method="wilson")  # statsmodels: R prop.test, no cc
        acc = tables.answer_accuracy(run)
        assert (acc["answer_accuracy"], acc["answer_accuracy_ci_method"]) == (k / n, "Wilson")
        assert [acc["answer_accuracy_ci_low"], acc["answer_accuracy_ci_high"]] == \
            pytest.approx([lo, hi], abs=1e-12)
        assert tables.key_numbers(run)["answer_accuracy_ci_low"] == pytest.approx(lo, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = tables.sweep.leaderboard(runs, n_boot=50).set_index("run_id")
        shared = tables.sweep.shared_tasks(runs)
    for rid, g in shared.groupby("run_id"):
        acc = tables.answer_accuracy(g.drop(columns="run_id"))
        assert board.loc[rid, ["answer_accuracy", "answer_accuracy_ci_low",
                               "answer_accuracy_ci_high"]].tolist() == pytest.approx(
            [acc["answer_accuracy"], acc["answer_accuracy_ci_low"],
             acc["answer_accuracy_ci_high"]], abs=1e-12)
        assert board.loc[rid, "accuracy_method"] == "Wilson"
