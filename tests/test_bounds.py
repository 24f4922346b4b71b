"""Bounded quantities get bounded intervals (issue 13, item 3): every mean of a [0, 1] score has
an interval inside [0, 1], named in a ``method`` column; seconds and tokens keep the t-interval."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats as st

from dabench_analysis import stats, tables
from dabench_analysis.stats import mean_summary
from dabench_analysis.tables import ablation


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)  # empty groups, merged bins: not the point
        yield


def expit(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def logit_t_by_hand(x, ci=0.95):
    """expit(logit(m) -/+ t_{n-1, (1+ci)/2} * (s / sqrt(n)) / (m (1 - m))), written out."""
    x = np.asarray(x, float)
    n, m, s = x.size, x.mean(), x.std(ddof=1)
    half = st.t.ppf(0.5 + ci / 2, n - 1) * s / math.sqrt(n) / (m * (1 - m))
    centre = math.log(m / (1 - m))
    return expit(centre - half), expit(centre + half)


# the value of the interval --------------------------------------------------------------------

def test_logit_t_value_by_hand():
    x = [1.0] * 19 + [0.0]
    # m = 0.95, s = sqrt(0.05 * 0.95 * 20 / 19) = 0.2236068, se = 0.05;
    # logit(0.95) = 2.9444390; half = t(0.975, 19) * 0.05 / 0.0475 = 2.0930241 * 1.0526316
    # = 2.2031833 -> expit(0.7412557) = 0.6772704, expit(5.1476223) = 0.9942204
    # R: plogis(qlogis(.95) + c(-1, 1) * qt(.975, 19) * sd(x) / sqrt(20) / (.95 * .05))
    r = mean_summary(x, method="logit t")
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(0.6772704, abs=1e-7),
                                           pytest.approx(0.9942204, abs=1e-7))
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(logit_t_by_hand(x), abs=1e-12)
    # the t-interval it replaces: 0.95 -/+ 2.0930241 * 0.05 = [0.8453488, 1.0546512]
    t = mean_summary(x, method="t")
    assert t["ci_high"] == pytest.approx(1.0546512, abs=1e-7)
    assert r["mean"] == t["mean"] == 0.95 and r["std"] == t["std"]


def test_logit_t_matches_hand_formula_on_uneven_scores(rng):
    x = rng.beta(5, 1, size=12)
    r = stats.describe(pd.DataFrame({"final_score": x}), "final_score").iloc[0]
    assert (r.ci_low, r.ci_high) == pytest.approx(logit_t_by_hand(x), abs=1e-12)
    assert r.method == "logit t" and r["mean"] == pytest.approx(x.mean(), abs=0)


@pytest.mark.parametrize("n", [2, 3, 6, 20])
def test_all_at_a_bound_gives_the_clopper_pearson_bound(n):
    # every value 1: [(alpha/2)^(1/n), 1] = the Clopper-Pearson interval of n successes in n
    # (R: binom.test(n, n)$conf.int; scipy: beta.ppf(0.025, n, 1)); every value 0: mirrored
    lo = st.beta.ppf(0.025, n, 1)
    ones, zeros = mean_summary([1.0] * n, method="logit t"), mean_summary([0.0] * n,
                                                                        method="logit t")
    assert (ones["ci_low"], ones["ci_high"]) == (pytest.approx(lo, abs=1e-12), 1.0)
    assert (zeros["ci_low"], zeros["ci_high"]) == (0.0, pytest.approx(1 - lo, abs=1e-12))
    assert "Clopper-Pearson" in ones["method"]


def test_unbounded_quantities_keep_the_t_interval(rng):
    x = rng.gamma(2.0, 30.0, size=15)
    frame = pd.DataFrame({"execution_time": x, "total_tokens": (x * 100).round()})
    out = stats.describe(frame, ["execution_time", "total_tokens"]).set_index("metric")
    lo, hi = st.ttest_1samp(x, 0).confidence_interval(0.95)  # = R t.test(x)$conf.int
    assert (out.loc["execution_time", "ci_low"], out.loc["execution_time", "ci_high"]) == \
        (pytest.approx(lo, abs=1e-10), pytest.approx(hi, abs=1e-10))
    assert out.method.tolist() == ["t", "t"]


def test_flag_rates_get_wilson():
    frame = pd.DataFrame({"execution_success": pd.array([True, True, False, True],
                                                        dtype="boolean")})
    r = stats.describe(frame, "execution_success").iloc[0]
    # Wilson for 3 of 4 (R: prop.test(3, 4, correct = FALSE)$conf.int): 0.3006418, 0.9544127
    assert (r.ci_low, r.ci_high, r.method) == (pytest.approx(0.3006418, abs=1e-7),
                                               pytest.approx(0.9544127, abs=1e-7), "Wilson")


def test_bounded_override_and_out_of_range_fallback():
    frame = pd.DataFrame({"share": [1.0, 1.0, 0.0], "bad": [1.2, 0.5, 0.9]})
    assert stats.describe(frame, "share").method[0] == "t"  # not in the catalogue
    assert stats.describe(frame, "share", bounded=["share"]).method[0] == "logit t"
    assert stats.describe(frame.rename(columns={"share": "final_score"}), "final_score",
                          bounded=False).method[0] == "t"
    with pytest.warns(stats.StatisticsWarning, match="1 values outside"):
        out = stats.describe(frame, "bad", bounded=True)
    assert out.method[0] == "t (values outside [0, 1])"


# no interval outside [0, 1], on adversarial inputs, in every table ----------------------------

ADVERSARIAL = {
    "all ones but one zero": [1.0] * 9 + [0.0],
    "n = 2": [1.0, 0.0],
    "n = 2, both one": [1.0, 1.0],
    "n = 1": [1.0],
    "near one": [1.0] * 5 + [0.99],
}


def frame(scores) -> pd.DataFrame:
    n = len(scores)
    s = np.asarray(scores, float)
    return pd.DataFrame({
        "task_id": [f"t{i}" for i in range(n)], "difficulty": ["Hard"] * n,
        "task_type": ["join"] * n, "execution_success": pd.array([True] * n, dtype="boolean"),
        "final_score": s, "analyst_score": s, "answer_f1": s, "autonomy_score": s,
        "tool_efficiency": s, "specialist_participation": [1.0] * n,
        "execution_time": np.arange(1.0, n + 1), "total_tokens": pd.array(range(n), "Int64"),
        "verification_triggered": pd.array([i % 2 == 0 for i in range(n)], dtype="boolean"),
        "first_try_success": pd.array([i % 2 == 0 for i in range(n)], dtype="boolean"),
        "replan_count": pd.array([i % 2 for i in range(n)], dtype="Int64"),
    })


#: Interval columns that are not of a [0, 1] quantity: seconds, tokens, differences of means.
NOT_UNIT = {"mean_runtime_s_ci_low", "mean_runtime_s_ci_high", "mean_tokens_ci_low",
            "mean_tokens_ci_high"}
DIFFERENCE = {"verification", "replanning"}  # their ci_low / ci_high: a − b, in [-1, 1]


def score_tables(t: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {
        "main_results": tables.main_results(t),
        "difficulty_breakdown": tables.difficulty_breakdown(t),
        "task_type_breakdown": tables.task_type_breakdown(t),
        "specialist_participation": tables.specialist_participation(t),
        "key_numbers": pd.DataFrame([tables.key_numbers(t)]),
        "describe": stats.describe(t, ["final_score", "autonomy_score"], by="difficulty"),
        "verification": ablation.verification(t),
        "replanning": ablation.replanning(t),
        "efficiency_quartiles": ablation.efficiency_quartiles(t),
    }


def unit_interval_columns(name: str, table: pd.DataFrame) -> list[str]:
    skip = NOT_UNIT | ({"ci_low", "ci_high"} if name in DIFFERENCE else set())
    return [c for c in table.columns if ("ci_low" in c or "ci_high" in c) and c not in skip]


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_no_score_interval_leaves_zero_one(case):
    for name, table in score_tables(frame(ADVERSARIAL[case])).items():
        cols = unit_interval_columns(name, table)
        assert cols, name
        values = table[cols].to_numpy(dtype=float)
        assert not ((values < 0) | (values > 1)).any(), (name, table[cols])


def test_old_t_interval_did_leave_zero_one():
    # the same input under the t-interval: 0.9 -/+ 2.262157 * 0.1 = [0.6737843, 1.1262157]
    x = ADVERSARIAL["all ones but one zero"]
    assert mean_summary(x, method="t")["ci_high"] == pytest.approx(1.1262157, abs=1e-7)
    assert mean_summary(x, method="logit t")["ci_high"] < 1


def test_methods_are_named():
    t = frame(ADVERSARIAL["all ones but one zero"])
    assert tables.main_results(t).method.unique().tolist() == ["logit t"]
    tt = tables.task_type_breakdown(t)
    assert tt.final_score_method[0] == tt.analyst_score_method[0] == "logit t"
    d = tables.difficulty_breakdown(t).method[0]
    assert d == "answer accuracy: Wilson; final score: logit t; runtime, tokens: t"
    sp = tables.specialist_participation(t)
    assert (sp.answer_accuracy_method[0], sp.final_score_method[0]) == ("Wilson", "logit t")
    # group a (tasks 0, 2, ..., 8) scores all 1: its interval is the Clopper-Pearson bound
    assert ablation.verification(t).method[0].endswith(
        "group a: logit t; Clopper-Pearson bound (all values 1); group b: logit t")
    assert ablation.replanning(frame([1.0, 0.5, 0.0, 0.7])).method[0].endswith(
        "; logit t intervals of group means")
    assert ablation.efficiency_quartiles(t).method.iloc[0].startswith("logit t")
    assert tables.key_numbers(t)["mean_final_score_ci_method"] == "logit t"


def test_n1_gives_no_interval():
    r = stats.describe(frame([0.4]), "final_score").iloc[0]
    assert r.n == 1 and math.isnan(r.ci_low) and math.isnan(r.ci_high)


@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.floats(0, 1) | hs.sampled_from([0.0, 1.0]), min_size=1, max_size=30))
def test_logit_t_inside_zero_one_and_contains_the_mean(x):
    r = mean_summary(x, method="logit t")
    # n < 2, or a zero standard error with a mean inside (0, 1): not estimable, never
    # zero-width. R t.test's rule: stderr < 10 * .Machine$double.eps * abs(mean) is "data are
    # essentially constant" (numpy's sd also underflows to 0 for values near 1e-300)
    if len(x) < 2 or (np.std(x, ddof=1) / math.sqrt(len(x))
                      <= 10 * np.finfo(float).eps * abs(np.mean(x)) and 0 < np.mean(x) < 1):
        assert math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])
        return
    assert 0.0 <= r["ci_low"] <= r["mean"] + 1e-12 and r["mean"] - 1e-12 <= r["ci_high"] <= 1.0
