"""The loader: catalogue dtypes, strict and lenient loading, pitfalls P06 and P07."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import schema
from dabench_analysis.load import RunLoadError, load_run, read_replay
from dabench_analysis.load._pipeline import read_table
from dabench_analysis.schema import Column
from dabench_analysis.synthetic import generate_run

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"
RUNS = ["baseline_react", "proposed_aat"]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    return generate_run(tmp_path_factory.mktemp("load"), run_id="small", n_tasks=8, seed=3)


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / run.name))


def _edit(path: Path, col: str, row: int, value: str) -> None:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[row - 1, col] = value
    df.to_csv(path, index=False, lineterminator="\n")


def _assert_catalogue_dtypes(df: pd.DataFrame, catalogue) -> None:
    for col in df.columns:
        if col in catalogue:
            assert df[col].dtype == catalogue[col].dtype, (col, df[col].dtype)


@pytest.mark.parametrize("name", RUNS)
def test_sample_runs_load_clean_with_catalogue_dtypes(name):
    run = load_run(SAMPLE / name, include_text=True)
    assert not [f for f in run.findings if f.severity in ("error", "warning")]
    _assert_catalogue_dtypes(run.tasks, schema.TASK_COLUMNS)
    _assert_catalogue_dtypes(run.trajectory, schema.TRAJECTORY_COLUMNS)
    _assert_catalogue_dtypes(run.tool_calls, schema.TOOL_CALL_COLUMNS)
    assert run.source_rows == list(range(1, 81))
    assert run.tasks["replay_path"].notna().all()


def test_one_bad_value_leaves_every_other_value_as_in_the_clean_file(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    _edit(run / "task_metrics.csv", "answer_f1", 2, "0,5")
    with pytest.warns(UserWarning):
        loaded = load_run(run, strict=False)
    clean = load_run(small_run).tasks
    assert pd.isna(loaded.tasks.loc[1, "answer_f1"])  # data row 2
    bad = [f for f in loaded.findings if f.severity == "error"]
    assert [(f.row, f.column, f.check) for f in bad] == [(2, "answer_f1", "number_value")]
    assert "decimal comma" in bad[0].message and "'0,5'" in bad[0].message
    for col in clean.columns.drop("replay_path"):
        expected = clean[col].mask(clean.index == 1) if col == "answer_f1" else clean[col]
        pd.testing.assert_series_equal(loaded.tasks[col], expected, check_names=False)


def test_strict_raises_once_listing_every_error(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    _edit(run / "task_metrics.csv", "verification_passed", 3, "2")
    _edit(run / "task_metrics.csv", "final_score", 5, "85")
    _edit(run / "task_metrics.csv", "difficulty", 7, "Trivial")
    _edit(run / "task_metrics.csv", "answer_f1", 2, "x")
    with pytest.raises(RunLoadError) as info:
        load_run(run)
    found = {(f.row, f.column, f.check) for f in info.value.findings}
    assert found == {(3, "verification_passed", "flag_value"), (5, "final_score", "range"),
                     (7, "difficulty", "enum_value"), (2, "answer_f1", "number_value")}
    msg = str(info.value)
    assert "4 problem(s)" in msg and "task_metrics.csv" in msg
    for needle in ("row 3, column 'verification_passed'", "row 5, column 'final_score'",
                   "row 7, column 'difficulty'", "row 2, column 'answer_f1'"):
        assert needle in msg


def test_lenient_load_keeps_valid_values_and_reports_what_it_dropped(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    clean = load_run(small_run).tasks
    _edit(run / "task_metrics.csv", "verification_passed", 3, "2")
    _edit(run / "task_metrics.csv", "final_score", 5, "85")
    _edit(run / "task_metrics.csv", "task_id", 2, "task_1")
    with pytest.warns(UserWarning, match=r"3 problem\(s\).*1 row\(s\) dropped"):
        loaded = load_run(run, strict=False)
    t = loaded.tasks
    assert t["task_id"].tolist() == ["task_1"] + [f"task_{i}" for i in range(3, 9)]
    assert loaded.source_rows == [1, 3, 4, 5, 6, 7, 8]
    by_id = t.set_index("task_id")
    assert pd.isna(by_id.loc["task_3", "verification_passed"])
    assert pd.isna(by_id.loc["task_5", "final_score"])
    # everything else is untouched
    ref = clean.set_index("task_id")
    assert by_id.loc["task_4", "final_score"] == ref.loc["task_4", "final_score"]
    assert by_id.loc["task_3", "final_score"] == ref.loc["task_3", "final_score"]
    checks = {f.check for f in loaded.findings if f.severity == "error"}
    assert checks == {"flag_value", "range", "duplicate_task_id"}


def test_p06_boolean_column_with_blanks(tmp_path):
    # pitfalls.md P06: 1, 0, True, False, (blank), true
    p = tmp_path / "p06.csv"
    p.write_text("task,passed\nt1,1\nt2,0\nt3,True\nt4,False\nt5,\nt6,true\n")
    catalogue = {"task": Column("task", "id", "Test", "", None, "task"),
                 "passed": Column("passed", "flag", "Test", "{0, 1}", True, "passed")}
    df, findings = read_table(p, catalogue)
    s = df["passed"]
    assert s.dtype == "boolean"
    assert s.tolist() == [True, False, True, False, pd.NA, True]
    assert s.mean() == pytest.approx(3 / 5)  # pass rate 0.6: missing neither pass nor fail
    missing = [f for f in findings if f.check == "missing_values"]
    assert len(missing) == 1 and missing[0].column == "passed"
    assert missing[0].message.startswith("1 of 6 values missing")
    assert not [f for f in findings if f.severity == "error"]


def test_p06_through_load_run(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    for row, value in zip(range(1, 7), ["1", "0", "True", "False", "", "true"], strict=True):
        _edit(run / "task_metrics.csv", "first_try_success", row, value)
    loaded = load_run(run)  # no error: 0/1/True/False/true are all eval-v2 flags
    s = loaded.tasks["first_try_success"].iloc[:6]
    assert s.tolist() == [True, False, True, False, pd.NA, True]
    assert any(f.check == "missing_values" and f.column == "first_try_success"
               for f in loaded.findings)


def test_p07_difficulty_is_an_ordered_categorical(tmp_path):
    run = tmp_path / "p07"
    run.mkdir()
    (run / "task_metrics.csv").write_text(
        "task_id,difficulty,final_score\nt1,Hard,0\nt2,Easy,1\nt3,Medium,1\nt4,Easy,1\nt5,Hard,1\n")
    d = load_run(run).tasks["difficulty"]
    assert isinstance(d.dtype, pd.CategoricalDtype) and d.dtype.ordered
    assert d.cat.categories.tolist() == ["Easy", "Medium", "Hard", "Extreme"]
    counts = d.value_counts(sort=False)
    assert counts.to_dict() == {"Easy": 2, "Medium": 1, "Hard": 2, "Extreme": 0}
    assert (d.min(), d.max()) == ("Easy", "Hard")


def test_aliases_and_column_subset(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    text = (run / "task_metrics.csv").read_text()
    (run / "task_metrics.csv").write_text(text.replace("schema_agent_used", "schema_agent_called",
                                                       1))
    loaded = load_run(run, columns=schema.columns.CORRECTNESS + ["schema_agent_used"])
    assert "schema_agent_used" in loaded.tasks and "schema_agent_called" not in loaded.tasks
    required = {c for c, col in schema.TASK_COLUMNS.items() if col.required}
    assert required | {"run_id"} <= set(loaded.tasks.columns)  # run_id: from the file
    assert "tool_calls" not in loaded.tasks


def test_legacy_file_only(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    (run / "task_metrics.csv").unlink()
    with pytest.warns(UserWarning, match="legacy"):
        loaded = load_run(run)
    assert loaded.task_file == "comprehensive_evaluation.csv" and len(loaded.tasks) == 8
    assert loaded.run_id == "small"  # no run_id column (an optional column): the folder name
    assert not any(f.check == "required_column" for f in loaded.findings)


def test_newlines_inside_quoted_values_and_row_numbers(tmp_path):
    p = tmp_path / "task_metrics.csv"
    p.write_text('task_id,difficulty,final_score,root_cause\nt1,Easy,0.5,"line one\nline two"\n'
                 "t2,Hard,0.25\nt3,Hard,2,x\n")
    df, findings = read_table(p, schema.TASK_COLUMNS)
    assert df["root_cause"].iloc[0] == "line one\nline two"
    assert df.index.tolist() == [0, 2]  # row 2 (wrong field count) dropped, numbering kept
    by_check = {f.check: f for f in findings if f.severity == "error"}
    assert by_check["column_count"].row == 2
    assert by_check["range"].row == 3 and by_check["range"].column == "final_score"


def test_hexadecimal_count_is_not_read_as_a_number(tmp_path):
    p = tmp_path / "task_metrics.csv"
    p.write_text("task_id,difficulty,final_score,tool_calls\nt1,Easy,0.5,0x10\nt2,Easy,0.5,3\n")
    df, findings = read_table(p, schema.TASK_COLUMNS)
    assert df["tool_calls"].tolist() == [pd.NA, 3]
    assert [(f.row, f.check) for f in findings if f.severity == "error"] == [(1, "number_value")]


def test_side_tables_missing_give_empty_frames_with_a_warning(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    (run / "trajectory.csv").unlink()
    loaded = load_run(run)
    with pytest.warns(UserWarning, match="trajectory.csv not found"):
        traj = loaded.trajectory
    assert traj.empty and "step_id" in traj and traj["step_id"].dtype == "Int64"


def test_replays_are_json_only(small_run):
    run = load_run(small_run)
    assert len(run.replays) == 8
    data = run.replay("task_1")
    assert data["task_id"] == "task_1" and isinstance(data["evaluation_result"], dict)
    with pytest.raises(KeyError):
        run.replay("task_99")


def test_read_replay_errors_name_the_file(tmp_path):
    p = tmp_path / "task_9" / "task_replay.json"
    p.parent.mkdir()
    p.write_text('{"a": 1,\n "b": }')
    with pytest.raises(RunLoadError, match=r"task_9/task_replay.json: not valid JSON at line 2"):
        read_replay(p)


def test_repr_and_files_present(small_run):
    run = load_run(small_run)
    text = repr(run)
    assert text.startswith("<Run 'small': 8 tasks, answer accuracy ")
    assert "task_metrics.csv" in text and "8 task_replay.json" in text


def test_header_only_run_loads_empty(small_run, tmp_path):
    run = _copy(small_run, tmp_path)
    header = (run / "task_metrics.csv").read_text().split("\n", 1)[0]
    (run / "task_metrics.csv").write_text(header + "\n")
    loaded = load_run(run)
    assert loaded.tasks.empty and "answer accuracy n/a" in repr(loaded)
    _assert_catalogue_dtypes(loaded.tasks, schema.TASK_COLUMNS)


def test_no_warning_and_no_findings_of_note_for_a_clean_run(small_run):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = load_run(small_run)
        _ = run.trajectory, run.tool_calls
    assert {f.severity for f in run.findings} <= {"info"}


def test_a_load_allocates_from_the_loaders_pool_and_falls_back_without_jemalloc(
        small_run, monkeypatch):
    """The loader's Arrow memory (file bytes, parse, frames' text buffers) comes from
    ``_csv.memory_pool()``: jemalloc where pyarrow has it (bench/README, "The loader's memory
    pool"), the default pool where it does not (pyarrow's Windows wheels)."""
    import pyarrow as pa

    from dabench_analysis.load import _csv

    pool = _csv.memory_pool()
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        assert pool.backend_name == pa.default_memory_pool().backend_name
    else:
        assert pool.backend_name == "jemalloc"
    before = pool.bytes_allocated()
    traj = load_run(small_run, cache=False).trajectory  # its text columns hold Arrow buffers
    assert len(traj) > 0 and pool.bytes_allocated() > before
    del traj

    def no_jemalloc():
        raise NotImplementedError("built without jemalloc")

    monkeypatch.setattr(pa, "jemalloc_memory_pool", no_jemalloc)
    _csv.memory_pool.cache_clear()
    try:
        assert _csv.memory_pool().backend_name == pa.default_memory_pool().backend_name
        frame, _ = read_table(small_run / "trajectory.csv", schema.TRAJECTORY_COLUMNS)
        assert len(frame) == len(pd.read_csv(small_run / "trajectory.csv"))
    finally:
        _csv.memory_pool.cache_clear()
