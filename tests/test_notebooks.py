"""Notebooks: committed without outputs, parameters cell tagged, thin, their sections the
catalogue's, one summary builder (explore runs end to end in test_explorer.py and, in
JupyterLab, in test_browser.py). The rules hold for the shipped notebooks
(``report.runner.SHIPPED_NOTEBOOKS``), never for one a user adds to ``notebooks/`` as the
docs suggest (docs/guide/python.md) (issue 33, item 6)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from dabench_analysis.report.runner import SHIPPED_NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]


def shipped(folder: Path) -> list[Path]:
    """The shipped notebooks in ``folder``: the ones the rules below are for (a user's own
    notebook beside them is not one)."""
    return [folder / name for name in SHIPPED_NOTEBOOKS]


NOTEBOOKS = shipped(ROOT / "notebooks")


def test_expected_notebooks_exist():
    assert all(p.is_file() for p in NOTEBOOKS)
    assert {"run_report.ipynb", "compare_runs.ipynb", "explore.ipynb", "judge_agreement.ipynb",
            "research_eval.ipynb"} <= set(SHIPPED_NOTEBOOKS)


def test_the_shipped_list_is_what_the_batch_runs_and_git_tracks(tmp_path):
    from dabench_analysis.report import plan_jobs

    data = ROOT / "data"
    jobs = plan_jobs(sorted(p for p in (data / "sample_runs").iterdir() if p.is_dir()),
                     tmp_path, baseline=data / "sample_runs" / "baseline_react", sweep=True,
                     judge_study=data / "judge_study", research_eval=data / "research_eval")
    assert {j.kind for j in jobs} == {"run", "compare", "sweep", "judge", "research_eval"}
    assert {j.notebook.name for j in jobs} <= set(SHIPPED_NOTEBOOKS)
    try:
        tracked = subprocess.run(["git", "ls-files", "notebooks/*.ipynb"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the shipped list is checked against git there")
    assert sorted(Path(t).name for t in tracked) == sorted(SHIPPED_NOTEBOOKS)


def test_a_users_notebook_in_notebooks_is_not_held_to_the_rules(tmp_path):
    """The docs say (docs/guide/python.md): make a new notebook in notebooks/. One there (with outputs, no
    parameters cell, a function) is the user's: not listed, so no rule fails on it."""
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder)
    mine = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "def f():\n    return 1\nf()", execution_count=1,
        outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                        execution_count=1)])])
    nbformat.write(mine, folder / "Untitled.ipynb")
    with pytest.raises(AssertionError):  # the rules would fail on it, were it listed
        check_committed_without_outputs_and_thin(folder / "Untitled.ipynb")
    assert [p.name for p in shipped(folder)] == list(SHIPPED_NOTEBOOKS)
    for path in shipped(folder):
        check_committed_without_outputs_and_thin(path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs_and_thin(path):
    check_committed_without_outputs_and_thin(path)


def check_committed_without_outputs_and_thin(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert nb.cells[0].cell_type == "markdown"  # title and purpose first
    for cell in code:  # logic lives in the package: no function or class definitions
        tree = ast.parse(cell.source)
        assert not [n for n in ast.walk(tree)
                    if isinstance(n, (ast.FunctionDef, ast.ClassDef))], path.name


REPORTS = ("run_report.ipynb", "compare_runs.ipynb", "sweep.ipynb")


@pytest.mark.parametrize("name", REPORTS)
def test_a_section_is_a_heading_and_a_cell_calling_the_package(name):
    """Each section is a Markdown heading (so that the page's Contents box lists it) followed
    by one cell, ``with out.section(name, title):``, whose calls hand package results to the
    writer; the skipped sections are grouped by the one grouping function (group_skips)."""
    cells = nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    sections = 0
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or "out.section(" not in cell.source:
            continue
        sections += 1
        tree = ast.parse(cell.source)
        assert len(tree.body) == 1 and isinstance(tree.body[0], ast.With), cell.source
        before = cells[i - 1]
        assert before.cell_type == "markdown" and re.search(r"^#{2,3} \S", before.source, re.M)
        writes = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(
            n.func, ast.Attribute) and n.func.attr in ("table", "figure", "text")]
        assert writes, cell.source
    assert sections >= 7
    source = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "report.group_skips(" in source and "report.section(" not in source


#: Notebooks for interactive use, not reports: they write no summary.json.
INTERACTIVE = {"explore.ipynb", "trajectories.ipynb"}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in INTERACTIVE],
                         ids=lambda p: p.name)
def test_every_report_writes_its_summary_with_the_one_builder(path):
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")
    assert len(re.findall(r"report\.(summary|write_summary)\(", source)) == 1
    assert "summary.json" not in source and "write_json" not in source
