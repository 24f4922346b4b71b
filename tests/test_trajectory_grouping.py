"""The grouping under the step tables at sweep scale (issue 37 item 4): group codes, quantiles
of many groups, steps already in order, and the tables leaving a run's replay index unbuilt.
Expected values from pandas' own groupby, numpy's quantile, scipy's quantile test and hand-written orders."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

import dabench_analysis as da
from dabench_analysis import trajectory as tr
from dabench_analysis.schema._files import OPTIONAL_FILES, REPLAY_FILES
from dabench_analysis.trajectory import _step_stats, steps
from dabench_analysis.trajectory._by import resolve_by
from dabench_analysis.trajectory._inputs import group_codes

SAMPLES = ["data/sample_runs/baseline_react", "data/sample_runs/proposed_aat"]


def test_group_codes_match_pandas_ngroup():
    rng = np.random.default_rng(5)
    n = 500
    frame = pd.DataFrame({
        "run_id": pd.Categorical(rng.choice(["r2", "r1", "r3"], n),
                                 categories=["r1", "r2", "r3", "unused"]),
        "difficulty": pd.array(rng.choice(["Easy", "Hard", "all"], n), dtype="string[pyarrow]"),
        "stage": rng.choice(["PLAN", "EXECUTE", "VERIFY", "(none)"], n).astype(object),
        "k": rng.integers(0, 3, n)})
    keys = ["run_id", "difficulty", "stage", "k"]
    codes, uniques = group_codes(frame, keys)
    # pandas' own grouping: codes in order of first appearance, one row of keys per code
    want = frame.groupby(keys, sort=False, observed=True).ngroup().to_numpy()
    assert codes.tolist() == want.tolist()
    pd.testing.assert_frame_equal(uniques, frame[keys].drop_duplicates().reset_index(drop=True))


def test_group_codes_refuse_a_missing_key():
    frame = pd.DataFrame({"a": pd.array(["x", None, "y"], dtype="string"), "b": [1, 2, 3]})
    with pytest.raises(ValueError, match="'a' has missing values"):
        group_codes(frame, ["a", "b"])


def test_grouped_quantiles_of_many_groups_match_numpy():
    # 70,000 groups of 3 values (more than 16-bit codes hold), shuffled together, one NaN
    rng = np.random.default_rng(11)
    k = 70_000
    values = rng.gamma(2.0, 1.0, size=3 * k).round(2)
    groups = np.repeat(np.arange(k), 3)
    values[5] = np.nan  # group 1 keeps 2 values
    perm = rng.permutation(3 * k)
    out = _step_stats.grouped_quantiles(values[perm], groups[perm])
    x = values.reshape(k, 3)
    assert out["n"].tolist() == [3, 2] + [3] * (k - 2)
    for p in (0.5, 0.9, 0.99):
        name = f"p{p * 100:g}"
        want = np.nanquantile(x, p, axis=1)  # numpy's linear rule, R type 7
        np.testing.assert_allclose(out[name].to_numpy(), want, rtol=0, atol=1e-12)
        for g in (0, 1, 4321, k - 1):  # the order-statistic bounds: scipy's quantile_test
            ci = st.quantile_test(x[g][~np.isnan(x[g])], q=1.0, p=p).confidence_interval(0.95)
            assert out.loc[g, [f"{name}_ci_low", f"{name}_ci_high"]].tolist() == \
                pytest.approx([ci.low, ci.high], nan_ok=True)


def test_order_steps_keeps_steps_already_in_order():
    s = pd.DataFrame({"task_id": ["a", "a", "a", "b", "b", "b"],
                      "step_id": pd.array([1, 2, 2, 1, None, 3], dtype="Int64"),
                      "stage": ["P", "E", "X", "P", "?", "V"]})
    before = s.copy()
    out, notes = steps.order_steps(s)
    assert out["task_index"].tolist() == [0, 0, 1, 1]
    assert out["stage"].tolist() == ["P", "E", "P", "V"]  # the first of a repeated step_id kept
    assert out.index.tolist() == [0, 1, 2, 3]
    assert notes == ["1 step(s) without a step_id or task_id left out",
                     "1 step(s) repeating a step_id of their task left out (first kept)"]
    pd.testing.assert_frame_equal(s, before)  # the caller's frame unchanged
    clean = s.iloc[[0, 1, 3, 5]]
    out, notes = steps.order_steps(clean)
    assert out["stage"].tolist() == ["P", "E", "P", "V"] and notes == []
    out.loc[0, "stage"] = "changed"
    assert clean["stage"].tolist() == ["P", "E", "P", "V"]


def test_step_tables_leave_the_replay_index_unbuilt():
    run = da.load_run(SAMPLES[1])
    assert resolve_by(run, "stage") == "stage"
    tr.step_latency(run)
    tr.solve_curve(run)
    assert "replays" not in run.__dict__  # no replay path listed to learn the columns
    assert run.has_file("trajectory.csv") and run.has_file(REPLAY_FILES)
    assert "replays" in run.__dict__
    assert run.side_files == {f for f in OPTIONAL_FILES if run.has_file(f)} == set(OPTIONAL_FILES)
    with pytest.raises(ValueError, match="file must be one of"):
        run.has_file("task_metrics.csv")
    runs = da.load_runs(SAMPLES)
    tr.step_latency(runs)
    tr.solve_curve(runs)
    assert not any("replays" in r.__dict__ for r in runs)
    assert runs.row_trials == max(r.trials for r in runs) == 1
