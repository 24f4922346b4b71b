"""Other harnesses' runs and traces: readers that shape each format as the eval-v2 CSV reader
shapes a file, typed by the catalogue's rules (:mod:`dabench_analysis.load._harness`).

``inspect_log`` (Inspect logs, through inspect_ai), ``taubench`` (tau-bench and tau2-bench
results), ``atif`` (Harbor ATIF trajectories), ``swe_traj`` (SWE-agent / mini-swe-agent
trajectories), ``groupchat`` (AutoGen/AG2 group chats as Who&When publishes them) and
``table`` (any per-task table with a column mapping: :func:`load_table`). Importing this
folder registers the formats with the core loader (:mod:`dabench_analysis.load._readers`),
which ``import dabench_analysis`` does, so that :func:`dabench_analysis.load_run` reads them;
no reader (nor inspect_ai) is imported until a file of its format is read.
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach
from dabench_analysis.harnesses import _formats  # noqa: F401 - registers the readers

if TYPE_CHECKING:
    from dabench_analysis.harnesses._table import load_table

__all__ = ["load_table"]

__getattr__, __dir__ = attach(__name__, __file__)
