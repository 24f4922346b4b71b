"""Trajectory tables on a real run with repeated trials (tau-bench, gpt-4o airline: 50 tasks x
4 trials; the trimmed copy keeps the messages of 4 trials of 3 tasks): each (task, trial) is its
own trace, the intervals resample tasks (all trials of a drawn task together), a note says so,
and the report's trajectory sections run. Expected values are counted here from the JSON.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis import trajectory as tr
from dabench_analysis.schema.needs import skips

TAU = Path(__file__).parent / "data" / "harness" / "tau-bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads(TAU.read_text())


@pytest.fixture(scope="module")
def run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return da.load_run(TAU)


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _errors(record: dict) -> list[tuple[str, bool]]:
    """A trace's failed tool calls (the environment answers ``Error: ...``), each with whether
    a later call of the same tool succeeded."""
    tools = [(m["name"], str(m["content"]).startswith("Error"))
             for m in record["traj"] if m.get("role") == "tool"]
    return [(name, any(n == name and not bad for n, bad in tools[i + 1:]))
            for i, (name, failed) in enumerate(tools) if failed]


def test_each_trial_is_its_own_trace(raw, run):
    traced = [r for r in raw if r.get("traj")]
    lt = _quiet(tr.loop_tasks, run)
    got = {(int(t), int(k)): int(n) for t, k, n in
           lt.loc[lt["n_steps"] > 0, ["task_id", "trial", "n_steps"]].itertuples(index=False)}
    assert got == {(r["task_id"], r["trial"]): len(r["traj"]) for r in traced}
    # every tool error once (a call and its result step are one error), by tool
    errors = [(e, f"{r['task_id']}/{r['trial']}") for r in traced for e in _errors(r)]
    rec = _quiet(tr.recovery, run)
    every = rec[rec["level"] == "all"].iloc[0]
    assert (every["n_errors"], every["n_recovered"], every["n_tasks"]) == (
        len(errors), sum(ok for (_, ok), _ in errors), len({t for _, t in errors}))
    by_tool = rec[rec["level"] == "tool"].set_index("group")
    for tool, n in Counter(name for (name, _), _ in errors).items():
        traces = {t for (name, _), t in errors if name == tool}
        assert (by_tool.loc[tool, "n_errors"], by_tool.loc[tool, "n_tasks"]) == (n, len(traces))
    assert by_tool.loc["book_reservation", "n_tasks"] == 2  # two trials of task 0, not one


def test_intervals_resample_tasks_with_all_their_trials(raw, run):
    traced = [r for r in raw if r.get("traj")]
    loops = _quiet(tr.loops, run).iloc[0]
    tasks = sorted({r["task_id"] for r in traced},
                   key=[r["task_id"] for r in raw].index)  # order of the task file
    assert loops["note"] == (f"each trial its own trace; intervals clustered by task "
                             f"({len(tasks)} tasks, {len(traced)} traces); p-values treat the "
                             "traces as independent")
    assert "percentile bootstrap over tasks (2000 draws, seed 0)" in loops["method"]
    # no trace repeats an action: every trace is "no loop"; accuracy over traces
    num = np.array([sum(r["reward"] >= 0.8 for r in traced if r["task_id"] == t)
                    for t in tasks], dtype=float)
    den = np.array([sum(r["task_id"] == t for r in traced) for t in tasks], dtype=float)
    assert loops["accuracy_no_loop"] == pytest.approx(num.sum() / den.sum())
    draw = np.random.default_rng(0).integers(0, len(tasks), size=(2000, len(tasks)))
    lo, hi = np.quantile(num[draw].sum(axis=1) / den[draw].sum(axis=1), [0.025, 0.975])
    assert (loops["accuracy_no_loop_ci_low"], loops["accuracy_no_loop_ci_high"]) == (
        pytest.approx(lo), pytest.approx(hi))
    # the trials of task 0 move together: not the interval of 4 independent traces
    naive = np.random.default_rng(0).integers(0, len(traced), size=(2000, len(traced)))
    flags = np.array([r["reward"] >= 0.8 for r in traced], dtype=float)
    assert (lo, hi) != tuple(np.quantile(flags[naive].mean(axis=1), [0.025, 0.975]))


def test_first_failures_keep_steps_without_a_stage(raw, run):
    ff = _quiet(tr.first_failures, run)
    counts = tr.first_failure_counts(ff).set_index("stage")
    failed = [r for r in raw if r["reward"] < 0.8]
    with_error = [r for r in failed if r.get("traj") and _errors(r)]
    assert counts.loc["(no stage)", "n"] == len(with_error) == 3
    assert counts.loc["(no steps recorded)", "n"] == sum(not r.get("traj") for r in failed)
    assert counts["n"].sum() == len(failed)  # no failed trace dropped
    assert set(ff.loc[ff["stage"] == "(no stage)", "error_message"].str[:6]) == {"Error:"}


def test_report_sections_run_on_repeated_trials(run):
    for table in (tr.loops, tr.recovery, tr.first_failures, tr.solve_curve, tr.tool_fit):
        assert skips(table, run) == [], table.__name__  # in a report: not skipped
    curve = _quiet(tr.solve_curve, run)
    fit = _quiet(tr.tool_fit, run)
    assert curve["note"].iloc[0].startswith("each trial its own trace; intervals clustered")
    assert fit["note"].iloc[0].startswith("each trial its own trace; intervals clustered")


def test_call_ids_reused_within_a_trace_are_one_finding_naming_every_row(raw, run):
    """gpt-4o reuses tool-call ids within a trial: the rows differ, all are kept, and the file
    gets one finding (not one per id) that still lists every row."""
    calls = [(r["task_id"], r["trial"], c["id"]) for r in raw for m in r.get("traj") or []
             if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    seen = Counter(calls)
    reused = {k for k, n in seen.items() if n > 1}
    rows = tuple(i + 1 for i, k in enumerate(calls) if k in reused)
    (f,) = [f for f in run.findings if f.check == "duplicate_key"]
    assert f.rows == rows and f.column == "call_id" and f.severity == "warning"
    assert f.message.startswith(f"{len(reused)} call_id value(s) reused within a trace "
                                "(task_id, trial) by rows that differ: rows kept, told apart "
                                f"by position ({len(rows)} rows: ")
    assert len(run.tool_calls) == len(calls)  # every call kept


def test_cluster_bootstrap_ratio_draws_clusters_and_bounds_an_all_zero_share():
    from scipy.stats import norm

    from dabench_analysis.stats._clustered import cluster_bootstrap_ratio

    # 3 tasks (labels 7, 2, 5: drawn in label order 2, 5, 7), 6 traces
    num, clusters = np.array([1, 0, 1, 1, 0, 0.]), np.array([7, 7, 2, 5, 5, 5])
    r = cluster_bootstrap_ratio(num, np.ones(6), np.zeros(6, int), clusters, n_boot=500,
                                seed=3).iloc[0]
    per_k, per_n = np.array([1, 1, 1.]), np.array([1, 3, 2.])  # tasks 2, 5, 7
    draw = np.random.default_rng(3).integers(0, 3, size=(500, 3))
    lo, hi = np.quantile(per_k[draw].sum(1) / per_n[draw].sum(1), [0.025, 0.975])
    assert (r["share"], r["ci_low"], r["ci_high"], r["n_clusters"]) == (
        pytest.approx(0.5), pytest.approx(lo), pytest.approx(hi), 3)
    # every trace 0: Wilson's upper bound of 0 of 3 tasks, z^2 / (3 + z^2)
    z = norm.ppf(0.975)
    zero = cluster_bootstrap_ratio(np.zeros(6), np.ones(6), np.zeros(6, int), clusters).iloc[0]
    assert (zero["ci_low"], zero["ci_high"]) == (0.0, pytest.approx(z**2 / (3 + z**2)))


def test_a_failing_step_without_tool_or_stage_is_an_error():
    from dabench_analysis.trajectory.step_events import error_recovery

    steps = pd.DataFrame({"task_index": [0, 0, 0, 1], "step_id": [1, 2, 3, 1],
                          "tool": [None] * 4, "stage": [None, None, None, "E"],
                          "success": [False, True, False, False]})
    got = error_recovery(steps)  # step 1 recovered by step 2 (no stage either); 3 is not
    assert got[["task_index", "step_id", "recovered"]].values.tolist() == [
        [0, 1, True], [0, 3, False], [1, 1, False]]
    assert got["stage"].isna().tolist() == [True, True, False]
