"""Layer 7, report: the papermill runner, batch jobs and their states, the index page, the
manifest of every report's inputs and versions, and the command line (``dabench-analysis``).
The notebooks live in the top-level ``notebooks/``.

Public modules besides those above (reached as ``da.<folder>.<module>``): ``inputs_table`` (the
docs' table of inputs, from the functions' declarations, :func:`dabench_analysis.schema.needs`);
``notes`` (sentences a report shows beside a table, computed from it).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.report._index import write_index
    from dabench_analysis.report._jobs import (
        STATES,
        Job,
        JobResult,
        execute_job,
        is_evaluated,
        plan_jobs,
        run_jobs,
        safe_name,
    )
    from dabench_analysis.report._params import (
        check_parameters,
        input_dir,
        input_path,
        output_dir_for,
        run_name,
    )
    from dabench_analysis.report._provenance import input_files, manifest, show_manifest
    from dabench_analysis.report._sections import Sections, group_skips
    from dabench_analysis.report.runner import (
        NOTEBOOK_DIR,
        ReportError,
        check_notebook,
        run_notebook,
    )

__all__ = ["NOTEBOOK_DIR", "SUMMARY_FIELDS", "SUMMARY_SCHEMA_VERSION", "Sections", "check_parameters",
           "input_dir", "output_dir_for", "STATES", "Job", "JobResult", "ReportError", "check_notebook",
           "execute_job", "is_evaluated", "plan_jobs", "run_jobs", "run_notebook", "safe_name",
           "write_index"]

__all__ += ["input_path", "run_name"]
__all__ += ["group_skips"]
__all__ += ["input_files", "manifest", "show_manifest"]

# Report pages that read as reports: tables as a reader sees them, the HTML page.
if TYPE_CHECKING:
    from dabench_analysis.report._html import export_html
    from dabench_analysis.report._show import show, table_html

__all__ += ["export_html", "show", "table_html"]

# A report notebook's writer (its context: sections, tables, figures), its summary.json.
if TYPE_CHECKING:
    from dabench_analysis.report._context import (
        Context,
        compare_context,
        run_context,
        sweep_context,
    )
    from dabench_analysis.report._summary import (
        SUMMARY_FIELDS,
        SUMMARY_SCHEMA_VERSION,
        summary,
        write_summary,
    )

__all__ += ["Context", "compare_context", "run_context", "summary",
            "sweep_context", "write_summary"]

# In notebooks: HTML displays of runs, tasks and replays, da.show's tables, the explorer.
if TYPE_CHECKING:
    from dabench_analysis.report._display import register as register_displays
    from dabench_analysis.report._explorer import Explorer, explore

__all__ += ["Explorer", "explore", "register_displays"]

__getattr__, __dir__ = attach(__name__, __file__)
