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

# _mplbackend first: it checks MPLBACKEND before matplotlib's own import would fail on it
from dabench_analysis import (  # noqa: F401
    _mplbackend,
    export,
    figures,
    load,
    report,
    schema,
    stats,
    tables,
    validate,
)
from dabench_analysis.load import (
    Finding,
    Run,
    RunLoadError,
    Runs,
    load_run,
    load_runs,
    load_table,
)
from dabench_analysis.validate import ValidationReport, validate_run

__version__ = "0.1.0"
__all__ = ["Finding", "Run", "RunLoadError", "Runs", "ValidationReport", "__version__", "export",
           "figures", "load", "load_run", "load_runs", "load_table", "report", "schema", "stats", "tables",
           "validate", "validate_run"]
