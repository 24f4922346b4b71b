"""Layer 4, tables: the paper's tables and analyses, built from :mod:`dabench_analysis.stats`.

The paper's Tables 1–4 are here at the front; the other families are modules: ``failures``
(Table 5 and the failure analysis), ``ablation`` (the guide's three ablations), ``mas``
(specialists, MAS and coordinator effectiveness), ``timing`` (phase timing, tool usage),
``comparison`` (paired tables of two runs), ``explore`` (one task in detail). Trajectories, judge studies and research-eval
sessions have their own folders (:mod:`dabench_analysis.trajectory`, ...).

Every table that reads a run's frame takes a ``Run``, a ``Runs`` or the frame itself, and a
table with a ``threshold`` takes it as an explicit argument (default 0.8; a Run carries none)
(:func:`dabench_analysis.tables._common.takes_run`); several runs are never pooled silently
(:class:`PooledRunsWarning`).

Public modules besides those above (reached as ``da.<folder>.<module>``): ``frontier`` (the
cost–accuracy frontier of a sweep); ``reliability_profile`` (the reliability
profile of a run with repeated trials); ``sweep`` (comparing many runs (a
sweep)); ``sweep_items`` (many runs task by task); ``trials`` (repeated trials of a task);
``verification`` (verification timeline).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.tables import (
        ablation,
        comparison,
        explore,
        failures,
        mas,
        timing,
        verification,
    )
    from dabench_analysis.tables._errored import failure_bounds
    from dabench_analysis.tables._pooling import PooledRunsWarning
    from dabench_analysis.tables._summary import answer_accuracy, key_numbers
    from dabench_analysis.tables.paper import (
        difficulty_breakdown,
        main_results,
        specialist_participation,
        task_type_breakdown,
    )

__all__ = ["PooledRunsWarning", "ablation", "answer_accuracy", "comparison", "difficulty_breakdown",
           "explore", "failure_bounds", "failures", "key_numbers", "main_results", "mas",
           "specialist_participation",
           "task_type_breakdown", "timing", "verification"]

# Sweeps: leaderboard, pairwise comparisons, flips, items, configurations, the frontier;
# repeated trials: pass@k, pass^k, flakiness.
if TYPE_CHECKING:
    from dabench_analysis.tables import sweep, trials

__all__ += ["sweep", "trials"]


# Reliability profile: consistency, predictability, robustness of repeated trials.
if TYPE_CHECKING:
    from dabench_analysis.tables import reliability_profile
    from dabench_analysis.tables.reliability_profile import reliability, risk_coverage

__all__ += ["reliability", "reliability_profile", "risk_coverage"]

# Planning from a pilot run: the detectable difference now, the tasks or trials a difference needs.
if TYPE_CHECKING:
    from dabench_analysis.tables._plan import planning

__all__ += ["planning"]

__getattr__, __dir__ = attach(__name__, __file__)
