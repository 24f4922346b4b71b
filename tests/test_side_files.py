"""trajectory.csv and tool_calls.csv written by other harness versions: every catalogue column of
each file is dropped in turn from a copy of ``data/sample_runs/proposed_aat``; validation must
not crash, must list the absent column (with the report sections it disables and the checks it
leaves not assessable), and the report's section decisions must agree with what the analysis
functions can really compute. One shape goes through the whole report (``dabench-analysis
report``). Also: one run_id per run directory, and aliases beside their catalogue names.

Expectations come from the column and check catalogues (``schema.TOOL_CALL_COLUMNS``,
``TRAJECTORY_COLUMNS``, ``Section.file_needs``, ``Check.reads``) and from the CSV edits
themselves (values, rows), never from the generator's output.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load_run, report, schema, validate_run
from dabench_analysis.figures import tool_latency
from dabench_analysis.schema.checks import checks_reading
from dabench_analysis.schema.needs import FILE_CATALOGUES, skips, split_qualified
from dabench_analysis.tables import timing

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs" / "proposed_aat"
TM, TRAJ, CALLS = "task_metrics.csv", "trajectory.csv", "tool_calls.csv"
#: Every (file, column) of the side-file catalogues.
#: The side files' eval-v2 columns (columns only other harnesses write, such as tau2's per-message
#: tokens or ``actor``, are never in an eval-v2 run: their absence is not a dropped column).
SIDE_COLUMNS = [(f, c) for f, cat in FILE_CATALOGUES.items() for c in cat
                if c not in schema.columns.OTHER_HARNESS_COLUMNS]
#: Checks reported per file rather than per task (nothing to skip when their column is absent:
#: the loader's required_column error, or the absent_column finding, says so).
FILE_LEVEL = {"unknown_task_id", "run_id_mismatch", "parent_step_invalid"}
#: Key columns of the side files: without one, the loader checks uniqueness on the key columns
#: left (reported to the owner of load/ as a separate issue); the findings it adds are allowed.
KEY_FINDINGS = {(TRAJ, "task_id"): {"duplicate_key"}, (TRAJ, "step_id"): {"duplicate_task_id"},
                (CALLS, "call_id"): {"duplicate_task_id"}}


def _rewrite(path: Path, edit) -> None:
    """Rewrite a CSV with ``edit(header, rows)`` applied, through the standard csv module."""
    with path.open(newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    header, rows = edit(header, rows)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])


def _drop(path: Path, column: str) -> None:
    def edit(header, rows):
        k = header.index(column)
        return header[:k] + header[k + 1:], [r[:k] + r[k + 1:] for r in rows]
    _rewrite(path, edit)


def _csv_copy(tmp_path: Path, name: str) -> Path:
    """The sample run's three CSV files (no replays: validated with ``replays=False``)."""
    dest = tmp_path / name
    dest.mkdir()
    for f in (TM, TRAJ, CALLS):
        shutil.copy(SAMPLE / f, dest / f)
    return dest


def _findings(run_dir: Path) -> tuple[Counter, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = validate_run(run_dir, replays=False)
    f = report.findings
    cols = f["column"].astype(object).where(f["column"].notna(), None)
    return Counter(zip(f["check"], f["severity"], f["file"], cols, strict=True)), report


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return _findings(_csv_copy(tmp_path_factory.mktemp("clean"), "proposed_aat"))


def test_side_needs_and_reads_name_catalogue_columns():
    declared = [f.needs for f in schema._declared.declared()]
    named = [n for d in declared for n in d.file_needs]
    named += [n for c in schema.CHECKS.values() for n in c.reads]
    assert named
    for name in named:
        file, col = split_qualified(name)
        assert col in FILE_CATALOGUES[file], name
    for d in declared:  # a function needing a file's columns names the file
        assert {split_qualified(n)[0] for n in d.file_needs} <= set(d.files), d


def _expected(file: str, col: str) -> tuple[Counter, set[str]]:
    """Findings the absent column must add (from the catalogues) and checks it leaves not
    assessable per task (invariant_skipped)."""
    spec, name = FILE_CATALOGUES[file][col], f"{file}:{col}"
    reads = checks_reading(name) + (checks_reading(f"{file}:task_id") if col == "task_id" else [])
    skipped = {c for c in reads if c not in FILE_LEVEL}
    if spec.required:
        return Counter({("required_column", "error", file, col): 1}), skipped
    if col == "duration_seconds":  # §Troubleshooting: missing time data, a warning of its own
        return Counter({("missing_time_data", "warning", file, col): 1}), skipped
    off = schema._declared.needing(name)
    if off:
        return Counter({("absent_column", "warning", file, col): 1}), skipped
    if reads or schema._declared.using(name):  # used when present: named, an info
        return Counter({("absent_column", "info", file, col): 1}), skipped
    return Counter({("absent_column", "info", file, None): 1}), skipped


@pytest.mark.parametrize(("file", "col"), SIDE_COLUMNS, ids=[f"{f}:{c}" for f, c in SIDE_COLUMNS])
def test_each_side_column_dropped_is_listed_and_never_crashes(tmp_path, clean, file, col):
    run_dir = _csv_copy(tmp_path, "older_harness")
    _drop(run_dir / file, col)
    got, report = _findings(run_dir)
    base, clean_report = clean
    expected, skipped = _expected(file, col)
    added = got - base
    assert expected <= added, f"missing: {sorted(expected - added)}"
    skipped_got = {m.split()[0] for m in report.findings.loc[
        report.findings["check"] == "invariant_skipped", "message"]}
    assert skipped_got == skipped
    allowed = set(expected) | {("invariant_skipped", "info", TM, c) for c in
                               report.findings["column"].dropna()}
    extra = [k for k in added if k not in allowed and k[0] not in KEY_FINDINGS.get((file, col),
                                                                                      ())]
    assert not extra, extra
    msgs = report.findings.loc[report.findings["check"] == "absent_column", "message"]
    name = f"{file}:{col}"
    named = [] if FILE_CATALOGUES[file][col].required or col == "duration_seconds" else \
        schema._declared.needing(name) + checks_reading(name)
    for part in named:  # required: the loader's error names the column
        assert msgs.str.contains(part, regex=False).any(), (part, msgs.tolist())
    # only what the column feeds may change the score: none of these is a health input
    assert report.health.harness_score == pytest.approx(clean_report.health.harness_score)
    _sections_agree_with_the_functions(run_dir, name)


def _sections_agree_with_the_functions(run_dir: Path, name: str) -> None:
    """tool_usage is skipped (Skipped, naming the column) exactly when its declaration says
    the run lacks what it needs; given the run or its frame alike."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run = load_run(run_dir, strict=False)
        missing = skips(timing.tool_usage, run)
        calls = run.tool_calls
    ready = not missing
    assert ready == (name not in timing.tool_usage.needs.file_needs)
    if ready:
        assert len(timing.tool_usage(calls)) > 0
    else:
        assert missing == [name]
        col = split_qualified(name)[1]
        with pytest.raises(schema.Skipped, match=f"needs `{col}` in tool_calls.csv"):
            timing.tool_usage(calls)
        with pytest.raises(schema.Skipped, match=f"needs `{col}` in tool_calls.csv"):
            tool_latency(run)


@pytest.mark.parametrize(("name", "severity", "message"), [
    (f"{CALLS}:latency_seconds", "info", "optional column absent: figures.process.tool_latency, "
     "tables.timing.tool_usage run without it"),
    (f"{CALLS}:success", "warning", "optional column absent: disables "
     "figures.process.tool_latency, tables.timing.tool_usage, trajectory.profile.tool_fit;"
     " tool_failure_count_mismatch not assessable"),
    (f"{TRAJ}:tokens", "info", "optional column absent: token_conservation not assessable"),
    (f"{TRAJ}:run_id", "info", "optional column absent: run_id_mismatch not assessable"),
])
def test_absent_side_column_messages(tmp_path, name, severity, message):
    file, col = split_qualified(name)
    run_dir = _csv_copy(tmp_path, "r")
    _drop(run_dir / file, col)
    f = _findings(run_dir)[1].findings
    row = f[(f["check"] == "absent_column") & (f["file"] == file)]
    assert row[["severity", "column", "message"]].values.tolist() == [[severity, col, message]]


def test_sections_note_names_the_file_and_column(tmp_path, capsys):
    calls = pd.DataFrame({"task_id": ["a"], "tool": ["sql"], "tokens": [3]})
    with pytest.raises(schema.Skipped) as err:
        timing.tool_usage(calls)
    assert err.value.missing == [f"{CALLS}:tool_name", f"{CALLS}:success"]
    run_dir = _csv_copy(tmp_path, "r")
    (run_dir / CALLS).unlink()  # without the file, the file is what is missing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run = load_run(run_dir)
        out = report.run_context(run, {"threshold": 0.8}, out=tmp_path / "o")
        with out.section("tool_usage", "Tool latency and failures"):
            out.table(timing.tool_usage(run), "tool_usage")
    assert "**Skipped: Tool latency and failures**. Needs `tool_calls.csv`, absent in this " \
           "run." in capsys.readouterr().out
    assert out.sections.skipped == [{"section": "tool_usage", "title": "Tool latency and "
                                     "failures", "missing": [CALLS]}]


def test_report_without_latency_seconds_computes_tool_failures_and_exits_0(tmp_path):
    """The reported crash: run_report.ipynb failed in timing.tool_usage (exit 1); then it was
    skipped although the success flags were there (issue 33): failure rates without latency."""
    run_dir = tmp_path / "older_harness"
    shutil.copytree(SAMPLE, run_dir)
    _drop(run_dir / CALLS, "latency_seconds")
    out = tmp_path / "out"
    cli = Path(sys.executable).with_name("dabench-analysis")
    proc = subprocess.run([str(cli), "report", str(run_dir), "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = out / "older_harness"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["skipped"] == [  # no trial errored; an eval-v2 run: one trial per task
        {"section": "failure_bounds", "title": "Failure bounds: accuracy with errored trials",
         "missing": ["an errored trial"]},
        *({"section": s, "title": t, "missing": ["repeated trials"]} for s, t in (
            ("pass_k", "Repeated trials: pass@k and pass^k"),
            ("flakiness", "Repeated trials: tasks with mixed outcomes"))),
        {"section": "mistake_agreement", "title": "First failing step against labelled mistakes",
         "missing": ["mistake_step"]}]
    assert {"section": "tool_usage", "title": "Tool latency and failures",
            "absent": [f"{CALLS}:latency_seconds"]} in summary["reduced"]
    with (SAMPLE / CALLS).open(newline="", encoding="utf-8") as fh:  # expected from the file
        rows = list(csv.DictReader(fh))
    fails = Counter(r["tool_name"] for r in rows if r["success"].strip().lower() in ("false", "0"))
    calls = Counter(r["tool_name"] for r in rows)
    with (folder / "tables" / "tool_usage.csv").open(newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert "mean_latency_s" not in table[0] and len(table) == len(calls)
    for row in table:  # failure rate from the success flags alone
        name = row["tool_name"]
        assert (int(row["n_calls"]), int(row["n_failures"])) == (calls[name], fails[name])
        assert float(row["failure_rate"]) == pytest.approx(fails[name] / calls[name])
    assert (folder / "tool_latency.png").is_file()
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "is computed without <code>latency_seconds</code> in tool_calls.csv" in html
    assert "optional column absent: figures.process.tool_latency, tables.timing.tool_usage run " \
           "without it" in html  # the findings


# --- one run_id per run directory ---------------------------------------------------------------

def _set_run_id(path: Path, rows: range | list[int], value: str) -> None:
    def edit(header, data):
        k = header.index("run_id")
        for i in rows:
            data[i - 1][k] = value
        return header, data
    _rewrite(path, edit)


def test_mixed_run_id_in_task_metrics_is_an_error_at_the_first_change(tmp_path):
    run_dir = _csv_copy(tmp_path, "proposed_aat")
    _set_run_id(run_dir / TM, range(41, 81), "other_run")
    report = _findings(run_dir)[1]
    f = report.findings[report.findings["check"] == "run_id_mixed"]
    assert f[["severity", "file", "row", "column"]].values.tolist() == [
        ["error", TM, 41, "run_id"]]
    assert f["message"].iloc[0] == (
        "task_metrics.csv holds 2 run_id values: 'proposed_aat' (40 rows), 'other_run' "
        "(40 rows); it changes at row 41 from 'proposed_aat' to 'other_run' (a run directory "
        "holds one run)")
    assert not report.ok
    # the side files carry 'proposed_aat', one of task_metrics' values: no second error
    assert not (report.findings["check"] == "run_id_mismatch").any()


@pytest.mark.parametrize("file", [TRAJ, CALLS])
def test_side_file_run_id_must_be_task_metrics(tmp_path, file):
    run_dir = _csv_copy(tmp_path, "proposed_aat")
    _set_run_id(run_dir / file, [7, 9, 10], "rerun_2")
    f = _findings(run_dir)[1].findings
    f = f[f["check"].str.startswith("run_id")]
    assert f[["severity", "check", "file", "row"]].values.tolist() == [
        ["error", "run_id_mismatch", file, 7]]
    assert f["message"].iloc[0] == (f"{file} rows carry run_id 'rerun_2' (3 rows) where "
                                    "task_metrics.csv has 'proposed_aat'; first at row 7")


def test_single_run_id_and_absent_run_id_column_are_fine(tmp_path):
    run_dir = _csv_copy(tmp_path, "proposed_aat")
    _drop(run_dir / TM, "run_id")  # filled from the folder name, as the side files' cells say
    f = _findings(run_dir)[1].findings
    assert not f["check"].str.startswith("run_id").any()


# --- an alias beside its catalogue name ---------------------------------------------------------

def test_alias_beside_its_catalogue_name_is_reported_as_such(tmp_path):
    run_dir = _csv_copy(tmp_path, "proposed_aat")

    def edit(header, rows):  # another version's name, holding the same values
        k = header.index("schema_agent_used")
        return header + ["schema_agent_called"], [r + [r[k]] for r in rows]
    _rewrite(run_dir / TM, edit)
    f = _findings(run_dir)[1].findings
    assert not ((f["check"] == "unknown_column") & (f["column"] == "schema_agent_called")).any()
    row = f[f["column"] == "schema_agent_called"]
    assert row[["severity", "check"]].values.tolist() == [["warning", "column_alias_duplicate"]]
    assert row["message"].iloc[0] == ("both 'schema_agent_called' and its catalogue name "
                                      "'schema_agent_used' are present; 'schema_agent_used' is "
                                      "used, 'schema_agent_called' is kept as text")
