"""Figures of the process: latency and failure rate per tool."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _ci_label, _err, _note, new_figure
from dabench_analysis.tables import timing as process


def tool_latency(tool_calls: pd.DataFrame, *, top: int = 14, ci: float = 0.95,
                 fig: Figure | None = None) -> Figure:
    """Per tool: mean latency (t-CI) and failure rate (Wilson CI), two panels side by side.

    Parameters
    ----------
    tool_calls : DataFrame
        ``run.tool_calls`` (tool_name, success, latency_seconds in seconds, tokens, task_id).
    top : int
        Show the ``top`` most-called tools.
    ci : float
        Level of both intervals, in (0, 1); the axis labels name it ("90% CI" for 0.9).
    fig : Figure, optional
        Draw into this (empty) figure; default a new two-column figure.

    Returns
    -------
    Figure
    """
    label = _ci_label(ci)
    fig = fig if fig is not None else new_figure("two", aspect=0.45)
    if tool_calls.empty:
        ax = fig.add_subplot()
        ax.spines[:].set_visible(False)
        return _note(ax, "no tool calls recorded (tool_calls.csv missing or empty)")
    usage = process.tool_usage(tool_calls, ci=ci).head(top)
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(usage))
    with mpl.rc_context(RC_PARAMS):
        ax1.barh(y, usage["mean_latency_s"], color=OKABE_ITO[0],
                 xerr=_err(usage["mean_latency_s"], usage["latency_ci_low"],
                           usage["latency_ci_high"]), capsize=2)
        ax1.set_yticks(y, [f"{t} ({n})" for t, n in zip(usage["tool_name"], usage["n_calls"],
                                                        strict=True)])
        ax1.invert_yaxis()
        ax1.set_xlabel(f"Mean latency (s, {label})")
        ax2.barh(y, usage["failure_rate"], color=OKABE_ITO[3],
                 xerr=_err(usage["failure_rate"], usage["failure_ci_low"],
                           usage["failure_ci_high"]), capsize=2)
        ax2.set_xlabel(f"Failure rate ({label})")
        ax2.set_xlim(0, 1)
        fig.suptitle(f"Tool latency and failures ({int(usage['n_calls'].sum())} calls)")
    return fig
