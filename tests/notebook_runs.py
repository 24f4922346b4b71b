"""Helpers of the tests that run report notebooks: a file lock, the report CLI, a notebook's
code cells run in this process, figures drawn without rendering them."""

from __future__ import annotations

import contextlib
import fcntl
import io
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("dabench-analysis")


@contextlib.contextmanager
def locked(path: Path):
    """An exclusive lock on ``path`` (fcntl; held until the block ends, released if we die)."""
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def cli_report(out: Path, *args: str, timeout: int = 1800) -> dict:
    """``dabench-analysis report ARGS --out OUT`` from the repository root, as a dict of its exit
    code, stdout and stderr."""
    proc = subprocess.run([str(CLI), "report", *args, "--out", str(out)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


def run_cells(notebook: Path, parameters: Mapping[str, object]) -> dict:
    """Execute a notebook's code cells in this process, in order, with ``parameters`` set right
    after its ``parameters`` cell (as papermill injects them), its output discarded; returns the
    namespace. No kernel, no papermill, no HTML: those are tested on the sample runs
    (``sample_report``) and in test_report*.py; this runs the notebook's own code on many inputs."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    ns: dict = {"__name__": "__notebook__", "display": lambda *a, **k: None}
    tagged = False
    with contextlib.redirect_stdout(io.StringIO()):
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            exec(compile(cell.source, f"{notebook.name}, cell {i}", "exec"), ns)  # noqa: S102
            if "parameters" in cell.metadata.get("tags", []):
                unknown = set(parameters) - set(ns)
                assert not unknown, f"{notebook.name} has no parameters {sorted(unknown)}"
                ns.update(parameters)
                tagged = True
    assert tagged, f"{notebook.name}: no cell tagged 'parameters'"
    return ns


@contextlib.contextmanager
def figures_not_rendered() -> Iterator[None]:
    """Figures are drawn but not rendered: ``export.save_and_show`` writes empty ``.png`` and
    ``.pdf`` files of the names it is given and closes the figure. For tests that check which
    files a report writes, not their pixels (rendering at 300 dpi is ~80 % of a run report;
    the real files are checked on the sample runs)."""
    import matplotlib.pyplot as plt

    def placeholder(fig, path_stem, *, formats=("png", "pdf"), dpi=300):
        for fmt in formats:
            dest = Path(f"{path_stem}.{fmt}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(b"")
        plt.close(fig)

    with mock.patch("dabench_analysis.export.save_and_show", placeholder):
        yield


@contextlib.contextmanager
def tables_formatted_once(seen: dict) -> Iterator[None]:
    """Every table's ``.csv`` is written, its ``.tex`` and ``.md`` only the first time a table
    of that content (values, dtypes, columns, index names, caption, labels) is saved while
    ``seen`` is kept: a run's shapes share most of their tables, and formatting them was a
    quarter of a report without figures. A table seen before is shown as it was presented then
    (the same content, columns, labels and digits present the same). One whose cells cannot be
    hashed is always formatted.

    The patched function is ``export._tables._save_table``, which both ``export.save_table``
    and the reports' ``out.table`` call; the block fails if no table went through it (the
    reports would then save tables by another path, and every table be formatted again)."""
    import pandas as pd

    from dabench_analysis.export import _tables

    save, calls = _tables._save_table, [0]

    def once(df, stem, **kwargs):
        calls[0] += 1
        try:
            key = (int(pd.util.hash_pandas_object(df, index=True).sum()),
                   str(df.dtypes.to_dict()), tuple(df.columns), tuple(df.index.names),
                   repr(sorted(((k, v) for k, v in kwargs.items() if k != "formats"),
                               key=lambda kv: kv[0])), tuple(kwargs["formats"]))
        except TypeError:  # unhashable cells (lists, say)
            return save(df, stem, **kwargs)
        if key in seen:
            written, _ = save(df, stem, **{**kwargs, "formats": ("csv",)})
            return written, seen[key]
        written, shown = save(df, stem, **kwargs)
        seen[key] = shown
        return written, shown

    with mock.patch.object(_tables, "_save_table", once), \
            mock.patch("dabench_analysis.report._context._save_table", once):
        yield
    assert calls[0], "no table was saved through export._tables._save_table"


_FORMATTED: dict = {}  # tables_formatted_once's record, per process of report_shape's pool


def report_shape(name: str, run_dir: str, baseline_dir: str, out: str) -> str:
    """The run report of ``run_dir`` and its comparison against ``baseline_dir`` (notebooks'
    code in this process, figures drawn but not rendered, each distinct table formatted once
    per process: :func:`tables_formatted_once`), into ``out/<name>`` and
    ``out/compare_baseline_vs_<name>``; returns ``name``. A top-level function, so that a
    process pool can run shapes side by side."""
    import warnings

    nbs = ROOT / "notebooks"
    with figures_not_rendered(), tables_formatted_once(_FORMATTED), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the reports' notes (StatisticsWarning)
        run_cells(nbs / "run_report.ipynb", {"run_dir": run_dir, "output_dir": f"{out}/{name}"})
        run_cells(nbs / "compare_runs.ipynb", {
            "baseline_dir": baseline_dir, "proposed_dir": run_dir,
            "output_dir": f"{out}/compare_baseline_vs_{name}"})
    return name


def sections_of(notebook: Path) -> list[dict]:
    """Each section cell of a report notebook (``with out.section(name, title):``), in order:
    ``name``, ``title``, ``source``, ``functions`` (the declared package functions it calls,
    each with its ast.Call, found by following ``da.<namespace>.<function>`` attributes) and
    ``stems`` (what its ``out.table``/``figure``/``text`` calls write)."""
    import ast

    import nbformat

    import dabench_analysis as da

    found = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code" or not cell.source.startswith("with out.section("):
            continue
        tree = ast.parse(cell.source)
        head = tree.body[0].items[0].context_expr
        functions, stems = [], []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            chain, f = [], node.func
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id == "da":
                obj = da
                for attr in reversed(chain):
                    obj = getattr(obj, attr)
                if hasattr(obj, "needs"):
                    functions.append((obj, node))
            elif isinstance(f, ast.Name) and f.id == "out" and chain[0] in (
                    "table", "figure", "text") and len(node.args) > 1 and isinstance(
                    node.args[1], ast.Constant) and node.args[1].value:
                stems.append(("tables/" if chain[0] == "table" else "") + node.args[1].value)
        found.append({"name": head.args[0].value, "title": head.args[1].value,
                      "source": cell.source, "functions": functions, "stems": stems})
    return found
