"""dabench-analysis: analysis toolkit for eval-v2 runs of LLM data agents.

The folders are the pipeline, each layer importing only those below it::

    schema   the column catalogue          load      files -> typed frames
    validate findings about a run          stats     tests, intervals, effect sizes
    tables   the paper's tables            figures   plots on ``ax=``
    export   files: tables, figures, text  report    notebooks, batch, index, CLI

>>> import dabench_analysis as da
>>> run = da.load_run("data/sample_runs/baseline_react")
>>> da.tables.difficulty_breakdown(run.tasks)["difficulty"].tolist()
['Easy', 'Medium', 'Hard', 'Extreme']
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

from dabench_analysis import export, figures, load, report, schema, stats, tables, validate
from dabench_analysis.load import Finding, Run, RunLoadError, Runs, load_run, load_runs
from dabench_analysis.validate import ValidationReport, validate_run

__version__ = "0.1.0"
__all__ = ["Finding", "Run", "RunLoadError", "Runs", "ValidationReport", "__version__", "export",
           "figures", "load", "load_run", "load_runs", "report", "schema", "stats", "tables",
           "validate", "validate_run"]

#: Modules of the flat layout before 0.2, each now the union of these modules' public names.
#: ``import dabench_analysis.ablation`` and ``da.ablation`` keep working with a DeprecationWarning.
MOVED = {
    "ablation": ("tables.ablation", "tables.mas"),
    "agreement": ("stats.agreement", "stats.reliability", "tables.judge", "figures.judge"),
    "calibration": ("stats.calibration",),
    "comparison": ("tables.comparison", "export.paragraph"),
    "explore": ("tables.explore",),
    "failures": ("tables.failures",),
    "process": ("tables.timing",),
    "style": ("figures.theme", "export.figures"),
    "research_eval": ("load.research_eval", "tables.research_eval", "figures.research_eval"),
    "runs": ("load.sweep",),
    "cache": ("load.cache",),
    "cli": ("report.cli",),
}


def _moved_module(old: str) -> types.ModuleType:
    """A module object holding the public names of the modules that ``old`` became."""
    full = f"{__name__}.{old}"
    if full in sys.modules:
        return sys.modules[full]
    homes = [importlib.import_module(f"{__name__}.{m}") for m in MOVED[old]]
    module = types.ModuleType(full, f"Deprecated alias of {', '.join(h.__name__ for h in homes)}.")
    for home in homes:
        for name in getattr(home, "__all__", None) or [n for n in vars(home) if not n.startswith("_")]:
            setattr(module, name, getattr(home, name))
    sys.modules[full] = module
    return module


def _deprecated(old: str) -> None:
    new = " / ".join(f"dabench_analysis.{m}" for m in MOVED[old])
    warnings.warn(f"dabench_analysis.{old} moved to {new}; the old name will be removed",
                  DeprecationWarning, stacklevel=3)


def __getattr__(name: str):
    if name in MOVED:
        _deprecated(name)
        globals()[name] = module = _moved_module(name)  # warn once per name
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serve ``import dabench_analysis.<old module>`` from :data:`MOVED`."""

    def find_spec(self, fullname, path=None, target=None):
        pkg, _, old = fullname.rpartition(".")
        if pkg == __name__ and old in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        old = spec.name.rpartition(".")[2]
        _deprecated(old)
        return _moved_module(old)

    def exec_module(self, module):
        return None


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.append(_MovedFinder())
