"""The one binning rule (issue 13, item 1): values on an edge go to the bin the label says, for
calibration bins, the five confidence buckets, histograms, the reliability diagram and quantile
bins."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import figures
from dabench_analysis.stats import calibration as cal
from dabench_analysis.stats.binning import bin_index, edge_label, equal_edges
from dabench_analysis.tables import ablation


@pytest.fixture(autouse=True)
def runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def decimal_edge(k: int, n: int) -> float:
    """Edge k of n equal-width bins on [0, 1], built from the decimal k/n (not from a float)."""
    return float(Decimal(k) / Decimal(n))


def labelled_bin(k: int, n: int, right: bool) -> int:
    """The bin whose label puts edge k inside it: [k/n, ...) starts at it, (..., k/n] ends at it;
    the closed outer bins take 0 and 1."""
    return max(k - 1, 0) if right else min(k, n - 1)


CASES = [(n, right) for n in (5, 10, 15, 20) for right in (False, True)]


@pytest.mark.parametrize("n,right", CASES)
def test_every_edge_lands_in_the_labelled_bin(n, right):
    edges = [decimal_edge(k, n) for k in range(n + 1)]
    got = bin_index(edges, n, right=right)
    assert got.tolist() == [labelled_bin(k, n, right) for k in range(n + 1)]


@pytest.mark.parametrize("n,right", CASES)
def test_calibration_table_puts_each_edge_in_its_labelled_row(n, right):
    for k in range(n + 1):
        t = cal.calibration_table(confidence=[decimal_edge(k, n)], correct=[1], n_bins=n,
                                  right=right)
        row = t.loc[t.n == 1].iloc[0]
        assert row.name == labelled_bin(k, n, right)
        # the label names the edge exactly ("[0.70, 0.80)", "(7/15, 8/15]"): the bin starts at
        # it ([lo, hi)) or ends at it ((lo, hi]), except at the closed outer ends
        label, text = str(row.bucket), edge_label(k, n)
        starts = (not right and k < n) or (right and k == 0)
        assert label.startswith(f"[{text},") if starts else label.endswith(f", {text}]")
        assert row.lower <= decimal_edge(k, n) <= row.upper


@pytest.mark.parametrize("n", [5, 10, 15, 20])
def test_equal_edges_are_the_decimal_edges(n):
    # np.linspace(0, 1, 11)[3] is 0.30000000000000004; these are the correctly rounded k/n
    assert equal_edges(n).tolist() == [decimal_edge(k, n) for k in range(n + 1)]


def test_values_between_edges_match_exact_rational_arithmetic(rng):
    # the decimal a double prints as, binned with exact fractions, as the reference
    xs = np.concatenate([rng.uniform(size=500), np.round(rng.uniform(size=500), 3),
                         np.arange(1001) / 1000])
    for n in (3, 7, 10, 15, 20):
        for right in (False, True):
            want = []
            for x in xs:
                f = Fraction(repr(float(x))) * n
                want.append(max(math.ceil(f) - 1, 0) if right else min(math.floor(f), n - 1))
            assert bin_index(xs, n, right=right).tolist() == want


def test_nan_and_outside_are_minus_one_and_neighbours_of_an_edge_stay_out():
    assert bin_index([np.nan, -0.01, 1.01, np.inf, -np.inf], 10).tolist() == [-1] * 5
    assert bin_index([np.nan, np.inf, 4.5], [0.0, 1.75, 4.0]).tolist() == [-1] * 3
    # the float images of 0.7 as linspace and 0.1 * 7 compute it are on the edge
    assert bin_index([0.1 * 7, np.linspace(0, 1, 11)[7]], 10).tolist() == [7, 7]
    # a genuine value below the edge stays below it
    assert bin_index([0.6999999], 10).tolist() == [6]


def test_bad_bins_raise():
    for bad in (0, -1, 2.5, True, [0.5], [0.0, 0.0, 1.0], [1.0, 0.0]):
        with pytest.raises(ValueError, match="bins must be"):
            bin_index([0.5], bad)


# the five confidence buckets ----------------------------------------------------------------

@pytest.mark.parametrize("k,bucket", list(enumerate(cal.BUCKETS)) + [(5, "very_high")])
def test_assign_bucket_on_each_decimal_edge(k, bucket):
    assert cal.assign_bucket(decimal_edge(k, 5)) == bucket


# ECE: the float bug changed it --------------------------------------------------------------

def test_ece_with_confidences_on_edges():
    conf, correct = [0.7, 0.7, 0.65, 0.3], [1, 1, 0, 0]
    # ECE = sum_b (n_b / N) |acc_b - conf_b| (Naeini et al. 2015; Guo et al. 2017), 10 bins
    # [lo, hi): [0.70, 0.80) = {0.7, 0.7}: acc 1, conf 0.7  -> 2/4 * 0.30 = 0.15
    #           [0.60, 0.70) = {0.65}:     acc 0, conf 0.65 -> 1/4 * 0.65 = 0.1625
    #           [0.30, 0.40) = {0.3}:      acc 0, conf 0.3  -> 1/4 * 0.30 = 0.075
    # ECE = 0.3875. With linspace edges 0.7 fell into [0.60, 0.70) with 0.65 (acc 2/3, conf
    # 0.68333: 3/4 * 0.016667 = 0.0125) and 0.3 into [0.20, 0.30) (0.075): ECE 0.0875.
    ece = cal.expected_calibration_error(confidence=conf, correct=correct, n_bins=10).estimate
    assert ece == pytest.approx(0.3875, abs=1e-12)
    # MCE = max_b |acc_b - conf_b| = 0.65
    assert cal.max_calibration_error(confidence=conf, correct=correct, n_bins=10).estimate == \
        pytest.approx(0.65, abs=1e-12)
    t = cal.calibration_table(confidence=conf, correct=correct, n_bins=10)
    assert t.set_index("bucket").n[["[0.30, 0.40)", "[0.60, 0.70)", "[0.70, 0.80)"]].tolist() \
        == [1, 1, 2]
    # (lo, hi]: (0.60, 0.70] = {0.65, 0.7, 0.7}, acc 2/3, conf 0.683333 -> 0.0125;
    # (0.20, 0.30] = {0.3} -> 0.075; ECE = 0.0875
    assert cal.expected_calibration_error(confidence=conf, correct=correct, n_bins=10,
                                          right=True).estimate == pytest.approx(0.0875, abs=1e-12)


# histograms and the reliability diagram -----------------------------------------------------

def test_histogram_edge_values_in_the_bin_that_starts_there():
    # seven fifteenths on 1/15-wide bins: edges k/15 are not decimals; 7/15 starts bin 7
    ax = figures.score_distribution(pd.DataFrame({"final_score": [7 / 15] * 3}),
                                     binwidth=1 / 15, threshold=None)
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert len(bars) == 1 and bars[0].get_height() == 3
    assert bars[0].get_x() == pytest.approx(7 / 15, abs=1e-12)


def test_histogram_p08_constant_scores_single_bar():
    # pitfalls P08: [0.5] * 4 with binwidth 0.05 -> one bar of height 4 at [0.5, 0.55)
    ax = figures.score_distribution(pd.DataFrame({"final_score": [0.5] * 4}), binwidth=0.05)
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert [(b.get_x(), b.get_height()) for b in bars] == [(pytest.approx(0.5), 4)]


def test_score_bins_are_exact_decimals():
    assert figures.score_bins(0.05).tolist()[3] == 0.15  # not 0.15000000000000002
    assert figures.score_bins(0.1).tolist() == [decimal_edge(k, 10) for k in range(11)]


def test_reliability_diagram_counts_edges_like_the_table():
    df = pd.DataFrame({"confidence_score": [0.7, 0.7, 0.65, 0.3],
                       "final_score": [1.0, 1.0, 0.0, 0.0]})
    ax = figures.reliability_diagram(df, n_bins=10)
    labels = [t.get_text() for t in ax.texts]
    assert labels.count("n=2") == 1 and labels.count("n=1") == 2
    assert "ECE = 0.388" in ax.get_title()  # 0.3875, as above


# quantile bins (pitfall P05) ----------------------------------------------------------------

def test_quantile_edge_an_ulp_off_a_tied_value():
    # quintiles of [0.2, 0.2, 0.2, 0.2, 0.3, 0.45]: positions (n - 1) k/5 = k, so the edges are
    # the data values 0.2, 0.2, 0.2, 0.2, 0.3, 0.45 (R: quantile(x, seq(0, 1, 0.2)), type 7);
    # they reduce to [0.2, 0.3, 0.45]: bins of 5 and 1 rows. np.quantile with linspace levels
    # returned 0.20000000000000007 for the 0.6 level, which made a third bin (4, 1, 1).
    x = [0.2, 0.2, 0.2, 0.2, 0.3, 0.45]
    with pytest.warns(UserWarning, match="only 2 distinct quantile bins"):
        bins = ablation.quantile_bins(x, q=5)
    assert bins.value_counts(sort=False).to_dict() == {"Q1–Q4": 5, "Q5": 1}


def test_quantile_bins_p05_unchanged():
    # pitfalls P05: [0,0,0,0,0,0,1,2,3,4] -> edges [0, 1.75, 4], bins of 7 and 3
    with pytest.warns(UserWarning, match="only 2 distinct"):
        out = ablation.quantile_bins([0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
    assert out.value_counts(sort=False).to_dict() == {"Q1–Q3": 7, "Q4": 3}
    assert bin_index([1.75, 1.75000000000001], [0.0, 1.75, 4.0], right=True).tolist() == [0, 1]
