"""dabench_analysis.stats.calibration: buckets, reliability table, ECE/MCE/Brier, edge cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dabench_analysis.stats import StatisticsWarning
from dabench_analysis.stats import calibration as cal


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


@pytest.mark.parametrize("conf,bucket", [
    (0.0, "very_low"), (0.19999, "very_low"), (0.2, "low"), (0.4, "medium"),
    (0.1 + 0.2 + 0.1, "medium"), (0.6, "high"), (0.79, "high"), (0.8, "very_high"),
    (1.0, "very_high"), (None, None), (float("nan"), None)])
def test_assign_bucket_edges(conf, bucket):
    # seed 000 §10: very_low (0-0.2) ... very_high (0.8-1.0); we use [lo, hi), last closed
    assert cal.assign_bucket(conf) == bucket


def test_assign_bucket_series_keeps_index_and_order():
    s = pd.Series([0.9, np.nan, 0.1], index=["a", "b", "c"])
    out = cal.assign_bucket(s)
    assert out.index.tolist() == ["a", "b", "c"]
    assert list(out.cat.categories) == list(cal.BUCKETS) and out.cat.ordered
    assert out.isna().tolist() == [False, True, False]


def test_assign_bucket_out_of_range():
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\]; 1 values outside"):
        cal.assign_bucket([0.5, 1.2])
    assert cal.assign_bucket(1.0 + 1e-12) == "very_high"  # float noise tolerated


def tasks():
    return pd.DataFrame({
        "confidence_score": [0.95, 0.9, 0.85, 0.7, 0.65, 0.3, 0.1, np.nan],
        "final_score": [1.0, 0.9, 0.3, 0.8, 0.1, 0.0, 0.0, 1.0]})


def test_calibration_table_values_and_empty_bucket():
    t = cal.calibration_table(tasks().iloc[:7])
    assert t.bucket.tolist() == list(cal.BUCKETS)
    assert t.n.tolist() == [1, 1, 0, 2, 3]
    assert t.n_correct.tolist() == [0, 0, 0, 1, 2]
    assert math.isnan(t.accuracy[2]) and math.isnan(t.ci_low[2]) and math.isnan(t.gap[2])
    vh = t.iloc[4]
    assert vh.mean_confidence == pytest.approx(0.9) and vh.accuracy == pytest.approx(2 / 3)
    assert vh.gap == pytest.approx(0.9 - 2 / 3)  # positive = overconfident
    # Wilson (1927) by hand, p = 2/3, n = 3, z = 1.959964: (p + z²/2n ± z·sqrt(p(1 − p)/n +
    # z²/4n²)) / (1 + z²/n); R: prop.test(2, 3, correct = FALSE)$conf.int -> 0.2076596008
    # 0.9385080553
    z, p, n = 1.959963984540054, 2 / 3, 3
    centre, half = p + z**2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert vh.ci_low == pytest.approx((centre - half) / (1 + z**2 / n), abs=1e-12)
    assert vh.ci_high == pytest.approx((centre + half) / (1 + z**2 / n), abs=1e-12)
    assert (vh.ci_low, vh.ci_high) == pytest.approx((0.2076596008, 0.9385080553), abs=1e-9)
    # the one-task buckets, 0 of 1 correct: Wilson (0, z²/(1 + z²)) = (0, 0.7934506)
    assert t.ci_low[0] == 0 and t.ci_high[0] == pytest.approx(z**2 / (1 + z**2), abs=1e-12)


def test_calibration_table_drops_missing_with_warning():
    with pytest.warns(StatisticsWarning, match="1 tasks dropped"):
        t = cal.calibration_table(tasks())
    assert t.n.sum() == 7


def test_correct_column_boolean_or_01_or_threshold():
    df = tasks().iloc[:7].assign(
        final_answer_correct=pd.array([True, True, False, True, False, False, False],
                                      dtype="boolean"))
    t1 = cal.calibration_table(df, correct="final_answer_correct")
    t2 = cal.calibration_table(df.assign(final_answer_correct=[1, 1, 0, 1, 0, 0, 0]),
                               correct="final_answer_correct")
    t3 = cal.calibration_table(df)  # final_score >= 0.8
    # the three spellings of the same outcome give the hand-counted table: correct per bucket
    # very_low 0 of 1, low 0 of 1, medium none, high 1 of 2, very_high 2 of 3
    for t in (t1, t2, t3):
        assert t.n.tolist() == [1, 1, 0, 2, 3] and t.n_correct.tolist() == [0, 0, 0, 1, 2]
        assert t.accuracy.tolist() == pytest.approx([0, 0, np.nan, 1 / 2, 2 / 3], nan_ok=True)
    pd.testing.assert_frame_equal(t1, t2)
    pd.testing.assert_frame_equal(t1, t3)
    t4 = cal.calibration_table(df, threshold=0.25)
    assert t4.n_correct.tolist() == [0, 0, 0, 1, 3]  # 1.0, 0.9, 0.3 (very_high), 0.8 (high)


def test_ece_mce_brier_by_hand():
    df = tasks().iloc[:7]
    # ECE = Σ_b (n_b/N)|acc_b − conf_b| (Naeini, Cooper & Hauskrecht 2015, AAAI), by hand over
    # the buckets very_low (conf 0.1, acc 0), low (0.3, 0), high (0.675, 1/2), very_high
    # (0.9, 2/3): (0.1 + 0.3 + 2·0.175 + 3·0.2333...) / 7 = 1.45 / 7
    ece = (1 * 0.1 + 1 * 0.3 + 2 * 0.175 + 3 * (0.9 - 2 / 3)) / 7
    assert ece == pytest.approx(1.45 / 7, abs=1e-12)
    assert cal.expected_calibration_error(df).estimate == pytest.approx(ece, abs=1e-12)
    # MCE = max_b |acc_b − conf_b| (Naeini et al. 2015, eq. 2) = low's 0.3
    assert cal.max_calibration_error(df).estimate == pytest.approx(0.3, abs=1e-12)
    # Brier (1950) = mean((conf − y)²), y = final_score >= 0.8 = 1, 1, 0, 1, 0, 0, 0:
    # (0.05² + 0.1² + 0.85² + 0.3² + 0.65² + 0.3² + 0.1²) / 7 = 1.3475 / 7 = 0.1925
    # R: mean((c(.95, .9, .85, .7, .65, .3, .1) - c(1, 1, 0, 1, 0, 0, 0))^2) -> 0.1925
    assert cal.brier_score(df).estimate == pytest.approx(0.1925, abs=1e-12)
    assert cal.brier_score(df, scale_by_half=False).estimate == pytest.approx(2 * 0.1925, abs=1e-12)
    s = cal.calibration_summary(df).iloc[0]
    assert (s.n, s.n_dropped, s.ece, s.n_bins) == (7, 0, pytest.approx(1.45 / 7), 5)
    assert (s.mce, s.brier) == (pytest.approx(0.3), pytest.approx(0.1925))
    assert (s.accuracy, s.mean_confidence) == (pytest.approx(3 / 7), pytest.approx(4.45 / 7))


def test_perfectly_calibrated_is_zero():
    conf = [0.1] * 10 + [0.9] * 10
    correct = [1] + [0] * 9 + [1] * 9 + [0]
    assert cal.expected_calibration_error(confidence=conf, correct=correct).estimate == pytest.approx(0)


def test_equal_width_bins_and_edge_convention():
    t = cal.calibration_table(confidence=[0.0, 0.1, 0.25, 1.0], correct=[0, 0, 1, 1], n_bins=4)
    assert t.bucket.tolist() == ["[0.00, 0.25)", "[0.25, 0.50)", "[0.50, 0.75)",
                                 "[0.75, 1.00]"]
    assert t.n.tolist() == [2, 1, 0, 1]
    t = cal.calibration_table(confidence=[0.0, 0.1, 0.25, 1.0], correct=[0, 0, 1, 1], n_bins=4,
                              right=True)
    assert t.n.tolist() == [3, 0, 0, 1]


@pytest.mark.parametrize("n", [0, 1, 2])
def test_small_n(n):
    conf, correct = [0.9, 0.2][:n], [1, 0][:n]
    if n == 0:
        with pytest.warns(StatisticsWarning, match="undefined"):
            assert math.isnan(cal.expected_calibration_error(confidence=conf, correct=correct).estimate)
        with pytest.warns(StatisticsWarning):
            assert math.isnan(cal.brier_score(confidence=conf, correct=correct).estimate)
    else:
        # Brier (1950) by hand: n = 1: (0.9 − 1)² = 0.01; n = 2: (0.01 + 0.2²) / 2 = 0.025
        assert cal.brier_score(confidence=conf, correct=correct).estimate == pytest.approx(
            {1: 0.01, 2: 0.025}[n], abs=1e-12)
    assert cal.calibration_table(confidence=conf, correct=correct).n.sum() == n


def test_bad_inputs():
    with pytest.raises(ValueError, match="column 'confidence' not in tasks"):
        cal.calibration_table(tasks(), confidence="confidence")
    with pytest.raises(ValueError, match="differ in length"):
        cal.brier_score(confidence=[0.1, 0.2], correct=[1])
    with pytest.raises(ValueError, match="no tasks frame"):
        cal.brier_score(confidence="confidence_score", correct=[1])
    with pytest.raises(ValueError, match="n_bins"):
        cal.calibration_table(tasks().iloc[:7], n_bins=0)
