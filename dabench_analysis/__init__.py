"""dabench-analysis: analysis toolkit for eval-v2 runs of LLM data agents.

>>> import dabench_analysis as da
>>> run = da.load_run("data/sample_runs/baseline_react")
>>> da.tables.difficulty_breakdown(run.tasks)["difficulty"].tolist()
['Easy', 'Medium', 'Hard', 'Extreme']
"""

from dabench_analysis import (
                              ablation,
                              agreement,
                              calibration,
                              comparison,
                              explore,
                              export,
                              failures,
                              figures,
                              process,
                              schema,
                              stats,
                              style,
                              tables,
                              validate,
)
from dabench_analysis.load import Finding, Run, RunLoadError, load_run
from dabench_analysis.runs import Runs, load_runs
from dabench_analysis.validate import ValidationReport, validate_run

__version__ = "0.1.0"
__all__ = ["Finding", "Run", "RunLoadError", "Runs", "ValidationReport", "__version__", "ablation",
           "agreement", "calibration", "comparison", "explore", "export", "failures", "figures",
           "load_run", "load_runs", "process", "schema", "stats", "style", "tables", "validate",
           "validate_run"]
