"""Judge-corrected accuracy (issue 36 item 3): PPI and PPI++ against ppi_py's ppi_mean_ci and
against the closed form written here in numpy; the judge study's worked example."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from dabench_analysis import judge

STUDY = Path(__file__).parents[1] / "data" / "judge_study"

# Hand-built labels: 12 human-labelled cases (judge and human), 30 judge-only cases.
Y = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1], float)
YHAT = np.array([1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1], float)
YU = np.array([1, 0, 1, 1, 1, 0, 1, 1, 1, 0] * 3, float)


def closed_form(y, yh, yu, lam=None, ci=0.95):
    """PPI++ for a mean (Angelopoulos, Duchi, Zrnic 2023), written out."""
    n, big_n = len(y), len(yu)
    if lam is None:
        cov = np.mean((y - y.mean()) * (yh - yh.mean()))
        lam = np.clip(cov / ((1 + n / big_n) * np.var(np.r_[yh, yu], ddof=1)), 0, 1)
    est = lam * yu.mean() + (y - lam * yh).mean()
    se = np.sqrt(lam ** 2 * yu.var() / big_n + (y - lam * yh).var() / n)
    z = norm.ppf((1 + ci) / 2)
    return est, est - z * se, est + z * se, lam


@pytest.mark.parametrize("lam", [1.0, None])
def test_ppi_mean_against_closed_form_and_ppi_py(lam):
    r = judge.ppi_mean(Y, YHAT, YU, lam=lam).iloc[0]
    est, lo, hi, lam_hat = closed_form(Y, YHAT, YU, lam)
    assert (r["estimate"], r["ci_low"], r["ci_high"], r["lam"]) == pytest.approx(
        (est, lo, hi, lam_hat), abs=1e-12)
    ppi_py = pytest.importorskip("ppi_py")
    low, high = ppi_py.ppi_mean_ci(Y, YHAT, YU, alpha=0.05, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(Y, YHAT, YU, lam=lam)
    assert (r["ci_low"], r["ci_high"], r["estimate"]) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0]), float(np.ravel(point)[0])), abs=1e-10)


def test_constant_judge_gives_the_classical_mean():
    r = judge.ppi_mean(Y, np.ones_like(Y), np.ones(5)).iloc[0]
    assert r["lam"] == 0.0 and r["estimate"] == pytest.approx(Y.mean())


def test_table_rows_and_wilson_rows():
    cases = pd.DataFrame({"judge_pass": np.r_[YHAT, YU].astype(bool),
                          "human_pass": pd.array(list(Y.astype(bool)) + [pd.NA] * len(YU),
                                                 dtype="boolean")})
    t = judge.judge_corrected_accuracy(cases).set_index("estimator")
    assert list(t.index) == ["judge_only", "human_only", "ppi", "ppi_plus_plus"]
    assert (t["n_labelled"] == 12).all() and (t["n_unlabelled"] == 30).all()
    assert t.at["judge_only", "estimate"] == pytest.approx(np.r_[YHAT, YU].mean())
    assert t.at["human_only", "estimate"] == pytest.approx(Y.mean())
    # R: prop.test(8, 12, correct = FALSE)$conf.int -> 0.3906221 0.8618799
    assert (t.at["human_only", "ci_low"], t.at["human_only", "ci_high"]) == pytest.approx(
        (0.3906221, 0.8618799), abs=1e-7)
    est, lo, hi, lam = closed_form(Y, YHAT, YU)
    assert (t.at["ppi_plus_plus", "estimate"], t.at["ppi_plus_plus", "lam"]) == pytest.approx((est, lam))


def test_too_few_labels():
    cases = pd.DataFrame({"judge_pass": [1, 0, 1], "human_pass": [1.0, None, None]})
    t = judge.judge_corrected_accuracy(cases).set_index("estimator")
    assert np.isnan(t.at["ppi", "estimate"]) and t.at["ppi", "method"].startswith("undefined")
    with pytest.raises(ValueError, match="n_labelled=5"):
        judge.judge_corrected_accuracy(cases, n_labelled=5)


def study_cases() -> pd.DataFrame:
    """The judge study's cases from the raw CSV files: the judge passes a case when
    exec_score >= 4.5; an annotator when their mean factoid rating, rescaled (x - 1) * 9 / 4,
    is >= 4.5; the human verdict is the annotators' majority (a tie: no verdict)."""
    f = pd.read_csv(STUDY / "factoid_ratings.csv")
    per = ((f.groupby(["test_case_id", "annotator"])["rating"].mean() - 1) * 9 / 4 >= 4.5)
    votes = per.groupby("test_case_id").agg(["sum", "count"])
    human = pd.Series(pd.NA, index=votes.index, dtype="boolean")
    human[2 * votes["sum"] > votes["count"]] = True
    human[2 * votes["sum"] < votes["count"]] = False
    v = pd.read_csv(STUDY / "judge_verdicts.csv")
    return v.assign(judge_pass=v["exec_score"] >= 4.5,
                    human_pass=human.reindex(v["test_case_id"]).to_numpy())


def test_worked_example_judge_study():
    """docs/guide/reliability.md, "Judge-corrected accuracy": GT-as-code, 20 human labels."""
    cases = study_cases()
    got = judge.judge_corrected_accuracy(cases, by="configuration", n_labelled=20, seed=0)
    g = got[got["configuration"] == "GT-as-code"].set_index("estimator")
    c = cases[cases["configuration"] == "GT-as-code"].reset_index(drop=True)
    known = np.flatnonzero(c["human_pass"].notna())
    keep = np.random.default_rng(0).choice(known, size=20, replace=False)  # the documented subset
    lab = np.zeros(len(c), bool)
    lab[keep] = True
    y = c.loc[lab, "human_pass"].astype(float).to_numpy()
    yh, yu = c.loc[lab, "judge_pass"].astype(float).to_numpy(), c.loc[~lab, "judge_pass"].astype(float).to_numpy()
    assert (len(y), len(yu)) == (20, 35)
    assert g.at["judge_only", "estimate"] == pytest.approx(c["judge_pass"].mean())
    assert g.at["human_only", "estimate"] == pytest.approx(y.mean())
    for name, lam in (("ppi", 1.0), ("ppi_plus_plus", None)):
        est, lo, hi, _ = closed_form(y, yh, yu, lam)
        assert (g.at[name, "estimate"], g.at[name, "ci_low"], g.at[name, "ci_high"]) == \
            pytest.approx((est, lo, hi), abs=1e-12)
    # the numbers the page quotes (rounded to 3 decimals)
    shown = g[["estimate", "ci_low", "ci_high"]].round(3)
    assert shown.loc["judge_only"].tolist() == [0.8, 0.676, 0.884]
    assert shown.loc["human_only"].tolist() == [0.5, 0.299, 0.701]
    assert shown.loc["ppi"].tolist() == [0.5, 0.259, 0.741]
    assert shown.loc["ppi_plus_plus"].tolist() == [0.5, 0.299, 0.701]
    assert round(g.at["ppi_plus_plus", "lam"], 2) == 0.39


def test_few_cases_on_a_side_warn():
    """The shipped study with all its human labels leaves 2 cases unlabelled: a warning."""
    with pytest.warns(UserWarning, match="53 labelled and 2 unlabelled"):
        judge.judge_corrected_accuracy(study_cases(), by="configuration")
