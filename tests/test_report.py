"""The papermill runner and the report CLI end to end (pitfalls P09, P10)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dabench_analysis import report, tables
from dabench_analysis.load import load_run

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "dabench_analysis.report._cli"]


def _nb(path: Path, cells, kernel="python3") -> Path:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    nbformat.write(nb, path)
    return path


def test_p09_untagged_parameters_cell_is_refused(tmp_path):
    # pitfalls.md P09: papermill would print 0.5 and exit 0; the runner stops instead
    nb = _nb(tmp_path / "p.ipynb", [new_code_cell("threshold = 0.5"),
                                    new_code_cell("print(threshold)")])
    with pytest.raises(report.ReportError, match="no cell tagged 'parameters'"):
        report.run_notebook(nb, tmp_path / "out", {"threshold": 0.9}, html_export=False)


def test_p09_tagged_cell_uses_the_passed_value(tmp_path):
    cell = new_code_cell("threshold = 0.5")
    cell.metadata["tags"] = ["parameters"]
    nb = _nb(tmp_path / "p.ipynb", [cell, new_code_cell(
        "from pathlib import Path\nPath(out).write_text(str(threshold))")])
    with pytest.raises(report.ReportError, match=r"\['out'\] are not assigned"):
        report.run_notebook(nb, tmp_path / "out", {"threshold": 0.9, "out": "x"},
                            html_export=False)
    cell.source = f"threshold = 0.5\nout = {str(tmp_path / 'v.txt')!r}"
    nb = _nb(tmp_path / "p.ipynb", [cell, new_code_cell(
        "from pathlib import Path\nPath(out).write_text(str(threshold))")])
    report.run_notebook(nb, tmp_path / "out", {"threshold": 0.9}, html_export=False)
    assert (tmp_path / "v.txt").read_text() == "0.9"


def test_p10_missing_kernel_fails_early(tmp_path):
    cell = new_code_cell("x = 1")
    cell.metadata["tags"] = ["parameters"]
    nb = _nb(tmp_path / "k.ipynb", [cell], kernel="evalkit-env")
    # the notebook's own kernelspec is ignored: the runner passes kernel_name explicitly
    report.run_notebook(nb, tmp_path / "ok", {"x": 2}, html_export=False)
    with pytest.raises(report.ReportError, match="kernel 'evalkit-env' is not installed"):
        report.run_notebook(nb, tmp_path / "bad", {"x": 2}, kernel_name="evalkit-env")


def test_p10_notebook_runs_in_its_own_folder(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "results.csv").write_text("a\n1\n2\n")
    cell = new_code_cell("n = 0")
    cell.metadata["tags"] = ["parameters"]
    nb = _nb(sub / "relpath.ipynb", [cell, new_code_cell(
        "import pandas as pd\nassert len(pd.read_csv('results.csv')) == 2")])
    out = report.run_notebook(nb, tmp_path / "elsewhere", {"n": 1}, html_export=False)
    assert out == tmp_path / "elsewhere" / "report.ipynb"


def test_failing_cell_is_reported_in_one_line(tmp_path):
    cell = new_code_cell("x = 1")
    cell.metadata["tags"] = ["parameters"]
    nb = _nb(tmp_path / "f.ipynb", [cell, new_code_cell("raise KeyError('final_scor')")])
    # the cell as In [n] (1 parameters, 2 injected parameters, 3 this one) and its first line
    with pytest.raises(report.ReportError, match=r"^f\.ipynb failed in cell 3 "
                       r"`raise KeyError\('final_scor'\)`: KeyError: 'final_scor'$"):
        report.run_notebook(nb, tmp_path / "out", {"x": 2}, html_export=False)
    assert not (tmp_path / "out" / "report.ipynb").exists()
    assert (tmp_path / "out" / "report.failed.ipynb").is_file()


def test_plan_jobs_names_and_baseline(tmp_path):
    runs = [ROOT / "data/sample_runs/baseline_react", ROOT / "data/sample_runs/proposed_aat"]
    jobs = report.plan_jobs(runs, tmp_path, baseline=runs[0])
    assert [(j.kind, j.name) for j in jobs] == [
        ("run", "baseline_react"), ("run", "proposed_aat"),
        ("compare", "compare_baseline_react_vs_proposed_aat")]
    assert all(j.out_dir.parent == tmp_path.resolve() for j in jobs)


RUN_FIGURES = ["score_distribution", "failure_distribution", "correlation_matrix",
               "autonomy_vs_efficiency", "reliability_diagram", "difficulty_breakdown",
               "failure_by_stage", "tool_latency",
               # the Trajectories part (issue 23)
               "trajectory_variants", "transition_graph", "step_latency", "solve_curve",
               # the Reliability part (issue 36): a confidence, no repeated trials
               "reliability_profile", "risk_coverage_curve"]
RUN_TABLES = ["main_results", "difficulty_breakdown", "task_type_breakdown",
              "specialist_participation", "root_causes", "failure_categories", "failure_stages",
              "outcome_error_types", "outcome_status", "mas_effectiveness",
              "coordinator_effectiveness", "specialist_value", "calibration",
              "ablation_verification", "ablation_replanning", "ablation_efficiency_quartiles",
              "phase_timing", "tool_usage", "health"]
COMPARE_TABLES = ["paired_comparison", "paired_by_difficulty", "mcnemar", "task_changes",
                  "improved_tasks", "regressed_tasks"]


@pytest.fixture(scope="module")
def cli_report(sample_report):
    """The batch CLI with --jobs 2 over the sample runs, one of them not evaluated, with
    --baseline and --sweep (built once per session: conftest.sample_report)."""
    return sample_report


def test_cli_run_report_end_to_end(cli_report):
    proc, out = cli_report
    assert proc.returncode == 0, proc.stderr
    run_out = out / "baseline_react"
    for name in ["report.ipynb", "report.html", "summary.json"]:
        assert (run_out / name).stat().st_size > 0, name
    for fig in RUN_FIGURES:
        assert (run_out / f"{fig}.png").read_bytes()[:4] == b"\x89PNG", fig
        assert (run_out / f"{fig}.pdf").read_bytes()[:5] == b"%PDF-", fig
    for table in RUN_TABLES:
        for ext in ["csv", "tex", "md"]:
            assert (run_out / "tables" / f"{table}.{ext}").stat().st_size > 0, (table, ext)
    assert "\\toprule" in (run_out / "tables" / "difficulty_breakdown.tex").read_text()
    # the saved tables hold the same numbers the package computes directly
    tasks = load_run(ROOT / "data/sample_runs/baseline_react").tasks
    saved = pd.read_csv(run_out / "tables" / "difficulty_breakdown.csv")
    direct = tables.difficulty_breakdown(tasks)
    assert saved["answer_accuracy"].tolist() == pytest.approx(direct["answer_accuracy"].tolist())
    summary = json.loads((run_out / "summary.json").read_text())
    assert summary["n_tasks"] == 80
    assert summary["answer_accuracy"] == pytest.approx(61 / 80)
    assert summary["validation_errors"] == 0
    # the baseline's tool calls fail more often than the guide's 10 % (§Troubleshooting, "health
    # score < 7"), counted from the file: one cause caps harness health at 6 (validate/_health.py)
    with (ROOT / "data" / "sample_runs" / "baseline_react" / "tool_calls.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sum(r["success"] == "0" for r in rows) / len(rows) > 0.10
    assert summary["health_score"] == 6.0
    html = (run_out / "report.html").read_text()
    assert "Table 2" in html
    # the threshold used is stated in the summary and on the page (the notebook's default)
    assert summary["success_threshold"] == 0.8
    assert "<strong>Success threshold: 0.8</strong>" in html
    assert "<code>final_score &gt;= 0.8</code>" in html
    # figures are embedded even though the tests run with MPLBACKEND=Agg
    assert html.count("<img") >= len(RUN_FIGURES), html.count("<img")
    assert "report.ipynb" not in [p.name for p in (ROOT / "notebooks").iterdir()]


def test_report_shows_the_saved_figures_once(cli_report):
    """Each figure is rendered once: the notebook and its HTML show the very PNG on disk."""
    import base64

    _, out = cli_report
    run_out = out / "baseline_react"
    nb = nbformat.read(run_out / "report.ipynb", as_version=4)
    shown = [base64.b64decode(o.data["image/png"]) for c in nb.cells if c.cell_type == "code"
             for o in c.outputs if "image/png" in o.get("data", {})]
    files = [(run_out / f"{fig}.png").read_bytes() for fig in RUN_FIGURES]
    assert len(shown) == len(RUN_FIGURES)  # one image per figure, no second inline rendering
    assert sorted(shown) == sorted(files)
    html = (run_out / "report.html").read_text()
    for data in files:
        assert base64.b64encode(data).decode() in html


def test_cli_comparison_report(cli_report):
    _, out = cli_report
    cmp_out = out / "compare_baseline_react_vs_proposed_aat"
    for table in COMPARE_TABLES:
        assert (cmp_out / "tables" / f"{table}.csv").is_file(), table
    assert (cmp_out / "paired_difference.png").is_file()
    paragraph = (cmp_out / "results_paragraph.md").read_text()
    assert "Wilcoxon signed-rank test on 80 paired tasks" in paragraph
    summary = json.loads((cmp_out / "summary.json").read_text())
    paired = pd.read_csv(cmp_out / "tables" / "paired_comparison.csv").set_index("metric")
    assert summary["p_value_final_score"] == pytest.approx(paired.loc["final_score", "p_value"])
    assert summary["n_improved"] + summary["n_regressed"] <= 80


def test_cli_marks_missing_artifacts_not_evaluated(cli_report):
    proc, out = cli_report
    assert "not evaluated" in proc.stdout
    assert not (out / "pending_run").exists()
    assert not (out / "compare_baseline_react_vs_pending_run").exists()
    index = (out / "index.html").read_text()
    assert 'href="baseline_react/report.html"' in index
    assert 'href="compare_baseline_react_vs_proposed_aat/report.html"' in index
    assert index.count("not evaluated") == 1  # the run; no comparison is planned for it


def test_rerun_overwrites_cleanly(cli_report, tmp_path):
    """A report run again into a batch's folder replaces its files: the same names, no
    temporary leftovers (the sweep, the shortest report of the batch, on a copy of it)."""
    out = tmp_path / "out"
    shutil.copytree(cli_report[1], out)
    before = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    proc = subprocess.run(CLI + ["report", *(str(ROOT / "data/sample_runs" / r) for r in (
        "baseline_react", "proposed_aat")), "--sweep", "--no-run-reports", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    after = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert after == before  # same files, no temporary leftovers
    # the hidden files: the lists of what the toolkit wrote (a report folder's, the index's)
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.name.startswith(".")} \
        == {".dabench-index.json", "sweep/.dabench-report.json",
            "baseline_react/.dabench-report.json", "proposed_aat/.dabench-report.json",
            "compare_baseline_react_vs_proposed_aat/.dabench-report.json"}
    old = (cli_report[1] / "baseline_react" / "summary.json").stat().st_mtime
    assert (out / "sweep" / "summary.json").stat().st_mtime > old  # written again
    assert (out / "baseline_react" / "summary.json").stat().st_mtime == old  # --no-run-reports


def test_out_inside_a_run_directory_is_refused(tmp_path):
    runs = ROOT / "data/sample_runs"
    with pytest.raises(report.ReportError, match="would write into the input"):
        report.plan_jobs([runs / "baseline_react"], runs)
    with pytest.raises(report.ReportError, match="would write into the input"):
        report.plan_jobs([runs / "baseline_react"], runs / "baseline_react")


def test_unreachable_scheduler_is_one_line(tmp_path):
    jobs = report.plan_jobs([ROOT / "data/sample_runs/baseline_react"], tmp_path)
    with pytest.raises(report.ReportError, match="cannot reach the Dask scheduler"):
        report.run_jobs(jobs, scheduler="notanaddress")


def test_kernels_talk_over_ipc_sockets():
    """Two kernels started at once over TCP can pick the same free port (one then fails after
    a 60 s timeout, seen in the --jobs 2 benchmark); IPC sockets are named per kernel."""
    import os

    from dabench_analysis.report import runner

    kwargs = runner._kernel_manager()
    managers = [kwargs["kernel_manager_class"](kernel_name="python3") for _ in range(2)]
    if os.name != "posix":
        assert [km.transport for km in managers] == ["tcp", "tcp"]
        return
    assert [km.transport for km in managers] == ["ipc", "ipc"]
    a, b = (km.ip for km in managers)  # socket paths: distinct, whatever the working folder
    assert a != b and os.path.isabs(a) and len(a) < 90


def test_baseline_by_folder_name_or_a_clear_error(tmp_path, monkeypatch):
    """--baseline takes a directory, or the folder name of exactly one run given; anything else
    is a usage error (exit 2) naming it, before any notebook runs."""
    from typer.testing import CliRunner

    from dabench_analysis.report import _cli as cli

    seen = {}

    def plan(run_dirs, out, **kw):  # stop after the arguments are resolved
        seen.update(kw)
        raise cli.rep.ReportError("planned")

    monkeypatch.setattr(cli.rep, "plan_jobs", plan)
    runs = [str(ROOT / "data" / "sample_runs" / n) for n in ("baseline_react", "proposed_aat")]
    bad = CliRunner().invoke(cli.app, ["report", *runs, "--baseline", "nosuch",
                                       "--out", str(tmp_path / "o")])
    assert bad.exit_code == 2 and "--baseline nosuch: no such directory" in bad.output
    named = CliRunner().invoke(cli.app, ["report", *runs, "--baseline", "baseline_react",
                                         "--out", str(tmp_path / "o")])
    assert named.exit_code == 2 and "planned" in named.output
    assert Path(seen["baseline"]) == Path(runs[0])


def test_the_page_is_made_while_the_kernel_stops_and_is_the_page_of_the_notebook(
        tmp_path, monkeypatch):
    """The runner makes report.html from the notebook as its last cell left it, in a thread,
    while the kernel shuts down (runner._PageAhead); the page is the one export_html makes
    from the executed notebook afterwards. A last cell that fails: no page made ahead."""
    import threading

    from dabench_analysis.report import _html

    made_on: list[str] = []
    page_of = _html.page_of

    def recorded(nb, name):
        made_on.append(threading.current_thread().name)
        return page_of(nb, name)

    monkeypatch.setattr(_html, "page_of", recorded)
    cell = new_code_cell("x = 1")
    cell.metadata["tags"] = ["parameters"]
    nb = _nb(tmp_path / "p.ipynb", [nbformat.v4.new_markdown_cell("# A page\n\n## Part"), cell,
                                    new_code_cell("import warnings\nwarnings.warn('odd x')\nx * 7")])
    out = report.run_notebook(nb, tmp_path / "out", {"x": 6})
    assert len(made_on) == 1 and made_on[0].startswith("dabench-page")
    again = _html.export_html(out, tmp_path / "again.html")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page == again.read_text(encoding="utf-8")
    assert ">42<" in page and "odd x" in page and "<title>A page</title>" in page

    # a last cell that raised, raised where errors are allowed, or outlasted the timeout:
    # papermill completes it all the same (a finally); no page is made ahead of the failure
    allowed = new_code_cell("raise ValueError('no page ahead')")
    allowed.metadata["tags"] = ["raises-exception"]
    for i, (last, timeout) in enumerate([
            (new_code_cell("raise ValueError('no page ahead')"), None), (allowed, None),
            (new_code_cell("import time\ntime.sleep(60)"), 2)]):
        made_on.clear()
        bad = _nb(tmp_path / f"bad{i}.ipynb", [cell, last])
        try:
            report.run_notebook(bad, tmp_path / f"bad{i}", {"x": 6}, timeout=timeout)
        except report.ReportError:
            assert (tmp_path / f"bad{i}" / "report.failed.html").is_file()
            assert made_on == ["MainThread"]  # the failed notebook's page, made after the run
        else:  # an error the cell's tag allows: the page of the notebook as it ended
            assert made_on == ["MainThread"] and (tmp_path / f"bad{i}" / "report.html").is_file()
