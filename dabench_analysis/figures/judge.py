"""Figures of a judge study: a metric per judge configuration with its interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis.figures.theme import OKABE_ITO, axes_or_new


def plot_configurations(table: pd.DataFrame, *, by: str = "configuration", metric: str = "mcc",
                        ax: Any = None) -> Any:
    """Horizontal bars of one agreement metric per judge configuration, with its interval.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`configuration_table`.
    by, metric : str
        Label column and metric column (``<metric>_ci_low/high`` drawn if present).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is made otherwise.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> t = pd.DataFrame({"configuration": ["a", "b"], "mcc": [0.2, 0.5],
    ...                   "mcc_ci_low": [0.0, 0.3], "mcc_ci_high": [0.4, 0.7]})
    >>> len(plot_configurations(t).patches)
    2
    """

    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.25 + 0.15 * len(table)))
    y = np.arange(len(table))
    err = None
    if f"{metric}_ci_low" in table:
        lo, hi = table[f"{metric}_ci_low"], table[f"{metric}_ci_high"]
        err = np.vstack([(table[metric] - lo).clip(lower=0), (hi - table[metric]).clip(lower=0)])
    ax.barh(y, table[metric], xerr=err, color=OKABE_ITO[0], capsize=3)
    ax.set_yticks(y, table[by].astype(str))
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_xlabel(f"{metric.upper() if metric == 'mcc' else metric} (judge vs human reference)")
    return ax
