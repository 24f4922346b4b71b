"""Tests of dabench_analysis.stats.gwet: Gwet's AC1/AC2, Fleiss, Conger, Brennan–Prediger and
percent agreement with Gwet's variance, against the values Gwet's irrCAC README prints.

Published source (all values below): Gwet, K. L., irrCAC R package README,
github.com/kgwet/irrCAC ("Computing agreement coefficients from raw ratings" for
``cac.raw4raters``; "... from the distribution of raters by subject & category" for
``distrib.6raters``). Estimates and SEs are printed to 5 dp (raw) or 7 significant digits (dist),
intervals to 3 dp, p-values to 7 significant digits. Full-precision weighted AC2 values: the shared
reference vectors (R 4.2.2 running Gwet's R source).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dabench_analysis.stats import gwet

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "refvectors" / "vectors.json"
VENDORED = ROOT / "tests" / "data" / "refvectors" / "vectors.json"
VECTORS = {v["id"]: v for v in json.loads((SHARED if SHARED.exists() else VENDORED).read_text())}
NAN = np.nan
#: cac.raw4raters (irrCAC README): 12 subjects x 4 raters, missing ratings.
RAW4 = pd.DataFrame([[1, 1, NAN, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
                     [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [NAN, 5, 5, 5],
                     [NAN, NAN, 1, 1], [NAN, NAN, 3, NAN]])
#: distrib.6raters (irrCAC README): 15 subjects x 5 categories, counts of 6 raters.
DIST6 = [[0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
         [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
         [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1]]
SCALE = [1, 2, 3, 4, 5]


def by_name(out: pd.DataFrame) -> pd.DataFrame:
    return out.set_index("coefficient")


def test_vectors_input_is_raw4raters():
    assert RAW4.equals(pd.DataFrame(VECTORS["gwet_ac1_raw4raters"]["inputs"][
        "ratings_units_by_raters"], dtype=float))


# R (irrCAC README):
#   pa.coeff.raw      pa 0.8181818 pe 0       0.8181818 se 0.12561 (0.542,1) p 4.345373e-05
#   bp.coeff.raw      pa 0.8181818 pe 0.2     0.77273   se 0.14472 (0.454,1) p 0.0002375609
#   gwet.ac1.raw      pa 0.8181818 pe 0.1903212 0.77544 se 0.14295 (0.461,1) p 0.000208721
#   fleiss.kappa.raw  pa 0.8181818 pe 0.2387153 0.76117 se 0.15302 (0.424,1) p 0.000419173
#   conger.kappa.raw  pa 0.8181818 pe 0.2334252 0.76282 se 0.14917 (0.435,1) p 0.0003367066
RAW4_PUBLISHED = {
    "percent_agreement": (0.0, 0.8181818, 0.12561, 0.542, 4.345373e-05),
    "brennan_prediger": (0.2, 0.77273, 0.14472, 0.454, 0.0002375609),
    "gwet_ac1": (0.1903212, 0.77544, 0.14295, 0.461, 0.000208721),
    "fleiss_kappa": (0.2387153, 0.76117, 0.15302, 0.424, 0.000419173),
    "conger_kappa": (0.2334252, 0.76282, 0.14917, 0.435, 0.0003367066),
}


def test_raw4raters_every_coefficient_matches_irrcac_readme():
    out = by_name(gwet.agreement_coefficients(RAW4, SCALE))
    assert list(out.index) == list(RAW4_PUBLISHED)
    for name, (pe, est, se, lo, p) in RAW4_PUBLISHED.items():
        row = out.loc[name]
        assert row["pa"] == pytest.approx(0.8181818, abs=5e-8), name
        assert row["pe"] == pytest.approx(pe, abs=5e-8), name
        assert row["estimate"] == pytest.approx(est, abs=5e-6), name
        assert row["se"] == pytest.approx(se, abs=5e-6), name
        assert row["ci_low"] == pytest.approx(lo, abs=5e-4), name
        assert row["ci_high"] == 1.0, name  # capped at 1
        assert row["p_value"] == pytest.approx(p, rel=1e-6), name
    assert (out["n_items"] == 12).all() and (out["n_raters"] == 4).all()


def test_distrib6raters_dist_functions_equal_raw_formulas_on_complete_data():
    # R (irrCAC README), distribution of 6 raters by subject and category:
    #   gwet.ac1.dist   0.4448007 se 0.08418757 (0.264,0.625) p 0.0001155927 pa 0.5511111 pe 0.1914815
    #   fleiss.kappa.dist 0.4139265 se 0.08119291 (0.24,0.588) p 0.0001622724 pe 0.2340741
    #   bp.coeff.dist   0.4388889 se 0.08312142 (0.261,0.617) p 0.0001163     pe 0.2
    raw = pd.DataFrame([sum(([k + 1] * c for k, c in enumerate(row)), []) for row in DIST6])
    out = by_name(gwet.agreement_coefficients(raw, SCALE, coefficients=["gwet", "fleiss",
                                                                        "brennan_prediger"]))
    published = {"gwet_ac1": (0.4448007, 0.08418757, 0.264, 0.625, 0.0001155927, 0.1914815),
                 "fleiss_kappa": (0.4139265, 0.08119291, 0.24, 0.588, 0.0001622724, 0.2340741),
                 "brennan_prediger": (0.4388889, 0.08312142, 0.261, 0.617, 0.0001163, 0.2)}
    for name, (est, se, lo, hi, p, pe) in published.items():
        row = out.loc[name]
        assert row["estimate"] == pytest.approx(est, abs=5e-8), name
        assert row["se"] == pytest.approx(se, abs=5e-9), name
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=5e-4), name
        assert row["p_value"] == pytest.approx(p, rel=5e-6 if name != "brennan_prediger" else 5e-4)
        assert row["pe"] == pytest.approx(pe, abs=5e-8), name
        assert row["pa"] == pytest.approx(0.5511111, abs=5e-8), name


@pytest.mark.parametrize("vid, weights", [("gwet_ac2_quadratic_raw4raters", "quadratic"),
                                          ("gwet_ac2_ordinal_raw4raters", "ordinal")])
def test_weighted_ac2_matches_reference_vectors(vid, weights):
    # R 4.2.2, Gwet's source: gwet.ac1.raw(cac.raw4raters, weights=...) (full precision in
    # the vector; published 5 dp: quadratic 0.91400, ordinal 0.89894)
    e = VECTORS[vid]["expected"]
    row = by_name(gwet.agreement_coefficients(RAW4, SCALE, weights=weights,
                                              coefficients=["gwet"])).loc["gwet_ac2"]
    assert row["estimate"] == pytest.approx(e["coefficient"], abs=1e-12)
    assert row["pa"] == pytest.approx(e["pa"], abs=1e-12)
    assert row["pe"] == pytest.approx(e["pe"], abs=1e-12)
    assert row["weights"] == weights and "AC2" in row["method"]


def test_weight_matrices_by_hand():
    # quadratic on 1..5: 1 - (k - l)^2 / 16; linear on values {1, 2, 4}: 1 - |x_k - x_l| / 3;
    # ordinal on 4 categories (Gwet 2014, ch. 3): 1 - C(|k-l|+1, 2) / C(4, 2)
    q = gwet.weight_matrix(SCALE, "quadratic")
    assert q[0].tolist() == [1.0, 15 / 16, 12 / 16, 7 / 16, 0.0]
    assert gwet.weight_matrix([4, 1, 2], "linear")[0].tolist() == pytest.approx([1, 2 / 3, 0])
    assert gwet.weight_matrix([10, 20, 35, 90], "ordinal")[1].tolist() == pytest.approx(
        [5 / 6, 1, 5 / 6, 1 / 2])  # ranks, not values
    assert np.array_equal(gwet.weight_matrix([3, 7], "identity"), np.eye(2))
    for kind in gwet.WEIGHT_KINDS:
        m = gwet.weight_matrix([1, 2, 3, 5, 8], kind)
        assert np.allclose(m, m.T) and np.all(np.diag(m) == 1) and m.min() >= 0
    with pytest.raises(ValueError, match="distinct"):
        gwet.weight_matrix([1, 1, 2])
    with pytest.raises(ValueError, match="unknown"):
        gwet.weight_matrix([1, 2], "cubic")


def test_conger_with_two_raters_is_cohens_kappa_sas_example():
    # Conger (1980): with two raters his kappa is Cohen's. SAS PROC FREQ (statsmodels
    # test_inter_rater.py): simple kappa 0.4842, weighted (linear) kappa 0.4701.
    table = np.array(VECTORS["cohen_kappa_sas_example"]["inputs"]["table_rater1_rows_rater2_cols"])
    pairs = [(i + 1, j + 1) for i in range(3) for j in range(3) for _ in range(table[i, j])]
    data = pd.DataFrame(pairs, columns=["r1", "r2"])
    for weights, kappa in (("identity", 0.4842), ("linear", 0.4701)):
        out = gwet.agreement_coefficients(data, [1, 2, 3], weights=weights,
                                          coefficients=["conger"])
        assert out["estimate"].iloc[0] == pytest.approx(kappa, abs=5e-5)


def test_fleiss_on_wikipedia_counts():
    # Fleiss (1971) / Wikipedia worked example: kappa 0.20993, P_bar 0.37802, P_e 0.21276
    v = VECTORS["fleiss_kappa_wikipedia_counts"]
    raw = pd.DataFrame([sum(([k + 1] * c for k, c in enumerate(r)), []) for r in
                        v["inputs"]["counts_subjects_by_categories"]])
    row = gwet.agreement_coefficients(raw, SCALE, coefficients=["fleiss"]).iloc[0]
    e = v["expected"]
    assert (row["estimate"], row["pa"], row["pe"]) == pytest.approx(
        (e["kappa"], e["P_bar"], e["P_e"]), abs=e["tol"])


def test_percent_agreement_closed_form_with_complete_data():
    # All items rated twice: p_a = share of items where the two agree; Gwet's variance
    # reduces to s^2 / n of the per-item 0/1 agreement; t-interval with n - 1 df.
    from scipy import stats

    a = [1, 2, 3, 1, 2, 3, 1, 2]
    b = [1, 2, 3, 2, 2, 1, 1, 3]
    agree = np.array([x == y for x, y in zip(a, b, strict=True)], dtype=float)
    se = agree.std(ddof=1) / np.sqrt(len(agree))
    row = gwet.agreement_coefficients(pd.DataFrame({"a": a, "b": b}), [1, 2, 3],
                                      coefficients=["percent_agreement"]).iloc[0]
    assert row["estimate"] == pytest.approx(agree.mean(), abs=1e-15)
    assert row["se"] == pytest.approx(se, abs=1e-15)
    assert row["ci_low"] == pytest.approx(agree.mean() - stats.t.ppf(0.975, 7) * se, abs=1e-12)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(agree.mean() / se, 7), abs=1e-12)


def test_input_shape_invariances():
    base = gwet.agreement_coefficients(RAW4, SCALE)
    shuffled = RAW4[[2, 0, 3, 1]].iloc[::-1]
    padded = RAW4.assign(empty=NAN)
    padded.loc[99] = NAN
    for other in (shuffled, padded):
        pd.testing.assert_frame_equal(gwet.agreement_coefficients(other, SCALE), base,
                                      check_exact=False, rtol=1e-12)
    arr = gwet.agreement_coefficients(RAW4.to_numpy(), SCALE)
    pd.testing.assert_frame_equal(arr, base)
    nullable = RAW4.astype("Int64")
    pd.testing.assert_frame_equal(gwet.agreement_coefficients(nullable, SCALE), base)


def test_all_ratings_in_one_category():
    data = pd.DataFrame({"a": [5] * 6, "b": [5] * 6, "c": [5] * 6})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = by_name(gwet.agreement_coefficients(data, SCALE, weights="quadratic"))
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert sorted(str(w.message).split()[0] for w in caught) == ["conger_kappa", "fleiss_kappa"]
    for name in ("percent_agreement", "gwet_ac2"):  # p_e = 0 for AC2: every item agrees
        assert out.loc[name, ["estimate", "se", "p_value"]].tolist() == [1.0, 0.0, 0.0]
        # zero variance: no interval is estimable (never the zero-width [1, 1])
        assert np.isnan(out.loc[name, "ci_low"]) and np.isnan(out.loc[name, "ci_high"])
        assert out.loc[name, "note"] == "zero variance: interval not estimable"
    for name in ("fleiss_kappa", "conger_kappa"):
        assert np.isnan(out.loc[name, "estimate"]) and out.loc[name, "pe"] == pytest.approx(1)
        assert out.loc[name, "note"].startswith("undefined")


def test_bad_input():
    with pytest.raises(ValueError, match=r"rating 6 \(row 0, column 'b'\) not among"):
        gwet.agreement_coefficients(pd.DataFrame({"a": [1, 2], "b": [6, 2]}), SCALE)
    with pytest.raises(ValueError, match="numeric"):
        gwet.agreement_coefficients(pd.DataFrame({"a": ["x", "y"], "b": ["x", "x"]}), SCALE)
    with pytest.raises(ValueError, match=">= 2 raters"):
        gwet.agreement_coefficients(pd.DataFrame({"a": [1, 2], "b": [NAN, NAN]}), SCALE)
    with pytest.raises(ValueError, match=">= 2 rated items"):
        gwet.agreement_coefficients(pd.DataFrame({"a": [1, 2], "b": [1, NAN]}).iloc[:1], SCALE)
    with pytest.raises(ValueError, match="at least one of them rated by >= 2"):
        gwet.agreement_coefficients(pd.DataFrame({"a": [1, NAN], "b": [NAN, 2]}), SCALE)
    with pytest.raises(ValueError, match="coefficient"):
        gwet.agreement_coefficients(RAW4, SCALE, coefficients=["cohen"])
    with pytest.raises(ValueError, match="weights"):
        gwet.agreement_coefficients(RAW4, SCALE, weights="nominal")
    with pytest.raises(ValueError, match=r"ci must be in \(0, 1\)"):
        gwet.agreement_coefficients(RAW4, SCALE, ci=95)


# ---------------------------------------------------------------- cross-check with irrCAC


def _random_ratings(seed: int, n: int = 40, r: int = 4, q: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, q + 1, n)
    x = np.clip(truth[:, None] + rng.integers(-1, 2, (n, r)) * (rng.random((n, r)) < .4), 1, q)
    x = x.astype(float)
    x[rng.random((n, r)) < 0.15] = np.nan
    return pd.DataFrame(x).dropna(how="all")


@pytest.mark.parametrize("weights", ["identity", "ordinal", "linear", "quadratic"])
@pytest.mark.parametrize("seed", [1, 2])
def test_equals_python_irrcac_where_it_installs(weights, seed):
    # irrCAC 0.4.4 pins scipy==1.12 and pandas<3, so it is no dependency (nor installed by
    # make); where someone installed it, every number must agree with its CAC.
    raw = pytest.importorskip("irrCAC.raw")
    data = _random_ratings(seed)
    ours = by_name(gwet.agreement_coefficients(data, SCALE, weights=weights))
    for method, name in (("gwet", "gwet_ac1" if weights == "identity" else "gwet_ac2"),
                         ("fleiss", "fleiss_kappa"), ("conger", "conger_kappa"),
                         ("bp", "brennan_prediger")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cac = raw.CAC(data.copy(), weights=weights, categories=SCALE, digits=15)
            est = getattr(cac, method)()["est"]
        row = ours.loc[name]
        assert row["estimate"] == pytest.approx(est["coefficient_value"], abs=1e-12), name
        assert row["se"] == pytest.approx(est["se"], abs=1e-12), name
        assert row["pe"] == pytest.approx(est["pe"], abs=1e-12), name
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(est["confidence_interval"],
                                                                abs=1e-12), name
        # irrCAC's bp() halves its p-value (one-sided); the README's R output is two-sided
        p = est["p_value"] * (2 if method == "bp" else 1)
        assert row["p_value"] == pytest.approx(p, abs=1e-12), name
