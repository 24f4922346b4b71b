"""Layer 2, validate: findings about a run (cross-file invariants, replays, health, run quality).

Per-value domain checks run while loading (:mod:`dabench_analysis.load._rules`); this layer checks
what needs several files or the whole run: ``invariants``, ``replay`` and ``files`` (the checks
of :data:`dabench_analysis.schema.CHECKS`; ``files`` also lists the columns a side file lacks),
``health`` (harness health and run quality), ``run``
(:func:`validate_run`) and ``summaries`` (the health and findings tables).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.validate._run import ValidationReport, validate_run
    from dabench_analysis.validate.summaries import findings_table, health_table

__all__ = ["ValidationReport",
           "findings_table", "health_table", "validate_run"]

__getattr__, __dir__ = attach(__name__, __file__)
