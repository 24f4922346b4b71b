"""Notebooks: committed without outputs, parameters cell tagged, thin, their sections the
catalogue's, one summary builder (explore runs end to end in test_explorer.py and, in
JupyterLab, in test_browser.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from dabench_analysis import schema

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_expected_notebooks_exist():
    names = {p.name for p in NOTEBOOKS}
    assert {"run_report.ipynb", "compare_runs.ipynb", "explore.ipynb", "judge_agreement.ipynb",
            "research_eval.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs_and_thin(path):
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


CATALOGUED = {"run_report.ipynb": "run", "compare_runs.ipynb": "compare", "sweep.ipynb": "sweep"}
SECTION_CALL = re.compile(r'report\.section\(ctx, "(\w+)"\)')


@pytest.mark.parametrize("name", sorted(CATALOGUED))
def test_a_section_is_a_heading_and_one_line_from_the_catalogue(name):
    """Every section of the report's catalogue, in its order, as a Markdown heading (so that the
    page's Contents box lists it) followed by one code cell of one line."""
    cells = nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    called = []
    for i, cell in enumerate(cells):
        found = SECTION_CALL.findall(cell.source) if cell.cell_type == "code" else []
        if not found:
            continue
        assert cell.source.strip() == f'report.section(ctx, "{found[0]}")', cell.source
        before = cells[i - 1]
        assert before.cell_type == "markdown" and re.search(r"^#{2,3} \S", before.source, re.M)
        called += found
    assert called == [s for s, sec in schema.SECTIONS.items() if sec.report == CATALOGUED[name]]


#: Notebooks for interactive use, not reports: they write no summary.json.
INTERACTIVE = {"explore.ipynb", "trajectories.ipynb"}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in INTERACTIVE],
                         ids=lambda p: p.name)
def test_every_report_writes_its_summary_with_the_one_builder(path):
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")
    assert len(re.findall(r"report\.(summary|write_summary)\(", source)) == 1
    assert "summary.json" not in source and "write_json" not in source
