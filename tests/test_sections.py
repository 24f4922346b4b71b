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
from dabench_analysis.report import check_parameters, input_dir, output_dir_for

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs" / "proposed_aat"


@pytest.fixture
def run_copy(tmp_path) -> Path:
    dest = tmp_path / "older_run"
    shutil.copytree(SAMPLE, dest)
    return dest


def _declared():
    return {schema._declared.name_of(f): f.needs for f in schema._declared.declared()}


def test_the_declarations_name_only_known_columns_and_files():
    """Every function declared with @needs names catalogue columns, optional files and
    columns of those files; the public namespaces hold every declared function (the walk and
    the registry agree)."""
    decls = _declared()
    assert len(decls) >= 50
    for name, need in decls.items():
        for col in (*need.columns, *(u for u in need.uses if ":" not in u)):
            assert col in schema.TASK_COLUMNS, (name, col)
        assert set(need.files) <= set(schema._files.OPTIONAL_FILES), name
        for qual in (*need.file_needs, *(u for u in need.uses if ":" in u)):  # "<file>:<column>"
            file, _, col = qual.partition(":")
            assert file in need.files, (name, qual)
            assert col in {"tool_calls.csv": schema.TOOL_CALL_COLUMNS,
                           "trajectory.csv": schema.TRAJECTORY_COLUMNS}[file], (name, qual)
        assert need.trials in ("one", "any", "several")
    import types

    def walk(ns):  # every public name of a namespace and of its sub-namespaces
        for name in getattr(ns, "__all__", [n for n in vars(ns) if not n.startswith("_")]):
            obj = getattr(ns, name)
            if isinstance(obj, types.ModuleType):
                if obj.__name__.startswith(ns.__name__ + "."):
                    yield from walk(obj)
            elif callable(obj) and hasattr(obj, "needs"):
                yield schema._declared.name_of(obj)

    walked = {n for ns in (da.tables, da.figures, da.stats, da.export, da.trajectory, da.judge,
                           da.research_eval) for n in walk(ns)}
    assert walked == set(decls)
    # tool_usage computes with timing.tool_usage, which documents these tool_calls.csv columns
    # (latency and tokens when recorded: tau-bench and Inspect logs record none; issue 33)
    assert da.tables.timing.tool_usage.needs.file_needs == tuple(
        f"tool_calls.csv:{c}" for c in ("task_id", "tool_name", "success"))
    assert da.tables.timing.tool_usage.needs.uses == tuple(
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
        ("warning", "outcome_error_type",
         "optional column absent: disables tables.failures.outcome_error_types"),
        ("info", "analyst_score", "optional column absent: "
         "export.paragraph.reporting_paragraph, figures.relations.correlation_matrix, "
         "stats.multicomp.compare_runs, tables.paper.main_results, "
         "tables.paper.task_type_breakdown run without it"),
        ("info", "", "2 optional catalogue columns absent, which no report section needs: "
         "trace_id, timestamp"),
        ("warning", "", "optional file not found; disables figures.process.tool_latency, "
         "tables.timing.tool_usage, trajectory.profile.tool_fit; invariants that "
         "need it are not checked"),
    ])
    assert not (found["severity"] == "error").any()


def test_validate_on_the_complete_sample_run_lists_nothing_absent():
    found = validate_run(SAMPLE).findings
    assert not found["check"].isin(["absent_column", "missing_file"]).any()


def test_a_section_skips_once_and_says_what_is_missing(tmp_path, run_copy, drop_columns, capsys):
    """A declared function lacking its inputs raises Skipped; the writer's section shows the
    note, writes nothing, and lists it; optional columns it ran without are listed as reduced."""
    drop_columns(run_copy, {"answer_f1", "autonomy_score", "tool_efficiency"})
    (run_copy / "tool_calls.csv").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run = da.load_run(run_copy)
        out = report.run_context(run, {"threshold": 0.8}, out=tmp_path / "r")
        with out.section("tool_usage", "Tool latency and failures"):
            out.table(da.tables.timing.tool_usage(run), "tool_usage")
            raise AssertionError("not reached: the call above is skipped")
    with out.section("main_results", "Table 1: main results"):
        out.table(da.tables.main_results(run.tasks, metrics=[
            m for m in schema.columns.MAIN_METRICS if m in run.tasks]), "main_results")
    printed = capsys.readouterr().out
    assert printed.count("Skipped: Tool latency and failures") == 1
    assert "Needs `tool_calls.csv`, absent in this run." in printed
    assert "computed without `answer_f1`, `autonomy_score`, `tool_efficiency`" in printed
    assert not (tmp_path / "r" / "tables" / "tool_usage.csv").exists()
    assert (tmp_path / "r" / "tables" / "main_results.csv").is_file()
    assert out.sections.summary() == {
        "report": "run",
        "skipped": [{"section": "tool_usage", "title": "Tool latency and failures",
                     "missing": ["tool_calls.csv"]}],
        "reduced": [{"section": "main_results", "title": "Table 1: main results",
                     "absent": ["answer_f1", "autonomy_score", "tool_efficiency"]}],
        "skipped_lines": [  # report._sections.group_skips: one line per reason
            "**Not in this run** (1 section): Tool latency and failures. They need "
            "`tool_calls.csv`.",
            "*Computed without* `answer_f1`, `autonomy_score`, `tool_efficiency` (absent in "
            "this run): Table 1: main results."]}
    with pytest.raises(schema.Skipped, match="needs `difficulty`"):
        da.tables.difficulty_breakdown(run.tasks.drop(columns="difficulty"))


@pytest.mark.parametrize(("values", "types", "message"), [
    ({"run_dir": 7}, {"run_dir": str}, "must be a string, got int 7.*-r run_dir"),
    ({"run_dir": None}, {"run_dir": str}, "must be a string, got NoneType None"),
    ({"threshold": "0.8"}, {"threshold": float}, "must be a number, got str"),
    ({"threshold": True}, {"threshold": float}, "must be a number, got bool"),
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


def test_docs_table_of_inputs_is_the_declarations():
    from dabench_analysis.report.inputs_table import columns_markdown

    text = (ROOT / "docs" / "guide" / "reports.md").read_text(encoding="utf-8")
    start, end = "<!-- inputs-table:start -->\n", "\n<!-- inputs-table:end -->"
    assert text[text.index(start) + len(start):text.index(end)] == columns_markdown()
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
    from dabench_analysis.report._outputs import ledger_path

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
    assert text[text.index(start) + len(start):text.index(end)] == schema.checks.checks_markdown()


def test_a_finding_never_quotes_megabytes():
    from dabench_analysis.load import Finding

    f = Finding("error", "task_metrics.csv", 3, "failure_reason", "x", "bad: " + "y" * 5_000_000)
    assert len(f.message) <= 500 and f.message.endswith("(5,000,005 characters)")


def test_inputs_table_lists_side_file_columns_with_what_needs_them():
    from dabench_analysis.report.inputs_table import columns_table

    rows = {r["input"]: r for r in columns_table()}
    assert rows["tool_calls.csv:latency_seconds"] == {
        "input": "tool_calls.csv:latency_seconds", "tier": "optional", "needed_by": "",
        "used_by": "figures.process.tool_latency, tables.timing.tool_usage"}
    assert rows["tool_calls.csv:tool_name"]["tier"] == "required"  # the catalogue's tier
    assert rows["trajectory.csv:tokens"] == {
        "input": "trajectory.csv:tokens", "tier": "optional", "needed_by": "",
        "used_by": "validation: token_conservation"}
    assert "trajectory.csv:thought" not in rows  # nothing reads it


NOTEBOOK_OF = {"run": "run_report.ipynb", "compare": "compare_runs.ipynb", "sweep": "sweep.ipynb"}


def _calls(report_name: str):
    """The ``out.section``, ``out.table``/``figure``/``text`` calls of a report notebook."""
    import ast

    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / NOTEBOOK_OF[report_name], as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        isinstance(node.func.value, ast.Name) and node.func.value.id == "out":
                    yield node


@pytest.mark.parametrize("name", list(NOTEBOOK_OF))
def test_each_section_and_output_is_named_once(name):
    """A notebook's sections have distinct names, and no two calls write one file."""
    import ast

    sections, stems = [], []
    for node in _calls(name):
        literal = node.args[1].value if len(node.args) > 1 and isinstance(
            node.args[1], ast.Constant) else None
        if node.func.attr == "section":
            sections.append(node.args[0].value)
        elif literal:
            stems.append(("tables/" if node.func.attr == "table" else "") + literal)
    assert sections and len(sections) == len(set(sections))
    assert len(stems) == len(set(stems))
    assert stems == report.runner.notebook_outputs(NOTEBOOK_OF[name])


def test_the_columns_a_table_shows_are_in_it(sample_report):
    """The columns a notebook cell shows of a written table are among the table's (a misspelt
    name would silently drop a column): checked on the written sample reports."""
    import ast

    _, out = sample_report
    folders = {"run": out / "proposed_aat", "compare": out / "compare_baseline_react_vs_"
               "proposed_aat", "sweep": out / "sweep"}
    checked = 0
    for name, folder in folders.items():
        for node in _calls(name):
            kw = {k.arg: k.value for k in node.keywords}
            if node.func.attr == "table" and "columns" in kw and len(node.args) > 1:
                written = folder / "tables" / f"{node.args[1].value}.csv"
                if written.is_file():
                    header = written.read_text(encoding="utf-8").splitlines()[0].split(",")
                    assert set(ast.literal_eval(kw["columns"])) <= set(header), written
                    checked += 1
    # the ten tables whose page shows a subset of their columns, and seven trajectory tables
    # (step latency shows all: its grouping column is the level by="auto" chose)
    assert checked == 17


def test_a_context_notes_a_threshold_the_run_declares(tmp_path):
    """A run carries no threshold; one its run_config.json declares is noted, never applied."""
    with pytest.raises(ValueError, match="no 'threshold'.*renamed threshold"):
        report.run_context(da.load_run(SAMPLE), {"success_threshold": 0.7}, out=Path("unused"))
    run_dir = Path(shutil.copytree(SAMPLE, tmp_path / "declared"))
    (run_dir / "run_config.json").write_text('{"config": "a", "success_threshold": 0.7}')
    run = da.load_run(run_dir)
    assert run.declared_threshold == 0.7
    ctx = report.run_context(run, {"threshold": 0.8}, out=tmp_path / "r", quiet=True)
    assert ctx.threshold == 0.8
    assert ("declares a success threshold of 0.7 in its run_config.json; this analysis uses "
            "0.8") in ctx.statement()
    same = report.run_context(run, {"threshold": 0.7}, out=tmp_path / "s", quiet=True)
    assert "declares" not in same.statement()


def test_the_summary_states_the_threshold_and_the_common_fields(tmp_path):
    """One builder for every report: the common fields, the threshold, no clash."""
    s = report.write_summary("research_eval", {"n_runs": 3}, out=tmp_path,
                             manifest={"files": []})
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "n_runs": 3, "schema_version": 1, "report": "research_eval", "success_threshold": None,
        "skipped": [], "reduced": [], "skipped_lines": [], "manifest": {"files": []}} == s
    with pytest.raises(ValueError, match=r"key numbers \['skipped'\] would overwrite"):
        report.write_summary("judge", {"skipped": 1}, out=tmp_path, manifest={})
    run = da.load_run(SAMPLE)
    ctx = report.run_context(run, {"threshold": 0.7}, out=tmp_path / "r", quiet=True)
    assert "**Success threshold: 0.7**" in ctx.statement()
    assert "`final_score >= 0.7`" in ctx.statement()


@pytest.mark.parametrize("content", [b"", b"\r\r\r"])
def test_a_side_file_that_cannot_be_read_skips_its_sections_with_the_reason(tmp_path, content):
    # a 0-byte (or CR-only) tool_calls.csv: the sections that need it are skipped, naming why,
    # instead of failing the report in a cell; validation reports the file's error
    run = Path(shutil.copytree(SAMPLE, tmp_path / "r"))
    (run / "tool_calls.csv").write_bytes(content)
    loaded = da.load_run(run)
    out = report.run_context(loaded, {"threshold": 0.8}, out=tmp_path / "o", quiet=True)
    with out.section("tool_usage", "Tool latency and failures"):
        out.table(da.tables.timing.tool_usage(loaded), "tool_usage")
    with out.section("main_results", "Table 1: main results"):
        out.table(da.tables.main_results(loaded.tasks), "main_results", shown=False)
    assert out.sections.skipped == [{"section": "tool_usage", "title": "Tool latency and "
                                     "failures", "missing": ["tool_calls.csv"]}]
    found = da.validate_run(loaded).findings
    assert ((found["file"] == "tool_calls.csv") & (found["severity"] == "error")).any()
