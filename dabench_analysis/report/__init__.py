"""Layer 7, report: the papermill runner, batch jobs and their states, the index page and the
command line (``dabench-analysis``). The notebooks live in the top-level ``notebooks/``."""

from dabench_analysis.report.index import write_index
from dabench_analysis.report.jobs import (
    STATES,
    Job,
    JobResult,
    execute_job,
    is_evaluated,
    plan_jobs,
    run_jobs,
    safe_name,
)
from dabench_analysis.report.runner import NOTEBOOK_DIR, ReportError, check_notebook, run_notebook

__all__ = ["NOTEBOOK_DIR", "STATES", "Job", "JobResult", "ReportError", "check_notebook",
           "execute_job", "is_evaluated", "plan_jobs", "run_jobs", "run_notebook", "safe_name",
           "write_index"]
