"""Trajectory tables and sections on runs of other harnesses (tau-bench results written here by
hand): the steps they record are read from memory, each trial is its own trajectory (a note
in the table; intervals clustered by task), and what they lack (stages) skips a section or leaves a noted row, never
a crash. Expected values are counted by hand from the messages written below."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from trajectory_fixture import write_run, write_tau2

import dabench_analysis as da
from dabench_analysis import trajectory as tr
from dabench_analysis.schema.needs import Skipped, skips
from dabench_analysis.tables._pooling import PooledTrialsWarning


def _run(path, trials: int):
    return da.load_run(write_tau2(path, trials))


def test_loops_and_recovery_count_each_trial_as_a_trajectory(tmp_path):
    run = _run(tmp_path / "tau2.json", trials=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        loops = tr.loops(run)
    assert not any(issubclass(x.category, PooledTrialsWarning) for x in w)  # said in the table
    row = loops.iloc[0]  # no difficulty column: pooled only
    assert row["note"] == ("each trial its own trace; intervals clustered by task (2 tasks, "
                           "4 traces); p-values treat the traces as independent")
    assert len(loops) == 1 and row["difficulty"] == "all"
    # 4 trajectories; the second call repeats the first (2 steps apart, window 3) in 3 of them
    assert (row["n_tasks"], row["n_with_loop"]) == (4, 3)
    # with a loop: t0/0 (reward 1), t0/1 (0), t1/0 (0) -> 1/3; without: t1/1 (1) -> 1/1
    assert row["accuracy_loop"] == pytest.approx(1 / 3) and row["accuracy_no_loop"] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PooledTrialsWarning)
        rec = tr.recovery(run)
    every = rec[(rec["difficulty"] == "all") & (rec["level"] == "all")].iloc[0]
    # every trajectory's failed lookup is followed by a successful lookup: all recovered
    assert every["n_tasks"] == 4 and every["n_recovered"] == every["n_errors"] > 0


def test_sections_skip_what_another_harness_lacks(tmp_path):
    one = _run(tmp_path / "one.json", trials=1)
    # no stages recorded: the declaration needs none (the default by="auto" takes the agent),
    # an explicit by="stage" is skipped when called
    assert skips(tr.variants, one) == []
    with pytest.raises(Skipped, match="stage"):
        tr.variants(one, by="stage")
    assert tr.variants(one)["method"].iloc[0].startswith("by=agent")
    assert skips(tr.loops, one) == []  # tool and action_input are recorded
    loops = tr.loops(one)
    assert (loops["n_tasks"].iloc[0], loops["n_with_loop"].iloc[0]) == (2, 2)
    several = _run(tmp_path / "two.json", trials=2)
    assert skips(tr.loops, several) == []  # repeated trials: each trial its own trace
    assert skips(tr.recovery, several) == []


def test_per_run_keeps_a_run_without_stages(tmp_path):
    """Steps, loops and recovery need no stage; conformance is NaN there. The fixture: two
    tasks of four messages each, each repeating lookup(q=1) after its failure (a loop)."""
    runs = da.load_runs(["data/sample_runs/proposed_aat", write_tau2(tmp_path / "t.json", 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = tr.per_run(runs)
    other = table[table["run_id"] == "t"].iloc[0]
    assert (other["n_tasks"], other["mean_steps"], other["loop_rate"]) == (2, 4.0, 1.0)
    assert np.isnan(other["conformance"])
    assert table[table["run_id"] == "proposed_aat"]["n_tasks"].iloc[0] == 80


def test_a_task_file_without_run_id_keeps_its_steps(tmp_path, drop_columns):
    """The run is then named after its folder; its trajectory.csv still says "hand": the
    folder's steps are the run's own, none orphaned."""
    run_dir = write_run(tmp_path)
    moved = run_dir.rename(tmp_path / "renamed")
    drop_columns(moved, {"run_id"})
    run = da.load_run(moved)
    assert run.run_id == "renamed" and set(run.trajectory["run_id"]) == {"hand"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "steps of tasks absent" note
        lp = tr.loops(run)
    pooled = lp[lp["difficulty"] == "all"].iloc[0]
    # the fixture's four tasks with steps; t2 repeats sql q1 once (trajectory_fixture.py)
    assert (pooled["n_tasks"], pooled["n_with_loop"], pooled["n_loop_steps"]) == (4, 1, 1)
