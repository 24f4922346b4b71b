"""load_runs: discovery (list, glob, parent folder), skipping with reasons, stacking, progress."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from dabench_analysis import load, schema
from dabench_analysis.load import Runs, cache, load_runs
from dabench_analysis.synthetic import generate_run

N_TASKS = 6


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Three runs of 6 tasks, a folder without artifacts, a hidden folder and a stray file."""
    root = tmp_path_factory.mktemp("sweep")
    for i, skill in enumerate((0.0, 0.5, 1.0)):
        generate_run(root, run_id=f"run_{i}", n_tasks=N_TASKS, seed=i, skill=skill,
                     replays=False)
    (root / "pending").mkdir()
    (root / ".hidden").mkdir()
    (root / "notes.txt").write_text("not a run")
    return root


def test_parent_folder(sweep):
    runs = load_runs(sweep, progress=False)
    assert isinstance(runs, Runs)
    assert runs.run_ids == ["run_0", "run_1", "run_2"]
    assert runs.skipped["path"].tolist() == [str(sweep / "pending")]
    assert runs.skipped["reason"].iloc[0].startswith("not evaluated: no task_metrics.csv")
    assert runs.tasks.groupby("run_id").size().to_dict() == {f"run_{i}": N_TASKS
                                                             for i in range(3)}
    assert runs.tasks.index.tolist() == list(range(3 * N_TASKS))
    assert repr(runs) == ("<Runs: 3 runs (run_0, run_1, run_2), 18 tasks, 1 skipped "
                          "(see .skipped)>")


def test_tasks_equal_the_runs_loaded_one_by_one(sweep):
    runs = load_runs(sweep, progress=False)
    alone = [load.load_run(sweep / f"run_{i}") for i in range(3)]
    expected = pd.concat([r.tasks for r in alone], ignore_index=True)
    pd.testing.assert_frame_equal(runs.tasks, expected)
    diff = runs.tasks["difficulty"].dtype
    assert diff.ordered and list(diff.categories) == list(schema.DIFFICULTY_ORDER)
    assert str(runs.tasks["execution_success"].dtype) == "boolean"


def test_glob_of_folders_and_of_files(sweep):
    a = load_runs(str(sweep / "run_*"), progress=False)
    b = load_runs(str(sweep / "*" / "task_metrics.csv"), progress=False)
    assert a.run_ids == b.run_ids == ["run_0", "run_1", "run_2"]
    assert a.skipped.empty and b.skipped.empty
    with pytest.raises(ValueError, match="no path matches"):
        load_runs(str(sweep / "nothing_*"))


def test_list_with_missing_and_repeated_paths(sweep):
    runs = load_runs([sweep / "run_1", sweep / "gone", sweep / "run_1", sweep / "pending"],
                     progress=False)
    assert runs.run_ids == ["run_1"]
    assert runs.skipped.to_dict("records") == [
        {"path": str(sweep / "gone"), "reason": "does not exist"},
        {"path": str(sweep / "run_1"), "reason": "listed twice"},
        {"path": str(sweep / "pending"),
         "reason": "not evaluated: no task_metrics.csv: evaluate the run with the eval-v2 "
                   "harness first (the harness's command: `dabench eval-v2 <RUN_ID>`)"},
    ]


def test_single_run_folder_and_bad_roots(sweep, tmp_path):
    assert load_runs(sweep / "run_2", progress=False).run_ids == ["run_2"]
    with pytest.raises(load.RunLoadError, match="does not exist"):
        load_runs(tmp_path / "missing")
    with pytest.raises(load.RunLoadError, match="is a file"):
        load_runs(sweep / "notes.txt")
    with pytest.raises(ValueError, match="parallel must be"):
        load_runs(sweep, parallel=0)


def test_failed_runs_raise_when_strict_and_are_skipped_otherwise(sweep, tmp_path):
    root = tmp_path / "mixed"
    shutil.copytree(sweep / "run_0", root / "run_0")
    bad = root / "run_bad"
    bad.mkdir()
    (bad / "task_metrics.csv").write_text("task_id,final_score,execution_success\n"
                                          "t1,0.5,2\n")
    nocol = root / "run_nocol"
    nocol.mkdir()
    (nocol / "task_metrics.csv").write_text("task_id,difficulty\nt1,Easy\n")
    with pytest.raises(load.RunLoadError, match="2 of 3 run") as exc:
        load_runs(root, progress=False)
    assert "run_bad" in str(exc.value) and "run_nocol" in str(exc.value)
    assert {f.check for f in exc.value.findings} == {"flag_value", "required_column"}
    with pytest.warns(UserWarning, match=r"run_bad: \d+ problem"):
        runs = load_runs(root, strict=False, progress=False)
    assert runs.run_ids == ["run_0", "run_bad"]
    assert runs.skipped["path"].tolist() == [str(nocol)]
    assert "required column(s) ['final_score']" in runs.skipped["reason"].iloc[0]
    assert runs["run_bad"].tasks["execution_success"].isna().all()
    found = runs.findings
    assert found.loc[found["check"] == "flag_value", ["run_id", "row", "column"]] \
        .values.tolist() == [["run_bad", 1, "execution_success"]]


def test_duplicate_run_id_is_skipped_with_a_warning(sweep, tmp_path):
    root = tmp_path / "dup"
    shutil.copytree(sweep / "run_0", root / "a")
    shutil.copytree(sweep / "run_0", root / "b")
    with pytest.warns(UserWarning, match="run_id 'run_0' appears in"):
        runs = load_runs(root, progress=False)
    assert len(runs) == 1 and runs[0].path == root / "a"
    assert runs.skipped["reason"].tolist() == [f"duplicate run_id 'run_0' (kept {root / 'a'})"]


def test_legacy_run_is_stacked_with_its_columns_missing(sweep, tmp_path):
    root = tmp_path / "legacy"
    shutil.copytree(sweep / "run_0", root / "run_0")
    shutil.copytree(sweep / "run_1", root / "run_1")
    (root / "run_1" / "task_metrics.csv").unlink()
    with pytest.warns(UserWarning, match="only the legacy") as caught:
        runs = load_runs(root, progress=False)
    assert [w.filename for w in caught] == [__file__]  # the caller's line, not the library's
    tasks = runs.tasks
    assert len(tasks) == 2 * N_TASKS
    legacy = tasks[tasks["run_id"] == "run_1"]
    assert legacy["task_type"].isna().all()
    assert legacy["answer_f1"].notna().all()
    full = load.load_run(root / "run_0").tasks
    for col in ("task_type", "difficulty", "aat_verification_passed", "llm_calls"):
        assert tasks[col].dtype == full[col].dtype, col


def test_trajectory_and_tool_calls_are_lazy_and_stacked(sweep):
    runs = load_runs(sweep, progress=False)
    assert "trajectory" not in runs.__dict__ and "tool_calls" not in runs.__dict__
    traj = runs.trajectory
    alone = [load.load_run(sweep / f"run_{i}").trajectory for i in range(3)]
    assert len(traj) == sum(len(t) for t in alone)
    assert not set(schema.columns.TEXT_TRAJECTORY_COLUMNS) & set(traj.columns)
    assert traj["run_id"].unique().tolist() == ["run_0", "run_1", "run_2"]
    calls = runs.tool_calls
    assert calls.groupby("run_id").size().sum() == len(calls) > 0
    with_text = load_runs(sweep, include_text=True, progress=False).trajectory
    assert set(schema.columns.TEXT_TRAJECTORY_COLUMNS) <= set(with_text.columns)
    assert with_text["thought"].str.len().gt(0).all()


def test_parallel_and_sequential_agree(sweep):
    one = load_runs(sweep, parallel=False, progress=False)
    two = load_runs(sweep, parallel=2, progress=False)
    pd.testing.assert_frame_equal(one.tasks, two.tasks)
    pd.testing.assert_frame_equal(one.trajectory, two.trajectory)


def test_cache_on_and_off_give_the_same_frames(sweep):
    off = load_runs(sweep, cache=False, progress=False)
    assert cache.info()["entries"] == 0
    cold = load_runs(sweep, progress=False)
    hit = load_runs(sweep, progress=False)
    # one per task file, one per legacy file beside it, and one for the whole sweep
    assert cache.info()["entries"] == 7
    pd.testing.assert_frame_equal(off.tasks, cold.tasks)
    pd.testing.assert_frame_equal(off.tasks, hit.tasks)


def test_progress_quiet_by_default_and_shown_on_request(sweep, capsys):
    load_runs(sweep)
    assert capsys.readouterr().err == ""
    load_runs(sweep, progress=True)
    err = capsys.readouterr().err
    assert "runs" in err and "3/3" in err


def test_indexing(sweep):
    runs = load_runs(sweep, progress=False)
    assert runs["run_1"].run_id == "run_1" and runs[-1].run_id == "run_2"
    assert [r.run_id for r in runs] == runs.run_ids
    with pytest.raises(KeyError, match="no run 'run_9'"):
        runs["run_9"]
