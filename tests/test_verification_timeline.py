"""tables.verification.verification_timeline: coordinator approval × correctness (issue 12).

Counts are hand-counted on the 10-task frame below; Wilson bounds come from R 4.2.2,
``prop.test(x, n, correct = FALSE)$conf.int`` (Wilson without continuity correction).
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dabench_analysis import tables
from dabench_analysis.stats._inputs import StatisticsWarning
from dabench_analysis.tables.verification import verification_timeline

#   task  approved  final_score  correct (>= 0.8)
#   t1    1         0.90         yes     a
#   t2    1         1.00         yes     a
#   t3    1         0.80         yes     a   (the threshold itself counts as correct)
#   t4    1         0.79         no      b
#   t5    1         0.50         no      b
#   t6    0         0.85         yes     c
#   t7    0         0.20         no      d
#   t8    0         0.00         no      d
#   t9    0         0.60         no      d
#   t10   1         0.95         yes     a
# a = 4, b = 2, c = 1, d = 3, N = 10
FLAGS = [1, 1, 1, 1, 1, 0, 0, 0, 0, 1]
SCORES = [0.9, 1.0, 0.8, 0.79, 0.5, 0.85, 0.2, 0.0, 0.6, 0.95]


def _tasks(**extra) -> pd.DataFrame:
    decision = ["APPROVE_FINAL" if f else ("REPLAN" if i % 2 else "RETRY_EXECUTION")
                for i, f in enumerate(FLAGS)]
    return pd.DataFrame({"task_id": [f"t{i + 1}" for i in range(10)],
                         "aat_verification_passed": pd.array(FLAGS, dtype="boolean"),
                         "coordinator_final_decision": decision, "final_score": SCORES,
                         **extra})


EXPECTED = {  # measure: (count, n, R prop.test(count, n, correct=FALSE)$conf.int)
    "approved_correct": (4, 10, (0.168180, 0.687326)),
    "approved_incorrect": (2, 10, (0.056682, 0.509838)),
    "not_approved_correct": (1, 10, (0.017876, 0.404150)),
    "not_approved_incorrect": (3, 10, (0.107791, 0.603222)),
    "approval_rate": (6, 10, (0.312674, 0.831820)),
    "accuracy": (5, 10, (0.236593, 0.763407)),
    "correct_among_approved": (4, 6, (0.299993, 0.903229)),
    "approved_among_correct": (4, 5, (0.375535, 0.963776)),
    "correct_among_not_approved": (1, 4, (0.045587, 0.699358)),
    "approved_among_incorrect": (2, 5, (0.117621, 0.769276)),
    "agreement": (7, 10, (0.396778, 0.892209)),
}


def test_counts_rates_and_wilson_bounds():
    out = verification_timeline(_tasks())
    assert list(out.columns) == ["measure", "kind", "approved", "correct", "count", "n",
                                 "proportion", "ci_low", "ci_high", "method", "note"]
    assert out["measure"].tolist() == list(EXPECTED)
    assert out["kind"].tolist() == ["cell"] * 4 + ["rate"] * 7
    assert (str(out["count"].dtype), str(out["n"].dtype)) == ("Int64", "Int64")
    assert out["approved"].tolist()[:4] == [True, True, False, False]
    assert out["correct"].tolist()[:4] == [True, False, True, False]
    assert out["approved"][4:].isna().all() and out["correct"][4:].isna().all()
    for row in out.itertuples():
        count, n, (lo, hi) = EXPECTED[row.measure]
        assert (row.count, row.n) == (count, n), row.measure
        assert row.proportion == pytest.approx(count / n, abs=1e-12)
        # R: prop.test(count, n, correct = FALSE)$conf.int, printed to 6 decimals
        assert (row.ci_low, row.ci_high) == (pytest.approx(lo, abs=1e-6),
                                              pytest.approx(hi, abs=1e-6)), row.measure
    assert set(out["method"]) == {"wilson"} and set(out["note"]) == {""}


def test_threshold_keyword_changes_correctness():
    out = verification_timeline(_tasks(), threshold=0.5).set_index("measure")
    # >= 0.5: t1-t6, t10 correct; t4, t5 move from b to a: a = 6, b = 0, c = 1, d = 3
    assert out.loc["approved_correct", "count"] == 6
    assert out.loc["approved_incorrect", "count"] == 0
    assert out.loc["correct_among_approved", ["count", "n"]].tolist() == [6, 6]
    # R: prop.test(6, 6, correct = FALSE)$conf.int -> 0.6096657 1.0000000
    assert out.loc["correct_among_approved", "ci_low"] == pytest.approx(0.6096657, abs=1e-7)
    assert out.loc["correct_among_approved", "ci_high"] == 1.0


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, float("nan"), float("inf"), True, "0.8"])
def test_threshold_outside_0_1_is_refused(threshold):
    with pytest.raises(ValueError, match=r"threshold must be (a number )?in \(0, 1\] on the final_score scale"):
        verification_timeline(_tasks(), threshold=threshold)


def test_threshold_1_is_allowed():
    out = verification_timeline(_tasks(), threshold=1).set_index("measure")
    assert out.loc["accuracy", "count"] == 1  # only t2 has final_score 1.0


def test_decision_alone_gives_the_same_table():
    full = verification_timeline(_tasks())
    only = verification_timeline(_tasks().drop(columns="aat_verification_passed"))
    flag = verification_timeline(_tasks().drop(columns="coordinator_final_decision"))
    pd.testing.assert_frame_equal(only, full)
    pd.testing.assert_frame_equal(flag, full)


def test_missing_and_mismatched_tasks_are_left_out_with_a_warning():
    df = _tasks()
    df.loc[0, "coordinator_final_decision"] = "REPLAN"  # t1: flag 1, decision not approval
    df.loc[6, "final_score"] = float("nan")  # t7: no score
    with pytest.warns(StatisticsWarning, match=r"1 task\(s\) left out: aat_verification_passed "
                      r"disagrees.*1 task\(s\) left out: final_score or approval missing"):
        out = verification_timeline(df).set_index("measure")
    # t1 (a) and t7 (d) dropped: a = 3, b = 2, c = 1, d = 2, N = 8
    assert out.loc[["approved_correct", "approved_incorrect", "not_approved_correct",
                    "not_approved_incorrect"], "count"].tolist() == [3, 2, 1, 2]
    assert set(out["n"][:4]) == {8}


def test_empty_margin_is_undefined_not_an_error():
    df = _tasks(aat_verification_passed=pd.array([True] * 10, dtype="boolean"))
    df = df.drop(columns="coordinator_final_decision")
    with pytest.warns(StatisticsWarning, match="correct_among_not_approved"):
        out = verification_timeline(df).set_index("measure")
    row = out.loc["correct_among_not_approved"]
    assert row["n"] == 0 and pd.isna(row["proportion"]) and pd.isna(row["ci_low"])
    assert row["note"] == "undefined: n = 0"
    assert out.loc["approved_among_incorrect", ["count", "n"]].tolist() == [5, 5]
    # R: prop.test(0, 10, correct = FALSE)$conf.int -> 0.0000000 0.2775328
    assert out.loc["not_approved_incorrect", ["count", "n"]].tolist() == [0, 10]
    assert out.loc["not_approved_incorrect", "ci_low"] == 0.0
    assert out.loc["not_approved_incorrect", "ci_high"] == pytest.approx(0.2775328, abs=1e-7)


def test_clean_input_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        verification_timeline(_tasks())


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="one of: aat_verification_passed, coordinator_final_decision"):
        verification_timeline(pd.DataFrame({"final_score": [0.9]}))
    with pytest.raises(ValueError, match="final_score"):
        verification_timeline(_tasks().drop(columns="final_score"))
    with pytest.raises(ValueError, match="no task rows"):
        verification_timeline(_tasks().iloc[:0])
    with pytest.raises(ValueError, match="ci"):
        verification_timeline(_tasks(), ci=95)


def test_exported_from_tables():
    assert "verification" in tables.__all__
    assert tables.verification.verification_timeline is verification_timeline
