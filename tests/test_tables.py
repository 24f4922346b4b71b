"""Tables 1 and 2 against values worked out by hand on a six-task fixture (and pitfall P07)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import tables


@pytest.fixture
def six():
    return pd.DataFrame({
        "task_id": [f"t{i}" for i in range(1, 7)],
        "difficulty": pd.Categorical(["Easy", "Easy", "Medium", "Hard", "Hard", "Hard"],
                                     categories=["Easy", "Medium", "Hard", "Extreme"],
                                     ordered=True),
        "execution_success": pd.array([True, True, False, True, True, True], dtype="boolean"),
        "final_score": [1.0, 0.6, 0.0, 0.9, 0.8, 0.2],
        "execution_time": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
        "total_tokens": pd.array([100, 300, 500, 700, 900, 1100], dtype="Int64"),
        "analyst_score": [0.5] * 6, "answer_f1": [1.0, 0.5, 0.0, 1.0, 1.0, 0.5],
        "autonomy_score": [1.0] * 6, "tool_efficiency": [0.5, 0.7, 0.9, 0.5, 0.7, 0.9],
    })


def test_main_results_by_hand(six):
    t1 = tables.main_results(six).set_index("metric")
    assert list(t1.index) == ["final_score", "analyst_score", "answer_f1", "autonomy_score",
                              "tool_efficiency"]
    fs = t1.loc["final_score"]
    # mean 3.5/6; sum of squared deviations 0.808333 -> sd = sqrt(0.808333/5)
    assert fs["n"] == 6
    assert fs["mean"] == pytest.approx(0.5833333, abs=1e-6)
    assert fs["std"] == pytest.approx(0.4020779, abs=1e-6)
    # issue 13: a [0, 1] score gets the logit-t interval (was the t-interval [0.1613784,
    # 1.0052882], which passed 1). By hand: logit(7/12) = ln(1.4) = 0.3364722; se = sd/sqrt(6)
    # = 0.1641476; on the logit scale half = t(0.975, 5) * se / (m (1 - m)) = 2.5705818 *
    # 0.1641476 / 0.2430556 = 1.7360431 -> expit(0.3364722 -/+ 1.7360431) = 0.1978842, 0.8882030
    assert fs["ci_low"] == pytest.approx(0.1978842, abs=1e-6)
    assert fs["ci_high"] == pytest.approx(0.8882030, abs=1e-6)
    assert fs["method"] == "logit t"
    # constant column: sd 0. All six are 1.0, so (issue 13) the interval is the Clopper-Pearson
    # bound at k = n: [(0.025)^(1/6), 1] = [0.5407419, 1] (R: binom.test(6, 6)$conf.int), where
    # the t-interval collapsed to [1, 1]
    assert t1.loc["autonomy_score", "std"] == 0.0
    assert t1.loc["autonomy_score", "ci_low"] == pytest.approx(0.5407419, abs=1e-6)
    assert t1.loc["autonomy_score", "ci_high"] == 1.0
    assert t1.loc["tool_efficiency", "mean"] == pytest.approx(0.7)


def test_difficulty_breakdown_by_hand(six):
    t2 = tables.difficulty_breakdown(six)
    assert t2["difficulty"].astype(str).tolist() == ["Easy", "Medium", "Hard"]
    assert t2["n"].tolist() == [2, 1, 3]
    assert t2["execution_success_rate"].tolist() == [1.0, 0.0, 1.0]
    # 0.8 counts as correct (final_score >= threshold)
    assert t2["answer_accuracy"].tolist() == pytest.approx([0.5, 0.0, 2 / 3])
    assert t2["mean_final_score"].tolist() == pytest.approx([0.8, 0.0, 1.9 / 3])
    assert t2["mean_runtime_s"].tolist() == [15.0, 30.0, 50.0]
    assert t2["mean_tokens"].tolist() == [200.0, 500.0, 900.0]
    # Hard runtimes 40, 50, 60: mean 50, sd 10, t(0.975, 2) = 4.302653 -> 50 -/+ 24.841377
    assert t2["mean_runtime_s_ci_low"].iloc[2] == pytest.approx(25.158623, abs=1e-5)
    assert t2["mean_runtime_s_ci_high"].iloc[2] == pytest.approx(74.841377, abs=1e-5)
    assert np.isnan(t2["mean_runtime_s_ci_low"].iloc[1])  # n = 1: no interval
    # Wilson (1927) closed form, z = 1.959964: (p + z²/2n ± z·sqrt(pq/n + z²/4n²)) / (1 + z²/n)
    # for 2 of 3 -> 0.2076596, 0.9385081 (R: prop.test(2, 3, correct = FALSE))
    hard = t2.iloc[2]
    assert hard["answer_accuracy_ci_low"] == pytest.approx(0.2076596, abs=1e-6)
    assert hard["answer_accuracy_ci_high"] == pytest.approx(0.9385081, abs=1e-6)


def test_difficulty_threshold_is_a_parameter(six):
    t2 = tables.difficulty_breakdown(six, threshold=0.95)
    assert t2["answer_accuracy"].tolist() == pytest.approx([0.5, 0.0, 0.0])


def test_p07_order_and_empty_levels():
    # pitfalls.md P07: Easy, Medium, Hard, Extreme with n = 2, 1, 2, 0; rates 1.0, 1.0, 0.5, n/a
    t = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4", "t5"],
                      "difficulty": ["Hard", "Easy", "Medium", "Easy", "Hard"],
                      "execution_success": [1, 1, 1, 1, 1],
                      "final_score": [0.0, 1.0, 1.0, 1.0, 1.0],
                      "execution_time": [1.0] * 5, "total_tokens": [1] * 5})
    kept = tables.difficulty_breakdown(t, empty_levels="keep")
    assert kept["difficulty"].astype(str).tolist() == ["Easy", "Medium", "Hard", "Extreme"]
    assert kept["n"].tolist() == [2, 1, 2, 0]
    assert kept["answer_accuracy"].iloc[:3].tolist() == [1.0, 1.0, 0.5]
    assert np.isnan(kept["answer_accuracy"].iloc[3])
    omitted = tables.difficulty_breakdown(t)
    assert omitted["difficulty"].astype(str).tolist() == ["Easy", "Medium", "Hard"]


def test_missing_flags_are_not_counted(six):
    six["execution_success"] = pd.array([True, pd.NA, False, True, True, True], dtype="boolean")
    t2 = tables.difficulty_breakdown(six)
    assert t2["execution_success_rate"].iloc[0] == 1.0  # 1 of 1 known, the <NA> left out


def test_errors_name_the_column(six):
    with pytest.raises(ValueError, match="'final_scor' not in tasks"):
        tables.main_results(six, metrics=["final_scor"])
    with pytest.raises(ValueError, match="not among Easy, Medium, Hard, Extreme"):
        tables.difficulty_breakdown(six.assign(difficulty=["easy"] * 6))
    with pytest.raises(TypeError, match="DataFrame"):
        tables.main_results([1, 2, 3])


def test_key_numbers(six):
    k = tables.key_numbers(six)
    assert k["n_tasks"] == 6
    assert k["answer_accuracy"] == pytest.approx(3 / 6)
    assert k["n_failed"] == 3
    assert k["execution_success_rate"] == pytest.approx(5 / 6)
    # Wilson closed form for 3 of 6: 0.5 -/+ 1.959964 * 0.261426 / 1.640243 -> 0.1876163
    assert k["answer_accuracy_ci_low"] == pytest.approx(0.1876163, abs=1e-6)
    assert k["answer_accuracy_ci_high"] == pytest.approx(0.8123837, abs=1e-6)
