"""Figures of a judge study: a metric per judge configuration with its interval."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures._theme import OKABE_ITO, ONE_COLUMN, RC_PARAMS, axes_or_new


def plot_configurations(table: pd.DataFrame, *, by: str = "configuration", metric: str = "mcc",
                        ax: Axes | None = None) -> Axes:
    """Horizontal bars of one agreement metric per judge configuration, with its interval.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`configuration_table`.
    by, metric : str
        Label column and metric column (``<metric>_ci_low/high`` drawn if present).
    ax : Axes, optional
        Axes to draw on (tick labels shrink to fit); a new one-column figure otherwise, whose
        height grows with the number of configurations.

    Returns
    -------
    Axes
        One bar per row of ``table``, top down; names over 40 characters keep their ends
        around a "…" and wrap onto two lines.

    Examples
    --------
    >>> t = pd.DataFrame({"configuration": ["a", "b"], "mcc": [0.2, 0.5],
    ...                   "mcc_ci_low": [0.0, 0.3], "mcc_ci_high": [0.4, 0.7]})
    >>> len(plot_configurations(t).patches)
    2
    """

    labels = [shorten(v) for v in table[by]]
    given = ax is not None
    height = max(ONE_COLUMN * min(0.75, 0.25 + 0.15 * len(table)), height_for(labels))
    ax = axes_or_new(ax, "one", height=height)
    y = np.arange(len(table))
    err = None
    if f"{metric}_ci_low" in table:
        lo, hi = table[f"{metric}_ci_low"], table[f"{metric}_ci_high"]
        err = np.vstack([(table[metric] - lo).clip(lower=0), (hi - table[metric]).clip(lower=0)])
    with mpl.rc_context(RC_PARAMS):
        ax.barh(y, table[metric], xerr=err, color=OKABE_ITO[0], capsize=3)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(table) - 0.5, -0.5)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_xlabel(f"{metric.upper() if metric == 'mcc' else metric} (judge vs human reference)")
        if given:
            fit_ticklabels(ax, labels)
    return ax
