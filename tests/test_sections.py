"""Column tiers and report sections as catalogue data: validate's findings for absent inputs, the
notebooks' parameter checks, the table of inputs in the docs (docs/guide/reports.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from pathlib import Path

import papermill as pm
import pytest
from notebook_runs import figures_not_rendered, run_cells

import dabench_analysis as da
from dabench_analysis import report, schema, validate_run
from dabench_analysis.report import Sections, check_parameters, input_dir, output_dir_for

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs" / "proposed_aat"


@pytest.fixture
def run_copy(tmp_path) -> Path:
    dest = tmp_path / "older_run"
    shutil.copytree(SAMPLE, dest)
    return dest


def test_the_catalogue_names_only_known_columns_and_files():
    for sec in schema.SECTIONS.values():
        for col in (*sec.needs, *(u for u in sec.uses if ":" not in u)):
            assert col in schema.TASK_COLUMNS, (sec.name, col)
        assert set(sec.files) <= set(schema.OPTIONAL_FILES), sec.name
        for name in (*sec.file_needs, *(u for u in sec.uses if ":" in u)):  # "<file>:<column>"
            file, _, col = name.partition(":")
            assert file in sec.files, (sec.name, name)
            assert col in {"tool_calls.csv": schema.TOOL_CALL_COLUMNS,
                           "trajectory.csv": schema.TRAJECTORY_COLUMNS}[file], (sec.name, name)
        assert sec.report in ("run", "compare", "sweep")
    # tool_usage computes with timing.tool_usage, which documents these tool_calls.csv columns
    # (latency and tokens when recorded: tau-bench and Inspect logs record none; issue 33)
    assert schema.SECTIONS["tool_usage"].file_needs == tuple(
        f"tool_calls.csv:{c}" for c in ("task_id", "tool_name", "success"))
    assert schema.SECTIONS["tool_usage"].uses == tuple(
        f"tool_calls.csv:{c}" for c in ("latency_seconds", "tokens"))
    required = {c.name for c in schema.TASK_COLUMNS.values() if c.required}
    assert required == {"task_id", "final_score"}


def test_validate_lists_absent_optional_inputs_with_the_sections_they_disable(run_copy, drop_columns):
    drop_columns(run_copy, {"outcome_error_type", "analyst_score", "trace_id", "timestamp"})
    (run_copy / "tool_calls.csv").unlink()
    found = validate_run(run_copy).findings
    absent = found[found["check"].isin(["absent_column", "missing_file"])]
    got = sorted(zip(absent["severity"], absent["column"].fillna(""), absent["message"],
                     strict=True))
    assert got == sorted([
        ("warning", "outcome_error_type", "optional column absent: disables outcome_error_types"),
        ("warning", "analyst_score", "optional column absent: disables results_paragraph; "
         "main_results, task_type_breakdown, correlation_matrix, paired_comparison run without it"),
        ("info", "", "2 optional catalogue columns absent, which no report section needs: "
         "trace_id, timestamp"),
        ("warning", "", "optional file not found; disables tool_usage, tool_fit; invariants that "
         "need it are not checked"),
    ])
    assert not (found["severity"] == "error").any()


def test_validate_on_the_complete_sample_run_lists_nothing_absent():
    found = validate_run(SAMPLE).findings
    assert not found["check"].isin(["absent_column", "missing_file"]).any()


def test_sections_skip_once_and_say_what_is_missing(capsys):
    s = Sections.from_columns(["task_id", "difficulty", "final_score", "analyst_score"],
                              files=(), quiet=False)
    assert s.ready("tool_usage") is False and s.ready("tool_usage") is False
    assert s.ready("main_results") is True
    out = capsys.readouterr().out
    assert out.count("Skipped: Tool latency and failures") == 1
    assert "Needs `tool_calls.csv`, absent in this run." in out
    assert "computed without `answer_f1`, `autonomy_score`, `tool_efficiency`" in out
    assert s.summary() == {
        "report": "run",
        "skipped": [{"section": "tool_usage", "title": "Tool latency and failures",
                     "missing": ["tool_calls.csv"]}],
        "reduced": [{"section": "main_results", "title": "Table 1: main results",
                     "absent": ["answer_f1", "autonomy_score", "tool_efficiency"]}],
        "skipped_lines": [  # report.sections.group_skips: one line per reason
            "**Not in this run** (1 section): Tool latency and failures. They need "
            "`tool_calls.csv`.",
            "*Computed without* `answer_f1`, `autonomy_score`, `tool_efficiency` (absent in "
            "this run): Table 1: main results."]}
    with pytest.raises(ValueError, match="no section 'mcnemar' in the run report"):
        s.ready("mcnemar")


@pytest.mark.parametrize(("values", "types", "message"), [
    ({"run_dir": 7}, {"run_dir": str}, "must be a string, got int 7.*-r run_dir"),
    ({"run_dir": None}, {"run_dir": str}, "must be a string, got NoneType None"),
    ({"success_threshold": "0.8"}, {"success_threshold": float}, "must be a number, got str"),
    ({"success_threshold": True}, {"success_threshold": float}, "must be a number, got bool"),
    ({"n_resamples": 2.5}, {"n_resamples": int}, "must be an integer, got float"),
])
def test_parameter_types_are_checked_with_a_papermill_hint(values, types, message):
    with pytest.raises(TypeError, match=message):
        check_parameters(values, types)


def test_input_dir_and_output_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="--cwd notebooks"):
        input_dir("../data/sample_runs/x", "run_dir")
    assert output_dir_for("", "r1") == tmp_path / "figures" / "r1"
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    assert output_dir_for("", "../etc") == tmp_path / "figures" / "etc"
    assert output_dir_for("/x/y", "r1") == Path("/x/y")


def test_plain_papermill_with_a_numeric_run_folder_says_to_use_r(tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(ROOT / "notebooks" / "run_report.ipynb"),
                            str(tmp_path / "out.ipynb"), parameters={"run_dir": 7},
                            cwd=str(ROOT / "notebooks"), kernel_name="python3",
                            progress_bar=False)
    assert "TypeError" in str(err.value) and "-r run_dir 007" in str(err.value)


def test_run_report_without_output_dir_writes_to_its_own_folder(tmp_path, monkeypatch):
    """Only run_dir given: the report lands in figures/<that run's folder>, not in the
    default run's folder (the notebook run in notebooks/ as the docs say; its code cells in
    this process, notebook_runs.run_cells)."""
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    run = tmp_path / "data" / "run 7"
    shutil.copytree(SAMPLE, run)
    monkeypatch.chdir(nb_dir)
    with figures_not_rendered(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run_cells(ROOT / "notebooks" / "run_report.ipynb", {"run_dir": str(run)})
    assert (tmp_path / "figures" / "run_7" / "summary.json").is_file()
    assert not (tmp_path / "figures" / "proposed_aat").exists()


def test_docs_table_of_inputs_is_the_catalogues():
    text = (ROOT / "docs" / "guide" / "reports.md").read_text(encoding="utf-8")
    start, end = "<!-- inputs-table:start -->\n", "\n<!-- inputs-table:end -->"
    assert text[text.index(start) + len(start):text.index(end)] == schema.columns_markdown()
    for field in report.SUMMARY_FIELDS:
        assert f"- `{field}`:" in text


def test_a_run_without_a_required_column_fails_naming_it(tmp_path, run_copy, drop_columns):
    """A required column absent: the report fails (exit 1), its reason names the column and the
    run, the failed notebook is kept and linked, and the previous report's summary is gone (a
    failed re-run never leaves old numbers looking current)."""
    import subprocess
    import sys

    drop_columns(run_copy, {"final_score"})
    old = tmp_path / "out" / "older_run" / "summary.json"
    old.parent.mkdir(parents=True)
    old.write_text('{"answer_accuracy": 0.9}')
    # written by an earlier report: its ledger lists it (a file it did not write is never removed)
    from dabench_analysis.report.outputs import ledger_path

    ledger_path(old.parent).write_text(json.dumps({"version": 1, "written_by": "dabench-analysis",
                                                   "files": ["summary.json"]}))
    cli = Path(sys.executable).with_name("dabench-analysis")
    proc = subprocess.run([str(cli), "report", str(run_copy), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "400"})  # the summary table unwrapped
    assert proc.returncode == 1
    assert re.search(r"required column\(s\) \['final_score'\] missing", proc.stdout), proc.stdout
    assert "older_run" in proc.stdout and "failed" in proc.stdout
    assert (tmp_path / "out" / "older_run" / "report.failed.ipynb").is_file()
    assert not old.exists()
    index = (tmp_path / "out" / "index.html").read_text()
    assert "failed" in index and "report.failed.html" in index
    assert re.search(r"required column\(s\) \[&#x27;final_score&#x27;\] missing", index)


def test_docs_table_of_checks_is_the_catalogues():
    text = (ROOT / "docs" / "guide" / "validation.md").read_text(encoding="utf-8")
    start, end = "<!-- checks-table:start -->\n", "\n<!-- checks-table:end -->"
    assert text[text.index(start) + len(start):text.index(end)] == schema.checks_markdown()


def test_a_finding_never_quotes_megabytes():
    from dabench_analysis.load import Finding

    f = Finding("error", "task_metrics.csv", 3, "failure_reason", "x", "bad: " + "y" * 5_000_000)
    assert len(f.message) <= 500 and f.message.endswith("(5,000,005 characters)")


def test_inputs_table_lists_side_file_columns_with_what_needs_them():
    rows = {r["input"]: r for r in schema.columns_table()}
    assert rows["tool_calls.csv:latency_seconds"] == {
        "input": "tool_calls.csv:latency_seconds", "tier": "optional", "needed_by": "",
        "used_by": "tool_usage"}
    assert rows["tool_calls.csv:tool_name"]["tier"] == "required"  # the catalogue's tier
    assert rows["trajectory.csv:tokens"] == {
        "input": "trajectory.csv:tokens", "tier": "optional", "needed_by": "",
        "used_by": "validation: token_conservation"}
    assert "trajectory.csv:thought" not in rows  # nothing reads it


NOTEBOOK_OF = {"run": "run_report.ipynb", "compare": "compare_runs.ipynb", "sweep": "sweep.ipynb"}
#: Inputs each report's context gives its parts (report.run_context, compare_context, sweep_context)
INPUTS = {"run": {"run", "tasks", "tool_calls", "validation"},
          "compare": {"baseline", "proposed", "baseline_run", "proposed_run"},
          "sweep": {"runs", "tasks"}}


def _notebook_parameters(report_name: str) -> set[str]:
    import ast

    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / NOTEBOOK_OF[report_name], as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    return {n.target.id for n in ast.parse(cell.source).body if isinstance(n, ast.AnnAssign)}


@pytest.mark.parametrize("name", list(schema.SECTIONS))
def test_each_part_names_a_function_its_arguments_and_earlier_results(name):
    """What the catalogue says a section computes resolves: the function exists and takes the
    keyword arguments given, parameters are the notebook's, inputs are the context's or results
    of earlier parts, and no two parts write one file."""
    import inspect

    from dabench_analysis.schema.parts import Param

    sec = schema.SECTIONS[name]
    assert sec.parts, name
    known = set(INPUTS[sec.report])
    for other in schema.SECTIONS.values():  # results of the sections before it
        if other is sec:
            break
        if other.report == sec.report:
            known |= {p.result_key for p in other.parts}
    for part in sec.parts:
        assert set(part.inputs) <= known, (name, part.inputs)
        if "." in part.compute:
            func = report.resolve(part.compute)
            params = inspect.signature(func).parameters
            assert {k for k, _ in part.args} <= set(params), (name, part.compute)
        else:
            assert part.compute in known and not part.args, (name, part.compute)
        for _, value in part.args:
            if isinstance(value, Param):
                assert value.name in _notebook_parameters(sec.report), (name, value)
        known.add(part.result_key)
    all_stems = [p.stem for s in schema.SECTIONS.values() if s.report == sec.report
                 for p in s.parts if p.stem]
    assert len(all_stems) == len(set(all_stems))


def test_the_columns_a_part_shows_are_in_its_table():
    """A part's shown columns are filtered by the table's; on the complete sample runs each
    declared column must be there (a misspelt name would silently drop a column)."""
    from dabench_analysis.report.compute import compute_part
    from dabench_analysis.report.context import compare_context, run_context

    base, prop = (da.load_run(ROOT / "data" / "sample_runs" / n) for n in
                  ("baseline_react", "proposed_aat"))
    params = {"success_threshold": 0.8, "correction": "holm"}
    contexts = {"run": run_context(prop, params, out=Path("unused"), quiet=True),
                "compare": compare_context(base, prop, params, out=Path("unused"), quiet=True)}
    checked = 0
    for sec in schema.SECTIONS.values():
        for part in sec.parts:
            if part.columns and sec.report in contexts:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    table = compute_part(contexts[sec.report], part)
                assert set(part.columns) <= set(table.columns), (sec.name, part.stem)
                checked += 1
    # the ten tables whose page shows a subset of their columns, and eight trajectory tables
    assert checked == 18


def test_a_section_of_another_report_is_refused_by_section():
    ctx = report.run_context(da.load_run(SAMPLE), {"success_threshold": 0.8},
                             out=Path("unused"), quiet=True)
    with pytest.raises(ValueError, match="no section 'mcnemar' in the run report"):
        report.section(ctx, "mcnemar")
    with pytest.raises(ValueError, match="loaded with success_threshold=0.8, the report's "
                                         "parameter is 0.7"):
        report.run_context(da.load_run(SAMPLE), {"success_threshold": 0.7}, out=Path("unused"))


def test_the_summary_states_the_threshold_and_the_common_fields(tmp_path):
    """One builder for every report: the common fields, the threshold, no clash."""
    s = report.write_summary("research_eval", {"n_runs": 3}, out=tmp_path,
                             manifest={"files": []})
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "n_runs": 3, "schema_version": 1, "report": "research_eval", "success_threshold": None,
        "skipped": [], "reduced": [], "skipped_lines": [], "manifest": {"files": []}} == s
    with pytest.raises(ValueError, match=r"key numbers \['skipped'\] would overwrite"):
        report.write_summary("judge", {"skipped": 1}, out=tmp_path, manifest={})
    run = da.load_run(SAMPLE, success_threshold=0.7)
    ctx = report.run_context(run, {"success_threshold": 0.7}, out=tmp_path / "r", quiet=True)
    assert "**Success threshold: 0.7**" in ctx.statement()
    assert "`final_score >= 0.7`" in ctx.statement()


@pytest.mark.parametrize("content", [b"", b"\r\r\r"])
def test_a_side_file_that_cannot_be_read_skips_its_sections_with_the_reason(tmp_path, content):
    # a 0-byte (or CR-only) tool_calls.csv: the sections that need it are skipped, naming why,
    # instead of failing the report in a cell; validation reports the file's error
    run = Path(shutil.copytree(SAMPLE, tmp_path / "r"))
    (run / "tool_calls.csv").write_bytes(content)
    loaded = da.load_run(run)
    s = Sections(loaded, quiet=True)
    assert s.ready("main_results") and not s.ready("tool_usage")
    assert s.skipped == [{"section": "tool_usage", "title": s.skipped[0]["title"],
                          "missing": ["tool_calls.csv"]}]
    found = da.validate_run(loaded).findings
    assert ((found["file"] == "tool_calls.csv") & (found["severity"] == "error")).any()
