"""The task load's parallel parts give what one thread gives: the rules typing columns in the
loader's threads (findings in column order), the legacy task files and the task folders read
beside the rules, and the loader's columns added once over the stacked runs. Expected values
come from the raw CSV files (the csv module) and the folders (os.listdir)."""

from __future__ import annotations

import csv
import inspect
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis import schema
from dabench_analysis.load import cache
from dabench_analysis.load._replay import replay_paths

SAMPLE = Path("data/sample_runs")
#: column -> (bad value, check): one per kind the rules type (flag, count, score, enum)
BAD = {"execution_success": ("maybe", "flag_value"),
       "pred_rows": ("-3", "range"),
       "final_score": ("1.5", "range"),
       "difficulty": ("Impossible", "enum_value")}


def _edit(path: Path, rows_by_column: dict[str, list[int]]) -> list[str]:
    """Write each column's bad value into the given 1-based data rows; return the header."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    for col, at in rows_by_column.items():
        i = rows[0].index(col)
        for r in at:
            rows[r][i] = BAD[col][0]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return rows[0]


@pytest.fixture
def bad_sweep(tmp_path):
    """Three runs, bad values in several columns of two of them (rows differ per run)."""
    plan = {"a": {"difficulty": [2], "execution_success": [5, 9], "final_score": [3]},
            "b": {},
            "c": {"pred_rows": [1], "final_score": [7, 8], "execution_success": [4]}}
    headers = {}
    for name, cols in plan.items():
        src = SAMPLE / ("baseline_react" if name != "b" else "proposed_aat")
        run = shutil.copytree(src, tmp_path / name)
        for f in (run / schema.TASK_FILE, run / schema.LEGACY_TASK_FILE):
            if f.name == schema.LEGACY_TASK_FILE:
                f.unlink()  # the comparison is another test's
                continue
            with f.open(newline="", encoding="utf-8") as fh:  # run ids as the folders
                rows = list(csv.reader(fh))
            k = rows[0].index("run_id")
            for r in rows[1:]:
                r[k] = name
            with f.open("w", newline="", encoding="utf-8") as fh:
                csv.writer(fh, lineterminator="\n").writerows(rows)
            headers[name] = _edit(f, cols)
    return tmp_path, plan, headers


def _found(run) -> list[tuple]:
    return [(f.column, f.check, f.rows or (f.row,)) for f in run.findings
            if f.column in BAD and f.check in {c for _, c in BAD.values()}]


@pytest.mark.parametrize("parallel", [False, 2])
def test_findings_come_in_column_order_whatever_the_threads(bad_sweep, parallel):
    root, plan, headers = bad_sweep
    with pytest.warns(UserWarning, match="problem"):
        runs = da.load_runs(root, strict=False, cache=False, progress=False, parallel=parallel)
    for run in runs.runs:
        header = headers[run.run_id]
        expected = [(c, BAD[c][1], tuple(plan[run.run_id][c]))
                    for c in sorted(plan[run.run_id], key=header.index)]
        assert _found(run) == expected, run.run_id
        for col, at in plan[run.run_id].items():  # the bad values set to missing
            assert run.tasks[col].iloc[[r - 1 for r in at]].isna().all()


def test_one_thread_and_two_give_the_same_frames_and_findings(bad_sweep):
    root, _, _ = bad_sweep
    with pytest.warns(UserWarning):
        one = da.load_runs(root, strict=False, cache=False, progress=False, parallel=False)
    with pytest.warns(UserWarning):
        two = da.load_runs(root, strict=False, cache=False, progress=False, parallel=2)
    assert one.tasks.equals(two.tasks)
    assert [[str(f) for f in r.findings] for r in one.runs] == \
        [[str(f) for f in r.findings] for r in two.runs]


def test_replay_paths_look_up_each_run_in_its_own_folder(tmp_path):
    """Runs ``r`` and ``r/sub``: ``sub/t1`` is a folder of ``r/sub`` only, and the task id
    ``sub`` names a folder of ``r`` (the nested run) but has no replay there."""
    outer = tmp_path / "r"
    inner = outer / "sub"
    for d in (outer / "t1", inner / "t1", inner / "t2"):
        d.mkdir(parents=True)
    ids = ["t1", "sub", "t2", "t1", "t2", "t3", None]
    sizes = [3, 4]
    got = replay_paths([outer, inner], ids, sizes).to_pylist()
    expected = []
    for run_dir, part in ((outer, ids[:3]), (inner, ids[3:])):
        listed = set(os.listdir(run_dir))
        expected += [os.path.join(run_dir, t, schema.REPLAY_FILE) if t in listed else None
                     for t in part]
    assert got == expected
    assert got[1] == os.path.join(outer, "sub", schema.REPLAY_FILE)  # a folder: looked up later
    assert got[2] is None and got[4] == os.path.join(inner, "t2", schema.REPLAY_FILE)


# --- found by a fault pass on the parallel load ------------------------------------------------

def test_long_column_names_stay_with_their_run(tmp_path, monkeypatch):
    """Two runs' unknown columns whose names share their first 100+ characters and their
    length (a schema's text form shortens such names): each run keeps its own column and
    value, loaded fresh and from the cache."""
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    names = {"a": "note_" + "x" * 120 + "_A", "b": "note_" + "x" * 120 + "_B"}
    for run, col in names.items():
        (tmp_path / "runs" / run).mkdir(parents=True)
        (tmp_path / "runs" / run / schema.TASK_FILE).write_text(
            f"task_id,final_score,{col}\nt1,0.5,{run}-value\n", encoding="utf-8")
    for use_cache in (False, True, True):
        runs = da.load_runs(tmp_path / "runs", cache=use_cache, progress=False)
        for run in runs.runs:
            with open(tmp_path / "runs" / run.run_id / schema.TASK_FILE, encoding="utf-8") as fh:
                raw = next(csv.DictReader(fh))
            col = names[run.run_id]
            assert list(run.tasks.columns).count(col) == 1
            assert run.tasks[col].tolist() == [raw[col]]
        assert set(names.values()) <= set(runs.tasks.columns)
    alone = da.load_run(tmp_path / "runs" / "b")  # from b's own cache entry
    assert alone.tasks[names["b"]].tolist() == ["b-value"]


def test_a_cache_warning_of_the_legacy_file_names_the_callers_line(tmp_path, monkeypatch):
    """The legacy task file is parsed on another thread; its cache entry is written on the
    caller's, so a cache that cannot take it warns at the caller's line."""
    from dabench_analysis.load import _pipeline
    from dabench_analysis.load._task_files import SECOND_COLUMNS
    from dabench_analysis.schema._files import LEGACY_TASKS

    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_warned", set())
    run = shutil.copytree(SAMPLE / "baseline_react", tmp_path / "r")
    assert (run / schema.LEGACY_TASK_FILE).exists()
    request = _pipeline._request(run.absolute() / schema.LEGACY_TASK_FILE, LEGACY_TASKS,
                                 SECOND_COLUMNS)
    cache._entry(cache.usable(), request).mkdir(parents=True)  # a folder where the entry goes
    with pytest.warns(UserWarning, match="cannot write to the cache directory") as got:
        line = inspect.currentframe().f_lineno + 1
        da.load_run(run)
    (w,) = [w for w in got if "cannot write" in str(w.message)]
    assert (w.filename, w.lineno) == (__file__, line)


def test_a_fifo_legacy_file_beside_a_rejected_task_file_is_not_opened(tmp_path):
    """The task file is rejected on its header: the legacy file beside it is not read (a FIFO
    would block the load for ever), and the load fails at once."""
    run = tmp_path / "r"
    run.mkdir()
    (run / schema.TASK_FILE).write_text("task_id,score\nt1,1\n", encoding="utf-8")
    os.mkfifo(run / schema.LEGACY_TASK_FILE)
    code = ("import sys, dabench_analysis as da\ntry:\n    da.load_run(sys.argv[1], cache=False)\n"
            "except Exception as e:\n    print(type(e).__name__, str(e).splitlines()[0])")
    env = dict(os.environ, PYTHONPATH=str(Path(da.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.stdout.startswith("RunLoadError"), done.stderr[-2000:]
    assert "required column(s) ['final_score'] missing" in done.stdout


def test_a_cache_warning_of_a_restamped_entry_names_the_callers_line(tmp_path, monkeypatch):
    """Files read in the loader's threads whose entries are served for the same bytes under a
    new stamp are stored again on the caller's thread: a cache that cannot be written warns
    at the caller's line, not in concurrent/futures."""
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_warned", set())
    runs = [shutil.copytree(SAMPLE / name, tmp_path / "runs" / name)
            for name in ("baseline_react", "proposed_aat")]
    da.load_runs(tmp_path / "runs", progress=False, parallel=2)  # the entries
    for run in runs:  # a new stamp, the same bytes
        f = run / schema.TASK_FILE
        st = f.stat()
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))

    def unwritable(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache, "atomic_write", unwritable)
    with pytest.warns(UserWarning, match="cannot write to the cache directory") as got:
        line = inspect.currentframe().f_lineno + 1
        loaded = da.load_runs(tmp_path / "runs", progress=False, parallel=2)
    (w,) = [w for w in got if "cannot write" in str(w.message)]
    assert (w.filename, w.lineno) == (__file__, line)
    with open(runs[0] / schema.TASK_FILE, encoding="utf-8") as fh:  # served from the entries
        ids = [row["task_id"] for row in csv.DictReader(fh)]
    assert loaded.runs[0].tasks["task_id"].tolist() == ids


# --- found by a new user's first session ---------------------------------------------------------

def _bad_run(root: Path, name: str, value: str | None) -> tuple[Path, int | None]:
    """A copy of the sample run with ``value`` as data row 5's final_score (None: no
    final_score column); its own run id. Returns the folder and the 1-based data row."""
    run = shutil.copytree(SAMPLE / "baseline_react", root / name)
    (run / schema.LEGACY_TASK_FILE).unlink()
    path = run / schema.TASK_FILE
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    k = rows[0].index("run_id")
    for r in rows[1:]:
        r[k] = name
    i = rows[0].index("final_score")
    if value is None:
        rows = [r[:i] + r[i + 1:] for r in rows]
    else:
        rows[5][i] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return run, (None if value is None else 5)


def test_a_sweep_that_fails_lists_each_runs_problems_under_it(tmp_path):
    a, row_a = _bad_run(tmp_path, "a", "abc")
    b, _ = _bad_run(tmp_path, "b", None)
    with pytest.raises(da.RunLoadError) as err:
        da.load_runs([a, b], progress=False)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("2 of 2 run(s) could not be loaded")
    assert lines[1] == f"  {a}: {schema.TASK_FILE}: 1 problem(s) (in Python, load_run(path, " \
                       "strict=False) keeps the valid values)"
    assert lines[2].startswith(f"    - error: {schema.TASK_FILE}, row {row_a}, "
                               "column 'final_score': not a number")
    assert lines[3] == f"  {b}: {schema.TASK_FILE}: required column(s) ['final_score'] " \
                       "missing from the header"
    assert lines[4].startswith(f"    - error: {schema.TASK_FILE}, column 'final_score'")
    assert len(lines) == 5 and len(err.value.findings) == 2


def test_a_run_left_out_with_strict_false_is_said(tmp_path):
    good = shutil.copytree(SAMPLE / "proposed_aat", tmp_path / "good")
    bad, _ = _bad_run(tmp_path, "bad", None)
    with pytest.warns(UserWarning, match=r"1 run\(s\) could not be loaded and are not in the "
                      r"sweep \(see \.skipped\): .*bad: task_metrics.csv: required column"):
        runs = da.load_runs([good, bad], strict=False, progress=False)
    assert runs.skipped.values.tolist() == [
        [str(bad), f"{schema.TASK_FILE}: required column(s) ['final_score'] missing from the "
                   "header"]]
    with open(good / schema.TASK_FILE, encoding="utf-8") as fh:
        assert len(runs.tasks) == sum(1 for _ in csv.DictReader(fh))


def test_nothing_to_load_is_said(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.warns(UserWarning, match="no run loaded from .*empty: no run folder"):
        runs = da.load_runs(tmp_path / "empty", progress=False)
    assert runs.run_ids == [] and runs.skipped.empty
    (tmp_path / "pending" / "r1").mkdir(parents=True)
    with pytest.warns(UserWarning, match=r"no run loaded from .*pending: 1 path\(s\) skipped"):
        runs = da.load_runs(tmp_path / "pending", progress=False)
    assert runs.skipped["path"].tolist() == [str(tmp_path / "pending" / "r1")]
