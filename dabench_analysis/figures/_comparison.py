"""Figures of two runs compared: per-task paired differences with the mean and its interval."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema, stats
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _ci_label, _note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate, format_p
from dabench_analysis.tables._common import takes_run


@needs("task_id", "final_score", inputs=2)
@takes_run(paired=True)
def paired_difference(
    baseline: pd.DataFrame,
    proposed: pd.DataFrame,
    *,
    metric: str = "final_score",
    on: str = "task_id",
    ci: float = 0.95,
    ax: Axes | None = None,
) -> Axes:
    """Per-task paired differences (proposed − baseline), sorted, with the mean and its CI.

    Parameters
    ----------
    baseline, proposed : DataFrame or Run
        Task frames of the two runs (or the Runs) with ``on`` and ``metric`` ([0, 1] score).
    metric : str
        Score to compare.
    on : str
        Task key; tasks in only one run are left out.
    ci : float
        Level of the t-interval of the mean difference, in (0, 1); the legend names it.
    ax : Axes, optional
        Draw here; default a new two-column figure.

    Returns
    -------
    Axes
        One bar per paired task (blue improved, vermillion regressed), sorted; a tied task
        (difference exactly 0, no bar) is a grey diamond on the zero line, and the legend says
        how many are tied. A dashed line at the mean difference and, behind the bars, a grey
        band for its t-interval at level ``ci``
        (:func:`dabench_analysis.stats.paired_comparison`); the Wilcoxon p in the title.

    Raises
    ------
    ValueError
        As :func:`dabench_analysis.stats.paired_comparison` (missing columns, duplicate task
        keys, a ``ci`` outside (0, 1)).

    Examples
    --------
    >>> b = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.2, 0.5, 0.9]})
    >>> p = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.6, 0.5, 0.8]})
    >>> ax = paired_difference(b, p)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['mean Δ = 0.100', 'tied (Δ = 0): 1 of 3', '95% CI']
    """
    label = _ci_label(ci)
    ax = _axes(ax, "two", aspect=0.4)
    res = stats.paired_comparison(baseline, proposed, metric=metric, on=on, ci=ci).iloc[0]
    merged = baseline[[on, metric]].merge(proposed[[on, metric]], on=on, suffixes=("_b", "_p"))
    diff = (merged[f"{metric}_p"].astype("float64") - merged[f"{metric}_b"].astype("float64"))
    diff = diff.dropna().sort_values(kind="stable").to_numpy()
    if diff.size == 0:
        return _note(ax, "no paired tasks")
    with mpl.rc_context(RC_PARAMS):
        x = np.arange(diff.size)
        colors = np.where(diff > 0, OKABE_ITO[0], np.where(diff < 0, OKABE_ITO[3], "0.6"))
        ax.bar(x, diff, color=colors, width=0.9, zorder=1)
        ax.axhline(0, color="0.3", linewidth=0.6, zorder=1.5)
        ax.axhline(res["mean_diff"], color="black", linestyle="--", linewidth=0.8, zorder=3,
                   label=f"mean Δ = {format_estimate(res['mean_diff'])}")
        tied = diff == 0
        if tied.any():
            ax.plot(x[tied], diff[tied], linestyle="none", marker="d", markersize=3,
                    color="0.35", zorder=2.5,
                    label=f"tied (Δ = 0): {int(tied.sum())} of {diff.size}")
        # behind the bars (zorder 0.5 < 1); added last, so last in the legend
        ax.axhspan(res["ci_low"], res["ci_high"], color="0.5", alpha=0.25, label=label,
                   zorder=0.5, linewidth=0)
        ax.set_xlim(-0.6, diff.size - 0.4)
        ax.set_xlabel("Tasks, sorted by difference")
        ax.set_ylabel(f"Δ {schema.label(metric)}")
        ax.set_xticks([])
        ax.set_title(f"Paired differences, proposed − baseline (n = {int(res['n_pairs'])}, "
                     f"Wilcoxon {format_p(res['p_value'])}, unadjusted)")
        ax.legend(loc="upper left", frameon=False)
    return ax
