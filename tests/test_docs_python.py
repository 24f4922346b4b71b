"""The docs page "Use it from Python / JupyterLab" (``docs/guide/python.md``, the README's section
until issue 34) works as written (issue 27, item 4):
its Python blocks, taken from the page itself, are run as the cells of a new notebook in
``notebooks/`` (a Jupyter kernel whose working folder is ``notebooks/``), and show what the text
says they show: the Run's HTML display, tables through ``da.show``, a figure, the explorer."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "python.md"
SECTION = "# Use it from Python / JupyterLab\n"


def readme_blocks() -> list[str]:
    """The ```python blocks of the page's Python / JupyterLab section, in order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n# ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_section_says_where_to_paste_and_uses_paths_from_notebooks():
    text = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[1]
    assert "new notebook in `notebooks/`" in text.split("```", 1)[0]
    blocks = readme_blocks()
    paths = re.findall(r'load_runs?\("([^"]+)"', "\n".join(blocks))
    assert paths and all(p.startswith("../data/") for p in paths)
    assert all((ROOT / "notebooks" / p).is_dir() for p in paths)
    assert "da.show(" in "\n".join(blocks) and "display(" not in "\n".join(blocks)


@pytest.fixture(scope="module")
def executed() -> list[nbformat.NotebookNode]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(b) for b in readme_blocks()])
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # inline figures
    client = NotebookClient(nb, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(ROOT / "notebooks")}})
    client.execute(env=env)
    return nb.cells


def _accuracy(run: str) -> tuple[int, int]:
    """(correct, tasks) of a sample run from its task_metrics.csv: final_score >= 0.8."""
    path = ROOT / "data/sample_runs" / run / "task_metrics.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        scores = [float(r["final_score"]) for r in csv.DictReader(fh)]
    return sum(s >= 0.8 for s in scores), len(scores)


def test_every_block_runs_and_shows_what_the_text_says(executed):
    errors = [(c.source, o) for c in executed for o in c.outputs if o.output_type == "error"]
    assert not errors
    data = [{k: v for o in c.outputs for k, v in o.get("data", {}).items()} for c in executed]
    by_code = dict(zip((c.source for c in executed), data, strict=True))

    def cell(code: str) -> dict:
        return next(d for src, d in by_code.items() if code in src)

    correct, n = _accuracy("proposed_aat")  # 72 of 80
    shown = cell('load_run("../data/sample_runs/proposed_aat"')
    assert "Run proposed_aat" in shown["text/html"]
    assert f"{correct / n:.3f} [" in shown["text/html"]  # a proportion, 3 decimals
    assert f"<Run 'proposed_aat': {n} tasks, answer accuracy {correct / n:.3f}" in \
        shown["text/plain"]
    table2 = cell("difficulty_breakdown")["text/html"]
    assert '<table class="dabench-table"' in table2 and "Answer accuracy [95% CI]" in table2
    for level in ("Easy", "Medium", "Hard", "Extreme"):
        assert f">{level}</td>" in table2
    assert "image/png" in cell("difficulty_bars")
    for code in ("da.explore(run)", "da.explore(base, run)"):
        bundle = cell(code)
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert "dabench-explorer-static" in bundle["text/html"]
    assert "shared tasks" in cell("da.explore(base, run)")["text/html"]
    assert "Wilcoxon" in cell("compare_runs")["text/html"]
    assert "McNemar" in cell("mcnemar")["text/html"]
    assert "Task task_38" in cell("task_detail")["text/html"]
