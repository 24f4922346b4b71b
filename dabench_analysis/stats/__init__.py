"""Layer 3, stats: frames in, tidy result frames out; no file IO, no plotting.

Every function takes DataFrames (``run.tasks``), Series or arrays, as pingouin and scipy do; a
``Run`` is refused with a TypeError naming the frame to pass. The tables
(:mod:`dabench_analysis.tables`) take a ``Run`` and keep several runs apart.

Modules by family: ``descriptive`` (summaries, t and bootstrap intervals), ``proportions``
(Wilson and other intervals, McNemar), ``nonparametric`` (Wilcoxon signed-rank, Mann–Whitney U),
``effsize`` (Cohen's d / d_z, Hedges' g), ``multicomp`` (Holm, Benjamini–Hochberg; all main
metrics at once), ``correlation``, ``power`` (clustered SE, power and sample size),
``calibration`` (ECE, Brier), ``agreement`` (judge vs human: MCC, P/R/F1), ``reliability``
(Gwet's AC1/AC2, Fleiss' kappa, Krippendorff's alpha), the statistics of
the trajectories, judge studies and research-eval sessions are in their own folders
(:mod:`dabench_analysis.trajectory`, :mod:`dabench_analysis.judge`).

Public modules besides those above (reached as ``da.<folder>.<module>``): ``binning`` (the
package's one binning rule); ``consistency`` (the reliability profile's
formulas); ``gwet`` (chance-corrected agreement of raw ratings with Gwet's variance); ``planning``
(planning a study from a pilot run); ``ranking`` (rank intervals of many runs); ``recorded``
(absent is not zero); ``repetitions`` (repeated runs of one configuration (different random
seeds)).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.stats import agreement, calibration, reliability
    from dabench_analysis.stats._clustered import clustered_mean_ci, clustered_se
    from dabench_analysis.stats._comparison import paired_comparison, unpaired_comparison
    from dabench_analysis.stats._correlation import correlation
    from dabench_analysis.stats._descriptive import bootstrap_ci, describe
    from dabench_analysis.stats._effsize import effect_sizes
    from dabench_analysis.stats._inputs import StatisticsWarning
    from dabench_analysis.stats._power import miller_required_n, min_detectable_effect, required_n
    from dabench_analysis.stats._proportions import mcnemar, proportion_ci
    from dabench_analysis.stats.multicomp import adjust_pvalues, compare_runs

__all__ = ["StatisticsWarning", "adjust_pvalues", "agreement", "bootstrap_ci", "calibration",
           "clustered_mean_ci", "clustered_se", "compare_runs", "correlation", "describe",
           "effect_sizes", "mcnemar", "miller_required_n",
           "min_detectable_effect", "paired_comparison", "proportion_ci", "reliability",
           "required_n", "unpaired_comparison"]

# one binning rule, bounded intervals, one threshold check.
if TYPE_CHECKING:
    from dabench_analysis.stats import binning
    from dabench_analysis.stats._descriptive import mean_summary

__all__ += ["binning", "mean_summary"]

# Gwet's AC1/AC2, Fleiss, Conger with Gwet's variance, without irrCAC.
if TYPE_CHECKING:
    from dabench_analysis.stats import gwet

__all__ += ["gwet"]


# Sweeps: rank intervals of many runs, variance between repetitions.
if TYPE_CHECKING:
    from dabench_analysis.stats import ranking, repetitions

__all__ += ["ranking", "repetitions"]


# Absent is not zero: whether a run recorded its cost.
if TYPE_CHECKING:
    from dabench_analysis.stats import recorded

__all__ += ["recorded"]

# Reliability profile formulas: outcome, trajectory and resource consistency; AUROC, AuRC.
if TYPE_CHECKING:
    from dabench_analysis.stats import consistency

__all__ += ["consistency"]

# Planning from a pilot: variance between and within tasks, the tasks and trials a difference needs.
if TYPE_CHECKING:
    from dabench_analysis.stats import planning

__all__ += ["planning"]

__getattr__, __dir__ = attach(__name__, __file__)
