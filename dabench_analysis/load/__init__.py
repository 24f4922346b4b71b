"""Layer 1, load: files -> typed tidy frames; never writes into a run directory.

One pipeline (:mod:`._pipeline`) reads every CSV file of a run or a sweep: the reader
(:mod:`._csv`), the catalogue's value rules evaluated once over all files (:mod:`._rules`), the
parse cache (:mod:`.cache`); :mod:`._loader` holds :func:`load_run` and :func:`load_runs`,
:mod:`._run` and :mod:`._sweep` the :class:`Run` and :class:`Runs` they return. Besides:
``replay`` (``task_replay.json``), ``config`` (``run_config.json``), ``threshold`` (the loaders
refuse a threshold: it is the analysis' parameter; a run's declared one), ``findings`` (what
loading reports). Other harnesses' runs: ``formats`` (which harness wrote a path), ``readers`` (the
formats registered by :mod:`dabench_analysis.harnesses`, which holds the readers: this layer
imports none), ``harness`` (their records -> the same Run, through the catalogue's rules).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.load import cache
    from dabench_analysis.load._config import run_configs
    from dabench_analysis.load._findings import Finding, RunLoadError
    from dabench_analysis.load._formats import detect_format
    from dabench_analysis.load._loader import load_run, load_runs
    from dabench_analysis.load._readers import register_format
    from dabench_analysis.load._replay import read_replay
    from dabench_analysis.load._run import Run
    from dabench_analysis.load._sweep import Runs

__all__ = ["Finding", "Run", "RunLoadError",
           "Runs", "register_format", "cache", "detect_format", "load_run", "load_runs", "read_replay", "run_configs"]

__getattr__, __dir__ = attach(__name__, __file__)
