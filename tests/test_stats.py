"""dabench_analysis.stats: behaviour, edge cases (n = 0, 1, 2, NaN, ties, one-run tasks)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats as st

from dabench_analysis import stats
from dabench_analysis.stats import StatisticsWarning

DIFF = pd.CategoricalDtype(["Easy", "Medium", "Hard", "Extreme"], ordered=True)


def run(scores, tasks=None, **cols):
    tasks = tasks or [f"t{i + 1}" for i in range(len(scores))]
    return pd.DataFrame({"task_id": tasks, "final_score": np.asarray(scores, float), **cols})


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# describe -----------------------------------------------------------------------------------

def test_describe_matches_t_interval(rng):
    # an unbounded quantity keeps the t-interval ([0, 1] scores: tests/test_bounds.py)
    x = rng.uniform(size=20) * 100
    r = stats.describe(pd.DataFrame({"execution_time": x}), "execution_time").iloc[0]
    assert r.method == "t"
    lo, hi = st.ttest_1samp(x, 0).confidence_interval(0.95)  # = R t.test(x)$conf.int
    assert (r.n, r["mean"], r["std"]) == (20, pytest.approx(x.mean()), pytest.approx(x.std(ddof=1)))
    assert (r.ci_low, r.ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))


def test_describe_categorical_order_and_empty_levels():
    df = pd.DataFrame({"difficulty": pd.Series(["Hard", "Easy", "Medium", "Easy", "Hard"],
                                               dtype=DIFF),
                       "solved": pd.array([0, 1, 1, 1, 1], dtype="Int64")})
    out = stats.describe(df, "solved", by="difficulty")
    # pitfalls.md P07: Easy, Medium, Hard, Extreme with n = 2, 1, 2, 0; rates 1, 1, 0.5, n/a
    assert out.difficulty.tolist() == ["Easy", "Medium", "Hard", "Extreme"]
    assert out.n.tolist() == [2, 1, 2, 0]
    assert out["mean"].tolist()[:3] == [1.0, 1.0, 0.5] and math.isnan(out["mean"][3])
    assert isinstance(out.difficulty.dtype, pd.CategoricalDtype)


def test_describe_string_difficulty_gets_catalogue_order():
    df = pd.DataFrame({"difficulty": ["Hard", "Easy", "Medium"], "final_score": [0.1, 0.2, 0.3]})
    out = stats.describe(df, ["final_score"], by="difficulty")
    assert out.difficulty.tolist() == ["Easy", "Medium", "Hard", "Extreme"]


def test_describe_two_metrics_two_groupings_and_flags():
    df = pd.DataFrame({"difficulty": pd.Series(["Easy", "Easy", "Hard"], dtype=DIFF),
                       "task_type": ["a", "b", "a"], "final_score": [1.0, 0.5, np.nan],
                       "execution_success": pd.array([True, False, pd.NA], dtype="boolean")})
    out = stats.describe(df, ["final_score", "execution_success"], by=["difficulty", "task_type"])
    assert len(out) == 4 * 2 * 2
    row = out[(out.difficulty == "Hard") & (out.task_type == "a")]
    assert row.n.tolist() == [0, 0] and row.n_missing.tolist() == [1, 1]


def test_describe_n1_and_missing_group_key():
    df = pd.DataFrame({"task_type": ["a", None, "b"], "final_score": [0.5, 0.7, 0.9]})
    with pytest.warns(StatisticsWarning, match="1 rows dropped"):
        out = stats.describe(df, "final_score", by="task_type")
    assert out.n.tolist() == [1, 1]
    assert math.isnan(out["std"][0]) and math.isnan(out.ci_low[0])


def test_describe_bad_input():
    df = run([0.1, 0.2])
    with pytest.raises(ValueError, match="column 'final_scor' not in tasks; known: task_id"):
        stats.describe(df, "final_scor")
    with pytest.raises(ValueError, match="not numeric"):
        stats.describe(df, "task_id")
    with pytest.raises(ValueError, match="confidence level"):
        stats.describe(df, "final_score", ci=95)


# proportion_ci, bootstrap_ci ----------------------------------------------------------------

def test_proportion_ci_vectorised_and_n0():
    with pytest.warns(StatisticsWarning, match="n = 0"):
        out = stats.proportion_ci([5, 0], [25, 0])
    assert out.proportion[0] == 0.2 and math.isnan(out.ci_low[1])
    with pytest.raises(ValueError, match="successes <= n"):
        stats.proportion_ci(3, 2)
    with pytest.raises(ValueError, match="method must be one of"):
        stats.proportion_ci(1, 2, method="nope")


X30 = np.array([-0.431, 0.272, 0.057, 0.425, 0.225, 1.658, -0.664, 1.199, -0.403, -0.958, 1.211,
                -0.44, -0.388, -1.389, -2.098, 0.634, -1.165, 0.778, 1.848, -0.115, -1.127,
                0.394, 0.762, -0.262, 0.017, 1.335, 1.265, 0.71, -0.866, -0.054])


def _bca_by_formula(x, n_resamples, seed, level=0.95):
    """BCa interval of the mean written from Efron & Tibshirani (1993), eq. 14.10-14.15."""
    from scipy.special import ndtr, ndtri

    n, theta = x.size, x.mean()
    boot = x[np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))].mean(axis=1)
    z0 = ndtri(np.mean(boot < theta))  # bias correction
    jack = (x.sum() - x) / (n - 1)  # leave-one-out means
    dev = jack.mean() - jack
    a = np.sum(dev**3) / (6 * np.sum(dev**2) ** 1.5)  # acceleration
    z = ndtri([(1 - level) / 2, (1 + level) / 2])
    return np.quantile(boot, ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))))


def test_bootstrap_bca_against_formula_and_is_seeded():
    a = stats.bootstrap_ci(X30, n_resamples=20_000, seed=3)
    pd.testing.assert_frame_equal(a, stats.bootstrap_ci(X30, n_resamples=20_000, seed=3))
    # An independent BCa (numpy, Efron & Tibshirani 1993 ch. 14) on other resamples: over 20
    # seeds each bound has a Monte-Carlo SD of 0.0046 (means agree to 1e-5), so the two
    # intervals differ by SD 0.0065; tolerance 0.03 is 4.6 SD.
    lo, hi = _bca_by_formula(X30, 20_000, seed=12345)
    assert (a.ci_low[0], a.ci_high[0]) == (pytest.approx(lo, abs=0.03), pytest.approx(hi, abs=0.03))
    assert a.estimate[0] == pytest.approx(0.081, abs=1e-12)  # R: mean(x) -> 0.081


@pytest.mark.parametrize("values", [[0.7], [0.5, 0.5, 0.5]])
def test_bootstrap_degenerate_is_not_estimable(values):
    # every resample of a constant sample is the same: no interval (issue 25 item 6), as scipy
    # bootstrap (NaN) -- never the zero-width [x, x]
    with pytest.warns(StatisticsWarning, match="all values equal.*not estimable"):
        r = stats.bootstrap_ci(values).iloc[0]
    assert r.estimate == values[0] and r.se == 0.0
    assert math.isnan(r.ci_low) and math.isnan(r.ci_high) and "not estimable" in r.note


def test_bootstrap_empty_and_nan():
    with pytest.warns(StatisticsWarning, match="no values"):
        r = stats.bootstrap_ci([np.nan]).iloc[0]
    assert r.n == 0 and math.isnan(r.ci_low)


# paired_comparison --------------------------------------------------------------------------

def test_paired_t_interval_and_exact_p_match_r():
    b = [0.676, 0.214, 0.309, 0.799, 0.996, 0.142, 0.079, 0.181, 0.36, 0.17, 0.589, 0.617,
         0.105, 0.566, 0.005]
    p = [0.465, 0.976, 0.799, 0.597, 0.325, 0.206, 0.443, 0.278, 0.875, 0.213, 0.274, 0.807,
         0.268, 0.268, 0.071]
    r = stats.paired_comparison(run(b), run(p)).iloc[0]
    # R: t.test(p, b, paired = TRUE)$conf.int -> -0.136207804134 0.277141137468
    assert (r.ci_low, r.ci_high) == (pytest.approx(-0.136207804134, abs=1e-10),
                                     pytest.approx(0.277141137468, abs=1e-10))
    # R: wilcox.test(p, b, paired = TRUE) -> V = 72, p = 0.524475097656 (exact: no ties, n < 50)
    assert (r.statistic, r.wilcoxon_method) == (72.0, "exact")
    assert r.p_value == pytest.approx(0.524475097656, abs=1e-11)


def test_paired_task_in_one_run_only():
    base = run([0.1, 0.2, 0.3, 0.4], tasks=["a", "b", "c", "d"])
    prop = run([0.5, 0.9, 0.8], tasks=["d", "b", "e"])
    with pytest.warns(StatisticsWarning, match="3 tasks present in only one run"):
        r = stats.paired_comparison(base, prop).iloc[0]
    assert (r.n_pairs, r.n_unpaired) == (2, 3)
    assert r.mean_diff == pytest.approx(((0.5 - 0.4) + (0.9 - 0.2)) / 2)


def test_paired_booleans_equal_zero_one():
    b = run([0] * 6, final_correct=pd.array([True, False, False, pd.NA, False, True],
                                             dtype="boolean"))
    p = run([0] * 6, final_correct=pd.array([True, True, True, True, False, True],
                                             dtype="boolean"))
    with pytest.warns(StatisticsWarning):
        r1 = stats.paired_comparison(b, p, metric="final_correct")
    b01 = b.assign(final_correct=[1, 0, 0, np.nan, 0, 1])
    p01 = p.assign(final_correct=[1, 1, 1, 1, 0, 1])
    with pytest.warns(StatisticsWarning):
        r2 = stats.paired_comparison(b01, p01, metric="final_correct")
    pd.testing.assert_frame_equal(r1, r2)
    assert r1.n_pairs[0] == 5 and r1.mean_diff[0] == pytest.approx(0.4)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_paired_small_n(n):
    base, prop = run([0.2, 0.4][:n]), run([0.5, 0.6][:n])
    ctx = pytest.warns(StatisticsWarning) if n < 2 else warnings.catch_warnings()
    with ctx:
        r = stats.paired_comparison(base, prop).iloc[0]
    assert r.n_pairs == n
    if n == 0:
        assert math.isnan(r.p_value) and r.wilcoxon_method == "not testable (0 pairs)"
    else:
        # exact two-sided p of n positive differences = 2 / 2**n (capped at 1)
        assert r.p_value == pytest.approx(min(1.0, 2 / 2**n))
    assert not any(np.isinf(r[c]) for c in ("cohens_d", "cohens_d_z", "hedges_g", "ci_low"))


def test_paired_no_common_tasks():
    with pytest.warns(StatisticsWarning, match="only one run"):
        r = stats.paired_comparison(run([0.1], ["a"]), run([0.2], ["b"])).iloc[0]
    assert (r.n_pairs, r.n_unpaired) == (0, 2) and math.isnan(r.p_value)


def test_paired_bad_input():
    with pytest.raises(ValueError, match="'task_id' is not unique in baseline"):
        stats.paired_comparison(run([0.1, 0.2], ["a", "a"]), run([0.1, 0.2]))
    with pytest.raises(ValueError, match="column 'final_score' not in proposed; known: task_id"):
        stats.paired_comparison(run([0.1]), run([0.1]).rename(columns={"final_score": "score"}))
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_comparison([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="alternative"):
        stats.paired_comparison([0.1, 0.2], [0.3, 0.1], alternative="bigger")


def test_paired_columns_are_fixed():
    r = stats.paired_comparison([0.1, 0.2, 0.3], [0.5, 0.4, 0.9])
    assert list(r.columns) == [
        "metric", "n_pairs", "n_unpaired", "n_dropped_na", "n_nonzero", "mean_baseline",
        "mean_proposed", "mean_diff", "se_diff", "ci_low", "ci_high", "statistic", "p_value",
        "alternative", "zero_method", "wilcoxon_method", "effect_size", "effect", "magnitude",
        "cohens_d", "hedges_g", "cohens_d_z", "rank_biserial", "method", "note"]


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.tuples(hs.floats(0, 1), hs.floats(0, 1)), min_size=3, max_size=30))
def test_paired_swapping_runs_flips_signs(pairs):
    b, p = [x for x, _ in pairs], [y for _, y in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        r1 = stats.paired_comparison(b, p).iloc[0]
        r2 = stats.paired_comparison(p, b).iloc[0]
    assert r1.p_value == pytest.approx(r2.p_value)
    assert 0 <= r1.p_value <= 1
    for c in ("mean_diff", "cohens_d", "cohens_d_z", "rank_biserial"):
        assert (math.isnan(r1[c]) and math.isnan(r2[c])) or r1[c] == pytest.approx(-r2[c])


# compare_runs, adjust_pvalues ---------------------------------------------------------------

def test_compare_runs_default_metrics_skips_absent():
    base = run([0.1, 0.2, 0.3, 0.4, 0.5], answer_f1=[0.5, 0.1, 0.2, 0.3, 0.3])
    prop = run([0.3, 0.5, 0.2, 0.9, 0.6], answer_f1=[0.6, 0.4, 0.1, 0.2, 0.9])
    with pytest.warns(StatisticsWarning, match="skipped: analyst_score"):
        out = stats.compare_runs(base, prop)
    assert out.metric.tolist() == ["final_score", "answer_f1"]
    # R: wilcox.test(p1, b1, paired = TRUE)$p.value -> 0.136216869845 (ties: approx., cc);
    #    wilcox.test(p2, b2, paired = TRUE)$p.value -> 0.498224853418;
    #    p.adjust(c(0.136216869845, 0.498224853418), "holm") -> 0.272433739689 0.498224853418
    np.testing.assert_allclose(out.p_value, [0.136216869845, 0.498224853418], atol=1e-11)
    np.testing.assert_allclose(out.p_adjusted, [0.272433739689, 0.498224853418], atol=1e-11)
    assert (out.correction == "holm").all()
    with pytest.raises(ValueError, match="correction must be one of"):
        stats.compare_runs(base, prop, correction="fdr")


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.one_of(hs.floats(0, 1), hs.just(float("nan"))), min_size=1, max_size=20))
def test_adjust_pvalues_properties(p):
    p = np.array(p)
    for method in ("holm", "bh", "bonferroni", "by"):
        res = stats.adjust_pvalues(p, method=method)
        adj = res.p_adjusted
        assert np.array_equal(np.isnan(adj), np.isnan(p))
        ok = ~np.isnan(p)
        assert res.m == int(ok.sum())
        assert np.all(adj[ok] >= p[ok] - 1e-12) and np.all(adj[ok] <= 1)
    assert np.all(stats.adjust_pvalues(p, method="bh").p_adjusted[ok]
                  <= stats.adjust_pvalues(p, method="holm").p_adjusted[ok] + 1e-12)


def test_adjust_pvalues_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        stats.adjust_pvalues([0.5, 1.5])


# unpaired_comparison, effect_sizes ----------------------------------------------------------

def test_unpaired_frames_and_nan():
    a = run([0.9, 0.8, np.nan, 1.0])
    b = run([0.1, 0.4, 0.3])
    with pytest.warns(StatisticsWarning, match="1 missing values"):
        r = stats.unpaired_comparison(a, b).iloc[0]
    assert (r.n_a, r.n_b, r.n_dropped_na) == (3, 3, 1)
    assert r.rank_biserial == 1.0 and r.magnitude == "large"
    # R: wilcox.test(c(.9, .8, 1), c(.1, .4, .3)) -> W = 9, p = 0.1 (exact: 2 / choose(6, 3))
    assert (r.statistic, r.p_value) == (9.0, pytest.approx(0.1, abs=1e-12))
    assert (r.median_a, r.median_b) == (0.9, 0.3)


@pytest.mark.parametrize("n_a,n_b", [(0, 3), (1, 1), (2, 2)])
def test_unpaired_small_groups(n_a, n_b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        r = stats.unpaired_comparison([0.9, 0.7][:n_a], [0.1, 0.2, 0.3][:n_b]).iloc[0]
    assert (r.n_a, r.n_b) == (n_a, n_b)
    if n_a == 0:
        assert math.isnan(r.p_value) and r.magnitude == "undefined"
    else:
        assert 0 < r.p_value <= 1
    assert not np.isinf(r.cohens_d)


def test_effect_sizes_paired_unequal_length():
    with pytest.raises(ValueError, match="differ in length"):
        stats.effect_sizes([1, 2], [1], paired=True)


# mcnemar ------------------------------------------------------------------------------------

def test_mcnemar_from_task_frames_with_threshold_and_na():
    base = run([0.9, 0.9, 0.2, 0.1, np.nan, 0.85])
    prop = run([0.9, 0.3, 0.95, 0.9, 0.9, 0.81])
    with pytest.warns(StatisticsWarning, match="1 pairs dropped"):
        r = stats.mcnemar(base, prop).iloc[0]
    assert (r.n_pairs, r.n_both_correct, r.b, r.c, r.n_both_wrong) == (5, 2, 1, 2, 0)
    # exact: 2 * P(Bin(3, 0.5) <= 1) = 2 * 4/8 = 1.0 -> statistic min(b, c) = 1
    assert (r.statistic, r.p_value) == (1.0, 1.0)


def test_mcnemar_no_discordant_pairs():
    with pytest.warns(StatisticsWarning, match="no discordant pairs"):
        r = stats.mcnemar([True, False], [True, False]).iloc[0]
    assert r.p_value == 1.0 and r.b == r.c == 0


def test_mcnemar_rejects_non_flags():
    with pytest.raises(ValueError, match="not a boolean"):
        stats.mcnemar(["yes", "maybe"], [True, False])


# correlation --------------------------------------------------------------------------------

def test_correlation_constant_column():
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, 1, 1, 1], "c": [4.0, 3, 1, 2]})
    with pytest.warns(StatisticsWarning, match="constant input"):
        out = stats.correlation(df, ["a", "b", "c"], method="pearson")
    assert len(out) == 3 and math.isnan(out.estimate[0]) and not math.isnan(out.estimate[1])


# clustered SE, power ------------------------------------------------------------------------

def test_clustered_se_singletons_reduce_to_clt(rng):
    x = rng.uniform(size=12)
    clt = x.std(ddof=1) / np.sqrt(12)  # Miller (2024) Eq. 1, SE_CLT = sqrt(s^2 / n), by numpy
    assert stats.clustered_se(x, method="clt").se == pytest.approx(clt, rel=1e-12)
    for m in ("eq4", "cr1"):  # one task per cluster: Eq. 4 and CR1 reduce to SE_CLT exactly
        assert stats.clustered_se(x, np.arange(12), method=m).se == pytest.approx(clt, rel=1e-12)
    assert stats.clustered_se(x, method="cr1").se == pytest.approx(clt, rel=1e-12)


def test_clustered_se_edge_cases():
    assert math.isnan(stats.clustered_se([0.5]).se)
    with pytest.warns(StatisticsWarning, match="1 cluster: clustered standard error not"):
        assert math.isnan(stats.clustered_se([0.1, 0.9], ["a", "a"]).se)  # CR1 with G = 1
    with pytest.warns(StatisticsWarning, match="1 rows dropped"):
        stats.clustered_se([0.1, np.nan, 0.9], ["a", "b", "b"])
    with pytest.raises(ValueError, match="method must be one of"):
        stats.clustered_se([0.1, 0.2], method="cr2")


def test_clustered_mean_ci_matches_statsmodels(rng):
    import statsmodels.api as sm

    y = rng.uniform(size=40)
    g = rng.integers(0, 6, size=40)
    df = pd.DataFrame({"final_score": y, "task_type": g})
    r = stats.clustered_mean_ci(df).iloc[0]
    fit = sm.OLS(y, np.ones(40)).fit(cov_type="cluster", cov_kwds={"groups": g})
    assert r.se == pytest.approx(fit.bse[0], rel=1e-10)  # statsmodels default = CR1
    assert r.n_clusters == len(np.unique(g))


def test_power_against_r_and_degenerate():
    # R: power.t.test(n = 50, power = 0.8, type = "paired", strict = TRUE)$delta -> 0.404183939958
    # (R's uniroot tolerance is 1.2e-4 on delta)
    assert stats.min_detectable_effect(50).effect_size[0] == pytest.approx(0.404184, abs=1e-4)
    # R: power.t.test(delta = 0.5, power = 0.8, type = "paired", strict = TRUE)$n -> 33.3671291
    r = stats.required_n(0.5).iloc[0]
    assert (r.n_exact, r.n) == (pytest.approx(33.3671291, abs=1e-4), 34)
    with pytest.warns(StatisticsWarning, match="no finite sample size"):
        assert math.isnan(stats.required_n(0.0).n[0])
    with pytest.warns(StatisticsWarning, match="undefined"):
        assert math.isnan(stats.min_detectable_effect(1).effect_size[0])
    with pytest.raises(ValueError, match="alpha and power"):
        stats.required_n(0.5, power=1.2)
    with pytest.warns(StatisticsWarning):
        assert math.isnan(stats.miller_required_n(0.0, omega2=0.1).n_exact[0])


def test_paired_series_align_on_index():
    b = pd.Series([0.1, 0.2, 0.3], index=["a", "b", "c"])
    p = pd.Series([0.9, 0.4, 0.8], index=["c", "a", "b"])
    r = stats.paired_comparison(b, p).iloc[0]
    assert r.mean_diff == pytest.approx(((0.4 - 0.1) + (0.8 - 0.2) + (0.9 - 0.3)) / 3)
    with pytest.raises(ValueError, match="index of baseline is not unique"):
        stats.paired_comparison(pd.Series([0.1, 0.2], index=["a", "a"]), p)
