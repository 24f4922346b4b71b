"""Pitfalls P01–P05 of ../shared/pitfalls.md, each with the exact right answer given there."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import stats
from dabench_analysis.stats import StatisticsWarning
from dabench_analysis.tables import ablation


def frame(scores, tasks=None):
    tasks = tasks or [f"t{i + 1}" for i in range(len(scores))]
    return pd.DataFrame({"task_id": tasks, "final_score": pd.array(scores, dtype="float64")})


@pytest.fixture
def no_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# P01: Wilcoxon when every paired difference is zero ----------------------------------------

@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("method", ["auto", "exact", "approx"])
def test_p01_all_zero_differences(no_runtime_warnings, zero_method, method):
    a = frame([0.7, 0.5, 0.9, 0.6, 0.8])
    b = frame([0.7, 0.5, 0.9, 0.6, 0.8])
    with pytest.warns(StatisticsWarning, match="all 5 paired differences are zero"):
        r = stats.paired_comparison(a, b, zero_method=zero_method, method=method).iloc[0]
    # pitfalls.md P01: n_pairs = 5, n_nonzero = 0, p = 1.0, never NaN, never a small p
    assert (r.n_pairs, r.n_nonzero, r.p_value) == (5, 0, 1.0)
    assert r.wilcoxon_method == "not testable (0 non-zero differences)"
    assert r.mean_diff == 0.0 and r.cohens_d == 0.0


def test_p01_inside_compare_runs_gives_p_one(no_runtime_warnings):
    a = frame([0.7, 0.5, 0.9, 0.6, 0.8]).assign(answer_f1=[0.1, 0.2, 0.3, 0.4, 0.5])
    with pytest.warns(StatisticsWarning):
        out = stats.compare_runs(a, a.copy(), metrics=["final_score", "answer_f1"])
    assert out.p_value.tolist() == [1.0, 1.0] and out.p_adjusted.tolist() == [1.0, 1.0]


# P02: NaN in paired scores ------------------------------------------------------------------

def test_p02_nan_dropped_pairwise(no_runtime_warnings):
    a = frame([0.9, np.nan, 0.7, 0.6, 0.8, 0.5])
    b = frame([0.4, 0.3, np.nan, 0.2, 0.6, 0.1])
    with pytest.warns(StatisticsWarning, match="2 pairs dropped"):
        r = stats.paired_comparison(b, a).iloc[0]
    # pitfalls.md P02: complete pairs t1, t4, t5, t6 -> n = 4, exact two-sided p = 2/16
    assert (r.n_pairs, r.n_dropped_na, r.n_unpaired) == (4, 2, 0)
    assert r.p_value == pytest.approx(0.125, abs=1e-12)
    assert r.wilcoxon_method == "exact"
    assert r.mean_diff == pytest.approx(np.mean([0.5, 0.4, 0.2, 0.4]), abs=1e-12)


def test_p02_position_paired_arrays_with_nan():
    a = [0.9, np.nan, 0.7, 0.6, 0.8, 0.5]
    b = [0.4, 0.3, np.nan, 0.2, 0.6, 0.1]
    with pytest.warns(StatisticsWarning):
        r = stats.paired_comparison(b, a).iloc[0]
    assert (r.n_pairs, r.p_value) == (4, pytest.approx(0.125, abs=1e-12))


# P03: Cohen's d / d_z with zero variance -----------------------------------------------------

def test_p03a_equal_constant_samples(no_runtime_warnings):
    with pytest.warns(StatisticsWarning, match="zero variance"):
        r = stats.effect_sizes([1, 1, 1], [1, 1, 1]).iloc[0]
    assert math.isnan(r.cohens_d) and math.isnan(r.hedges_g)
    assert r.magnitude == "undefined"
    assert "no difference in means" in r.note


def test_p03b_different_constant_samples(no_runtime_warnings):
    with pytest.warns(StatisticsWarning, match="zero variance"):
        r = stats.effect_sizes([1, 1, 1], [0, 0, 0]).iloc[0]
    assert math.isnan(r.cohens_d) and not math.isinf(r.cohens_d)
    assert r.magnitude == "undefined" and "difference positive" in r.note
    with pytest.warns(StatisticsWarning):
        r = stats.paired_comparison([1, 1, 1], [0, 0, 0]).iloc[0]
    assert math.isnan(r.cohens_d_z) and math.isnan(r.cohens_d) and r.magnitude == "undefined"
    assert r.mean_diff == -1.0


def test_p03c_paired_constant_difference(no_runtime_warnings):
    # A = [1,2,3] (proposed) vs B = [0,1,2] (baseline): every difference is 1
    with pytest.warns(StatisticsWarning, match="zero variance of the paired differences"):
        r = stats.paired_comparison([0, 1, 2], [1, 2, 3]).iloc[0]
    assert math.isnan(r.cohens_d_z) and math.isnan(r.effect_size)
    assert r.magnitude == "undefined"
    assert "every difference = 1" in r.note
    assert r.mean_diff == 1.0  # the sign of the difference stays visible


def test_p03d_insufficient_n(no_runtime_warnings):
    with pytest.warns(StatisticsWarning, match="insufficient n"):
        r = stats.effect_sizes([1], [2]).iloc[0]
    assert math.isnan(r.cohens_d) and r.magnitude == "undefined"
    with pytest.warns(StatisticsWarning, match="insufficient n"):
        r = stats.paired_comparison([2], [1]).iloc[0]
    assert math.isnan(r.cohens_d_z) and r.magnitude == "undefined"
    assert math.isnan(r.ci_low)


# P04: multiple-comparison correction with a NaN p-value -------------------------------------

def test_p04_nan_left_in_place_and_not_counted():
    p = [0.01, np.nan, 0.04, 0.20]
    # pitfalls.md P04: BH -> [0.03, NaN, 0.06, 0.20]; Holm -> [0.03, NaN, 0.08, 0.20]
    np.testing.assert_allclose(stats.adjust_pvalues(p, method="bh").p_adjusted, [0.03, np.nan, 0.06, 0.20],
                               atol=1e-12)
    np.testing.assert_allclose(stats.adjust_pvalues(p, method="holm").p_adjusted,
                               [0.03, np.nan, 0.08, 0.20], atol=1e-12)


def test_p04_untestable_metric_in_compare_runs():
    base = frame([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]).assign(answer_f1=np.nan)
    prop = frame([0.4, 0.4, 0.7, 0.5, 0.85, 0.85]).assign(answer_f1=0.5)
    with pytest.warns(StatisticsWarning, match="answer_f1"):
        out = stats.compare_runs(base, prop, metrics=["final_score", "answer_f1"],
                                 correction="bh")
    assert math.isnan(out.p_value[1]) and math.isnan(out.p_adjusted[1])
    # R: wilcox.test(prop, base, paired = TRUE)$p.value -> 0.03125 (exact, 6 positive
    #    differences); p.adjust(c(0.03125, NA), "BH") -> 0.03125 NA (m = 1: no adjustment)
    assert (out.p_value[0], out.p_adjusted[0]) == (pytest.approx(0.03125, abs=1e-12),
                                                   pytest.approx(0.03125, abs=1e-12))


# P05: quartiles with many equal values ------------------------------------------------------

def test_p05_tied_quartiles():
    df = pd.DataFrame({"tool_efficiency": [0, 0, 0, 0, 0, 0, 1, 2, 3, 4],
                       "final_score": np.linspace(0, 1, 10)})
    with pytest.warns(StatisticsWarning, match="only 2 distinct quantile bins"):
        out = ablation.efficiency_quartiles(df, q=4)
    # pitfalls.md P05: edges [0,0,0,1.75,4] -> [0,1.75,4]; 2 bins with 7 and 3 rows
    assert out.n.tolist() == [7, 3]
    assert out.lower.tolist() == [0.0, 1.75] and out.upper.tolist() == [1.75, 4.0]
    assert out.interval.tolist() == ["[0, 1.75]", "(1.75, 4]"]
    assert out.quantile_bin.tolist() == ["Q1–Q3", "Q4"]
    assert out.note[0].startswith("only 2 distinct quantile bins")


def test_p05_constant_column():
    df = pd.DataFrame({"tool_efficiency": [2, 2, 2, 2, 2, 2], "final_score": [1.0] * 6})
    with pytest.warns(StatisticsWarning, match="only 1 distinct quantile bin"):
        out = ablation.efficiency_quartiles(df)
    assert out.n.tolist() == [6] and out.quantile_bin.tolist() == ["Q1–Q4"]
    with pytest.warns(StatisticsWarning):
        bins = ablation.quantile_bins([2, 2, 2, 2, 2, 2])
    assert bins.notna().all() and bins.nunique() == 1


def test_p05_ties_never_split_by_row_order():
    x = pd.Series([0, 3, 0, 0, 4, 0, 1, 0, 2, 0])
    with pytest.warns(StatisticsWarning):
        bins = ablation.quantile_bins(x)
    assert bins[x == 0].nunique() == 1
