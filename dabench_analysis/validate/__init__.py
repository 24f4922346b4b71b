"""Layer 2, validate: findings about a run (cross-file invariants, replays, health, run quality).

Per-value domain checks run while loading (:mod:`dabench_analysis.load.coerce`); this layer checks
what needs several files or the whole run.
"""

from dabench_analysis.validate.health import BANDS, HARNESS_WEIGHTS, Health
from dabench_analysis.validate.run import (
    FINDING_COLUMNS,
    ValidationReport,
    health_section,
    validate_run,
)

__all__ = ["BANDS", "FINDING_COLUMNS", "HARNESS_WEIGHTS", "Health", "ValidationReport",
           "health_section", "validate_run"]

from dabench_analysis.validate.health import (  # noqa: E402 - appended (issue 12)
    CAUSES,
    findings_table,
    harness_score,
    health_table,
)

__all__ += ["CAUSES", "findings_table", "harness_score", "health_table"]
