"""dabench_analysis.tables.ablation and .tables.mas: verification, replanning, quantile bins,
Phase 0 MAS analyses."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from dabench_analysis.stats import StatisticsWarning
from dabench_analysis.tables import ablation, mas


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def flags(*values):
    return pd.array(values, dtype="boolean")


# verification / replanning ------------------------------------------------------------------

def test_verification_groups_and_values():
    df = pd.DataFrame({"verification_triggered": flags(True, True, True, False, False, None,
                                                       False),
                       "final_score": [0.9, 0.8, 1.0, 0.2, 0.5, 0.7, 0.4]})
    with pytest.warns(StatisticsWarning, match="1 tasks with missing verification_triggered"):
        r = ablation.verification(df).iloc[0]
    assert (r.group_a, r.group_b) == ("with verification", "without verification")
    assert (r.n_a, r.n_b, r.n_excluded) == (3, 3, 1)
    assert r.mean_a == pytest.approx(0.9) and r.mean_b == pytest.approx(1.1 / 3)
    # seed 000: mannwhitneyu(with, without); exact, no ties -> scipy exact gives the same
    assert r.p_value == pytest.approx(st.mannwhitneyu([0.9, 0.8, 1.0], [0.2, 0.5, 0.4],
                                                      method="exact").pvalue)
    # issue 13: final_score is in [0, 1], so the group means get the logit-t interval, by hand:
    # m = 0.9, s = 0.1, se = s/sqrt(3), half = t(0.975, 2) * se / (m (1 - m)) on the logit scale.
    # (The t-interval it replaces, 0.9 -/+ 0.2484 = [0.6516, 1.1484], passed 1.)
    m, se = 0.9, 0.1 / np.sqrt(3)
    half = st.t.ppf(0.975, 2) * se / (m * (1 - m))
    lo, hi = (1 / (1 + np.exp(-(np.log(m / (1 - m)) + sign * half))) for sign in (-1, 1))
    assert (r.ci_low_a, r.ci_high_a) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert hi < 1 and r.method.endswith("logit t intervals of group means")
    assert r.rank_biserial == 1.0


def test_verification_01_equals_boolean():
    base = pd.DataFrame({"verification_triggered": flags(True, False, True, False),
                         "final_score": [0.9, 0.2, 0.6, 0.4]})
    r1 = ablation.verification(base)
    r2 = ablation.verification(base.assign(verification_triggered=[1, 0, 1, 0]))
    pd.testing.assert_frame_equal(r1, r2)


def test_verification_empty_group():
    df = pd.DataFrame({"verification_triggered": flags(True, True), "final_score": [0.9, 0.1]})
    with pytest.warns(StatisticsWarning, match="not testable"):
        r = ablation.verification(df).iloc[0]
    assert r.n_b == 0 and math.isnan(r.p_value) and math.isnan(r.mean_b)


def test_verification_bad_flag():
    df = pd.DataFrame({"verification_triggered": [2, 0], "final_score": [0.9, 0.1]})
    with pytest.raises(ValueError, match="values other than 0/1"):
        ablation.verification(df)


def test_replanning_groups_and_overlap():
    df = pd.DataFrame({"first_try_success": flags(True, True, False, False, False, True),
                       "replan_count": pd.array([0, 0, 1, 2, 0, 1], dtype="Int64"),
                       "final_score": [1.0, 0.9, 0.6, 0.3, 0.0, 0.8]})
    with pytest.warns(StatisticsWarning, match="1 tasks are first-try successes"):
        r = ablation.replanning(df).iloc[0]
    assert (r.n_a, r.n_b, r.n_excluded) == (3, 3, 1)
    assert r.mean_a == pytest.approx(0.9)


# quantile bins ------------------------------------------------------------------------------

def test_efficiency_quartiles_distinct_values(rng):
    x = rng.permutation(np.arange(1, 21) / 20)
    df = pd.DataFrame({"tool_efficiency": x, "final_score": x})
    out = ablation.efficiency_quartiles(df)
    assert out.quantile_bin.tolist() == ["Q1", "Q2", "Q3", "Q4"]
    assert out.n.tolist() == [5, 5, 5, 5] and (out.note == "").all()
    assert out.interval[0].startswith("[") and out.interval[1].startswith("(")
    ref = pd.qcut(df.tool_efficiency, 4, labels=False)  # pandas agrees when edges are unique
    assert df.final_score.groupby(ref).mean().tolist() == pytest.approx(out["mean"].tolist())


def test_efficiency_quartiles_missing_and_interior_ties():
    df = pd.DataFrame({"tool_efficiency": [0.1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9, np.nan],
                       "final_score": np.linspace(0, 1, 8)})
    with pytest.warns(StatisticsWarning, match="1 tasks with missing tool_efficiency"):
        out = ablation.efficiency_quartiles(df)
    # edges [0.1, 0.5, 0.5, 0.5, 0.9] -> [0.1, 0.5, 0.9]: the tied 0.5s share bin Q1–Q3
    assert out.quantile_bin.tolist() == ["Q1–Q3", "Q4"] and out.n.tolist() == [6, 1]


def test_quantile_bins_bad_q():
    with pytest.raises(ValueError, match="q must be a positive integer"):
        ablation.quantile_bins([1, 2], q=0)


# specialist value ---------------------------------------------------------------------------

def specialists_frame():
    return pd.DataFrame({
        "schema_agent_used": flags(True, True, True, True, False, False, False, False),
        "domain_agent_used": flags(True, False, True, False, True, False, None, False),
        "document_agent_used": flags(True, True, True, True, True, True, True, True),
        "final_score": [1.0, 0.9, 0.85, 0.1, 0.95, 0.2, 0.0, 0.3]})


def test_specialist_value_rows_and_edge_cases():
    with pytest.warns(StatisticsWarning, match="Document agent: no comparison group"):
        out = mas.specialist_value(specialists_frame())
    assert out.specialist.tolist() == ["schema", "domain", "document"]
    s = out.iloc[0]
    assert (s.n_used, s.n_not_used, s.accuracy_with, s.accuracy_without) == (4, 4, 0.75, 0.25)
    assert s.delta == 0.5
    # R: fisher.test(matrix(c(3, 1, 1, 3), 2)) -> p = 0.4857 (tea tasting)
    assert s.p_value == pytest.approx(0.4857142857, abs=1e-9)
    d = out.iloc[1]
    assert (d.n_used, d.n_not_used, d.n_missing) == (3, 4, 1)
    doc = out.iloc[2]
    assert doc.n_not_used == 0 and math.isnan(doc.delta) and math.isnan(doc.p_value)
    assert math.isnan(doc.ci_low) and doc.accuracy_with == pytest.approx(0.5)


def test_specialist_value_correct_column_and_missing_column():
    df = specialists_frame().assign(final_answer_correct=flags(*[True] * 4 + [False] * 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        out = mas.specialist_value(df, correct="final_answer_correct")
    assert out.delta[0] == 1.0
    with pytest.raises(ValueError, match="needs `domain_agent_used`"):
        mas.specialist_value(df.drop(columns="domain_agent_used"))


# MAS effectiveness, coordinator -------------------------------------------------------------

def test_mas_effectiveness_values():
    df = pd.DataFrame({
        "initial_answer_correct": flags(True, False, False, False, True, True, None),
        "final_answer_correct": flags(True, True, True, False, True, False, True),
        "recovered_after_replan": flags(False, True, False, False, False, False, False),
        "recovered_after_retry": flags(False, False, True, False, False, False, False)})
    with pytest.warns(StatisticsWarning, match="1 tasks with a missing correctness flag"):
        r = mas.mas_effectiveness(df).iloc[0]
    assert (r.n, r.n_missing) == (6, 1)
    assert (r.first_attempt_accuracy, r.final_accuracy) == (0.5, pytest.approx(4 / 6))
    assert r.recovery_gain == pytest.approx(1 / 6)
    assert (r.n_recovered, r.n_regressed) == (2, 1)
    assert (r.n_recovered_after_replan, r.n_recovered_after_retry) == (1, 1)
    # exact McNemar, b = 1, c = 2: 2 * P(Bin(3, .5) <= 1) = 1.0
    assert r.p_value == 1.0


def test_mas_effectiveness_optional_columns_and_no_change():
    df = pd.DataFrame({"initial_answer_correct": flags(True, False),
                       "final_answer_correct": flags(True, False)})
    with pytest.warns(StatisticsWarning, match="no discordant pairs"):
        r = mas.mas_effectiveness(df).iloc[0]
    assert r.p_value == 1.0 and r.recovery_gain == 0.0
    assert pd.isna(r.n_recovered_after_replan)
    with pytest.raises(ValueError, match="initial_answer_correct"):
        mas.mas_effectiveness(df.drop(columns="initial_answer_correct"))


def test_coordinator_effectiveness():
    df = pd.DataFrame({"replan_requested": flags(True, True, False, True, None),
                       "replan_successful": flags(True, False, True, True, False),
                       "retry_requested": flags(False, False, False, False, False),
                       "retry_successful": flags(False, False, False, False, False)})
    with pytest.warns(StatisticsWarning, match="1 tasks have replan_successful without"):
        out = mas.coordinator_effectiveness(df)
    rp, rt = out.iloc[0], out.iloc[1]
    assert (rp.requested, rp.successful, rp.n_missing) == (3, 2, 1)
    assert rp.success_rate == pytest.approx(2 / 3)
    # Wilson 95% for 2/3, closed form (= R prop.test(2, 3, correct = FALSE)$conf.int)
    assert (rp.ci_low, rp.ci_high) == (pytest.approx(0.2076596, abs=1e-6),
                                       pytest.approx(0.9385081, abs=1e-6))
    assert rt.requested == 0 and math.isnan(rt.success_rate) and rt.note == "n/a (none requested)"
