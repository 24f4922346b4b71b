"""Figures of two runs compared: per-task paired differences with the mean and its interval."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import schema, stats
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _ci_label, _note
from dabench_analysis.figures.theme import axes_or_new as _axes


def paired_difference(
    baseline: pd.DataFrame,
    proposed: pd.DataFrame,
    *,
    metric: str = "final_score",
    on: str = "task_id",
    ci: float = 0.95,
    ax: Axes | None = None,
) -> Figure:
    """Per-task paired differences (proposed − baseline), sorted, with the mean and its CI.

    Parameters
    ----------
    baseline, proposed : DataFrame
        Task frames of the two runs with ``on`` and ``metric`` ([0, 1] score).
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
    Figure
        One bar per paired task (blue improved, vermillion regressed), a line at the mean
        difference and a band for its t-interval at level ``ci``
        (:func:`dabench_analysis.stats.paired_comparison`), the Wilcoxon p in the title.

    Raises
    ------
    ValueError
        As :func:`dabench_analysis.stats.paired_comparison` (missing columns, duplicate task
        keys, a ``ci`` outside (0, 1)).
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
        colors = np.where(diff > 0, OKABE_ITO[0], np.where(diff < 0, OKABE_ITO[3], "0.6"))
        ax.bar(np.arange(diff.size), diff, color=colors, width=0.9)
        ax.axhline(0, color="0.3", linewidth=0.6)
        ax.axhline(res["mean_diff"], color="black", linestyle="--", linewidth=0.8,
                   label=f"mean Δ = {res['mean_diff']:+.3f}")
        ax.axhspan(res["ci_low"], res["ci_high"], color="0.5", alpha=0.25, label=label)
        ax.set_xlabel("Tasks, sorted by difference")
        ax.set_ylabel(f"Δ {schema.label(metric)}")
        ax.set_xticks([])
        p = res["p_value"]
        ptxt = "not testable" if not np.isfinite(p) else f"{p:.3g}"
        ax.set_title(f"Paired differences, proposed − baseline (n = {int(res['n_pairs'])}, "
                     f"Wilcoxon p = {ptxt}, unadjusted)")
        ax.legend(loc="upper left", frameon=False)
    return ax.figure
