"""Harness health (issue 12): the guide's three causes of a score below 7, each alone; a clean
run >= 9; the not-evaluated state (no score, its own exit code, the same state as the batch);
``validate --out``.

Each damaged run is a copy of ``data/sample_runs/proposed_aat`` with one thing broken through
the standard csv module, consistently, so that no invariant other than the one aimed at fails.
The expected scores come from the documented formula, written out here:

    weighted = 10 (0.4 R + 0.2 V + 0.2 A + 0.1 T + 0.1 F)
    k = [1 - T > 0.10] + [1 - F > 0.10] + [1 - A > 0.10]
    score = weighted if k == 0 else min(weighted, 8 - 2 k)
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dabench_analysis.report import _jobs as jobs
from dabench_analysis.report._cli import app, validate_command
from dabench_analysis.report._index import write_index
from dabench_analysis.report.runner import ReportError
from dabench_analysis.validate import findings_table, health_table, validate_run
from dabench_analysis.validate._health import harness_score

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"
TM, TC = "task_metrics.csv", "tool_calls.csv"
STAGES = ["understanding_time", "planning_time", "execution_stage_time", "verification_time",
          "summary_time"]


def _read(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames), list(reader)


def _write(path: Path, fields: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE / "proposed_aat", tmp_path / "proposed_aat"))


def _components(run: Path) -> dict[str, float]:
    """A, T and F counted from the CSV files (R = V = 1: nothing else is broken)."""
    _, rows = _read(run / TM)
    failed = [r for r in rows if float(r["final_score"]) < 0.8]
    a = sum(r["failure_category"] not in ("", "UNKNOWN_FAILURE") for r in failed) / len(failed)
    t = sum(sum(float(r[c]) for c in STAGES) / float(r["execution_time"]) >= 0.5
            for r in rows) / len(rows)
    f = 1 - sum(int(r["tool_failures"]) for r in rows) / sum(int(r["tool_calls"]) for r in rows)
    return {"A": a, "T": t, "F": f}


def _expected(A: float, T: float, F: float, R: float = 1.0, V: float = 1.0) -> float:
    weighted = 10 * (0.4 * R + 0.2 * V + 0.2 * A + 0.1 * T + 0.1 * F)
    k = (1 - T > 0.10) + (1 - F > 0.10) + (1 - A > 0.10)
    return weighted if k == 0 else min(weighted, 8 - 2 * k)


def _edit_replays(run: Path, edit) -> None:
    """Apply ``edit(task_row, replay)`` to every task's task_replay.json (kept consistent with
    task_metrics.csv, which the replay checks compare it with)."""
    _, rows = _read(run / TM)
    for r in rows:
        path = run / r["task_id"] / "task_replay.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(r, data)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _fail_every_tool_call(run: Path) -> None:
    fields, calls = _read(run / TC)
    for c in calls:
        c["success"], c["error_type"], c["error_message"] = "0", "tool_error", "failed"
    _write(run / TC, fields, calls)
    fields, rows = _read(run / TM)
    for r in rows:
        r["tool_failures"] = r["tool_calls"]
        useful = int(r["useful_tool_calls"])  # max(0, useful - failures) / calls (§Key Metrics 4)
        r["tool_selection_accuracy"] = repr(max(0, useful - int(r["tool_calls"]))
                                            / int(r["tool_calls"]))
    _write(run / TM, fields, rows)

    def edit(row: dict, replay: dict) -> None:
        for call in replay.get("tool_calls", []):
            call["success"] = False
        if replay.get("failure_attribution"):
            replay["failure_attribution"]["tool_failure_count"] = int(row["tool_calls"])
    _edit_replays(run, edit)


def _shrink_stage_times(run: Path, n_tasks: int | None = None) -> None:
    """Halve the five per-stage times of the first ``n_tasks`` tasks (all by default): their
    time accounting ratios (0.50-0.80 in the sample) fall below 0.5, and stay above the 0.05
    that would be a time_accounting_low warning; the replays' time accounting follows."""
    fields, rows = _read(run / TM)
    for r in rows[:n_tasks]:
        for c in STAGES:
            r[c] = repr(float(r[c]) / 2)
    _write(run / TM, fields, rows)

    def edit(row: dict, replay: dict) -> None:
        component, wall = sum(float(row[c]) for c in STAGES), float(row["execution_time"])
        replay["time_accounting_ratio"] = component / wall
        replay["unaccounted_overhead_time_seconds"] = wall - component
    _edit_replays(run, edit)


def _unattribute(run: Path, n_tasks: int | None = None) -> None:
    """Make the first ``n_tasks`` failed tasks (all by default) UNKNOWN_FAILURE, in
    task_metrics.csv and in their replays' failure_attribution."""
    fields, rows = _read(run / TM)
    failed = [r for r in rows if float(r["final_score"]) < 0.8][:n_tasks]
    for r in failed:
        r["failure_category"] = "UNKNOWN_FAILURE"
    _write(run / TM, fields, rows)
    ids = {r["task_id"] for r in failed}

    def edit(row: dict, replay: dict) -> None:
        if row["task_id"] in ids:
            replay["failure_attribution"]["failure_category"] = "UNKNOWN_FAILURE"
    _edit_replays(run, edit)


def _only_info(rep, allow: tuple[str, ...] = ()) -> None:
    """No error and no warning, except the checks in ``allow``."""
    assert rep.ok and rep.state == "evaluated"
    shown = rep.findings[~rep.findings["check"].isin(allow)]
    assert set(shown["severity"]) <= {"info"}, shown.to_string()


#: The row-level face of missing attribution (V2.1 item 1: no UNKNOWN_FAILURE when the task has
#: an outcome_error_type bucket): the same cause, reported per task as a warning.
ATTRIBUTION_WARNING = ("unknown_failure_with_bucket",)


# --- the formula --------------------------------------------------------------------------------

@pytest.mark.parametrize("parts, expected", [
    ({}, (10.0, ())),
    ({"tool_reliability": 0.0}, (6.0, ("tool_failures",))),           # weighted 9.0
    ({"time_accounting": 0.0}, (6.0, ("time_gaps",))),                 # weighted 9.0
    ({"attribution": 0.0}, (6.0, ("missing_attribution",))),           # weighted 8.0
    ({"tool_reliability": 0.9, "time_accounting": 0.9, "attribution": 0.9}, (9.6, ())),
    ({"tool_reliability": 0.5, "time_accounting": 0.5}, (4.0, ("time_gaps", "tool_failures"))),
    ({"tool_reliability": 0.0, "time_accounting": 0.0, "attribution": 0.0},
     (2.0, ("time_gaps", "tool_failures", "missing_attribution"))),
    ({"reconciliation": 0.0, "attribution": 0.0}, (4.0, ("missing_attribution",))),  # below cap
])
def test_harness_score_formula(parts, expected):
    comps = {"reconciliation": 1.0, "validity": 1.0, "attribution": 1.0, "time_accounting": 1.0,
             "tool_reliability": 1.0, **parts}
    score, weighted, causes = harness_score(comps)
    assert weighted == pytest.approx(10 * (0.4 * comps["reconciliation"] + 0.2 * comps["validity"]
                                           + 0.2 * comps["attribution"]
                                           + 0.1 * comps["time_accounting"]
                                           + 0.1 * comps["tool_reliability"]), abs=1e-12)
    assert (score, causes) == (pytest.approx(expected[0], abs=1e-12), expected[1])


# --- a clean run and each cause alone -----------------------------------------------------------

def test_clean_run_scores_at_least_9(tmp_path):
    run = _copy(tmp_path)
    rep = validate_run(run)
    _only_info(rep)
    c = _components(run)
    assert (c["A"], c["T"]) == (1.0, 1.0) and 1 - c["F"] <= 0.10  # 65 of 792 calls failed
    assert rep.health.harness_score == pytest.approx(_expected(**c), abs=1e-9)
    assert rep.health.harness_score >= 9
    assert rep.health.causes == () and rep.health.harness_status == "HEALTHY"


def test_every_tool_call_failing_alone_is_below_7(tmp_path):
    run = _copy(tmp_path)
    _fail_every_tool_call(run)
    rep = validate_run(run)
    _only_info(rep)
    c = _components(run)
    assert c == {"A": 1.0, "T": 1.0, "F": 0.0}
    assert rep.health.weighted_score == pytest.approx(9.0)  # 9.1 "HEALTHY" before issue 12
    assert rep.health.harness_score == pytest.approx(_expected(**c)) == 6.0
    assert rep.health.causes == ("tool_failures",)
    assert (rep.health.harness_status, rep.health.harness_band) == ("UNHEALTHY", "FAIR")
    row = health_table(rep).set_index("measure").loc["tool_failures"]
    assert (row["value"], row["limit"], row["points"], row["status"]) == (1.0, 0.10, 6.0,
                                                                          "found")


def test_time_gaps_alone_are_below_7(tmp_path):
    run = _copy(tmp_path)
    _shrink_stage_times(run)
    rep = validate_run(run)
    _only_info(rep)
    c = _components(run)
    assert c["T"] == 0.0 and c["A"] == 1.0
    assert rep.health.harness_score == pytest.approx(_expected(**c)) == 6.0
    assert rep.health.causes == ("time_gaps",)
    assert rep.health.harness_status == "UNHEALTHY"


@pytest.mark.parametrize("n_gaps, causes", [(8, ()), (9, ("time_gaps",))])
def test_time_gaps_limit_is_more_than_10_percent_of_tasks(tmp_path, n_gaps, causes):
    run = _copy(tmp_path)
    _shrink_stage_times(run, n_gaps)  # 8 of 80 = 10 %: within the limit; 9 of 80: above
    rep = validate_run(run)
    _only_info(rep)
    c = _components(run)
    assert c["T"] == (80 - n_gaps) / 80
    assert rep.health.causes == causes
    assert rep.health.harness_score == pytest.approx(_expected(**c), abs=1e-9)
    assert (rep.health.harness_score >= 9) == (not causes)


def test_missing_attribution_alone_is_below_7(tmp_path):
    run = _copy(tmp_path)
    _unattribute(run)
    rep = validate_run(run)
    _only_info(rep, ATTRIBUTION_WARNING)
    c = _components(run)
    assert c["A"] == 0.0 and c["T"] == 1.0
    assert rep.health.harness_score == pytest.approx(_expected(**c)) == 6.0
    assert rep.health.causes == ("missing_attribution",)


def test_one_unattributed_failure_of_8_is_above_the_limit(tmp_path):
    run = _copy(tmp_path)
    _unattribute(run, 1)  # 1 of 8 failed tasks = 12.5 % > 10 %
    rep = validate_run(run)
    _only_info(rep, ATTRIBUTION_WARNING)
    c = _components(run)
    assert c["A"] == 7 / 8
    assert rep.health.causes == ("missing_attribution",)
    assert rep.health.harness_score == pytest.approx(_expected(**c)) == 6.0


def test_causes_together_lower_the_cap_one_band_each(tmp_path):
    run = _copy(tmp_path)
    _fail_every_tool_call(run)
    _shrink_stage_times(run)
    two = validate_run(run)
    assert two.health.harness_score == pytest.approx(_expected(**_components(run))) == 4.0
    assert two.health.harness_band == "POOR"
    _unattribute(run)
    three = validate_run(run)
    _only_info(three, ATTRIBUTION_WARNING)
    assert three.health.harness_score == pytest.approx(_expected(**_components(run))) == 2.0
    assert three.health.harness_band == "UNHEALTHY"


def test_health_table_columns_and_points(tmp_path):
    table = health_table(validate_run(SAMPLE / "proposed_aat"))
    assert list(table.columns) == ["run_id", "state", "assessment", "measure", "value", "limit",
                                   "weight", "points", "status", "note"]
    harness = table[table["assessment"] == "harness_health"].set_index("measure")
    parts = harness.loc[["reconciliation", "validity", "attribution", "time_accounting",
                         "tool_reliability"], "points"].sum()
    assert parts == pytest.approx(harness.loc["weighted_score", "value"], abs=1e-12)
    assert harness.loc[["time_gaps", "tool_failures", "missing_attribution"],
                       "status"].tolist() == ["clear"] * 3


# --- not evaluated ------------------------------------------------------------------------------

def test_not_evaluated_run_has_no_health_score():
    rep = validate_run(SAMPLE / "pending_run")
    assert rep.state == "not evaluated"
    assert math.isnan(rep.health.harness_score) and rep.health.harness_status == "UNDEFINED"
    table = health_table(rep)
    assert table[["assessment", "measure", "status"]].values.tolist() == [
        ["harness_health", "score", "UNDEFINED"], ["run_quality", "score", "UNDEFINED"]]
    assert table["value"].isna().all() and (table["state"] == "not evaluated").all()


@pytest.mark.parametrize("runs, code", [
    (["pending_run"], 3), (["proposed_aat", "pending_run"], 3), (["proposed_aat"], 0)])
def test_validate_exit_codes(runs, code):
    result = CliRunner().invoke(app, ["validate", *(str(SAMPLE / r) for r in runs)])
    assert result.exit_code == code, result.output
    if code == 3:
        assert "not evaluated: no task_metrics.csv" in result.output
        assert "0.0/10" not in result.output and "Do not use" not in result.output


def test_errors_take_precedence_over_not_evaluated(tmp_path):
    run = _copy(tmp_path)
    fields, rows = _read(run / TM)
    rows[2]["verification_passed"] = "2"
    _write(run / TM, fields, rows)
    result = CliRunner().invoke(app, ["validate", str(SAMPLE / "pending_run"), str(run)])
    assert result.exit_code == 1
    assert CliRunner().invoke(app, ["validate"]).exit_code == 2  # usage (typer)


def test_validate_and_the_batch_agree_on_the_state(tmp_path):
    legacy, empty = tmp_path / "legacy", tmp_path / "empty"
    legacy.mkdir()
    empty.mkdir()
    shutil.copy(SAMPLE / "proposed_aat" / "comprehensive_evaluation.csv", legacy)
    for d in (SAMPLE / "pending_run", empty, legacy, SAMPLE / "proposed_aat"):
        assert (validate_run(d).state == "not evaluated") == (not jobs.is_evaluated(d)), d
    job = jobs.plan_jobs([SAMPLE / "pending_run"], tmp_path / "out")[0]
    res = jobs.execute_job(job)  # returns before any notebook runs
    assert res.state == validate_run(SAMPLE / "pending_run").state == "not evaluated"
    assert "not evaluated" in write_index([res], tmp_path / "out").read_text()


# --- validate --out -----------------------------------------------------------------------------

def test_validate_out_writes_findings_and_health(tmp_path):
    out = tmp_path / "val"
    runs = [SAMPLE / "proposed_aat", SAMPLE / "pending_run"]
    assert validate_command(runs, out=out, console=None) == 3
    # + the list of what validate wrote there (report._outputs), and the set the four names
    # link to (report.validation: switched by one rename, so never a mix of two sets)
    names = sorted(p.name for p in out.iterdir())
    assert [n for n in names if not n.startswith(".dabench-validate-")] == [
        ".dabench-validate", ".dabench-validate.json", "findings.csv", "findings.json",
        "health.csv", "health.json"]
    assert len(names) == 7 and all((out / n).is_file() for n in names[-4:])
    reports = [validate_run(r) for r in runs]
    with (out / "findings.csv").open(newline="") as fh:
        found = list(csv.DictReader(fh))
    assert len(found) == sum(len(r.findings) for r in reports)
    assert list(found[0]) == ["run_id", "severity", "check", "file", "row", "column", "message"]
    records = json.loads((out / "findings.json").read_text())
    assert [r["check"] for r in records] == [f["check"] for f in found]
    health = json.loads((out / "health.json").read_text())
    score = {(h["run_id"], h["assessment"], h["measure"]): h["value"] for h in health}
    assert score["pending_run", "harness_health", "score"] is None  # no score: null
    assert score["proposed_aat", "harness_health", "score"] == pytest.approx(
        reports[0].health.harness_score)
    with (out / "health.csv").open(newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(health)


@pytest.mark.parametrize("where", ["run", "inside", "link"])
def test_validate_out_inside_a_run_is_refused(tmp_path, where):
    run = _copy(tmp_path)
    (tmp_path / "link").symlink_to(run, target_is_directory=True)
    out = {"run": run, "inside": run / "validation", "link": tmp_path / "link" / "v"}[where]
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(ReportError, match="would write into the run directory"):
        validate_command([run], out=out)
    result = CliRunner().invoke(app, ["validate", str(run), "--out", str(out)])
    assert result.exit_code == 2
    assert sorted(p.name for p in run.iterdir()) == before


def test_findings_table_is_every_finding_errors_first(tmp_path):
    run = _copy(tmp_path)
    fields, rows = _read(run / TM)
    rows[2]["verification_passed"] = "2"
    _write(run / TM, fields, rows)
    rep = validate_run(run)
    table = findings_table(rep)
    assert list(table.columns) == ["run_id", "severity", "check", "file", "row", "column",
                                   "message"]
    assert len(table) == len(rep.findings) and list(table.index) == list(range(len(table)))
    assert table.iloc[0][["severity", "check", "row"]].tolist() == ["error", "flag_value", 3]
    order = table["severity"].map({"error": 0, "warning": 1, "info": 2})
    assert order.is_monotonic_increasing


def test_missing_tool_counts_come_from_tool_calls_csv_or_are_not_assessable(tmp_path, drop_columns):
    """Absent data is never scored as healthy: without task_metrics' tool counts the failure
    rate comes from tool_calls.csv (baseline: more than 10 % of its rows failed); without
    either the component is left out and the cause is 'not assessable'."""
    import shutil

    import pandas as pd

    run = tmp_path / "r"
    shutil.copytree(SAMPLE / "baseline_react", run)
    calls = pd.read_csv(run / "tool_calls.csv")
    failed = (calls["success"] == 0).mean()  # counted with pandas from the file
    assert failed > 0.10
    drop_columns(run, {"tool_calls", "tool_failures"})
    h = validate_run(run).health
    assert h.components["tool_reliability"] == pytest.approx(1 - failed)
    assert "tool_failures" in h.causes and h.harness_score == 6.0
    (run / "tool_calls.csv").unlink()
    rep = validate_run(run)
    assert math.isnan(rep.health.components["tool_reliability"])
    table = health_table(rep).set_index("measure")
    assert table.loc["tool_failures", "status"] == "not assessable"
    # the weighted part over the four measured components, weights rescaled (0.4+0.2+0.2+0.1)
    c = rep.health.components
    expected = 10 * (0.4 * c["reconciliation"] + 0.2 * c["validity"] + 0.2 * c["attribution"]
                     + 0.1 * c["time_accounting"]) / 0.9
    assert rep.health.weighted_score == pytest.approx(expected)


def test_without_failure_category_attribution_is_not_assessable(tmp_path, drop_columns):
    """A harness that does not write failure_category: attribution is left out of the score
    (weights rescaled), its cause 'not assessable', never 0 (which capped the run at 6.0)."""
    run = _copy(tmp_path)
    _, rows = _read(run / TM)
    drop_columns(run, {"failure_category"})
    rep = validate_run(run)
    # T and F counted from the CSV (as _components does); R = V = 1: nothing else is broken
    t = sum(sum(float(r[c]) for c in STAGES) / float(r["execution_time"]) >= 0.5
            for r in rows) / len(rows)
    f = 1 - sum(int(r["tool_failures"]) for r in rows) / sum(int(r["tool_calls"]) for r in rows)
    # health.py / README "Validation": 10 (0.4 R + 0.2 V + 0.1 T + 0.1 F) / (0.4+0.2+0.1+0.1)
    weighted = 10 * (0.4 * 1.0 + 0.2 * 1.0 + 0.1 * t + 0.1 * f) / 0.8
    k = (1 - t > 0.10) + (1 - f > 0.10)
    assert (t, k) == (1.0, 0) and f > 0.9  # the sample's tool calls: under 10 % failed
    assert math.isnan(rep.health.components["attribution"])
    assert rep.health.causes == ()
    assert rep.health.weighted_score == pytest.approx(weighted, abs=1e-12)
    assert rep.health.harness_score == pytest.approx(weighted, abs=1e-12)
    # issue 33: never rated above what was assessed: 9.9 on 4 of 5 components is not HEALTHY
    assert rep.health.harness_status == "NOT RATED"
    assert rep.health.not_assessed == ("attribution",)
    table = health_table(rep).set_index("measure")
    assert table.loc["missing_attribution", "status"] == "not assessable"
    assert "not assessable in this run" in table.loc["attribution", "note"]
    assert math.isnan(table.loc["attribution", "points"])


# --- missing data is never rated (issue 24 item 7) ----------------------------------------------

def test_every_final_score_blank_has_no_run_quality(tmp_path):
    # was run quality 9.9 HEALTHY: execution success alone, the answers unknown
    run = _copy(tmp_path)
    fields, rows = _read(run / TM)
    for r in rows:
        r["final_score"] = ""
    _write(run / TM, fields, rows)
    rep = validate_run(run)
    assert math.isnan(rep.health.answer_accuracy)
    assert math.isnan(rep.health.run_quality_score)
    assert rep.health.run_quality_status == "UNDEFINED"
    # no score tells failed tasks apart: attribution is not assessable, never 1
    assert math.isnan(rep.health.components["attribution"])
    table = health_table(rep).set_index(["assessment", "measure"])
    assert table.loc[("run_quality", "score"), "status"] == "UNDEFINED"
    assert math.isnan(table.loc[("run_quality", "score"), "value"])
    assert table.loc[("harness_health", "missing_attribution"), "status"] == "not assessable"


def test_no_tool_call_and_no_failed_task_are_not_assessable(tmp_path):
    # a share of nothing (0 tool calls; 0 failed tasks) is left out of the score, never 1
    run = _copy(tmp_path)
    fields, rows = _read(run / TM)
    for r in rows:
        r["tool_calls"] = r["tool_failures"] = ""
    _write(run / TM, fields, rows)
    (run / TC).write_text(",".join(_read(run / TC)[0]) + "\n", encoding="utf-8")
    rep = validate_run(run)
    c = rep.health.components
    assert math.isnan(c["tool_reliability"])
    # A: the sample's 8 failed tasks are all attributed; T = 1 (proposed_aat is clean)
    weights = {"reconciliation": 0.4, "validity": 0.2, "attribution": 0.2, "time_accounting": 0.1}
    expected = 10 * sum(w * c[k] for k, w in weights.items()) / sum(weights.values())
    assert rep.health.weighted_score == pytest.approx(expected, abs=1e-12)
    assert "tool_failures" not in rep.health.causes


def test_a_run_without_tasks_is_not_rated(tmp_path):
    run = _copy(tmp_path)
    fields, _ = _read(run / TM)
    _write(run / TM, fields, [])
    rep = validate_run(run)
    assert rep.state == "evaluated" and rep.n_tasks == 0
    assert math.isnan(rep.health.harness_score) and rep.health.harness_status == "UNDEFINED"
    assert math.isnan(rep.health.run_quality_score)
    assert rep.health.run_quality_status == "UNDEFINED"
