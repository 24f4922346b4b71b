"""Layer 5, figures: the theme and one module per family of figures.

The convention is seaborn's axes-level one: every single-panel function takes its data first
(a frame, or a Run or Runs whose frame it reads, as the tables do: a figure with a ``threshold``
takes it as an explicit argument, default 0.8), draws on ``ax=`` (or on a new figure in the house style) and returns that Axes, so that a call on
the last line of a notebook cell shows its figure once (the inline backend draws it; an Axes has
no image repr). Save with ``export.save_figure(ax.figure, ...)``. The one multi-panel figure,
:func:`tool_latency`, takes and returns a pair of Axes. None calls ``show()`` or ``savefig()`` or
changes global matplotlib state: interactive mode, rcParams and pyplot's current figure are as
they were (see :mod:`dabench_analysis.figures._theme`). A figure with nothing to show says so.

Public modules besides those above (reached as ``da.<folder>.<module>``): ``breakdowns``
(figures of the paper's breakdowns); ``calibration`` (the reliability diagram);
``distributions`` (distributions of one run); ``process`` (figures of the process);
``relations`` (relations between metrics); ``sweep`` (figures of a sweep (many runs));
``trials`` (figures of repeated trials and costs).
"""

from typing import TYPE_CHECKING

# MPLBACKEND checked before matplotlib is first imported (by any module of this folder)
from dabench_analysis import _mplbackend  # noqa: F401
from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.figures._comparison import paired_difference
    from dabench_analysis.figures._theme import OKABE_ITO, apply_style, new_figure
    from dabench_analysis.figures.breakdowns import difficulty_bars, failure_by_stage
    from dabench_analysis.figures.calibration import reliability_diagram
    from dabench_analysis.figures.distributions import (
        failure_distribution,
        score_bins,
        score_distribution,
    )
    from dabench_analysis.figures.process import tool_latency
    from dabench_analysis.figures.relations import autonomy_vs_efficiency, correlation_matrix

__all__ = ["OKABE_ITO", "apply_style",
           "autonomy_vs_efficiency", "correlation_matrix", "difficulty_bars",
           "failure_by_stage", "failure_distribution", "new_figure",
           "paired_difference", "reliability_diagram",
           "score_bins", "score_distribution", "tool_latency"]

# Sweeps: leaderboard forest plot, pairwise heatmap, item difficulty.
if TYPE_CHECKING:
    from dabench_analysis.figures import sweep
    from dabench_analysis.figures.sweep import (
        item_difficulty,
        leaderboard_forest,
        pairwise_heatmap,
    )

__all__ += ["item_difficulty", "leaderboard_forest", "pairwise_heatmap", "sweep"]


# Repeated trials and costs: pass^k against k, the cost-accuracy frontier.
if TYPE_CHECKING:
    from dabench_analysis.figures import trials
    from dabench_analysis.figures.trials import frontier, pass_k_curve

__all__ += ["frontier", "pass_k_curve", "trials"]

# Reliability profile: each metric with its bootstrap interval.
if TYPE_CHECKING:
    from dabench_analysis.figures._reliability import reliability_profile, risk_coverage_curve

__all__ += ["reliability_profile", "risk_coverage_curve"]

__getattr__, __dir__ = attach(__name__, __file__)
