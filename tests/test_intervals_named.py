"""Bounded and degenerate intervals, named results, the kind of an effect size (issue 25,
items 6 and 7).

Expected values come from R 4.2.2 (Debian r-base-core; the call beside each value) or from a
closed form written here; never from the package.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import stats, tables
from dabench_analysis.stats import StatisticsWarning, gwet
from dabench_analysis.stats._nonparametric import welch_interval
from dabench_analysis.stats._proportions import mcnemar_discordant, proportion_interval
from dabench_analysis.stats._results import (
    AdjustedPValues,
    Interval,
    Score,
    StandardError,
    TestResult,
)
from dabench_analysis.stats.calibration import brier_score, expected_calibration_error

Z975 = 1.959963984540054  # R: qnorm(0.975)


def _expit(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def _logit_interval(m: float, se: float, q: float) -> list[float]:
    """Closed form of the bounded rule: expit(logit(m) ± q se / (m (1 - m)))."""
    centre, half = math.log(m / (1 - m)), q * se / (m * (1 - m))
    return [_expit(centre - half), _expit(centre + half)]


# item 6: clustered means stay in [0, 1] ---------------------------------------------------

def test_clustered_mean_of_scores_stays_in_0_1():
    # 19 ones and a zero, each task its own cluster: CR1 = the CLT SE (Miller 2024, Eq. 1)
    x = np.array([1.0] * 19 + [0.0])
    df = pd.DataFrame({"final_score": x, "task_type": [f"t{i}" for i in range(20)]})
    r = stats.clustered_mean_ci(df).iloc[0]
    se = float(np.std(x, ddof=1) / math.sqrt(20))  # numpy, Eq. 1: 0.05
    assert r.se == pytest.approx(se, abs=1e-12)
    # mean ± z SE would be [0.852, 1.048], past 1 (the audit's case); the bounded rule:
    assert [r.ci_low, r.ci_high] == pytest.approx(_logit_interval(0.95, se, Z975), abs=1e-12)
    assert 0 <= r.ci_low < 0.95 < r.ci_high <= 1
    assert r.method == "CR1; logit normal"


def test_clustered_mean_all_ones_uses_the_bound_over_clusters():
    # every score 1 in G = 4 clusters: [(α/2)^(1/G), 1] (Clopper-Pearson at k = n = G)
    df = pd.DataFrame({"final_score": [1.0] * 8, "task_type": list("aabbccdd")})
    r = stats.clustered_mean_ci(df).iloc[0]
    assert [r.ci_low, r.ci_high] == pytest.approx([0.025 ** (1 / 4), 1.0], abs=1e-12)
    assert "Clopper-Pearson bound (all values 1)" in r.method


def test_clustered_mean_of_unbounded_values_keeps_eq3():
    x = [120.0, 80.0, 95.0, 130.0, 60.0, 101.0]
    df = pd.DataFrame({"execution_time": x, "task_type": list("aabbcc")})
    r = stats.clustered_mean_ci(df, metric="execution_time").iloc[0]
    assert [r.ci_low, r.ci_high] == pytest.approx([np.mean(x) - Z975 * r.se,
                                                   np.mean(x) + Z975 * r.se], abs=1e-9)
    assert r.method == "CR1; normal"


# item 6: agreement coefficients within their range ----------------------------------------

def test_agreement_intervals_are_truncated_to_their_range():
    # 3 items, 2 raters, categories {1, 2}: agree, disagree, disagree. By hand (Gwet 2014):
    # p_a = 1/3 with item values (1, 0, 0): se = sqrt(sum (c_i - c)^2 / (n (n - 1))) = 1/3;
    # Brennan-Prediger p_e = 1/2: c_i = (1, -1, -1), BP = -1/3, se = 2/3;
    # AC1: pi = (2/3, 1/3), p_e = 2 sum pi (1 - pi) / 2 = 4/9, AC1 = (1/3 - 4/9) / (5/9) = -0.2.
    # The t-interval (R qt(0.975, 2) = 4.302653) would be [-1.10, 1.77] for p_a.
    out = gwet.agreement_coefficients(pd.DataFrame({"a": [1, 1, 2], "b": [1, 2, 1]}), [1, 2])
    out = out.set_index("coefficient")
    assert out.loc["percent_agreement", ["estimate", "se"]].tolist() == pytest.approx(
        [1 / 3, 1 / 3], abs=1e-12)
    assert out.loc["brennan_prediger", ["estimate", "se"]].tolist() == pytest.approx(
        [-1 / 3, 2 / 3], abs=1e-12)
    assert out.loc["gwet_ac1", "estimate"] == pytest.approx(-0.2, abs=1e-12)
    assert out.loc["percent_agreement", ["ci_low", "ci_high"]].tolist() == [0.0, 1.0]
    assert "truncated to [0, 1]" in out.loc["percent_agreement", "method"]
    for name in ("brennan_prediger", "gwet_ac1", "fleiss_kappa", "conger_kappa"):
        assert out.loc[name, ["ci_low", "ci_high"]].tolist() == [-1.0, 1.0]
        assert "truncated to [-1, 1]" in out.loc[name, "method"]


def test_inter_rater_intervals_stay_in_range():
    ratings = pd.DataFrame({"a": ["good", "bad", "good", "bad"],
                            "b": ["good", "good", "bad", "bad"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = stats.reliability.inter_rater(ratings, weights="identity",
                                            categories=["bad", "good"], n_resamples=200)
    pa = out.set_index("coefficient").loc["percent_agreement"]
    assert pa.ci_low >= 0 and pa.ci_high <= 1  # 2 of 4 agree: p_a = 0.5
    assert pa.estimate == pytest.approx(0.5, abs=1e-12)
    bounded = out.dropna(subset=["ci_low"])
    assert (bounded.ci_low >= -1).all() and (bounded.ci_high <= 1).all()


# item 6: not estimable is NaN with a note, never zero-width -------------------------------

def test_equal_paired_differences_have_no_interval():
    # every difference is -0.25 (to rounding: 0.45 - 0.7 is -0.24999999999999994): R
    # t.test(c(0.9, 0.7, 0.25, 0.6), c(0.65, 0.45, 0, 0.35), paired = TRUE) stops, "data are
    # essentially constant" (R 4.2.2); the audit saw [0.25, 0.25]
    base, prop = [0.9, 0.7, 0.25, 0.6], [0.65, 0.45, 0.0, 0.35]
    with pytest.warns(StatisticsWarning, match="mean difference: zero variance"):
        r = stats.paired_comparison(base, prop).iloc[0]
    assert r.mean_diff == pytest.approx(-0.25, abs=1e-12)
    assert math.isnan(r.ci_low) and math.isnan(r.ci_high)
    assert "not estimable" in r.note


def test_all_equal_paired_scores_have_no_interval():
    # pitfall P01 data: all differences 0 -> p = 1.0 and no interval (not [0, 0])
    a = [0.7, 0.5, 0.9, 0.6, 0.8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        r = stats.paired_comparison(a, a).iloc[0]
    assert r.p_value == 1.0 and math.isnan(r.ci_low) and math.isnan(r.ci_high)


def test_welch_interval_is_nan_when_not_estimable():
    # R: t.test(c(1, 1), c(0, 0)) -> Error: data are essentially constant
    res = welch_interval(np.array([1.0, 1.0]), np.array([0.0, 0.0]))
    assert isinstance(res, Interval) and math.isnan(res.low) and math.isnan(res.high)
    assert res.method == "Welch t" and "zero variance" in res.note
    assert "needs 2 per group" in welch_interval(np.array([1.0]), np.array([0.0, 1])).note
    # R: t.test(c(1, 2, 3, 4), c(2, 4, 6, 8, 10))$conf.int -> -7.385368 0.3853681
    res = welch_interval(np.array([1.0, 2, 3, 4]), np.array([2.0, 4, 6, 8, 10]))
    assert [res.low, res.high] == pytest.approx([-7.385368, 0.3853681], abs=1e-6)


def test_constant_values_have_no_mean_interval():
    # R: t.test(c(0.25, 0.25, 0.25)) -> Error: data are essentially constant
    df = pd.DataFrame({"final_score": [0.25] * 3, "execution_time": [4.0] * 3})
    with pytest.warns(StatisticsWarning, match="zero variance"):
        out = stats.describe(df, ["final_score", "execution_time"])
    assert out[["ci_low", "ci_high"]].isna().all().all()
    # all ones is not degenerate for a [0, 1] mean: the bound (α/2)^(1/n) = 0.025^(1/3)
    one = stats.mean_summary([1.0, 1.0, 1.0], method="logit t")
    assert [one["ci_low"], one["ci_high"]] == pytest.approx([0.025 ** (1 / 3), 1.0], abs=1e-12)


def test_repetitions_of_constant_scores_have_no_interval():
    t = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 3, "task_id": ["a", "b", "c"] * 2,
                      "final_score": [0.5] * 6})
    c = pd.DataFrame({"run_id": ["r1", "r2"], "config": ["x", "x"], "seed": [1, 2]})
    with pytest.warns(StatisticsWarning, match="zero variance"):
        r = stats.repetitions.repetition_variance(t, c).iloc[0]
    assert math.isnan(r.ci_low) and math.isnan(r.ci_high) and "not estimable" in r.note


def test_wilson_cc_relation_to_r_stated_exactly():
    # R: prop.test(k, 10, correct = TRUE)$conf.int (R 4.2.2)
    r_values = {1: [0.005242302, 0.458846], 3: [0.08094782, 0.6463293],
                7: [0.3536707, 0.9190522]}
    for k, want in r_values.items():
        res = proportion_interval(k, 10, method="wilson_cc")
        assert [res.low, res.high] == pytest.approx(want, abs=1e-7)
    # at k = n/2 R's correction min(0.5, |k - n/2|) is 0, so R gives 0.2365931 0.7634069;
    # Newcombe's method 4 (closed form, z = qnorm(0.975)) keeps the correction:
    z, n, p = Z975, 10, 0.5
    lo = (2 * n * p + z**2 - 1 - z * math.sqrt(z**2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) \
        / (2 * (n + z**2))
    hi = (2 * n * p + z**2 + 1 + z * math.sqrt(z**2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) \
        / (2 * (n + z**2))
    res = proportion_interval(5, 10, method="wilson_cc")
    assert [res.low, res.high] == pytest.approx([lo, hi], abs=1e-12)
    assert res.low != pytest.approx(0.2365931, abs=1e-3)
    doc = stats.proportion_ci.__doc__
    assert "except k = n/2" in " ".join(doc.split())


# item 7: named results ----------------------------------------------------------------------

def test_named_results_carry_their_method():
    res = proportion_interval(5, 25)
    # R: prop.test(5, 25, correct = FALSE)$conf.int -> 0.08860 0.39130
    assert isinstance(res, Interval) and res.method == "Wilson"
    assert [res.low, res.high] == pytest.approx([0.0886, 0.3913], abs=1e-4)
    assert proportion_interval(0, 0).note == "n = 0"

    test = mcnemar_discordant(3, 14, n=80)
    # R: binom.test(3, 17)$p.value -> 0.01272583
    assert isinstance(test, TestResult) and test.method == "McNemar exact (binomial)"
    assert test.p_value == pytest.approx(0.01272583, abs=1e-8) and test.statistic == 3.0

    adj = stats.adjust_pvalues([0.01, float("nan"), 0.04, 0.2], method="holm")
    # R: p.adjust(c(0.01, NA, 0.04, 0.2), "holm") -> 0.03 NA 0.08 0.2
    assert isinstance(adj, AdjustedPValues) and adj.m == 3 and adj.method == "Holm"
    np.testing.assert_allclose(adj.p_adjusted, [0.03, np.nan, 0.08, 0.2], atol=1e-12)
    assert stats.adjust_pvalues([0.01, 0.04], method="bh").method == "Benjamini-Hochberg"

    s = [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0]
    se = stats.clustered_se(s, [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3])
    # refvectors miller_se_worked_example: CR1 = 0.1782257088418533
    assert isinstance(se, StandardError) and se.method == "CR1"
    assert (se.se, se.n, se.n_clusters) == (pytest.approx(0.1782257088418533, abs=1e-12), 12, 4)

    conf, ok = [0.9, 0.9, 0.1], [1, 0, 0]
    ece = expected_calibration_error(confidence=conf, correct=ok, n_bins=2)
    # by hand: bins [0, 0.5): conf 0.1, acc 0 -> 0.1; [0.5, 1]: conf 0.9, acc 0.5 -> 0.4;
    # ECE = 1/3 0.1 + 2/3 0.4 = 0.3
    assert isinstance(ece, Score) and ece.estimate == pytest.approx(0.3, abs=1e-12)
    assert ece.n == 3 and ece.method == "ECE, 2 equal-width bins, [lo, hi)"
    b = brier_score(confidence=conf, correct=ok)
    # (0.1^2 + 0.9^2 + 0.1^2) / 3 = 0.276666...
    assert b.estimate == pytest.approx(0.83 / 3, abs=1e-12) and b.method.startswith("Brier")


# item 7: the kind of effect_size, the same in paired, unpaired and ablation tables ---------

def test_effect_names_its_kind():
    a, b = [0.1, 0.4, 0.35, 0.8, 0.9], [0.3, 0.5, 0.2, 0.95, 0.7]
    paired = stats.paired_comparison(a, b).iloc[0]
    assert paired.effect == "d_z" and paired.effect_size == paired.cohens_d_z
    unpaired = stats.unpaired_comparison(a, b).iloc[0]
    assert unpaired.effect == "rank-biserial" and unpaired.effect_size == unpaired.rank_biserial
    tasks = pd.DataFrame({"task_id": [f"t{i}" for i in range(8)],
                          "final_score": [0.9, 0.8, 0.3, 0.95, 0.4, 0.7, 1.0, 0.2],
                          "verification_triggered": [True, True, False, True, False, True,
                                                     True, False]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ablation = tables.ablation.verification(tasks).iloc[0]
    assert ablation.effect == "rank-biserial"
    runs = {name: pd.DataFrame({"task_id": [f"t{i}" for i in range(5)], "final_score": v})
            for name, v in (("base", a), ("prop", b))}
    both = stats.compare_runs(runs["base"], runs["prop"], metrics=["final_score"])
    assert both.effect.tolist() == ["d_z"]
    assert stats.required_n(0.5).effect[0] == "d_z"
    assert stats.min_detectable_effect(30, paired=False).effect[0] == "d"
