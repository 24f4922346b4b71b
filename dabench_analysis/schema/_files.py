"""The files of an eval-v2 run directory, named once (seed 000 §Generated Artifacts), and the CSV
files as the loader reads them (:class:`FileKind`: catalogue, keys, aliases).

Every other module imports these names; no other module spells a run's file names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dabench_analysis.schema.columns import (
    ALIASES,
    TASK_COLUMNS,
    TOOL_CALL_COLUMNS,
    TRAJECTORY_COLUMNS,
    Column,
)

#: One row per task; the one file a run must have to be *evaluated*.
TASK_FILE = "task_metrics.csv"
#: What eval-v2 wrote before ``task_metrics.csv`` (a subset of its columns).
LEGACY_TASK_FILE = "comprehensive_evaluation.csv"
#: One row per step (seed 000 §Data Model Schema 2).
TRAJECTORY_FILE = "trajectory.csv"
#: One row per tool call (seed 000 §Data Model Schema 3).
TOOL_CALLS_FILE = "tool_calls.csv"
#: ``<run>/<task_id>/task_replay.json``: one task's debug snapshot (seed 000 §Replay Artifacts).
REPLAY_FILE = "task_replay.json"
#: How the README and the catalogue name the replay files of a run.
REPLAY_FILES = f"task_*/{REPLAY_FILE}"
#: A run's declared configuration and seed (ours, not eval-v2's; read only).
CONFIG_FILE = "run_config.json"
#: The files whose presence makes a folder a run directory, in the order they are looked for.
TASK_FILES: tuple[str, ...] = (TASK_FILE, LEGACY_TASK_FILE)
#: Optional files of a run directory (the task file is the one required file).
OPTIONAL_FILES: tuple[str, ...] = (TRAJECTORY_FILE, TOOL_CALLS_FILE, REPLAY_FILES)
#: The one hint for the *not evaluated* state (a folder without ``task_metrics.csv``), written
#: the same by the loader, ``validate``, the report and the index; the command is the eval-v2
#: harness's own, not this toolkit's.
NOT_EVALUATED_HINT = (f"no {TASK_FILE}: evaluate the run with the eval-v2 harness first "
                      "(the harness's command: `dabench eval-v2 <RUN_ID>`)")


def _frozen(mapping: Mapping) -> MappingProxyType:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)  # one object per kind: compared and hashed by identity
class FileKind:
    """One CSV file of a run directory as the loader reads it.

    Attributes
    ----------
    file : str
        Its name in the run directory.
    attribute : str
        The :class:`~dabench_analysis.load.Run` attribute that holds its frame.
    catalogue : mapping of str to Column
        Its columns (:data:`~dabench_analysis.schema.TASK_COLUMNS`, ...).
    keys : tuple of str
        Columns whose values identify a row within one file.
    key_severity : {"error", "warning"}
        Severity of a repeated key (a repeated task_id is an error and the loader keeps the
        first row; a repeated step or call id is a warning and both rows are kept).
    aliases : mapping of str to str
        Names other eval-v2 versions use, read as the catalogue's.
    """

    file: str
    attribute: str
    catalogue: Mapping[str, Column]
    keys: tuple[str, ...]
    key_severity: str
    aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def required(self) -> tuple[str, ...]:
        """Columns of the required tier (:attr:`Column.required`), in catalogue order."""
        return tuple(c for c, s in self.catalogue.items() if s.required)

    @property
    def is_tasks(self) -> bool:
        """Whether this is a task file (one row per task)."""
        return self.attribute == "tasks"


TASKS = FileKind(TASK_FILE, "tasks", _frozen(TASK_COLUMNS), ("task_id",), "error",
                 _frozen(ALIASES))
#: The legacy task file: the catalogue of task_metrics.csv under its older name.
LEGACY_TASKS = FileKind(LEGACY_TASK_FILE, "tasks", TASKS.catalogue, ("task_id",), "error",
                        TASKS.aliases)
TRAJECTORY = FileKind(TRAJECTORY_FILE, "trajectory", _frozen(TRAJECTORY_COLUMNS),
                      ("task_id", "step_id"), "warning")
TOOL_CALLS = FileKind(TOOL_CALLS_FILE, "tool_calls", _frozen(TOOL_CALL_COLUMNS),
                      ("task_id", "call_id"), "warning")
#: Run attribute -> its side file (read on first access of the attribute).
SIDE_FILES: dict[str, FileKind] = {"trajectory": TRAJECTORY, "tool_calls": TOOL_CALLS}
