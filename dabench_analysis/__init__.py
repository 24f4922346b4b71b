"""dabench-analysis: analysis toolkit for eval-v2 runs of LLM data agents.

>>> import dabench_analysis as da
>>> run = da.load_run("data/sample_runs/baseline_react")
>>> da.tables.difficulty_breakdown(run.tasks)["difficulty"].tolist()
['Easy', 'Medium', 'Hard', 'Extreme']
"""

from dabench_analysis import export, figures, schema, stats, style, tables
from dabench_analysis.load import Finding, Run, RunLoadError, load_run

__version__ = "0.1.0"
__all__ = ["Finding", "Run", "RunLoadError", "export", "figures", "load_run", "schema", "stats",
           "style", "tables", "__version__"]
