"""Phase timing, tool usage, baseline-vs-proposed helpers, task drill-down."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dabench_analysis import export, schema
from dabench_analysis.load import load_run
from dabench_analysis.tables import comparison, explore
from dabench_analysis.tables import timing as process


def _stage_frame():
    cols = {}
    for i, p in enumerate(schema.STAGES.values()):
        cols[f"{p}_time"] = [1.0 * (i + 1), 3.0 * (i + 1)]
        cols[f"{p}_calls"] = [i, i + 2]
        cols[f"{p}_tokens"] = [100, 300]
    return pd.DataFrame(cols | {"execution_time": [30.0, 60.0]})


def test_phase_timing_by_hand():
    pt = process.phase_timing(_stage_frame()).set_index("stage")
    assert pt.index.tolist() == ["UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "SUMMARIZE",
                                 "overhead", "wall_clock"]
    # stage i has times (i, 3i): mean 2i; components sum to 15 and 45; wall 30 and 60
    assert pt["mean_time_s"].tolist()[:5] == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert pt.loc["overhead", "mean_time_s"] == pytest.approx((15 + 15) / 2)
    assert pt.loc["overhead", "share_of_wall_clock"] == pytest.approx(30 / 90)
    assert pt.loc["PLAN", "mean_calls"] == 2.0
    assert np.isnan(pt.loc["overhead", "mean_calls"])


def test_tool_usage_by_hand():
    calls = pd.DataFrame({
        "task_id": ["t1", "t1", "t2", "t2", "t3"],
        "tool_name": ["sql", "sql", "sql", "py", "py"],
        "success": pd.array([True, False, True, True, pd.NA], dtype="boolean"),
        "latency_seconds": [1.0, 2.0, 6.0, 0.5, 1.5], "tokens": [10, 20, 30, 5, 5]})
    tu = process.tool_usage(calls).set_index("tool_name")
    assert tu.index.tolist() == ["sql", "py"]
    assert tu.loc["sql", "n_tasks"] == 2 and tu.loc["sql", "n_failures"] == 1
    assert tu.loc["sql", "failure_rate"] == pytest.approx(1 / 3)
    assert tu.loc["py", "failure_rate"] == 0.0  # the <NA> call is left out
    assert tu.loc["sql", "mean_latency_s"] == pytest.approx(3.0)
    assert tu.loc["sql", "median_latency_s"] == 2.0
    assert tu.loc["sql", "mean_tokens"] == 20.0


def test_task_changes_and_by_difficulty():
    base = pd.DataFrame({"task_id": list("abcdefgh"),
                         "difficulty": ["Easy"] * 4 + ["Hard"] * 4,
                         "final_score": [0.2, 0.9, 0.5, 0.5, 0.1, 0.2, 0.3, 0.4]})
    prop = base.assign(final_score=[0.9, 0.7, 0.5, 0.6, 0.5, 0.65, 0.8, 0.95])
    ch = comparison.task_changes(base, prop)
    assert ch["change"].value_counts().to_dict() == {"improved": 6, "regressed": 1,
                                                     "unchanged": 1}
    assert ch.set_index("task_id").loc["a", "flip"] == "fixed"
    assert ch.set_index("task_id").loc["b", "flip"] == "broken"
    bd = comparison.by_difficulty(base, prop)
    assert bd["difficulty"].tolist() == ["Easy", "Hard"]
    # Hard: differences 0.4, 0.45, 0.5, 0.55 (no ties), all positive, n = 4
    # -> exact two-sided p = 2 / 2^4 = 0.125 (R: wilcox.test(d) gives V = 10, p = 0.125)
    hard = bd.set_index("difficulty").loc["Hard"]
    assert hard["n_pairs"] == 4 and hard["mean_diff"] == pytest.approx(0.475)
    assert hard["p_value"] == pytest.approx(0.125)
    assert set(bd.columns) >= {"p_adjusted", "correction"}


def test_format_p():
    # schema.numbers: 3 decimals, "< 0.001" below 0.001 (the results paragraph itself is
    # tested against R values in tests/test_paragraph.py)
    assert export.format_p(0.0004) == "p < 0.001"
    assert export.format_p(0.04999) == "p = 0.050"
    assert export.format_p(0.278447) == "p = 0.278"


def test_task_detail_drill_down():
    run = load_run("data/sample_runs/baseline_react", include_text=True)
    task = explore.pick_task(run.tasks)
    d = explore.task_detail(run, task)
    assert d.metrics["final_score"] < 0.8
    assert len(d.tool_calls) == d.metrics["tool_calls"]
    assert d.steps["step_id"].is_monotonic_increasing and "thought" in d.steps
    assert d.attribution["failure_category"] == d.metrics["failure_category"]
    with pytest.raises(KeyError, match="task 'task_999' not in run"):
        explore.task_detail(run, "task_999")
