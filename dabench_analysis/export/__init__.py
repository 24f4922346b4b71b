"""Layer 6, export: tables (csv/tex/md), JSON and text, figures (PNG/PDF) and the results
paragraph, every file written atomically through :func:`atomic_write`."""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis._atomic import atomic_write
    from dabench_analysis.export._figures import save_and_show, save_figure
    from dabench_analysis.export._files import write_json
    from dabench_analysis.export._tables import save_table, to_latex, to_markdown
    from dabench_analysis.export.paragraph import format_p, reporting_paragraph

__all__ = ["atomic_write", "format_p", "reporting_paragraph",
           "save_and_show", "save_figure", "save_table", "to_latex", "to_markdown", "write_json"]

# The one rule for numbers shown to a reader lives in schema/numbers.py (below figures, which
# use it too); re-exported here beside the tables that apply it.
if TYPE_CHECKING:
    from dabench_analysis.schema.numbers import (
        format_estimate,
        format_interval,
        format_pvalue,
    )

__all__ += ["format_estimate", "format_pvalue"]

# Tables as a reader sees them: estimate and interval in one cell, human labels.
if TYPE_CHECKING:
    from dabench_analysis.export._presentation import present

__all__ += ["format_interval", "present"]

# Control characters from the data as visible escapes, in every file written: export/_text.py.
if TYPE_CHECKING:
    from dabench_analysis.export._text import visible

__all__ += ["visible"]

__getattr__, __dir__ = attach(__name__, __file__)
