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
from dabench_analysis.report.params import check_parameters, input_dir, output_dir_for
from dabench_analysis.report.runner import NOTEBOOK_DIR, ReportError, check_notebook, run_notebook
from dabench_analysis.report.sections import SUMMARY_FIELDS, SUMMARY_SCHEMA_VERSION, Sections

__all__ = ["NOTEBOOK_DIR", "SUMMARY_FIELDS", "SUMMARY_SCHEMA_VERSION", "Sections", "check_parameters",
           "input_dir", "output_dir_for", "STATES", "Job", "JobResult", "ReportError", "check_notebook",
           "execute_job", "is_evaluated", "plan_jobs", "run_jobs", "run_notebook", "safe_name",
           "write_index"]
