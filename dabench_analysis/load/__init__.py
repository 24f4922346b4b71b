"""Layer 1, load: files -> typed tidy frames; never writes into a run directory.

``run`` (one run directory), ``sweep`` (many), ``csv`` (typed CSV reading), ``coerce`` (text ->
catalogue dtypes and per-value domain checks), ``findings`` (what loading reports), ``replay``
(``task_replay.json``), ``fast`` (the batched path of sweeps), ``cache`` (the parse cache), and the
other formats: ``research_eval`` (research-eval sessions) and ``judge`` (judge studies).
"""

from dabench_analysis.load import cache
from dabench_analysis.load.csv import read_header
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.judge import JudgeStudy, read_judge_study
from dabench_analysis.load.replay import REPLAY_FILE, read_replay
from dabench_analysis.load.research_eval import ResearchEval, load_research_eval
from dabench_analysis.load.run import (
    LEGACY_TASK_FILE,
    TASK_FILE,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
    Run,
    load_run,
    read_table,
)
from dabench_analysis.load.sweep import Runs, load_runs

__all__ = ["LEGACY_TASK_FILE", "REPLAY_FILE", "TASK_FILE", "TOOL_CALLS_FILE", "TRAJECTORY_FILE",
           "Finding", "JudgeStudy", "ResearchEval", "Run", "RunLoadError", "Runs", "cache",
           "load_research_eval", "load_run", "load_runs", "read_header", "read_judge_study",
           "read_replay", "read_table"]

# the configuration and seed a run declares (run_config.json or task columns).
from dabench_analysis.load.config import CONFIG_FILE, read_run_config, run_configs  # noqa: E402

__all__ += ["CONFIG_FILE", "read_run_config", "run_configs"]
