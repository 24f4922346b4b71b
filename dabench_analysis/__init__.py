"""dabench-analysis: analysis toolkit for eval-v2 runs of LLM data agents.

The folders are the pipeline, each layer importing only those below it::

    schema   the column catalogue          load      files -> typed frames
    validate findings about a run          stats     tests, intervals, effect sizes
    tables   the paper's tables            figures   plots on ``ax=``
    export   files: tables, figures, text  report    notebooks, batch, index, CLI

and the features, each in one folder on top of them: ``trajectory`` (what the agents did, step
by step), ``judge`` (judge studies), ``research_eval`` (research-eval sessions) and
``harnesses`` (other harnesses' runs and traces: Inspect, tau-bench, ATIF, SWE-agent, group
chats, per-task tables)::

    da.trajectory.variants(run)             da.trajectory.figures.solve_curve(curve)

In a notebook, :func:`show` displays a result table as a reader sees it and :func:`explore`
opens a run's tasks in a panel; runs, tasks and replays display as HTML (registered when the
package is imported inside IPython, or with ``%load_ext dabench_analysis``).

>>> import dabench_analysis as da
>>> run = da.load_run("data/sample_runs/baseline_react")
>>> da.tables.difficulty_breakdown(run.tasks)["difficulty"].tolist()
['Easy', 'Medium', 'Hard', 'Extreme']

Public modules besides those above (reached as ``da.<folder>.<module>``): ``synthetic`` (seeded
generators of sample data).
"""

import sys
from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

# The public API, imported on first use (PEP 562; issue 37: ``import dabench_analysis`` loads
# no SciPy, statsmodels, matplotlib, papermill, Dask, ipywidgets or inspect_ai).
if TYPE_CHECKING:
    from dabench_analysis import (
        export,
        figures,
        judge,
        load,
        report,
        research_eval,
        schema,
        stats,
        tables,
        trajectory,
        validate,
    )
    from dabench_analysis.harnesses import load_table
    from dabench_analysis.load import Finding, Run, RunLoadError, Runs, load_run, load_runs
    from dabench_analysis.report import explore, show
    from dabench_analysis.validate import ValidationReport, validate_run

__version__ = "0.1.0"
__all__ = ["Finding", "Run", "RunLoadError", "Runs", "ValidationReport", "__version__", "explore",
           "export", "figures", "harnesses", "judge", "load", "load_run", "load_runs", "load_table",
           "report", "research_eval", "schema", "show", "stats", "tables", "trajectory", "validate",
           "validate_run"]

__getattr__, __dir__ = attach(__name__, __file__)

# The other harnesses' formats registered with the core loader (no reader imported yet), so
# that load_run reads an Inspect log, tau-bench results, ...
from dabench_analysis import harnesses  # noqa: E402, F401


def load_ipython_extension(ipython) -> None:
    """``%load_ext dabench_analysis``: HTML displays of runs, tasks and replays."""
    from dabench_analysis.report._display import register

    register(ipython)


if "IPython" in sys.modules:  # inside IPython (a notebook): the HTML displays; else nothing
    from dabench_analysis.report._display import register as _register

    _register()
    del _register
del sys, TYPE_CHECKING
