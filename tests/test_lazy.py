"""A thin core that starts fast (issues 34 and 37): lazy namespaces, what ``import
dabench_analysis`` and the command line load, every public name reachable, optional extras that
fail in one line naming themselves (inspect-ai: tests/test_harness.py), and the core's
dependencies."""

from __future__ import annotations

import importlib
import json
import pydoc
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

import dabench_analysis as da

ROOT = Path(__file__).resolve().parent.parent
NAMESPACES = ["dabench_analysis", *(f"dabench_analysis.{n}" for n in (
    "schema", "load", "validate", "stats", "tables", "figures", "export", "trajectory",
    "trajectory.figures", "judge", "research_eval", "harnesses", "report"))]
#: What neither a bare import nor the command line's module may load (issue 37 item 3).
HEAVY = {"scipy", "statsmodels", "matplotlib", "seaborn", "papermill", "nbformat", "nbclient",
         "nbconvert", "distributed", "dask", "ipywidgets", "inspect_ai", "IPython"}


def _loaded_by(statement: str) -> set[str]:
    """The top-level packages in sys.modules after ``statement`` in a fresh interpreter."""
    code = f"import sys, json; {statement}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True, env={"PATH": "", "PYTHONPATH": str(ROOT)})
    return set(json.loads(out.stdout))


def test_import_loads_no_heavy_library():
    loaded = _loaded_by("import dabench_analysis")
    assert not loaded & HEAVY, loaded & HEAVY
    assert not loaded & {"pandas", "numpy", "pyarrow"}  # nothing until a name is used


def test_the_command_line_module_imports_no_layer():
    """``dabench-analysis --help`` costs about what typer does: no pandas, no notebook stack."""
    loaded = _loaded_by("import dabench_analysis.report._cli")
    assert "typer" in loaded
    assert not loaded & (HEAVY | {"pandas", "numpy", "pyarrow"}), loaded & (HEAVY | {"pandas"})


def test_load_run_stays_in_the_core():
    """Loading a run and a table from it import neither the notebook stack nor the extras."""
    loaded = _loaded_by("import dabench_analysis as da; "
                        "da.load_run('data/sample_runs/baseline_react')")
    assert not loaded & {"matplotlib", "seaborn", "papermill", "nbconvert", "distributed",
                         "ipywidgets", "inspect_ai"}, loaded


@pytest.mark.parametrize("name", NAMESPACES)
def test_every_public_name_resolves(name):
    """``from dabench_analysis.x import Y`` and ``da.x.Y`` for every name of every ``__all__``;
    ``dir()`` lists exactly ``__all__``."""
    ns = importlib.import_module(name)
    assert len(ns.__all__) == len(set(ns.__all__)), name
    for attr in ns.__all__:
        value = getattr(ns, attr)
        assert value is not None, f"{name}.{attr}"
        exec(f"from {name} import {attr}", {})  # noqa: S102 - the statement users write
    assert dir(ns) == sorted(ns.__all__)
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'no_such_name'"):
        ns.no_such_name  # noqa: B018


def test_a_function_named_like_its_module_stays_the_function():
    """``stats.correlation`` is the function even after its module ``stats/_correlation.py`` was
    imported (as it was when the namespace imported eagerly); the module is still importable."""
    import dabench_analysis.report._show  # noqa: F401
    import dabench_analysis.stats._correlation  # noqa: F401

    assert isinstance(da.stats.correlation, types.FunctionType)
    assert isinstance(da.report.show, types.FunctionType)
    assert sys.modules["dabench_analysis.stats._correlation"].correlation is da.stats.correlation


def test_help_and_doctests_see_the_lazy_names():
    text = pydoc.render_doc(da.stats, renderer=pydoc.plaintext)
    assert "proportion_ci(" in text and "Wilson" in text
    assert da.stats.proportion_ci.__module__ == "dabench_analysis.stats._proportions"


def test_a_missing_widget_library_names_its_extra(monkeypatch):
    run = da.load_run("data/sample_runs/baseline_react")
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as if not installed
    with pytest.raises(ImportError) as info:
        da.explore(run)
    assert str(info.value) == \
        "da.explore needs ipywidgets: pip install 'dabench-analysis[explore]'"


def test_a_missing_dask_names_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError) as info:
        da.report.run_jobs([], scheduler="tcp://127.0.0.1:1")
    assert str(info.value) == \
        "report --scheduler needs distributed: pip install 'dabench-analysis[dask]'"


def test_the_core_dependencies():
    """At most 16 core dependencies; Dask, ipywidgets and inspect-ai are extras, which the
    test environment (``make test``) installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {d.split(">")[0].split("=")[0].strip().lower() for d in project["dependencies"]}
    assert len(core) <= 16, sorted(core)
    assert not core & {"distributed", "dask", "ipywidgets", "inspect-ai"}
    extras = project["optional-dependencies"]
    assert extras["dask"] == ["distributed>=2024.8"]
    assert extras["explore"] == ["ipywidgets>=8.1"]
    assert extras["inspect"][0].startswith("inspect-ai")
    assert "dask,explore,inspect" in "".join(extras["test"])


def test_report_scheduler_without_dask_is_a_usage_error(monkeypatch, tmp_path):
    """``report --scheduler`` without the [dask] extra: exit 2 and one line, before any report."""
    from typer.testing import CliRunner

    from dabench_analysis.report._cli import app

    monkeypatch.setitem(sys.modules, "distributed", None)
    res = CliRunner().invoke(app, ["report", "data/sample_runs/baseline_react", "--out",
                                   str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9"])
    assert res.exit_code == 2
    assert res.stderr.strip() == \
        "error: --scheduler needs distributed: pip install 'dabench-analysis[dask]'"
    assert not (tmp_path / "out").exists()
