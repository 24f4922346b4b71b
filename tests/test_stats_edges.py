"""Smaller kinds of wrong numbers (issue 13, item 5), each pinned by an outside value.

R values are from R 4.2.2 (Debian r-base-core); the call and its value stand beside each
assertion. Tolerances are stated; R's ``power.t.test`` was run with ``tol = 1e-12`` (its
default uniroot tolerance, 1.2e-4, is too loose for a reference).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import stats
from dabench_analysis.stats import StatisticsWarning


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# Jeffreys and Wald intervals at k = 0 and k = n -------------------------------------------

def test_jeffreys_contains_its_estimate_at_the_ends():
    out = stats.proportion_ci([0, 5, 20], [20, 20, 20], method="jeffreys")
    # Brown, Cai & DasGupta (2001), Statistical Science 16(2), §4.1.2: low = 0 at x = 0 and
    # high = 1 at x = n; the other bound is the Beta(x + 1/2, n - x + 1/2) quantile.
    # (The unmodified low bound at 0 of 20 is R qbeta(0.025, 0.5, 20.5) -> 2.42e-05 > 0.)
    # R: qbeta(0.975, 0.5, 20.5) -> 0.116638982904875; qbeta(0.025, 20.5, 0.5) -> 0.883361017095125
    assert out.loc[0, ["ci_low", "ci_high"]].tolist() == [0.0, pytest.approx(0.116638982904875,
                                                                             abs=1e-12)]
    assert out.loc[2, ["ci_low", "ci_high"]].tolist() == [pytest.approx(0.883361017095125,
                                                                        abs=1e-12), 1.0]
    # interior unchanged. R: qbeta(c(0.025, 0.975), 5.5, 15.5) -> 0.102398485683045 0.464194629240868
    assert out.loc[1, ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [0.102398485683045, 0.464194629240868], abs=1e-12)
    assert (out.ci_low <= out.proportion).all() and (out.proportion <= out.ci_high).all()
    assert (out.note == "").all()


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson", "jeffreys", "agresti-coull",
                                    "wilson_cc", "wald"])
def test_every_interval_contains_its_estimate(method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)  # Wald at the ends
        out = stats.proportion_ci(np.arange(13), np.full(13, 12), method=method)
    drawn = out.ci_low.notna()  # Wald at k = 0 and k = n: NaN (not estimable)
    assert (drawn | ((method == "wald") & out.successes.isin([0, 12]))).all()
    assert ((out.ci_low <= out.proportion) & (out.proportion <= out.ci_high))[drawn].all()


def test_wilson_bound_is_exactly_zero_at_k_zero():
    out = stats.proportion_ci([0, 12], [12, 12])
    # R: prop.test(0, 12, correct = FALSE)$conf.int -> 0 0.242494006655241
    #    prop.test(12, 12, correct = FALSE)$conf.int -> 0.757505993344759 1
    # (statsmodels' wilson leaves 2.8e-17 as the low bound at 0 of 12)
    assert out.loc[0, ["ci_low", "ci_high"]].tolist() == [0.0, pytest.approx(0.242494006655241,
                                                                             abs=1e-12)]
    assert out.loc[1, ["ci_low", "ci_high"]].tolist() == [pytest.approx(0.757505993344759,
                                                                        abs=1e-12), 1.0]


def test_wald_zero_width_warns_and_says_so():
    with pytest.warns(StatisticsWarning, match="zero width at 0 of 20"):
        out = stats.proportion_ci([0, 5], [20, 20], method="wald")
    # closed form p ± z sqrt(p(1 - p)/n): 0 ± 0 at k = 0, which claims certainty: not
    # estimable, so NaN (issue 25 item 6), never [0, 0]; R qnorm(0.975) -> 1.959963984540054
    assert np.isnan(out.loc[0, ["ci_low", "ci_high"]].to_numpy(float)).all()
    assert out.note[0].startswith("Wald interval has zero width at 0 of 20")
    half = 1.959963984540054 * math.sqrt(0.25 * 0.75 / 20)
    assert out.loc[1, ["ci_low", "ci_high"]].tolist() == pytest.approx([0.25 - half,
                                                                         0.25 + half], abs=1e-12)
    assert out.note[1] == ""
    with pytest.warns(StatisticsWarning, match="zero width at 20 of 20"):
        stats.proportion_ci(20, 20, method="wald")


# Clustered SE with one cluster -------------------------------------------------------------

@pytest.mark.parametrize("method", ["cr0", "cr1", "eq4"])
def test_one_cluster_is_not_estimable(method):
    x = [0.2, 0.9, 0.4, 0.7]
    # Closed form: with one cluster Σ_c(Σ_i e_ic)² = (Σ_i e_i)² = 0 (residuals about the mean),
    # so CR0 is 0 (printed as rounding noise, 3.7e-17) and Eq. 4 is SE_CLT/sqrt(n), below the
    # unclustered SE: no between-cluster variation is observed (Cameron & Miller 2015, §VI).
    with pytest.warns(StatisticsWarning, match="1 cluster: clustered standard error not "
                                               "estimable"):
        assert math.isnan(stats.clustered_se(x, ["a"] * 4, method=method).se)
    df = pd.DataFrame({"final_score": x, "task_type": "a"})
    with pytest.warns(StatisticsWarning, match="1 cluster"):
        r = stats.clustered_mean_ci(df, method=method).iloc[0]
    assert math.isnan(r.se) and math.isnan(r.ci_low) and math.isnan(r.design_effect)
    assert r["mean"] == pytest.approx(0.55, abs=1e-12) and r.n_clusters == 1
    # unclustered SE by numpy, Miller (2024) Eq. 1
    assert r.se_clt == pytest.approx(np.std(x, ddof=1) / 2, abs=1e-12)


def test_two_clusters_still_estimated():
    # statsmodels OLS(y, 1).fit(cov_type="cluster", use_correction=True) == CR1 is checked in
    # test_stats; here only: two clusters are enough and give no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatisticsWarning)
        assert stats.clustered_se([0.2, 0.9, 0.4, 0.7], list("aabb")).se > 0


# Kendall's tau: R's exact rule for n < 50 without ties ------------------------------------

X40 = list(range(1, 41))
Y40 = [22, 1, 13, 4, 19, 10, 27, 7, 3, 16, 15, 5, 9, 20, 21, 8, 11, 2, 32, 14, 31, 23, 39, 33,
       25, 36, 12, 34, 6, 29, 35, 30, 24, 18, 26, 40, 38, 28, 17, 37]


def _kendall(x, y):
    return stats.correlation(pd.DataFrame({"x": x, "y": y}), ["x", "y"], method="kendall").iloc[0]


def test_kendall_exact_for_n_40_without_ties():
    r = _kendall(X40, Y40)
    # R: cor.test(1:40, y, method = "kendall") -> T = 549, tau = 0.407692307692308,
    #    p = 0.000149669497620186 (exact); scipy's method="auto" gives 0.000211 (asymptotic)
    assert r.estimate == pytest.approx(0.407692307692308, abs=1e-12)
    assert r.p_value == pytest.approx(0.000149669497620186, rel=1e-9)


def test_kendall_normal_approximation_with_ties_or_n_50():
    y = [39 if v == 40 else v for v in Y40]  # one tie
    r = _kendall(X40, y)
    # R: cor.test(1:40, y_tied, method = "kendall") -> tau = 0.406671026572738,
    #    p = 0.000221076571437707 (normal approximation: ties)
    assert r.estimate == pytest.approx(0.406671026572738, abs=1e-12)
    assert r.p_value == pytest.approx(0.000221076571437707, rel=1e-9)
    y55 = (Y40 + list(range(41, 56)))
    y55 = y55[:40] + y55[40:][::-1]
    r = _kendall(list(range(1, 56)), y55)
    # R: cor.test(1:55, y55, method = "kendall") -> tau = 0.547474747474747,
    #    p = 3.59107905245736e-09 (normal approximation: n >= 50)
    assert r.estimate == pytest.approx(0.547474747474747, abs=1e-12)
    assert r.p_value == pytest.approx(3.59107905245736e-09, rel=1e-9)


# Power: the solver's answer is checked ----------------------------------------------------

def test_required_n_checks_the_power_it_reaches():
    # statsmodels' solver returns n = 2 for d_z = 10 (power 0.73 < 0.8).
    # R: power.t.test(n = 2, delta = 10, type = "paired", strict = TRUE)$power -> 0.7328195898;
    #    n = 3 -> 0.9999995772; power.t.test(delta = 10, power = 0.8, type = "paired",
    #    strict = TRUE, tol = 1e-12)$n -> 2.05939371377
    with pytest.warns(StatisticsWarning, match="does not reach power 0.8"):
        r = stats.required_n(10).iloc[0]
    assert (r.n, r.n_exact) == (3, pytest.approx(2.05939371377, abs=1e-9))
    assert r.achieved_power == pytest.approx(0.9999995772, abs=1e-10)
    assert "direct search" in r.note
    # statsmodels gives 2.4824 (power 0.794) for d_z = 5. R: power.t.test(delta = 5,
    # power = 0.8, type = "paired", strict = TRUE, tol = 1e-12)$n -> 2.49130623502
    with pytest.warns(StatisticsWarning):
        r = stats.required_n(5).iloc[0]
    assert (r.n, r.n_exact) == (3, pytest.approx(2.49130623502, abs=1e-9))


def test_required_n_smallest_n_already_enough():
    # R: power.t.test(n = 2, delta = 10, type = "two.sample", strict = TRUE)$power ->
    #    0.9927466605 >= 0.8 (statsmodels' solver returns NaN here)
    with pytest.warns(StatisticsWarning, match="smallest n"):
        r = stats.required_n(10, paired=False).iloc[0]
    assert r.n == 2 and math.isnan(r.n_exact)
    assert r.achieved_power == pytest.approx(0.9927466605, abs=1e-9)


def test_required_n_unchanged_when_the_solver_is_right():
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatisticsWarning)
        r = stats.required_n(0.5, paired=False).iloc[0]
    # R: power.t.test(delta = 0.5, power = 0.8, strict = TRUE)$n -> 63.7656101707822;
    #    power.t.test(n = 64, delta = 0.5, strict = TRUE)$power -> 0.801459557922328
    assert (r.n, r.n_exact) == (64, pytest.approx(63.7656101707822, abs=1e-6))
    assert r.achieved_power == pytest.approx(0.801459557922328, abs=1e-9)
    assert r.note == ""


def test_min_detectable_effect_checks_the_power_it_reaches():
    # R: power.t.test(n = 2, power = 0.99, type = "paired", strict = TRUE, tol = 1e-12)$delta
    #    -> 23.2144705569 (statsmodels' solver: 20.42)
    with pytest.warns(StatisticsWarning, match="does not reach power 0.99"):
        r = stats.min_detectable_effect(2, power=0.99).iloc[0]
    assert r.effect_size == pytest.approx(23.2144705569, abs=1e-6)
    # R: power.t.test(n = 1e6, power = 0.99, type = "paired", alternative = "one.sided",
    #    strict = TRUE, tol = 1e-14)$delta -> 0.00397120418706 (statsmodels' solver: 0.0235)
    with pytest.warns(StatisticsWarning):
        r = stats.min_detectable_effect(10**6, power=0.99, alternative="less").iloc[0]
    assert r.effect_size == pytest.approx(0.00397120418706, rel=1e-8)


# Infinite scores ---------------------------------------------------------------------------

def test_paired_comparison_drops_infinite_pairs_and_says_how_many():
    base = [0.1, 0.2, 0.3, 0.4, 0.5]
    prop = [0.3, np.inf, 0.6, 0.5, 0.9]
    with pytest.warns(StatisticsWarning, match="1 pair dropped: final_score is infinite"):
        r = stats.paired_comparison(base, prop).iloc[0]
    assert (r.n_pairs, r.n_dropped_na) == (4, 1)
    # remaining differences 0.2, 0.3, 0.1, 0.4: mean 0.25 (by hand); all positive, no ties:
    # R wilcox.test(c(.3, .6, .5, .9), c(.1, .3, .4, .5), paired = TRUE) -> V = 10, p = 0.125
    assert r.mean_diff == pytest.approx(0.25, abs=1e-12)
    assert (r.statistic, r.p_value) == (10.0, pytest.approx(0.125, abs=1e-12))
    assert "zero variance" not in r.note and np.isfinite(r.cohens_d_z)


def test_unpaired_and_effect_sizes_drop_infinite_values():
    with pytest.warns(StatisticsWarning, match="2 infinite values of final_score dropped"):
        r = stats.unpaired_comparison([0.9, 0.8, -np.inf, 1.0], [0.1, np.inf, 0.4, 0.3]).iloc[0]
    # R: wilcox.test(c(.9, .8, 1), c(.1, .4, .3)) -> W = 9, p = 0.1
    assert (r.n_a, r.n_b, r.n_dropped_na) == (3, 3, 2)
    assert (r.statistic, r.p_value) == (9.0, pytest.approx(0.1, abs=1e-12))
    with pytest.warns(StatisticsWarning, match="1 infinite value dropped"):
        e = stats.effect_sizes([0.1, 0.2, 0.3, 0.4], [0.3, np.inf, 0.6, 0.5], paired=True).iloc[0]
    # differences x - y on the 3 finite pairs: -0.2, -0.3, -0.1 -> d_z = -0.2 / 0.1 = -2
    assert (e.n_x, e.cohens_d_z) == (3, pytest.approx(-2.0, abs=1e-9))
