"""The per-task table reader (CSV, JSON lines, Parquet) damaged as the eval-v2 tests damage
task_metrics.csv (issue 33 items 1, 2): a missing key value, a shadowed or missing mapped
column, float32 scores, big integers, zero rows, a second task file; and tables of several runs
(one run per ``run_id`` value), on a table made from tau-bench's published gpt-4o airline run.

Expected values are computed here from the values written (or from the raw tau-bench JSON),
never through the package's readers.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dabench_analysis as da
from dabench_analysis import schema
from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.report import _jobs as jobs
from dabench_analysis.synthetic import generate_run
from dabench_analysis.tables.sweep import task_counts

HARNESS = Path(__file__).parent / "data" / "harness"
TAU = HARNESS / "tau-bench" / "gpt-4o-airline.json"
BY_TRIAL = HARNESS / "tables" / "gpt-4o-airline-by-trial.csv"
BY_TRIAL_MAP = {"task_id": "task", "final_score": "reward", "run_id": "run"}
FORMATS = ("csv", "jsonl", "parquet")


def _write(path: Path, columns: dict[str, list], types: dict[str, pa.DataType] | None = None
           ) -> Path:
    """``columns`` as a CSV (None: an empty cell), JSON-lines (None: the key left out) or
    Parquet file (Arrow ``types`` where given)."""
    names, n = list(columns), len(next(iter(columns.values())))
    rows = [{c: columns[c][i] for c in names} for i in range(n)]
    if path.suffix == ".csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        w.writerows([["" if r[c] is None else r[c] for c in names] for r in rows])
        path.write_text(buf.getvalue(), encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n"
                                for r in rows), encoding="utf-8")
    else:
        types = types or {}
        pq.write_table(pa.table({c: pa.array(columns[c], types.get(c)) for c in names}), path)
    return path


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


# --- item 1: the table reader's faults, per format ----------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_a_row_without_a_task_id_is_an_error_naming_it(tmp_path, fmt):
    p = _write(tmp_path / f"r.{fmt}", {"task_id": ["a", None, "c"],
                                        "final_score": [1.0, 0.5, 0.0]})
    with pytest.raises(RunLoadError) as err:
        da.load_table(p)
    found = [(f.file, f.row, f.column, f.check) for f in err.value.findings
             if f.severity == "error"]
    assert found == [(p.name, 2, "task_id", "missing_key")]
    run = _quiet(da.load_table, p, strict=False)
    assert run.tasks["task_id"].tolist() == ["a", "c"]  # kept out, with the finding


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_mapping_wins_over_the_files_own_column(tmp_path, fmt):
    score, own = [1.0, 0.5, 0.0], [0.0, 0.0, 0.0]
    p = _write(tmp_path / f"r.{fmt}", {"task_id": ["a", "b", "c"], "final_score": own,
                                        "score": score})
    run = da.load_table(p, final_score="score")
    assert run.tasks["final_score"].tolist() == score  # never the file's own final_score
    shadow = [f for f in run.findings if f.check == "mapped_column_shadowed"]
    assert [(f.severity, f.file, f.column) for f in shadow] == [("warning", p.name,
                                                                 "final_score")]
    assert "final_score='score'" in shadow[0].message
    assert [float(v) for v in run.tasks["final_score_shadowed"]] == own  # kept, as text


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mapping", [{"total_tokens": "nosuch"},
                                     {"final_score": "nosuch"}])
def test_a_mapped_column_the_file_lacks_is_a_clear_error(tmp_path, fmt, mapping):
    p = _write(tmp_path / f"r.{fmt}", {"task_id": ["a", "b"], "final_score": [1.0, 0.0],
                                        "tokens": [10, 20]})
    with pytest.raises(RunLoadError, match=r"r\.\w+: mapped column\(s\) 'nosuch' not in the "
                                           r"file; its columns: task_id, final_score, tokens"
                       ) as err:
        da.load_table(p, **mapping)
    assert [(f.severity, f.file, f.column, f.check) for f in err.value.findings] == [
        ("error", p.name, "nosuch", "mapped_column")]


@pytest.mark.parametrize(("fmt", "width"), [*((f, pa.float64()) for f in FORMATS),
                                            ("parquet", pa.float32()), ("parquet", pa.float16())])
def test_scores_are_read_as_written_whatever_the_float_width(tmp_path, fmt, width):
    scores = [0.7, 0.7, 0.7, 0.2]
    p = _write(tmp_path / f"r.{fmt}", {"task_id": list("abcd"), "final_score": scores},
               {"final_score": width})
    if fmt == "parquet":  # the file holds the narrow float (0.699999988 for float32)
        assert pq.read_table(p).column("final_score").type == width
    run = da.load_table(p)
    expected = sum(s >= 0.7 for s in scores) / len(scores)  # 3 of 4, as the user wrote them
    assert expected == 0.75
    assert float(schema.correct(run.tasks["final_score"], 0.7).mean()) == expected
    assert run.tasks["final_score"].tolist() == scores


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_big_integer_is_a_finding_on_its_row(tmp_path, fmt):
    big = 2**53 + 1
    p = _write(tmp_path / f"r.{fmt}", {"task_id": ["a", "b", "c"],
                                        "final_score": [1.0, 0.5, 0.0],
                                        "total_tokens": [10, big, 30]},
               {"total_tokens": pa.int64()})
    with pytest.raises(RunLoadError) as err:
        da.load_table(p)
    found = [f for f in err.value.findings if f.severity == "error"]
    assert [(f.file, f.row, f.column, f.check) for f in found] == [
        (p.name, 2, "total_tokens", "integer")]
    assert str(big) in found[0].message  # as written, not a rounded float
    run = _quiet(da.load_table, p, strict=False)  # the rest of the file loads
    assert run.tasks["final_score"].tolist() == [1.0, 0.5, 0.0]
    assert run.tasks["total_tokens"].tolist()[::2] == [10, 30]
    assert run.tasks["total_tokens"].isna().tolist() == [False, True, False]


def _empty(path: Path) -> Path:
    if path.suffix == ".csv":
        path.write_text("task_id,final_score\n", encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("\n", encoding="utf-8")
    else:
        pq.write_table(pa.table({"task_id": pa.array([], pa.string()),
                                 "final_score": pa.array([], pa.float64())}), path)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_of_zero_rows_is_named_and_left_out_of_a_sweep(tmp_path, fmt):
    empty = _empty(tmp_path / f"empty.{fmt}")
    with pytest.raises(RunLoadError, match="0 task rows") as err:
        da.load_table(empty)
    assert [(f.file, f.check) for f in err.value.findings if f.check == "no_rows"] == [
        (empty.name, "no_rows")]
    a = _write(tmp_path / "a.csv", {"task_id": ["t1", "t2"], "final_score": [1.0, 0.0]})
    b = _write(tmp_path / "b.csv", {"task_id": ["t2", "t3"], "final_score": [1.0, 1.0]})
    runs = da.load_runs([a, empty, b], progress=False)
    assert runs.run_ids == ["a", "b"]
    assert runs.skipped["path"].tolist() == [str(empty)]
    assert runs.skipped["reason"].str.contains("0 task rows").all()
    assert task_counts(runs)["n_shared"].tolist() == [1, 1]  # t2: the one both runs have


def test_a_header_only_run_folder_is_left_out_of_the_sweep_with_its_reason(tmp_path):
    dirs = [generate_run(tmp_path, run_id=r, n_tasks=6, seed=i) for i, r in
            enumerate(["a", "b", "empty"])]
    tm = dirs[2] / schema.TASK_FILE
    tm.write_text(tm.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="empty: 0 task rows in task_metrics.csv"):
        runs = da.load_runs(dirs, progress=False)
    assert runs.run_ids == ["a", "b"]
    assert runs.skipped.values.tolist() == [
        [str(dirs[2]), "0 task rows in task_metrics.csv (a header and no data rows)"]]
    ids = [{r["task_id"] for r in csv.DictReader(open(d / schema.TASK_FILE, encoding="utf-8"))}
           for d in dirs[:2]]
    assert task_counts(runs)["n_shared"].tolist() == [len(ids[0] & ids[1])] * 2
    alone = da.load_run(dirs[2])  # one run: loaded, with the finding naming the file
    assert len(alone.tasks) == 0
    assert [(f.file, f.message[:11]) for f in alone.findings if f.check == "no_rows"] == [
        (schema.TASK_FILE, "0 task rows")]


# --- a second task file -------------------------------------------------------------------------

def _legacy_scores(run_dir: Path, new: dict[str, str]) -> None:
    path = run_dir / schema.LEGACY_TASK_FILE
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    i, k = rows[0].index("final_score"), rows[0].index("task_id")
    for r in rows[1:]:
        r[i] = new.get(r[k], r[i])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def test_a_second_task_file_is_named_with_whether_it_agrees(tmp_path):
    run_dir = shutil.copytree("data/sample_runs/baseline_react", tmp_path / "both")
    names = (schema.TASK_FILE, schema.LEGACY_TASK_FILE)

    def second():
        return [f for f in da.load_run(run_dir, cache=False).findings
                if f.check == "second_task_file"]

    assert second() == []  # the evaluator writes both files, agreeing: nothing to say
    n = sum(1 for _ in csv.DictReader(open(run_dir / schema.TASK_FILE, encoding="utf-8")))
    _legacy_scores(run_dir, {"task_1": "0.123", "task_2": "0.456"})
    (differ,) = second()
    assert all(n in differ.message for n in names)
    assert f"{schema.TASK_FILE} is used" in differ.message
    assert differ.severity == "warning" and differ.file == schema.LEGACY_TASK_FILE
    assert f"final_score differs for 2 of {n} tasks (task_1: " in differ.message


# --- item 2: tables of several runs ---------------------------------------------------------------

def _raw_by_trial() -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in json.loads(TAU.read_text(encoding="utf-8")):
        out.setdefault(f"gpt-4o-trial-{r['trial']}", []).append(float(r["reward"]))
    return out


def test_a_table_of_several_runs_gives_one_run_per_value():
    raw = _raw_by_trial()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no run dropped, no warning
        runs = da.load_table(BY_TRIAL, task_id="task", final_score="reward", run_id="run")
    assert isinstance(runs, da.Runs) and runs.run_ids == list(raw)
    for run in runs:
        rewards = raw[run.run_id]
        assert len(run.tasks) == len(rewards) == 50
        assert run.tasks["final_score"].tolist() == rewards
        accuracy = float(np.mean(np.asarray(rewards) >= 1.0))  # 0.42, 0.44, 0.40, 0.42
        assert float(schema.correct(run.tasks["final_score"], 1.0).mean()) == accuracy
        assert not [f for f in run.findings if f.severity != "info"]
    assert [round(float(np.mean(v)), 2) for v in raw.values()] == [0.42, 0.44, 0.40, 0.42]
    swept = da.load_runs([BY_TRIAL], mapping=BY_TRIAL_MAP, progress=False)
    assert swept.run_ids == list(raw) and len(swept.tasks) == 200
    assert task_counts(swept)["n_shared"].tolist() == [50] * 4


def test_a_repeat_is_a_repeat_within_its_own_run(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("id,run,score\nt1,r1,1\nt2,r1,0\nt1,r2,1\nt1,r1,0\nt2,r2,1\n",
                 encoding="utf-8")
    with pytest.raises(RunLoadError) as err:
        da.load_table(p, task_id="id", final_score="score", run_id="run")
    found = [f for f in err.value.findings if f.severity == "error"]
    assert [(f.row, f.column, f.check, f.rows) for f in found] == [
        (4, "task_id", "duplicate_task_id", (1, 4))]
    with pytest.warns(UserWarning, match="r1: 1 problem"):
        runs = da.load_table(p, task_id="id", final_score="score", run_id="run", strict=False)
    assert runs.run_ids == ["r1", "r2"]
    assert runs["r1"].tasks["final_score"].tolist() == [1.0, 0.0]  # the first t1 kept
    assert runs["r2"].tasks["final_score"].tolist() == [1.0, 1.0]
    assert runs["r2"].source_rows == [3, 5]
    assert not [f for f in runs["r2"].findings if f.severity == "error"]


def test_the_sweep_report_counts_the_runs_a_table_holds(tmp_path):
    planned = jobs.plan_jobs([BY_TRIAL], tmp_path / "out", sweep=True,
                             column_map=BY_TRIAL_MAP)
    assert [(j.kind, j.name) for j in planned] == [("sweep", "sweep")]  # its runs are rows
    with pytest.raises(jobs.ReportError, match="got 1 of 1"):  # one run without run_id
        jobs.plan_jobs([BY_TRIAL], tmp_path / "out", sweep=True,
                       column_map={"task_id": "task", "final_score": "reward"})
