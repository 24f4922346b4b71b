"""Layer 0, the catalogue as data: every eval-v2 column (:mod:`.columns`), what an analysis
declares it needs and the one typed skip (:mod:`.needs`), every check of the guide with its tolerance,
severity and section (:mod:`.checks`) and the fields of ``task_replay.json`` (:mod:`.replay`).
No other layer restates any of them.

Public modules besides those above (reached as ``da.<folder>.<module>``): ``numbers`` (the
package's one rule for numbers a reader sees); ``rules`` (the loader's value rules as data).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.schema._files import (
        CONFIG_FILE,
        LEGACY_TASK_FILE,
        REPLAY_FILE,
        TASK_FILE,
        TOOL_CALLS_FILE,
        TRAJECTORY_FILE,
    )
    from dabench_analysis.schema._labels import label
    from dabench_analysis.schema._outcome import correct, errored, task_success
    from dabench_analysis.schema.checks import CHECKS
    from dabench_analysis.schema.columns import (
        ALIASES,
        DIFFICULTY_ORDER,
        ENUMS,
        FLAG_TRUE,
        NULL_VALUES,
        STAGES,
        SUCCESS_THRESHOLD,
        TASK_COLUMNS,
        TOOL_CALL_COLUMNS,
        TRAJECTORY_COLUMNS,
        Column,
        check_threshold,
        require_columns,
    )
    from dabench_analysis.schema.needs import Skipped

__all__ = ["CONFIG_FILE", "LEGACY_TASK_FILE", "REPLAY_FILE", "TASK_FILE", "TOOL_CALLS_FILE", "TRAJECTORY_FILE", "ALIASES", "CHECKS", "Column", "DIFFICULTY_ORDER", "ENUMS", "FLAG_TRUE", "NULL_VALUES", "STAGES", "SUCCESS_THRESHOLD",
           "Skipped", "TASK_COLUMNS", "TOOL_CALL_COLUMNS",
           "TRAJECTORY_COLUMNS", "check_threshold", "correct", "errored", "task_success", "label", "require_columns"]

__getattr__, __dir__ = attach(__name__, __file__)
