"""Reports fit the data they are given (issue 33, item 5), on runs of every reader other than an
eval-v2 folder: every section of the run report either computes or is skipped with a reason
(never an exception), the skipped ones are named in a few grouped lines, tool failure rates need
no latency, and harness health is never rated above what was assessed.

Real files: the Inspect logs and the tau-bench file in tests/data/harness/ (their LICENSE and
source beside them); tau2-bench results written by tests/trajectory_fixture.py. Expected values
are read from the raw files with zipfile/json, not through the package's readers."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import matplotlib.pyplot as plt
import nbformat
import pytest
from trajectory_fixture import write_tau2

import dabench_analysis as da
from dabench_analysis.report._context import run_context
from dabench_analysis.report._html import prepare_for_page
from dabench_analysis.report._sections import Sections, group_skips
from dabench_analysis.schema.needs import collect_reduced, skips
from dabench_analysis.validate._health import health_text

ROOT = Path(__file__).resolve().parents[1]
HARNESS = Path(__file__).resolve().parent / "data" / "harness"
INSPECT = HARNESS / "inspect_ai"
SCORED = INSPECT / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
TAU = HARNESS / "tau-bench" / "gpt-4o-airline.json"
TRIAL_REASONS = ("one row per task", "repeated trials")


def _no_step_ids(path: Path):
    """tau2 results whose tool calls carry no step_id, as an Inspect log's tool events do (the
    reported crash: 'column step_id not in tool_calls.csv')."""
    run = da.load_run(write_tau2(path, 1))
    for attr in ("tool_calls", "_tool_calls_full"):  # the frames the tables read
        run.__dict__[attr] = run.__dict__[attr].drop(columns="step_id")
    return run


def _csv(path: Path):
    path.write_text("task_id,final_score,difficulty\na,1.0,Easy\nb,0.2,Hard\nc,0.9,Easy\n")
    return da.load_run(path)


RUNS = {
    "inspect_scored": lambda tmp: da.load_run(SCORED),
    "inspect_epochs": lambda tmp: da.load_run(INSPECT / "log_streaming.eval"),
    "inspect_choices": lambda tmp: da.load_run(INSPECT / "mmlu-summary-choices.eval"),
    "tau_bench": lambda tmp: da.load_run(TAU),
    "tau2_one_trial": lambda tmp: da.load_run(write_tau2(tmp / "tau2.json", 1)),
    "calls_without_step_id": lambda tmp: _no_step_ids(tmp / "tau2.json"),
    "table_csv": lambda tmp: _csv(tmp / "tasks.csv"),
}


def _section_cells() -> list[tuple[str, str]]:
    """The run report's section cells: (section name, the cell's code)."""
    import ast

    cells = nbformat.read(ROOT / "notebooks" / "run_report.ipynb", as_version=4).cells
    found = []
    for cell in cells:
        if cell.cell_type == "code" and cell.source.startswith("with out.section("):
            found.append((ast.parse(cell.source).body[0].items[0].context_expr.args[0].value,
                          cell.source))
    return found


def _run_sections(run, tmp_path, *, quiet: bool = True) -> tuple[list[str], Sections]:
    """The run report's section cells run on ``run`` (an exception fails the test); figures
    drawn, not rendered."""
    from notebook_runs import figures_not_rendered

    out = run_context(run, {"threshold": 0.8}, out=tmp_path / "out", quiet=quiet)
    ns = {"da": da, "out": out, "run": run, "threshold": 0.8}
    with warnings.catch_warnings(), figures_not_rendered():
        warnings.simplefilter("ignore")
        for name, source in _section_cells():
            exec(compile(source, name, "exec"), ns)  # noqa: S102
            plt.close("all")
    skipped = {s["section"] for s in out.sections.skipped}
    return [n for n, _ in _section_cells() if n not in skipped], out.sections


@pytest.mark.parametrize("kind", list(RUNS))
def test_every_section_computes_or_skips_with_a_reason(tmp_path, kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = RUNS[kind](tmp_path)
    done, sections = _run_sections(run, tmp_path)
    skipped = {s["section"]: s["missing"] for s in sections.skipped}
    names = [n for n, _ in _section_cells()]
    assert len(names) == 40 and sorted([*done, *skipped]) == sorted(names)  # each decided once
    assert all(skipped.values()), skipped  # every skip names what it lacks
    assert {"health", "main_results"} <= set(done)
    if run.trials == 1 and "trajectory.csv" in run.side_files and "success" in run.trajectory:
        assert "trajectory_recovery" in done  # steps with success flags: computed


def test_recovery_without_call_step_ids_uses_the_steps(tmp_path):
    path = write_tau2(tmp_path / "tau2.json", 1)
    sims = json.loads(path.read_text())["simulations"]
    # every failed tool result is followed by a successful call of the same tool
    errors = sum(m.get("error") is True for s in sims for m in s["messages"]
                 if m["role"] == "tool")
    run = _no_step_ids(path)
    with pytest.warns(UserWarning, match="tool_calls.csv of run tau2 left out: it has no "
                                         "step_id"):
        rec = da.trajectory.recovery(run)
    row = rec[(rec["difficulty"] == "all") & (rec["level"] == "all")].iloc[0]
    assert (row["n_errors"], row["n_recovered"]) == (errors, errors) == (2, 2)


def test_tool_usage_without_latency_counts_failures_per_tool():
    raw = json.loads(TAU.read_text())
    calls, fails = {}, {}
    for rec in raw:  # tau-bench: a tool message answers a call; "Error:" marks a failure
        for m in rec["traj"]:
            if m.get("role") == "tool":
                calls[m["name"]] = calls.get(m["name"], 0) + 1
                fails[m["name"]] = fails.get(m["name"], 0) + m["content"].startswith("Error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", da.tables._pooling.PooledTrialsWarning)  # rows are calls
        warnings.simplefilter("ignore", UserWarning)
        run = da.load_run(TAU)
        assert skips(da.tables.timing.tool_usage, run) == []  # four trials a task: calls
        with collect_reduced() as absent:
            table = da.tables.timing.tool_usage(run).set_index("tool_name")
    assert "mean_latency_s" not in table and "mean_tokens" not in table  # absent, not zero
    assert absent == ["tool_calls.csv:latency_seconds", "tool_calls.csv:tokens"]
    assert table["n_calls"].to_dict() == calls
    assert table["n_failures"].to_dict() == fails


def test_skipped_sections_are_one_line_per_reason(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(TAU)
    _, s = _run_sections(run, tmp_path, quiet=False)  # another harness's run: grouped
    lines = s.lines()
    assert "Skipped" not in capsys.readouterr().out  # no note per section
    absent = [e for e in s.skipped if not set(e["missing"]) & set(TRIAL_REASONS)]
    trials = [e for e in s.skipped if "one row per task" in e["missing"]]
    assert lines[0].startswith(f"**Not in tau-bench results** ({len(absent)} sections): "
                               "Table 2: breakdown by difficulty, ")
    assert "MAS effectiveness" in lines[0] and "`difficulty`" in lines[0]
    # the trajectory sections take repeated trials (each its own trace); the score histogram,
    # which needs no difficulty (its hue when present), would pool them
    assert [e["section"] for e in trials] == ["score_distribution"]
    assert lines[1].startswith("**Needs one row per task**") and "Score distribution" in lines[1]
    assert lines[2].startswith("*Computed without*")
    assert len(lines) == 3 and len(s.skipped) == len(absent) + len(trials)
    assert s.summary()["skipped_lines"] == lines == group_skips(s.skipped, "tau-bench",
                                                                reduced=s.reduced)
    assert group_skips([], "inspect") == []
    one = group_skips([{"section": "x", "title": "Paired X", "missing": ["one row per task"]}],
                      "tau-bench")
    assert len(one) == 1 and one[0].startswith("**Needs one row per task**")
    assert "Paired X" in one[0]


def test_another_harness_absent_columns_are_one_finding():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = da.validate_run(da.load_run(TAU)).findings
    absent = found[found["check"] == "absent_column"]
    assert len(absent) == 1 and absent["severity"].tolist() == ["info"]
    assert "eval-v2 columns not recorded in this tau-bench file" in absent["message"].iloc[0]
    skipped = found[found["check"] == "invariant_skipped"]  # the checks of those columns
    assert len(skipped) == 1 and skipped["severity"].tolist() == ["info"]
    assert "cross-file checks not assessable (this tau-bench file has no values for their " \
           "inputs, eval-v2 columns): " in skipped["message"].iloc[0]


def test_inspect_log_health_is_not_rated_above_what_was_assessed():
    with zipfile.ZipFile(SCORED) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    # nothing in the log records a failure attribution, stage times or a tool call
    assert not any(m["role"] == "tool" or m.get("tool_calls") for s in samples
                   for m in s["messages"])
    h = da.validate_run(da.load_run(SCORED)).health
    assert h.not_assessed == ("attribution", "time_accounting", "tool_reliability")
    assert h.harness_score == 10.0 and h.harness_status == "NOT RATED"
    text = health_text(h.harness_score, h.harness_status, h.not_assessed)
    assert text == ("10.0/10 on 2 of 5 components, NOT RATED: attribution, time accounting, "
                    "tool reliability not assessable")
    assert "Ready to use" not in text and h.action != "Ready to use"


def test_page_leaves_out_sections_that_showed_nothing():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    shown = code('with out.section("main_results", "Table 1"): ...')
    shown.outputs = [nbformat.v4.new_output("stream", name="stdout", text="table")]
    nb = nbformat.v4.new_notebook(cells=[
        md("## Failure analysis\n\nShares.\n\n### Score distribution"),
        code('with out.section("score_distribution", "Score"): ...'),
        md("### Outcome status"), code('with out.section("outcome_status", "Status"): ...'),
        md("## MAS\n\n### MAS effectiveness"), code('with out.section("mas_effectiveness", "MAS"): ...'),
        md("## Table 1"), shown])
    page = prepare_for_page(nb)
    assert [c.source for c in page.cells] == [
        "## Table 1", 'with out.section("main_results", "Table 1"): ...']


def _sections(run, tmp_path, names):
    """Only the named section cells of the run report, run on ``run``: the context."""
    from notebook_runs import figures_not_rendered

    out = run_context(run, {"threshold": 0.8}, out=tmp_path / "out", quiet=True)
    ns = {"da": da, "out": out, "run": run, "threshold": 0.8}
    with warnings.catch_warnings(), figures_not_rendered():
        warnings.simplefilter("ignore")
        for name, source in _section_cells():
            if name in names:
                exec(compile(source, name, "exec"), ns)  # noqa: S102
                plt.close("all")
    return out


RELIABILITY = ("reliability", "risk_coverage", "failure_bounds")


def _written(out, stem):
    import pandas as pd
    return pd.read_csv(out.tables_dir / f"{stem}.csv")


def _equal(written, direct):
    """A table as read back from its .csv equals the direct call's (full precision)."""
    import pandas as pd
    direct = direct.reset_index(drop=True)
    for col in direct:
        if pd.api.types.is_numeric_dtype(direct[col]):
            assert written[col].to_numpy(float) == pytest.approx(
                direct[col].to_numpy(float), rel=1e-12, nan_ok=True), col
        else:
            assert written[col].fillna("").astype(str).tolist() == \
                direct[col].fillna("").astype(str).tolist(), col


def test_reliability_sections_on_tau_bench(tmp_path):
    raw = json.loads(TAU.read_text())  # 50 tasks x 4 trials, no confidence, no error
    assert not any(r.get("info", {}).get("error") for r in raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(TAU)
        direct = da.tables.reliability(run, threshold=0.8)
    out = _sections(run, tmp_path, RELIABILITY)
    written = _written(out, "reliability")
    _equal(written, direct)
    ok = {}
    for r in raw:  # outcome consistency from the raw records: mean of (2p - 1)^2
        ok.setdefault(r["task_id"], []).append(r["reward"] >= 0.8)
    expect = sum((2 * sum(v) / len(v) - 1) ** 2 for v in ok.values()) / len(ok)
    got = written.set_index("metric").loc["outcome_consistency", "value"]
    assert got == pytest.approx(expect) == pytest.approx(0.56)
    assert (out.tables_dir.parent / "reliability_profile.png").exists()
    skipped = {s["section"]: s["missing"] for s in out.sections.skipped}
    assert skipped == {"risk_coverage": ["confidence_score"],
                       "failure_bounds": ["an errored trial"]}
    assert not list(out.tables_dir.glob("risk_coverage.*"))
    assert not list(out.tables_dir.glob("failure_bounds.*"))


def test_reliability_sections_on_a_table_with_errors_and_confidence(tmp_path):
    f = tmp_path / "cases.csv"
    f.write_text("task_id,final_score,status,confidence_score\na,1,PASS,0.9\nb,,ERROR,0.5\n"
                 "c,0,FAIL,0.7\nd,1,PASS,0.8\ne,1,PASS,0.4\nf,0,FAIL,0.2\n")
    run = da.load_run(f)
    out = _sections(run, tmp_path, RELIABILITY)
    assert out.sections.skipped == []
    _equal(_written(out, "reliability"), da.tables.reliability(run, threshold=0.8))
    _equal(_written(out, "risk_coverage"), da.tables.risk_coverage(run, threshold=0.8))
    bounds = _written(out, "failure_bounds").set_index("errors")["estimate"]
    _equal(_written(out, "failure_bounds"), da.tables.failure_bounds(run, threshold=0.8))
    # 3 of 6 solved, b errored: 3/6 as failures, 4/6 as successes, 3/5 left out
    assert bounds.tolist() == pytest.approx([3 / 6, 4 / 6, 3 / 5])


def test_reliability_section_without_any_metric_is_a_skip(tmp_path):
    run = _csv(tmp_path / "tasks.csv")  # one trial, no confidence, no condition
    out = _sections(run, tmp_path, RELIABILITY)
    skipped = {s["section"]: s["missing"] for s in out.sections.skipped}
    assert skipped["reliability"] == ["repeated trials", "confidence_score", "condition"]
    assert set(skipped) == set(RELIABILITY)
    assert not list(out.tables_dir.glob("*.csv"))
    with pytest.raises(da.schema.Skipped, match="consistency needs repeated trials"):
        da.tables.reliability(run)
