"""Failure tables and Tables 3-5 against counts worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from dabench_analysis import tables
from dabench_analysis.tables import failures


@pytest.fixture
def eight():
    return pd.DataFrame({
        "task_id": [f"t{i}" for i in range(1, 9)],
        "task_type": ["join", "join", "join", "ranking", "ranking", "agg", "agg", None],
        "final_score": [1.0, 0.0, 0.5, 0.9, 0.1, 0.79, 0.8, 0.2],
        "analyst_score": [0.8, 0.4, 0.6, 0.9, 0.3, 0.5, 0.7, 0.2],
        "autonomy_score": [1.0, 1.0, 2 / 3, 1.0, 1 / 3, 1.0, 1.0, 1.0],
        "specialist_participation": [1.0, 1 / 3, 2 / 3, 1.0, 1 / 3, 2 / 3, 1.0, 0.0],
        "failure_category": [None, "TOOL_EXECUTION_FAILURE", "REASONING_FAILURE", None,
                             "REASONING_FAILURE", "AGGREGATION_FAILURE", None, None],
        "failure_stage": [None, "EXECUTE", "PLAN", None, "PLAN", "AGGREGATE", None, None],
        "root_cause": [None, "KeyError", "filter_logic_error", None, "filter_logic_error",
                       "double_counting", None, "KeyError"],
        "outcome_error_type": [None, "execution_error", "low_recall", None, "low_recall",
                               "wrong_aggregation", None, None],
        "outcome_status": ["correct", "failed", "partial", "correct", "partial", "partial",
                           "correct", "partial"],
    })


def test_failed_tasks_use_threshold(eight):
    # final_score < 0.8: t2 (0.0), t3 (0.5), t5 (0.1), t6 (0.79), t8 (0.2); 0.8 is correct
    assert failures.failed_tasks(eight)["task_id"].tolist() == ["t2", "t3", "t5", "t6", "t8"]


def test_failure_categories_order_counts_and_missing(eight):
    cats = failures.failure_categories(eight).set_index("failure_category")
    assert cats.index[:10].tolist()[:3] == ["PLANNING_FAILURE", "DATA_UNDERSTANDING_FAILURE",
                                            "TOOL_SELECTION_FAILURE"]
    assert cats.loc["REASONING_FAILURE", "count"] == 2
    assert cats.loc["(missing)", "count"] == 1  # t8 failed without a category
    assert cats["count"].sum() == 5 and (cats["n"] == 5).all()
    assert cats.loc["REASONING_FAILURE", "share"] == pytest.approx(0.4)
    # Wilson (1927) closed form for 2 of 5, z = 1.959964: 0.1176208, 0.7692757
    assert cats.loc["REASONING_FAILURE", "ci_low"] == pytest.approx(0.1176208, abs=1e-6)
    assert cats.loc["REASONING_FAILURE", "ci_high"] == pytest.approx(0.7692757, abs=1e-6)


def test_failure_stages_and_types(eight):
    stages = failures.failure_stages(eight)
    assert stages["failure_stage"].tolist()[:5] == ["UNDERSTAND", "PLAN", "EXECUTE", "VERIFY",
                                                    "AGGREGATE"]
    assert stages["count"].tolist() == [0, 2, 1, 0, 1, 1]
    types = failures.outcome_error_types(eight)
    assert types.iloc[0][["outcome_error_type", "count"]].tolist() == ["low_recall", 2]
    status = failures.outcome_status(eight)
    assert status["count"].tolist() == [3, 4, 1]


def test_root_causes_table5(eight):
    rc = failures.root_causes(eight)
    assert rc[["root_cause", "count"]].values.tolist() == [
        ["KeyError", 2], ["filter_logic_error", 2], ["double_counting", 1]]
    assert rc.set_index("root_cause").loc["filter_logic_error", "failure_category"] == \
        "REASONING_FAILURE"
    assert len(failures.root_causes(eight, top=1)) == 1


def test_no_failed_tasks_gives_empty_shares():
    t = pd.DataFrame({"final_score": [0.9], "failure_category": [None]})
    cats = failures.failure_categories(t)
    assert cats["count"].sum() == 0 and cats["share"].isna().all()


def test_task_type_breakdown_table3(eight):
    t3 = tables.task_type_breakdown(eight).set_index("task_type")
    assert t3.index.tolist() == ["(missing)", "agg", "join", "ranking"]
    assert t3.loc["join", "n"] == 3
    assert t3.loc["join", "final_score_mean"] == pytest.approx(0.5)
    assert t3.loc["join", "final_score_std"] == pytest.approx(0.5)  # sd of 1, 0, 0.5
    assert t3.loc["agg", "analyst_score_mean"] == pytest.approx(0.6)


def test_specialist_participation_table4(eight):
    t4 = tables.specialist_participation(eight)
    assert t4["specialists_used"].tolist() == ["0 of 3", "1 of 3", "2 of 3", "3 of 3"]
    assert t4["n"].tolist() == [1, 2, 2, 3]
    assert t4["answer_accuracy"].tolist() == pytest.approx([0.0, 0.0, 0.0, 1.0])
    assert t4["final_score_mean"].iloc[3] == pytest.approx((1.0 + 0.9 + 0.8) / 3)
