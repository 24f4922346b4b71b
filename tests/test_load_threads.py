"""The task load's parallel parts give what one thread gives: the rules typing columns in the
loader's threads (findings in column order), the legacy task files and the task folders read
beside the rules, and the loader's columns added once over the stacked runs. Expected values
come from the raw CSV files (the csv module) and the folders (os.listdir)."""

from __future__ import annotations

import csv
import io
import os
import shutil
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis import schema
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
