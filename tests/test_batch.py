"""load_runs on a sweep of mixed runs: clean runs (notes only: unknown column, old column name,
header spaces, no run_id column, missing flag values, a column subset) beside runs with values
to report (a score of 1.5, a fractional count, a lower-case or unknown enum, a duplicated task
id, a short row, no data rows, only the legacy file). The stacked tasks hold every run's own
frame; a changed file is never served stale; ``replay_path`` is looked up afresh on every load;
replays and caches never leave their folders.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load, schema
from dabench_analysis.load import cache, load_runs
from dabench_analysis.load._pipeline import concat_frames
from dabench_analysis.synthetic import generate_run
from dabench_analysis.validate import validate_run

TM = "task_metrics.csv"
N = 8


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))


def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _write(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _edit(run: Path, fn) -> None:
    rows = _rows(run / TM)
    fn(rows)
    _write(run / TM, rows)


def _set(col: str, row: int, value: str):
    def fn(rows):
        rows[row][rows[0].index(col)] = value
    return fn


def _rename(old: str, new: str):
    def fn(rows):
        rows[0][rows[0].index(old)] = new
    return fn


def _drop(col: str):
    def fn(rows):
        i = rows[0].index(col)
        for r in rows:
            del r[i]
    return fn


def _add_unknown(rows):
    rows[0].append("notes_from_the_team")
    for r in rows[1:]:
        r.append("kept as text")


def _blank_flags(rows):
    i = rows[0].index("execution_success")
    rows[1][i] = rows[3][i] = ""


def _duplicate_id(rows):
    rows[2][rows[0].index("task_id")] = rows[1][rows[0].index("task_id")]


def _short_row(rows):
    rows[2] = rows[2][:5]


def _no_rows(rows):
    del rows[1:]


def _own_replay_column(rows):
    rows[0].insert(3, "replay_path")
    for r in rows[1:]:
        r.insert(3, "x")


def _quoted_newline(rows):
    rows[2][rows[0].index("failure_reason")] = "first line\nsecond, with a comma"


def _mixed_run_ids(rows):
    rows[1][rows[0].index("run_id")] = "someone_else"


CLEAN = {
    "clean": lambda rows: None,
    "unknown_column": _add_unknown,
    "old_name": _rename("schema_agent_used", "schema_agent_called"),
    "header_spaces": _rename("answer_f1", " answer_f1 "),
    "no_run_id": _drop("run_id"),
    "missing_flags": _blank_flags,
    "quoted_newline": _quoted_newline,
    "bom_crlf": lambda rows: None,  # rewritten below with a byte-order mark and CRLF
    "run_id_differs": lambda rows: None,  # the column says "other_id"
    "mixed_run_ids": _mixed_run_ids,  # two values: the folder name is the run_id
}
NEEDS_PANDAS = {
    "score_above_one": _set("final_score", 2, "1.5"),
    "fractional_count": _set("llm_calls", 3, "2.5"),
    "negative_seconds": _set("execution_time", 1, "-3"),
    "infinite_float": _set("tool_efficiency", 4, "inf"),
    "lower_case_enum": _set("difficulty", 1, "easy"),
    "unknown_enum": _set("failure_stage", 2, "LUNCH"),
    "missing_required": _set("final_score", 5, ""),
    "duplicate_task_id": _duplicate_id,
    "short_row": _short_row,
    "no_rows": _no_rows,
    "yes_no_flag": _set("execution_success", 1, "yes"),
    "nan_required": _set("final_score", 2, "NAN"),  # pyarrow: NaN, not null; pandas: missing
    "minus_nan_required": _set("final_score", 3, "-nan"),
    "count_above_2_53": _set("total_tokens", 2, str(2**53 + 1)),  # float64 would round it
    "own_replay_column": _own_replay_column,
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    base = generate_run(tmp_path_factory.mktemp("base"), run_id="base", n_tasks=N, seed=5)
    for name, fn in {**CLEAN, **NEEDS_PANDAS}.items():
        run = root / name
        shutil.copytree(base, run)
        _edit(run, fn)
        if name not in ("no_run_id", "run_id_differs"):  # the run_id column names the run
            _edit_run_id(run / TM, name)
        if name == "mixed_run_ids":
            _edit(run, fn)
    _edit_run_id(root / "run_id_differs" / TM, "other_id")
    bom = root / "bom_crlf" / TM
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes().replace(b"\n", b"\r\n"))
    legacy = root / "legacy_only"
    shutil.copytree(base, legacy)
    (legacy / TM).unlink()
    (root / "no_run_id" / "task_1").rename(root / "no_run_id" / "task_1_moved")
    return root


def _edit_run_id(path: Path, value: str) -> None:
    rows = _rows(path)
    i = rows[0].index("run_id")
    for r in rows[1:]:
        r[i] = value
    _write(path, rows)


def _load_quietly(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_runs(*args, progress=False, **kwargs)


def _reference(path: Path, **kwargs) -> load.Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load.load_run(path, strict=False, **kwargs)


def test_column_subset(mixed):
    wanted = schema.columns.CORRECTNESS + schema.columns.COST
    loaded = _load_quietly([mixed / "clean", mixed / "old_name"], columns=wanted)
    for run in loaded:
        pd.testing.assert_frame_equal(run.tasks, _reference(run.path, columns=wanted).tasks)
    assert "schema_agent_used" not in loaded.tasks


def test_strict_still_raises_for_values_the_pandas_path_rejects(mixed):
    with pytest.raises(load.RunLoadError, match="score_above_one"):
        load_runs([mixed / "clean", mixed / "score_above_one"], progress=False)


def test_runs_with_different_columns_are_stacked(mixed, tmp_path):
    a = _load_quietly([mixed / "clean", mixed / "unknown_column", mixed / "no_run_id"])
    # runs of different columns are stacked as one table (one to_pandas for the sweep)
    assert a.stacked is not None and a.tasks is a.stacked
    pd.testing.assert_frame_equal(
        a.tasks, concat_frames([_reference(r.path).tasks for r in a]))
    assert a.tasks["notes_from_the_team"].notna().sum() == N
    assert a.tasks["run_id"].tolist() == ["clean"] * N + ["unknown_column"] * N + \
        ["no_run_id"] * N


def test_changed_file_is_never_served_stale(mixed, tmp_path):
    root = tmp_path / "sweep"
    for name in ("clean", "missing_flags"):
        shutil.copytree(mixed / name, root / name)
    first = _load_quietly(root)
    # one per task file, one per legacy file beside it, and one for the sweep
    assert cache.info()["entries"] == 5
    path = root / "clean" / TM
    st = path.stat()
    text = path.read_text()
    i = _rows(path)[0].index("final_score")
    old = _rows(path)[1][i]
    new = "0.1234" if old != "0.1234" else "0.4321"
    rows = _rows(path)
    rows[1][i] = new[: len(old)].ljust(len(old), "0")  # same size
    _write(path, rows)
    assert len(path.read_text()) == len(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: only the digest differs
    again = _load_quietly(root)
    assert again["clean"].tasks.loc[0, "final_score"] == float(rows[1][i])
    assert first["clean"].tasks.loc[0, "final_score"] == float(old)
    pd.testing.assert_frame_equal(again["clean"].tasks, _reference(root / "clean").tasks)
    entries = cache.info()["entries"]
    assert entries >= 1 and cache.clear()["removed"] == entries
    assert cache.info()["entries"] == 0 and not list((tmp_path / "cache").rglob("*.arrow"))


def test_replay_path_is_looked_up_on_every_load(mixed, tmp_path):
    root = tmp_path / "sweep"
    shutil.copytree(mixed / "clean", root / "clean")
    first = _load_quietly(root)
    assert first.tasks["replay_path"].notna().all()
    shutil.rmtree(root / "clean" / "task_2")
    hit = _load_quietly(root)  # served from the stacked entry
    assert hit.tasks.loc[hit.tasks["task_id"] == "task_2", "replay_path"].isna().all()
    assert hit.tasks["replay_path"].notna().sum() == N - 1


def test_folder_without_its_replay(mixed, tmp_path):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    (run / "task_3" / "task_replay.json").unlink()
    loaded = load.load_run(run)
    assert loaded.tasks.set_index("task_id").loc["task_3", "replay_path"] == \
        str(run / "task_3" / "task_replay.json")
    assert "task_3" not in loaded.replays and len(loaded.replays) == N - 1
    assert f"{N - 1} task_replay.json" in repr(loaded)
    with pytest.raises(KeyError, match="task_3"):
        loaded.replay("task_3")
    found = validate_run(run).findings
    missing = found[found["check"] == "replay_missing"]
    assert missing["message"].tolist() == [f"1 of {N} task(s) have no task_replay.json"]


def test_replay_linked_outside_the_run_is_not_read(mixed, tmp_path):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    outside = tmp_path / "secret.json"
    outside.write_text('{"task_id": "task_4", "evaluation_result": {"final_score": 1.0}}')
    (run / "task_4" / "task_replay.json").unlink()
    (run / "task_4" / "task_replay.json").symlink_to(outside)
    loaded = load.load_run(run)
    with pytest.raises(load.RunLoadError, match="outside the run directory"):
        loaded.replay("task_4")
    found = validate_run(run).findings
    assert found.loc[found["file"] == "task_4/task_replay.json", "check"].tolist() == \
        ["replay_unreadable"]


def test_unwritable_cache_still_loads(mixed, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(cache.ENV_VAR, str(blocker / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = load_runs([mixed / "clean"], progress=False)
    pd.testing.assert_frame_equal(loaded.tasks, _reference(mixed / "clean").tasks)


def test_cache_inside_a_run_is_not_used(mixed, tmp_path, monkeypatch):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    monkeypatch.setenv(cache.ENV_VAR, str(run / ".cache"))
    assert cache.usable() is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_runs([run], progress=False)
    assert not (run / ".cache").exists()


def test_findings_of_the_new_cases(mixed):
    def checks(name):
        return [(f.check, f.row, f.column) for f in _reference(mixed / name).findings
                if f.severity == "error"]
    assert checks("nan_required") == [("required_value", 2, "final_score")]
    assert checks("count_above_2_53") == [("integer", 2, "total_tokens")]
    found = [f for f in _reference(mixed / "count_above_2_53").findings if f.check == "integer"]
    assert str(2**53 + 1) in found[0].message  # the value as written, not a rounded float
    own = _reference(mixed / "own_replay_column")
    assert list(own.tasks.columns).count("replay_path") == 1
    assert own.tasks.columns[-1] == "replay_path" and own.tasks["replay_path"].notna().all()
    with pytest.raises(load.RunLoadError, match="nan_required"):
        load_runs([mixed / "clean", mixed / "nan_required"], progress=False)


@pytest.mark.parametrize("use_cache", [False, True])
def test_frames_are_writable(mixed, use_cache):
    for _ in range(2):  # with the cache: cold, then a hit (memory-mapped entry)
        loaded = _load_quietly([mixed / "clean", mixed / "unknown_column"], cache=use_cache)
        loaded.tasks.loc[0, "final_score"] = 0.5
        run = loaded["clean"].tasks
        run.loc[0, "final_score"] = 0.25
        run.loc[1, "execution_time"] = 1.0
        assert loaded.tasks.loc[0, "final_score"] == 0.5 and run.loc[0, "final_score"] == 0.25


def test_run_behind_a_symlink_that_moves(mixed, tmp_path):
    """The run id of a run without a run_id column comes from its real folder name: a link
    retargeted to an identical copy must not be served the old run's id."""
    alpha = tmp_path / "alpha"
    shutil.copytree(mixed / "no_run_id", alpha)
    beta = shutil.copytree(alpha, tmp_path / "beta")  # copy2 keeps the mtime
    link = tmp_path / "latest"
    link.symlink_to(alpha)
    assert _load_quietly([link]).run_ids == ["alpha"]
    link.unlink()
    link.symlink_to(beta)
    assert _load_quietly([link]).run_ids == ["beta"] == [load.load_run(link).run_id]


@pytest.mark.parametrize("through_link", [False, True])
def test_cache_inside_one_of_the_runs_writes_nothing_there(mixed, tmp_path, monkeypatch,
                                                           through_link):
    root = tmp_path / "runs"
    for name in ("clean", "missing_flags"):
        shutil.copytree(mixed / name, root / name)
    (tmp_path / "link").symlink_to(root)
    base = tmp_path / "link" if through_link else root
    monkeypatch.setenv(cache.ENV_VAR, str(root / "clean" / ".cache"))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        loaded = load_runs([base / "clean", base / "missing_flags"], progress=False)
        loaded.trajectory, loaded.tool_calls  # noqa: B018 - per-file cache entries
    written = [p for p in root.rglob("*") if p.suffix in (".parquet", ".arrow", ".tmp")]
    assert written == [] and not (root / "clean" / ".cache").exists()


def test_cache_folder_in_the_sweep_folder_is_not_a_run(mixed, tmp_path, monkeypatch):
    root = tmp_path / "runs"
    shutil.copytree(mixed / "clean", root / "clean")
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    first = _load_quietly(root)
    assert (root / "v2").is_dir()
    again = _load_quietly(root)
    assert first.skipped.empty and again.skipped.empty and again.run_ids == ["clean"]


def test_symlink_loop_in_a_run_costs_only_itself(mixed, tmp_path):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    (run / "loop").symlink_to("loop")
    assert load.load_run(run).tasks["replay_path"].notna().sum() == N
    assert _load_quietly([run]).tasks["replay_path"].notna().sum() == N
    assert len(load.load_run(run).replays) == N


def test_parallel_reads_leave_the_unraisable_hook_alone(mixed):
    import sys

    before = sys.unraisablehook
    for _ in range(3):
        _load_quietly(mixed, strict=False, cache=False, parallel=4)
    assert sys.unraisablehook is before


def test_membership_in_replays_does_not_read_the_file(mixed, tmp_path):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    (run / "task_2" / "task_replay.json").write_text("")
    replays = load.load_run(run).replays
    assert "task_2" in replays and "task_99" not in replays and len(replays) == N
    with pytest.raises(load.RunLoadError, match="task_2/task_replay.json: file is empty"):
        replays["task_2"]


def test_bad_arguments_get_clear_errors(mixed):
    with pytest.raises(ValueError, match="empty string"):
        load_runs("")
    with pytest.raises(TypeError, match="a list of paths"):
        load_runs(3)
    with pytest.raises(TypeError, match=r"did you mean \['answer_f1'\]"):
        load_runs([mixed / "clean"], columns="answer_f1")
    with pytest.raises(TypeError, match=r"did you mean \['answer_f1'\]"):
        load.load_run(mixed / "clean", columns="answer_f1")
    with pytest.warns(UserWarning, match=r"requested column\(s\) \['answer_f2'\] not found"):
        load_runs([mixed / "clean"], columns=["answer_f1", "answer_f2"], progress=False)
    with pytest.warns(UserWarning, match=r"requested column\(s\) \['answer_f2'\] not found"):
        load.load_run(mixed / "clean", columns=["answer_f2"])


def test_short_latin1_row_is_reported_in_threads_too(mixed, tmp_path):
    """pyarrow hands a malformed row's text to the row handler decoded; Latin-1 bytes make
    that an 'unraisable' error, which the loader turns into one clear error per run even when
    several files are read at once."""
    import sys

    before = sys.unraisablehook
    paths = []
    for i in range(4):
        run = tmp_path / f"bad_{i}"
        shutil.copytree(mixed / "clean", run)
        _edit_run_id(run / TM, f"bad_{i}")
        (run / TM).write_bytes((run / TM).read_bytes() + b"task_99,caf\xe9\n")
        paths.append(run)
    loaded = _load_quietly([mixed / "clean", *paths], strict=False, parallel=4, cache=False)
    assert loaded.run_ids == ["clean"]
    assert loaded.skipped["reason"].str.contains("not UTF-8").tolist() == [True] * 4
    assert sys.unraisablehook is before


def test_task_folder_linked_outside_the_run_is_not_read(mixed, tmp_path):
    run = tmp_path / "clean"
    shutil.copytree(mixed / "clean", run)
    outside = tmp_path / "elsewhere"
    shutil.move(run / "task_5", outside)
    (run / "task_5").symlink_to(outside)
    loaded = load.load_run(run)
    with pytest.raises(load.RunLoadError, match="outside the run directory"):
        loaded.replay("task_5")
    found = validate_run(run).findings
    assert found.loc[found["file"] == "task_5/task_replay.json", "check"].tolist() == \
        ["replay_unreadable"]
    assert _load_quietly([run]).tasks["replay_path"].tolist() == \
        loaded.tasks["replay_path"].tolist()
