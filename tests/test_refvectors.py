"""Published reference values for stats, calibration and ablation.

Loads ``../shared/refvectors/vectors.json`` (relative to the repo root) when present, else the
vendored copy in ``tests/data/refvectors/``, plus our own ``tests/data/refvectors_local.json``.
Every vector id is either checked here, listed as owned by the agreement module, or listed as
not mapping to a function of ours (with the reason); an unknown id fails, so new vectors are
never skipped silently. Tolerances: the vector's ``tol`` unless a comment says otherwise.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import stats
from dabench_analysis.stats import calibration
from dabench_analysis.tables import mas

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "refvectors" / "vectors.json"
VENDORED = ROOT / "tests" / "data" / "refvectors" / "vectors.json"
LOCAL = ROOT / "tests" / "data" / "refvectors_local.json"


def _load() -> list[dict]:
    path = SHARED if SHARED.exists() else VENDORED
    return json.loads(path.read_text()) + json.loads(LOCAL.read_text())


VECTORS = {v["id"]: v for v in _load()}

#: Vectors of the agreement module (another engineer's issue): not checked here.
AGREEMENT_IDS = {
    "mcc_sklearn_doc", "prf_multiclass_sklearn_doc", "binary_confusion_matrix_metrics",
    "cohen_kappa_sas_example", "cohen_kappa_sklearn_doc", "gwet_ac1_raw4raters",
    "gwet_ac2_quadratic_raw4raters", "gwet_ac2_ordinal_raw4raters",
    "fleiss_kappa_and_krippendorff_raw4raters_missing", "fleiss_kappa_wikipedia_counts",
    "krippendorff_alpha_canonical_all_metrics", "krippendorff_alpha_wikipedia_example",
}
#: Vectors about identities with no function in our API.
NOT_MAPPED = {
    "miller_resampling_variance_factor":
        "Var ratio (1 + 2/K)/3 is an identity of the paper's uniform-difficulty model; our Miller "
        "functions take sigma2 and K directly (their K-dependence is checked by "
        "miller_minimum_detectable_effect)",
    "miller_paired_variance_example":
        "Var_A + Var_B - 2 Cov arithmetic (the paper's erratum); we take omega2 as an input",
}

CHECKS = {}


def check(*ids):
    def deco(fn):
        for i in ids:
            CHECKS[i] = fn
        return fn
    return deco


def approx(v, tol):
    return pytest.approx(v, abs=tol)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.StatisticsWarning)
        return fn(*args, **kwargs)


def paired(x, y, **kw):
    """R wilcox.test(x, y, paired = TRUE) analogue: d = x - y, so proposed = x, baseline = y."""
    return _quiet(stats.paired_comparison, list(map(float, y)), list(map(float, x)), **kw).iloc[0]


# --- Wilcoxon signed-rank -------------------------------------------------------------------

@check("wsr_pratt_zero_method")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["x"], i["y"], zero_method="pratt", method="approx", correction=False)
    assert r.p_value == approx(e["pvalue"], e["tol"])
    assert min(r.statistic, 10 - r.statistic) == e["statistic_min_T"]  # T+ + T- = 4*5/2


@check("wsr_depression_two_sided_exact")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["x"], i["y"])
    assert r.wilcoxon_method == "exact"
    assert r.statistic == e["statistic_T_plus"]  # R's V
    assert r.p_value == approx(e["pvalue"], e["tol"])


@check("wsr_depression_less_normal_approx_no_cc")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["d"], [0.0] * len(i["d"]), alternative="less", method="approx",
               correction=False)
    assert r.statistic == e["statistic_T_plus"]
    assert r.p_value == approx(e["pvalue"], e["tol"])


@check("wsr_ties_and_zero_library_defaults")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["x"], i["y"])  # our default = R's default here: approx + cc (zero, ties)
    assert r.statistic == e["statistic_T_plus"]
    assert r.p_value == approx(e["pvalue_approx_cc_R_default"], e["tol"])
    assert r.rank_biserial == approx(e["rank_biserial_matched_pairs"], e["tol"])
    r = paired(i["x"], i["y"], correction=False)
    assert r.p_value == approx(e["pvalue_approx_no_cc"], e["tol"])


@check("wsr_floating_point_ties")
def _(v):
    i, e = v["inputs"], v["expected"]
    raw, rounded = e["raw_float_differences"], e["differences_rounded_to_3dp"]
    r = paired(i["x"], i["y"], alternative="greater")  # default: no rounding, like R and scipy
    assert r.statistic == raw["statistic_T_plus"]
    assert r.p_value == approx(raw["pvalue"], e["tol"])
    r = paired(i["x"], i["y"], alternative="greater", decimals=3)
    assert r.statistic == rounded["statistic_T_plus"]
    # ties after rounding -> normal approximation with cc, as R (scipy's 0.4375 ignores ties)
    assert r.p_value == approx(rounded["pvalue_R_approx_cc"], e["tol"])


@check("wsr_one_zero_with_ties")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["x"], i["y"])
    assert (r.statistic, r.n_nonzero) == (e["statistic_T_plus"], e["n_used"])
    assert r.p_value == approx(e["pvalue_two_sided_cc"], e["tol"])  # R's default call
    assert paired(i["x"], i["y"], correction=False).p_value == approx(
        e["pvalue_two_sided_no_cc"], e["tol"])
    for alt in ("less", "greater"):
        for cc, key in ((True, "cc"), (False, "no_cc")):
            p = paired(i["x"], i["y"], alternative=alt, correction=cc).p_value
            assert p == approx(e[f"pvalue_{alt}_{key}"], e["tol"])


@check("local_wsr_zea_mays_darwin")
def _(v):
    d, e = v["inputs"]["d"], v["expected"]
    zeros = [0.0] * len(d)
    r = paired(d, zeros)
    assert r.statistic == e["statistic_T_plus"]
    assert r.p_value == approx(e["pvalue_exact_two_sided"], e["tol"])
    assert paired(d, zeros, alternative="greater").p_value == approx(
        e["pvalue_exact_greater"], e["tol"])
    assert paired(d, zeros, method="approx", correction=False).p_value == approx(
        e["pvalue_approx_no_cc"], e["tol"])
    assert paired(d, zeros, method="approx").p_value == approx(e["pvalue_approx_cc"], e["tol"])


# --- Mann-Whitney, effect sizes -------------------------------------------------------------

@check("mwu_all_values_equal")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = _quiet(stats.unpaired_comparison, i["x"], i["y"]).iloc[0]
    assert r.statistic == e["U_x"]
    assert r.p_value == e["pvalue_scipy"]  # documented choice: p = 1.0 (R: NaN)


@check("mwu_scipy_doc_small_n")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.unpaired_comparison(i["x"], i["y"]).iloc[0]
    assert r.statistic == e["U_x"]
    assert r.p_value == approx(e["pvalue_exact"], e["tol"])
    r = stats.unpaired_comparison(i["x"], i["y"], method="asymptotic").iloc[0]
    assert r.p_value == approx(e["pvalue_asymptotic_cc"], e["tol"])


@check("local_wilcox_two_sample_greater_R_example")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.unpaired_comparison(i["x"], i["y"], alternative="greater").iloc[0]
    assert r.statistic == e["W"]
    assert r.p_value == approx(e["pvalue"], e["tol_pvalue"])


@check("effsize_lakens_independent")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.unpaired_comparison(i["x"], i["y"]).iloc[0]
    assert r.cohens_d == approx(e["cohens_d_pooled"], e["tol"])
    assert r.hedges_g == approx(e["hedges_g_approx_J"], e["tol"])
    g = stats.effect_sizes(i["x"], i["y"], hedges_correction="exact").hedges_g[0]
    assert g == approx(e["hedges_g_exact_J"], e["tol"])
    # t, df, p (Student t-test) and the parametric CLES are not part of our API.


@check("effsize_lakens_paired")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = paired(i["x"], i["y"])
    assert r.cohens_d_z == approx(e["cohens_dz"], e["tol"])
    assert r.mean_diff / r.se_diff == approx(e["t"], e["tol"])  # paired t from our columns


@check("effsize_pingouin_doc_examples")
def _(v):
    i, e = v["inputs"], v["expected"]
    c1, c2, c3, c4 = (i[f"case{k}"] for k in range(1, 5))
    assert stats.effect_sizes(c1["x"], c1["y"]).cohens_d[0] == approx(
        e["case1_cohen_d"], e["tol"])
    assert paired(c2["x"], c2["y"]).hedges_g == approx(
        e["case2_hedges_g_paired_pooledSD"], e["tol"])
    assert stats.unpaired_comparison(c3["x"], c3["y"]).cles[0] == approx(e["case3_cles"],
                                                                          e["tol"])
    assert paired(c4["x"], c4["y"]).cohens_d_z == approx(e["case4_cohen_dz"], e["tol"])


@check("rank_biserial_independent_R_example")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.unpaired_comparison(i["x"], i["y"]).iloc[0]
    assert r.rank_biserial == approx(e["rank_biserial"], e["tol"])
    assert r.cliffs_delta == approx(e["rank_biserial"], e["tol"])
    assert r.cles == approx(e["cles_nonparametric"], e["tol"])


@check("rank_biserial_paired_depression")
def _(v):
    i, e = v["inputs"], v["expected"]
    assert paired(i["x"], i["y"]).rank_biserial == approx(e["rank_biserial"], e["tol"])


# --- McNemar, proportions, Fisher ------------------------------------------------------------

def _mcnemar_arrays(table):
    (a, b), (c, d) = table
    base = [True] * (a + b) + [False] * (c + d)
    prop = [True] * a + [False] * b + [True] * c + [False] * d
    return base, prop


@check("mcnemar_R_example_no_correction_and_exact")
def _(v):
    e = v["expected"]
    base, prop = _mcnemar_arrays(v["inputs"]["table"])
    r = stats.mcnemar(base, prop, exact=False, correction=False).iloc[0]
    assert r.statistic == approx(e["chi2_no_cc"], e["tol"])
    assert r.p_value == approx(e["pvalue_no_cc"], e["tol"])
    assert stats.mcnemar(base, prop).p_value[0] == approx(e["pvalue_exact_binomial"], e["tol"])


@check("mcnemar_equal_discordant_counts")
def _(v):
    e = v["expected"]
    base, prop = _mcnemar_arrays(v["inputs"]["table"])
    r = stats.mcnemar(base, prop, exact=False, correction=True).iloc[0]
    assert (r.statistic, r.p_value) == (e["statistic_R"], e["pvalue_R"])  # R, not statsmodels
    assert stats.mcnemar(base, prop).p_value[0] == approx(e["pvalue_exact"], e["tol"])


@check("local_mcnemar_R_example_default_cc")
def _(v):
    e = v["expected"]
    base, prop = _mcnemar_arrays(v["inputs"]["table"])
    r = stats.mcnemar(base, prop, exact=False).iloc[0]
    assert r.statistic == approx(e["statistic"], e["tol_statistic"])
    assert r.p_value == approx(e["pvalue"], e["tol_pvalue"])


@check("proportion_ci_5_of_25", "proportion_ci_20_of_20", "proportion_ci_1_of_29",
       "proportion_ci_15_of_148", "local_binom_test_mendel_peas")
def _(v):
    i, e = v["inputs"], v["expected"]
    for key, method in (("wilson", "wilson"), ("clopper_pearson", "clopper-pearson"),
                        ("wilson_cc", "wilson_cc")):
        if key in e:
            r = stats.proportion_ci(i["k"], i["n"], method=method, ci=i["confidence"]).iloc[0]
            assert [r.ci_low, r.ci_high] == approx(e[key], e["tol"])


@check("local_fisher_tea_tasting", "local_newcombe_difference_fagerland")
def _(v):
    i, e = v["inputs"], v["expected"]
    if "table" in i:
        (k1, f1), (k2, f2) = i["table"]
        n1, n2 = k1 + f1, k2 + f2
    else:
        k1, n1, k2, n2 = i["k1"], i["n1"], i["k2"], i["n2"]
    df = pd.DataFrame({"schema_agent_used": [True] * n1 + [False] * n2,
                       "final_score": [1.0] * k1 + [0.0] * (n1 - k1) + [1.0] * k2
                       + [0.0] * (n2 - k2)})
    r = mas.specialist_value(df, specialists=("schema",)).iloc[0]
    if "pvalue_two_sided" in e:
        assert r.p_value == approx(e["pvalue_two_sided"], e["tol"])
    if "newcombe_hybrid_score" in e:
        assert [r.ci_low, r.ci_high] == approx(e["newcombe_hybrid_score"], e["tol"])


# --- p-value adjustment ---------------------------------------------------------------------

@check("p_adjust_bh_benjamini_hochberg_1995", "p_adjust_holm_benjamini_hochberg_1995")
def _(v):
    p, e = v["inputs"]["pvalues"], v["expected"]
    method = "bh" if v["function"].endswith("bh") else "holm"
    adj = stats.adjust_pvalues(p, method=method).p_adjusted
    assert adj.tolist() == approx(e["adjusted"], e["tol"])
    assert int(np.sum(adj <= v["inputs"]["alpha"])) == e["n_rejected_at_0.05"]


@check("p_adjust_missing_values")
def _(v):
    p, e = v["inputs"]["pvalues"], v["expected"]
    p = [np.nan if x is None else x for x in p]
    for method in ("bh", "holm"):
        got = stats.adjust_pvalues(p, method=method).p_adjusted
        want = [np.nan if x is None else x for x in e[method]]
        np.testing.assert_allclose(got, want, atol=e["tol"])  # NaN in place, m = 3


# --- calibration ----------------------------------------------------------------------------

@check("brier_score_sklearn_doc")
def _(v):
    i, e = v["inputs"], v["expected"]
    y, p = i["y_true"], i["y_prob_positive"]
    assert calibration.brier_score(confidence=p, correct=y).estimate == approx(
        e["brier_binary_mean_sq_error"], e["tol"])
    assert calibration.brier_score(confidence=p, correct=y, scale_by_half=False).estimate == approx(
        e["brier_two_class_sum_unscaled"], e["tol"])
    thresholded = [float(x > 0.5) for x in p]
    assert calibration.brier_score(confidence=thresholded, correct=y).estimate == approx(
        e["brier_thresholded_predictions"], e["tol"])


@check("ece_sklearn_calibration_curve_doc")
def _(v):
    i, e = v["inputs"], v["expected"]
    kw = {"confidence": i["p_positive"], "correct": i["y_true"], "n_bins": i["n_bins"]}
    t = calibration.calibration_table(**kw)
    assert t.accuracy.tolist() == approx(e["prob_true_per_bin"], e["tol"])
    assert t.mean_confidence.tolist() == approx(e["prob_pred_per_bin"], e["tol"])
    assert t.n.tolist() == e["bin_counts"]
    assert calibration.expected_calibration_error(**kw).estimate == approx(e["ece_positive_class"],
                                                                  e["tol"])


@check("ece_equal_width_pavlovic_example")
def _(v):
    i, e = v["inputs"], v["expected"]
    p, y = np.array(i["p_positive"]), np.array(i["y_true"])
    pred_ok = ((p > 0.5) == y).astype(int)
    def ece(**kw):
        return calibration.expected_calibration_error(**kw).estimate

    kw = {"n_bins": i["n_bins"], "right": True}  # bins (lo, hi] as in the source
    assert ece(confidence=p, correct=pred_ok, **kw) == approx(
        e["ece_as_published_conf=p_correct=(p>0.5)==y"], e["tol"])
    assert ece(confidence=np.maximum(p, 1 - p), correct=pred_ok, **kw) == approx(
        e["ece_top_label_conf=max(p,1-p)"], e["tol"])
    assert ece(confidence=p, correct=y, **kw) == approx(
        e["ece_positive_class_reliability_|mean p - frac positive|"], e["tol"])


# --- Miller (2024), power -------------------------------------------------------------------

@check("miller_se_worked_example")
def _(v):
    i, e = v["inputs"], v["expected"]
    a, b, g = i["scores_A"], i["scores_B"], i["cluster"]
    tol = e["tol"]
    def se(*args, **kw):
        return stats.clustered_se(*args, **kw).se

    assert se(a, method="clt") == approx(e["se_clt_A"], tol)
    assert se(a, method="bernoulli") == approx(e["se_bernoulli_A"], tol)
    assert se(a, g, method="eq4") == approx(e["se_clustered_A_eq4"], tol)
    assert se(a, g, method="cr0") == approx(e["se_clustered_A_appendixA_CR0"], tol)
    assert se(a, g) == approx(e["se_clustered_A_CR1_G/(G-1)"], tol)  # our default
    assert math.hypot(se(a, method="clt"), se(b, method="clt")) == approx(
        e["se_unpaired_diff"], tol)
    d = np.subtract(a, b)
    assert se(d, g, method="cr0") == approx(e["se_paired_clustered_diff_eq_sec4.2"], tol)
    r = paired(a, b)
    assert (r.mean_diff, r.se_diff) == (approx(e["mean_diff"], tol), approx(e["se_paired_diff"],
                                                                            tol))
    assert r.mean_diff / r.se_diff == approx(e["z_paired"], tol)
    frame = pd.DataFrame({"final_score": a, "task_type": g})
    ci = stats.clustered_mean_ci(frame, method="clt").iloc[0]
    assert ci["mean"] == approx(e["mean_A"], tol)
    # Eq. 3, mean ± 1.96 SE, from the SE we report (we use z = 1.959964: 5.4e-6 on the bounds)
    assert [ci["mean"] - 1.96 * ci.se, ci["mean"] + 1.96 * ci.se] == approx(e["ci95_A"], 1e-12)
    # the interval itself is the package's bounded rule on [0, 1] scores (issue 25 item 6):
    # closed form expit(logit(m) ± z SE / (m (1 - m))), z = R qnorm(0.975) = 1.959963984540054
    m, s, z = e["mean_A"], e["se_clt_A"], 1.959963984540054
    logit = math.log(m / (1 - m))
    want = [1 / (1 + math.exp(-(logit + k * z * s / (m * (1 - m))))) for k in (-1, 1)]
    assert [ci.ci_low, ci.ci_high] == approx(want, 1e-12)
    assert ci.method == "CLT (unclustered); logit normal"


@check("miller_sample_size_example")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.miller_required_n(i["mde_delta"], omega2=i["omega2"], sigma2_a=i["sigma2_A"],
                                sigma2_b=i["sigma2_B"], k_a=i["K_A"], k_b=i["K_B"],
                                alpha=i["alpha"], power=i["power"]).iloc[0]
    assert r.n_exact == approx(e["n_unrounded"], e["tol"])
    assert r.n == e["n_required"]


@check("miller_minimum_detectable_effect")
def _(v):
    i, e = v["inputs"], v["expected"]
    for k in i["K"]:
        r = stats._power.miller_min_detectable_effect(i["n"], omega2=i["omega2"], sigma2_a=i["sigma2_A"],
                                               sigma2_b=i["sigma2_B"], k_a=k, k_b=k,
                                               alpha=i["alpha"], power=i["power"])
        assert r.mde[0] == approx(e[f"mde_K{k}"], e["tol"])


@check("local_pwr_t_test_one_sample", "local_pwr_t_test_two_sample")
def _(v):
    i, e = v["inputs"], v["expected"]
    r = stats.min_detectable_effect(i["n"], alpha=i["sig_level"], power=e["power"],
                                    paired=i["type"] == "one.sample")
    assert r.effect_size[0] == approx(i["d"], e["tol"])


@check("local_cohen_1988_sample_size_table")
def _(v):
    i, e = v["inputs"], v["expected"]
    got = [int(stats.required_n(d, alpha=i["alpha"], power=i["power"], paired=False).n[0])
           for d in i["d"]]
    assert got == e["n_per_group"]


# --- correlations ---------------------------------------------------------------------------

@check("pearson_cor_test_tuna")
def _(v):
    i, e = v["inputs"], v["expected"]
    df = pd.DataFrame({"x": i["x"], "y": i["y"]})
    r = stats.correlation(df, ["x", "y"], method="pearson").iloc[0]
    assert r.estimate == approx(e["r"], e["tol"])
    assert r.p_value == approx(e["pvalue_two_sided"], e["tol"])
    assert [r.ci_low, r.ci_high] == approx(e["ci95_fisher_z"], e["tol"])
    # one-sided p / interval: our helper is two-sided only


@check("rank_correlation_with_ties")
def _(v):
    i, e = v["inputs"], v["expected"]
    df = pd.DataFrame({"x": i["x"], "y": i["y"]})
    for method, est, p in (("spearman", "spearman_rho", "spearman_pvalue_t_approx"),
                           ("kendall", "kendall_tau_b", "kendall_pvalue_normal_approx"),
                           ("pearson", "pearson_r", "pearson_pvalue")):
        r = stats.correlation(df, ["x", "y"], method=method).iloc[0]
        assert (r.estimate, r.p_value) == (approx(e[est], e["tol"]), approx(e[p], e["tol"]))


@check("kendall_cor_test_tuna")
def _(v):
    i, e = v["inputs"], v["expected"]
    df = pd.DataFrame({"x": i["x"], "y": i["y"]})
    r = stats.correlation(df, ["x", "y"], method="kendall").iloc[0]
    assert r.estimate == approx(e["tau"], e["tol"])
    assert r.p_value == approx(e["pvalue_two_sided_exact"], e["tol"])


@check("correlation_matrix_3vars")
def _(v):
    cols, e = v["inputs"]["columns"], v["expected"]
    df = pd.DataFrame(cols)
    names = list(cols)
    for method, key in (("pearson", "pearson"), ("spearman", "spearman"),
                        ("kendall", "kendall_tau_b")):
        long = stats.correlation(df, names, method=method)
        m = np.eye(len(names))
        for r in long.itertuples():
            a, b = names.index(r.x), names.index(r.y)
            m[a, b] = m[b, a] = r.estimate
        np.testing.assert_allclose(m, e[key], atol=e["tol"])


# --- driver ---------------------------------------------------------------------------------

@pytest.mark.parametrize("vid", sorted(VECTORS))
def test_reference_vector(vid):
    if vid in AGREEMENT_IDS:
        pytest.skip("agreement vector: checked by tests/test_agreement.py")
    if vid in NOT_MAPPED:
        pytest.skip(NOT_MAPPED[vid])
    if vid not in CHECKS:
        pytest.fail(f"reference vector {vid!r} is not classified: add a check, or list it in "
                    "AGREEMENT_IDS / NOT_MAPPED with a reason")
    CHECKS[vid](VECTORS[vid])


def test_local_vectors_have_sources():
    local = json.loads(LOCAL.read_text())
    assert len(local) >= 5
    for v in local:
        assert v["id"].startswith("local_") and len(v["source"]) > 40 and v["id"] in CHECKS


def test_vendored_copy_is_complete():
    vendored = {v["id"] for v in json.loads(VENDORED.read_text())}
    assert {"wsr_depression_two_sided_exact", "miller_se_worked_example"} <= vendored
    assert (VENDORED.parent / "README.md").exists()
