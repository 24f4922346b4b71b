"""The files of an eval-v2 run directory, named once (seed 000 §Generated Artifacts).

Every other module imports these names; no other module spells a run's file names.
"""

from __future__ import annotations

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
#: The files whose presence makes a folder a run directory.
TASK_FILES: tuple[str, ...] = (TASK_FILE, LEGACY_TASK_FILE)
#: Optional files of a run directory (the task file is the one required file).
OPTIONAL_FILES: tuple[str, ...] = (TRAJECTORY_FILE, TOOL_CALLS_FILE, REPLAY_FILES)
