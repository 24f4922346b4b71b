"""Layer 0, the catalogue as data: every eval-v2 column (:mod:`.columns`), what an analysis
declares it needs and the one typed skip (:mod:`.needs`), every check of the guide with its tolerance,
severity and section (:mod:`.checks`) and the fields of ``task_replay.json`` (:mod:`.replay`).
No other layer restates any of them."""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.schema.checks import (
        CALIBRATION_EDGES,
        CHECKS,
        Check,
        checks_markdown,
        checks_table,
    )
    from dabench_analysis.schema.columns import (
        ACTIONS,
        ALIASES,
        AUTONOMY,
        CALIBRATION_BUCKETS,
        COORDINATOR_DECISIONS,
        CORRECTNESS,
        CORRELATION_METRICS,
        COST,
        DIFFICULTY_ORDER,
        ENUMS,
        EXECUTION,
        FAILURE_CATEGORIES,
        FAILURE_STAGES,
        FLAG_COERCED,
        FLAG_FALSE,
        FLAG_TRUE,
        GROUPS,
        IDENTIFICATION,
        MAIN_METRICS,
        NULL_VALUES,
        ORDERED_ENUMS,
        OTHER_HARNESS_COLUMNS,
        OUTCOME_STATUSES,
        SEVERITIES,
        SPECIALISTS,
        STAGES,
        SUCCESS_THRESHOLD,
        TASK_COLUMNS,
        TEXT_TRAJECTORY_COLUMNS,
        TOOL_CALL_COLUMNS,
        TRAJECTORY_COLUMNS,
        Column,
        check_threshold,
        column,
        group,
        require_columns,
    )
    from dabench_analysis.schema.declared import needing, optional_columns, using
    from dabench_analysis.schema.files import (
        CONFIG_FILE,
        LEGACY_TASK_FILE,
        OPTIONAL_FILES,
        REPLAY_FILE,
        REPLAY_FILES,
        TASK_FILE,
        TASK_FILES,
        TOOL_CALLS_FILE,
        TRAJECTORY_FILE,
    )
    from dabench_analysis.schema.labels import LABELS, UNITS, label
    from dabench_analysis.schema.needs import Skipped
    from dabench_analysis.schema.outcome import ERROR_STATUSES, correct, errored, task_success
    from dabench_analysis.schema.replay import (
        HEALTH_STATUSES,
        REPLAY_FIELDS,
        REPLAY_TYPES,
        ReplayField,
        replay_field,
    )

__all__ = ["CONFIG_FILE", "LEGACY_TASK_FILE", "REPLAY_FILE", "TASK_FILE", "TASK_FILES",
           "TOOL_CALLS_FILE", "TRAJECTORY_FILE", "ACTIONS", "ALIASES", "AUTONOMY", "CALIBRATION_BUCKETS", "CALIBRATION_EDGES",
           "CHECKS", "COORDINATOR_DECISIONS", "CORRECTNESS", "CORRELATION_METRICS", "COST",
           "Check", "Column", "DIFFICULTY_ORDER", "ENUMS", "EXECUTION", "FAILURE_CATEGORIES",
           "FAILURE_STAGES", "FLAG_COERCED", "FLAG_FALSE", "FLAG_TRUE", "GROUPS",
           "HEALTH_STATUSES", "IDENTIFICATION", "MAIN_METRICS", "NULL_VALUES", "OPTIONAL_FILES",
           "ORDERED_ENUMS", "OTHER_HARNESS_COLUMNS", "OUTCOME_STATUSES", "REPLAY_FIELDS", "REPLAY_FILES", "REPLAY_TYPES",
           "ReplayField", "SEVERITIES", "SPECIALISTS", "STAGES", "SUCCESS_THRESHOLD",
           "Skipped", "TASK_COLUMNS", "TEXT_TRAJECTORY_COLUMNS", "TOOL_CALL_COLUMNS",
           "TRAJECTORY_COLUMNS", "check_threshold", "checks_markdown", "checks_table", "column",
           "correct", "errored", "ERROR_STATUSES", "task_success", "group", "label", "LABELS",
           "UNITS", "optional_columns", "replay_field", "require_columns", "needing", "using"]

__getattr__, __dir__ = attach(__name__, __file__)
