"""validate_run: findings per check, the seed's invariants, health, the validate command."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from dabench_analysis import load_run
from dabench_analysis.report._cli import validate_command
from dabench_analysis.synthetic import generate_run
from dabench_analysis.validate import _health as health
from dabench_analysis.validate import _invariants, validate_run
from dabench_analysis.validate._health import HARNESS_WEIGHTS
from dabench_analysis.validate._run import FINDING_COLUMNS
from dabench_analysis.validate.summaries import health_section

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"
TM = "task_metrics.csv"


@pytest.fixture(scope="module")
def run8(tmp_path_factory) -> Path:
    return generate_run(tmp_path_factory.mktemp("val"), run_id="run8", n_tasks=8, seed=6,
                        skill=-0.5)  # 3 of 8 tasks below 0.8


@pytest.fixture(scope="module")
def sample_reports():
    return {name: validate_run(SAMPLE / name) for name in ("baseline_react", "proposed_aat")}


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / run.name))


def _edit(path: Path, col: str, row: int, value) -> None:
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[row - 1, col] = str(value)
    df.to_csv(path, index=False, lineterminator="\n")


def _cell(path: Path, col: str, row: int) -> str:
    return pd.read_csv(path, dtype=str, keep_default_na=False).loc[row - 1, col]


# --- sample runs --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["baseline_react", "proposed_aat"])
def test_sample_runs_have_no_errors(sample_reports, name):
    rep = sample_reports[name]
    assert rep.ok and rep.state == "evaluated" and rep.n_tasks == 80
    assert set(rep.findings["severity"]) <= {"info"}
    t = pd.read_csv(SAMPLE / name / TM)
    rate = t["tool_failures"].sum() / t["tool_calls"].sum()
    # the one cause of §Troubleshooting a clean sample run can show is its agent's tool failure
    # rate (> 10 %: capped at 6, UNHEALTHY); issue 12
    assert rep.health.causes == (("tool_failures",) if rate > 0.10 else ())
    assert rep.health.harness_status == ("UNHEALTHY" if rate > 0.10 else "HEALTHY")
    assert rep.health.components["reconciliation"] == 1.0
    assert rep.health.components["validity"] == 1.0


def test_sample_health_numbers(sample_reports):
    h = sample_reports["baseline_react"].health
    t = pd.read_csv(SAMPLE / "baseline_react" / TM)
    acc, ex = (t["final_score"] >= 0.8).mean(), t["execution_success"].mean()
    assert (acc, ex) == (61 / 80, 77 / 80)  # counted from the CSV with pandas
    assert h.answer_accuracy == pytest.approx(acc, abs=1e-12)
    assert h.run_quality_score == pytest.approx(10 * (acc + ex) / 2, abs=0.005)
    assert h.run_quality_status == "DEGRADED"  # 8.6: >= 7.0, < 9.0
    rate = t["tool_failures"].sum() / t["tool_calls"].sum()
    assert rate > 0.10
    assert h.components["tool_reliability"] == pytest.approx(1 - rate, rel=1e-12)
    expected = 10 * sum(HARNESS_WEIGHTS[k] * v for k, v in h.components.items())
    assert h.weighted_score == pytest.approx(expected, abs=1e-9)
    # every other component is 1: 10 (0.9 + 0.1 (1 - rate)), rate from the CSV above
    assert h.weighted_score == pytest.approx(10 * (0.9 + 0.1 * (1 - rate)), abs=1e-9)
    assert h.harness_score == 6.0  # one cause (tool failure rate > 10 %) caps at 8 - 2 * 1


def test_findings_frame_columns_and_dtypes(sample_reports):
    f = sample_reports["baseline_react"].findings
    assert list(f.columns) == FINDING_COLUMNS
    assert str(f["row"].dtype) == "Int64"
    frame = sample_reports["baseline_react"].to_frame()
    assert list(frame.columns) == ["run_id", *FINDING_COLUMNS]
    assert set(frame["run_id"]) == {"baseline_react"}


def test_every_rule_is_catalogued_and_a_rule_that_cannot_run_is_a_finding(run8, monkeypatch):
    # every per-task rule and replay comparison is named check:column after a catalogued check;
    # a rule whose test raises is reported as a warning naming the check, never a traceback
    from dabench_analysis.schema import CHECKS
    from dabench_analysis.validate import _replay

    keys = {i.key for i in (*_invariants.INVARIANTS, *_replay.REPLAY_INVARIANTS)}
    assert {k.split(":")[0] for k in keys} <= set(CHECKS)
    run = load_run(run8)
    rec = _invariants.reconciliation_frame(run.tasks, run.trajectory, run.tool_calls, None)
    broken = [dataclasses.replace(i, test=lambda rec: 1 / 0) if i.check == "answer_f1_formula"
              else i for i in _invariants.INVARIANTS]
    found, failed = _invariants.check_invariants(rec, run.source_rows, run.task_file, broken,
                                                 report_skipped=False)
    extra = pd.DataFrame([vars(f) for f in found])
    assert extra["check"].tolist() == ["answer_f1_formula"] and not failed.any()
    assert extra["severity"].tolist() == ["warning"]
    assert "could not be checked: ZeroDivisionError" in extra["message"].iloc[0]


# --- each rule: tests/test_validate_rules.py breaks every catalogued check once ------------------

def _bump(col: str, row: int, delta: float):
    def damage(run: Path) -> None:
        _edit(run / TM, col, row, f"{float(_cell(run / TM, col, row)) + delta:g}")
    return damage


def test_token_tolerance_is_strictly_below_100(run8, tmp_path):
    # seed 000 §Critical Invariants: abs(trajectory_tokens - metrics_tokens) < 100
    run = _copy(run8, tmp_path)
    traj = pd.read_csv(run / "trajectory.csv")
    total = int(traj.loc[traj["task_id"] == "task_1", "tokens"].sum())
    _edit(run / TM, "total_tokens", 1, total + 99)
    _edit(run / TM, "total_tokens", 2, int(traj.loc[traj["task_id"] == "task_2", "tokens"].sum())
          - 100)
    rows = validate_run(run).findings.query("check == 'token_conservation'")["row"].tolist()
    assert rows == [2]


def test_analyst_tolerance_is_1e_3(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _bump("analyst_score", 1, 0.0009)(run)
    assert validate_run(run).ok


def test_verification_passed_2_is_one_error_naming_the_row(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _edit(run / TM, "verification_passed", 3, "2")
    rep = validate_run(run)
    errors = rep.findings[rep.findings["severity"] == "error"]
    assert len(errors) == 1  # found by the loader, not checked a second time
    e = errors.iloc[0]
    assert (e["file"], e["row"], e["column"], e["check"]) == (TM, 3, "verification_passed",
                                                              "flag_value")
    assert rep.health.components["validity"] == pytest.approx(7 / 8)
    assert rep.health.weighted_score == pytest.approx(
        10 * sum(HARNESS_WEIGHTS[k] * v for k, v in rep.health.components.items()))
    assert rep.health.harness_status != "HEALTHY"  # an error finding (and run8's tool failures)


@pytest.mark.parametrize("score, executed, expected", [
    (1.0, True, "correct"), (0.8, True, "correct"), (0.8, False, "correct"),
    (0.79, True, "partial"), (0.01, True, "partial"), (0.0, True, "failed"),
    (0.5, False, "failed"), (0.5, None, pd.NA), (None, True, pd.NA), (0.0, None, "failed")])
def test_outcome_status_rule(score, executed, expected):
    # seed 000 V2.1 item 4
    rec = pd.DataFrame({"final_score": pd.array([score], dtype="Float64"),
                        "execution_success": pd.array([executed], dtype="boolean")})
    got = _invariants._expected_outcome(rec).iloc[0]
    assert (got is pd.NA and expected is pd.NA) or got == expected


def test_unknown_task_ids_in_side_tables_and_replay_folders(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _edit(run / "trajectory.csv", "task_id", 3, "task_77")
    _edit(run / "tool_calls.csv", "task_id", 1, "task_78")
    (run / "task_79").mkdir()
    shutil.copy(run / "task_1" / "task_replay.json", run / "task_79" / "task_replay.json")
    f = validate_run(run).findings.query("check == 'unknown_task_id'")
    got = set(zip(f["file"], f["row"].astype(object).where(f["row"].notna(), None),
                  f["severity"], strict=True))
    assert ("trajectory.csv", 3, "error") in got
    assert ("tool_calls.csv", 1, "error") in got
    replay = validate_run(run).findings.query("check == 'replay_unknown_task'")
    assert replay[["file", "severity"]].values.tolist() == [["task_79/task_replay.json",
                                                             "warning"]]


def test_missing_side_files_skip_their_invariants(run8, tmp_path):
    run = _copy(run8, tmp_path)
    (run / "tool_calls.csv").unlink()
    (run / "trajectory.csv").unlink()
    rep = validate_run(run)
    assert rep.ok
    skipped = set(rep.findings.query("check == 'invariant_skipped'")["column"])
    assert {"tool_calls", "tool_failures", "total_tokens"} <= skipped
    assert set(rep.findings.query("check == 'missing_file'")["file"]) == {"trajectory.csv",
                                                                          "tool_calls.csv"}


# --- health -------------------------------------------------------------------------------------

@pytest.mark.parametrize("score, n_errors, status", [
    (10.0, 0, "HEALTHY"), (9.0, 0, "HEALTHY"), (9.0, 1, "DEGRADED"), (8.99, 0, "DEGRADED"),
    (7.0, 0, "DEGRADED"), (6.99, 0, "UNHEALTHY"), (0.0, 0, "UNHEALTHY"),
    (float("nan"), 0, "UNDEFINED")])
def test_status_thresholds(score, n_errors, status):
    # seed 000 V2.1: HEALTHY (9.0+, no errors), DEGRADED (7.0+), UNHEALTHY (else)
    assert health.health_status(score, n_errors=n_errors) == status


@pytest.mark.parametrize("score, band", [(10, "HEALTHY"), (9, "HEALTHY"), (8.9, "GOOD"),
                                         (7, "GOOD"), (6.5, "FAIR"), (5, "FAIR"), (4, "POOR"),
                                         (3, "POOR"), (2.9, "UNHEALTHY"), (0, "UNHEALTHY")])
def test_health_score_interpretation_bands(score, band):
    assert health._band(score)[0] == band


# seed 000 §Health Score Interpretation: 9-10 Ready to use, 7-8 Review warnings, 5-6 Fix issues
# before publication, 3-4 Investigation required, 0-2 Do not use; issue 25: never more
# favourable than the V2.1 status (a DEGRADED run at 9.8 has errors: at best "Review warnings")
# The score by the package's number rule (3 significant digits: 9.80), as every table prints it
@pytest.mark.parametrize("score, n_errors, text", [
    (9.8, 0, "9.80/10 HEALTHY: Ready to use"), (9.8, 3, "9.80/10 DEGRADED: Review warnings"),
    (8.0, 0, "8.00/10 DEGRADED: Review warnings"), (6.0, 0, "6.00/10 UNHEALTHY: Fix issues "
                                                      "before publication"),
    (4.0, 1, "4.00/10 UNHEALTHY: Investigation required"),
    (2.0, 0, "2.00/10 UNHEALTHY: Do not use"), (float("nan"), 0, "n/a UNDEFINED")])
def test_one_status_and_an_action_never_better_than_it(score, n_errors, text):
    status = health.health_status(score, n_errors=n_errors)
    assert health.health_text(score, status) == text


def test_harness_score_formula_on_a_damaged_run(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _bump("analyst_score", 1, -0.1)(run)
    _bump("analyst_score", 2, -0.1)(run)
    scores = pd.read_csv(run / TM)["final_score"]
    first_failing = int(scores[scores < 0.8].index[0]) + 1
    _edit(run / TM, "failure_category", first_failing, "UNKNOWN_FAILURE")
    replay = run / f"task_{first_failing}" / "task_replay.json"  # the replay says the same
    data = json.loads(replay.read_text())
    data["failure_attribution"]["failure_category"] = "UNKNOWN_FAILURE"
    replay.write_text(json.dumps(data))
    rep = validate_run(run)
    c = rep.health.components
    assert c["reconciliation"] == pytest.approx(6 / 8)
    t = pd.read_csv(run / TM)
    failing = t[t["final_score"] < 0.8]
    expected_a = ((failing["failure_category"].notna())
                  & (failing["failure_category"] != "UNKNOWN_FAILURE")).mean()
    assert c["attribution"] == pytest.approx(expected_a) == pytest.approx(2 / 3)
    weighted = 10 * sum(HARNESS_WEIGHTS[k] * v for k, v in c.items())
    k = sum(1 - c[name] > 0.10 for name in ("attribution", "time_accounting",
                                              "tool_reliability"))  # the causes (issue 12)
    assert k == 2  # attribution 2/3, and run8's tool failure rate above 10 %
    assert rep.health.harness_score == pytest.approx(min(weighted, 8 - 2 * k)) == 4.0
    assert rep.health.harness_status == "UNHEALTHY"


@pytest.mark.parametrize("content", [None, b"", b"\r\r\r", b"\xff\xfetask_id\x00,\x00"])
def test_unloadable_and_pending_runs_are_never_rated(tmp_path, content):
    # issue 24 item 7: no data to rate (no folder, a 0-byte or unreadable task file): the
    # state is "failed" with its error findings, and no score, never a number
    run = tmp_path / "x"
    if content is not None:
        run.mkdir()
        (run / "task_metrics.csv").write_bytes(content)
    rep = validate_run(run)
    assert rep.state == "failed" and not rep.ok and (rep.findings["severity"] == "error").any()
    assert math.isnan(rep.health.harness_score) and rep.health.harness_status == "UNDEFINED"
    assert rep.health.run_quality_status == "UNDEFINED"


def test_a_pending_run_has_no_health_score():
    rep = validate_run(SAMPLE / "pending_run")  # not evaluated: no health score (issue 12)
    assert rep.state == "not evaluated"
    assert math.isnan(rep.health.harness_score) and rep.health.harness_status == "UNDEFINED"
    assert rep.health.run_quality_status == "UNDEFINED"


def test_health_section(sample_reports):
    table = health_section(sample_reports["proposed_aat"])
    assert list(table.columns) == ["assessment", "measure", "value", "limit", "weight", "points",
                                   "status", "note"]
    harness = table[table["assessment"] == "harness_health"]
    assert harness["measure"].tolist() == [*HARNESS_WEIGHTS, "weighted_score", "time_gaps",
                                           "tool_failures", "missing_attribution", "score"]
    parts = harness[harness["measure"].isin(HARNESS_WEIGHTS)]["points"].sum()
    # no cause found, so no cap: the score is the weighted sum of its parts
    assert parts == pytest.approx(harness.loc[harness["measure"] == "score", "value"].item(),
                                  abs=1e-12)
    # tool failures: tool_calls.csv rows with success 0, counted with pandas; below the 10 % limit
    calls = pd.read_csv(SAMPLE / "proposed_aat" / "tool_calls.csv")
    failed = (calls["success"] == 0).mean()
    assert failed < 0.10
    tool = harness.set_index("measure").loc["tool_failures"]
    assert (tool["value"], tool["limit"], tool["status"]) == (pytest.approx(failed), 0.1, "clear")
    quality = table[table["assessment"] == "run_quality"].set_index("measure")
    assert quality.loc["answer_accuracy", "value"] == pytest.approx(72 / 80)
    assert quality.loc["score", "status"] == "HEALTHY"


def test_summary_groups_by_check(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _bump("analyst_score", 1, -0.1)(run)
    _bump("analyst_score", 2, -0.1)(run)
    s = validate_run(run).summary()
    assert list(s.columns) == ["severity", "check", "n", "files", "columns", "first_row",
                               "example"]
    row = s.set_index("check").loc["analyst_score_formula"]
    assert (row["n"], row["first_row"], row["severity"]) == (2, 1, "error")
    assert s["severity"].iloc[0] == "error"


# --- the validate command -------------------------------------------------------------------

def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=200, color_system=None), buf


def test_validate_command_exit_status(run8, tmp_path):
    con, buf = _console()
    assert validate_command([SAMPLE / "baseline_react", SAMPLE / "proposed_aat"],
                            console=con) == 0
    assert "no errors" in buf.getvalue() and "HEALTHY" in buf.getvalue()
    run = _copy(run8, tmp_path)
    _edit(run / TM, "verification_passed", 3, "2")
    con, buf = _console()
    assert validate_command([SAMPLE / "proposed_aat", run], console=con) == 1
    out = buf.getvalue()
    assert "flag_value" in out and "task_metrics.csv row 3" in out
    assert validate_command([SAMPLE / "pending_run"], console=_console()[0]) == 3  # issue 12


def test_validate_command_prints_run_text_literally(run8, tmp_path):
    run = _copy(run8, tmp_path)
    _edit(run / "trajectory.csv", "task_id", 1, "[/bold][red]x[/]")
    con, buf = _console()
    assert validate_command([run], console=con) == 1  # no rich MarkupError
    assert "[/bold][red]x[/]" in buf.getvalue()


def test_validate_command_default_console_prints_to_stdout(capsys):
    assert validate_command([SAMPLE / "proposed_aat"]) == 0
    assert "proposed_aat" in capsys.readouterr().out


# --- validate_run takes the Run the report loaded (issue 22, item 5) --------------------------
@pytest.mark.parametrize("name", ["baseline_react", "proposed_aat"])
def test_a_loaded_run_validates_as_its_path_without_loading_it_again(name, sample_reports,
                                                                     monkeypatch):
    from dabench_analysis import load_run
    from dabench_analysis.validate import _run as validate_module

    run = load_run(SAMPLE / name, strict=False)

    def no_second_load(*args, **kwargs):
        raise AssertionError("validate_run(run) read the task file again")

    monkeypatch.setattr(validate_module, "load_run", no_second_load)
    report = validate_run(run)
    by_path = sample_reports[name]
    pd.testing.assert_frame_equal(report.findings, by_path.findings)
    assert report.health == by_path.health and (report.run_id, report.state, report.n_tasks) \
        == (by_path.run_id, by_path.state, by_path.n_tasks)


def test_the_threshold_given_is_the_run_qualitys():
    """Run quality = 10 (accuracy + execution success rate) / 2 at the threshold given; the
    numbers from the CSV with the standard library."""
    import csv

    from dabench_analysis import load_run

    with (SAMPLE / "proposed_aat" / TM).open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    score = [float(r["final_score"]) for r in rows]
    executed = [r["execution_success"] in ("1", "True", "true") for r in rows]
    for t in (0.7, 0.8, 0.95):
        h = validate_run(load_run(SAMPLE / "proposed_aat"), threshold=t).health
        acc = sum(s >= t for s in score) / len(score)
        assert h.answer_accuracy == pytest.approx(acc, abs=1e-12)
        assert h.run_quality_score == pytest.approx(10 * (acc + sum(executed) / len(rows)) / 2,
                                                    abs=1e-12)
        assert h.success_threshold == t
        assert validate_run(SAMPLE / "proposed_aat", threshold=t).health == h
    # the guide's own rules (final_answer_correct, outcome_status, confidence_correct) check
    # what the harness wrote at the guide's 0.8, whatever the analysis' threshold
    at_07 = validate_run(load_run(SAMPLE / "proposed_aat"), threshold=0.7)
    pd.testing.assert_frame_equal(at_07.findings, validate_run(SAMPLE / "proposed_aat").findings)
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]"):
        validate_run(SAMPLE / "proposed_aat", threshold=80)


@pytest.mark.parametrize(("text", "severity", "check", "column"), [
    ('{"config": "react", "seed": "baseline-a"}', "info", "seed_label", "seed"),
    ('{"config": "react", "seed": NaN}', "error", "run_config", "seed"),
    ('{"config": "react", "seed": 2.5}', "error", "run_config", "seed"),
    ('{"config": 3}', "error", "run_config", "config"),
    ("{not json", "error", "run_config", None)])
def test_validate_checks_run_config_as_the_report_does(text, severity, check, column,
                                                       tmp_path):
    """Issue 33, item 6: the sweep report refused runs that validate passed; both now go
    through load._config.declared_config: the report's error is validate's error finding (the
    same message), a label seed a note in both."""
    import warnings

    from dabench_analysis.load._config import CONFIG_FILE, run_configs

    run = _copy(SAMPLE / "proposed_aat", tmp_path)
    (run / CONFIG_FILE).write_text(text)
    rep = validate_run(run)
    f = rep.findings[rep.findings["file"] == CONFIG_FILE]
    assert f[["severity", "check"]].values.tolist() == [[severity, check]]
    assert (f["column"].iloc[0] if pd.notna(f["column"].iloc[0]) else None) == column
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if severity == "error":  # the report: the same message, after the file's path
            with pytest.raises(ValueError) as exc:
                run_configs([run])
            assert str(exc.value) == f"{run / CONFIG_FILE}: {f['message'].iloc[0]}"
        else:
            assert run_configs([run])["seed"].tolist() == ["baseline-a"]
            assert "seed is a label, not a number ('baseline-a')" in f["message"].iloc[0]
            assert ["is a label, not a number" in str(w.message) for w in caught] == [True]
    assert rep.ok == (severity != "error")
    assert validate_command([run], console=_console()[0]) == (1 if severity == "error" else 0)


def test_validate_warns_when_run_config_and_columns_disagree(tmp_path):
    from dabench_analysis.load._config import CONFIG_FILE

    run = _copy(SAMPLE / "proposed_aat", tmp_path)
    (run / CONFIG_FILE).write_text('{"config": "a", "seed": 3}')
    with (run / TM).open(encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    lines = [lines[0] + ",config,seed"] + [ln + ",b,3" for ln in lines[1:]]
    (run / TM).write_text("\n".join(lines) + "\n", encoding="utf-8")
    f = validate_run(run).findings
    f = f[f["check"] == "run_config_conflict"]
    assert f[["severity", "file", "column"]].values.tolist() == [["warning", CONFIG_FILE,
                                                                   "config"]]
    assert f["message"].iloc[0] == ("config differ(s) from the task_metrics column(s) "
                                    "(config='b'); the file is used")
