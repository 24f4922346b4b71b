"""Figures of the process: latency and failure rate per tool (a two-panel figure)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures._theme import (
    OKABE_ITO,
    RC_PARAMS,
    TWO_COLUMN,
    _ci_label,
    _err,
    new_panels,
    rate_limit,
)
from dabench_analysis.schema import TOOL_CALLS_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.tables import timing as process
from dabench_analysis.tables._common import takes_run


def _panels(ax: Sequence[Axes] | None, labels: list[str]) -> np.ndarray:
    if ax is None:
        return new_panels(2, "two", height=max(0.45 * TWO_COLUMN, height_for(labels)))
    axes = np.asarray(ax, dtype=object).ravel()
    if axes.size != 2 or not all(isinstance(a, Axes) for a in axes):
        raise ValueError("ax must be two Axes: (latency, failure rate)")
    return axes


@needs(files=(TOOL_CALLS_FILE,), file_needs=in_file(TOOL_CALLS_FILE, "task_id", "tool_name",
       "success"), uses=in_file(TOOL_CALLS_FILE, "latency_seconds", "tokens"), trials="any")
@takes_run(frame="tool_calls", trials=True)
def tool_latency(tool_calls: pd.DataFrame, *, top: int = 14, ci: float = 0.95,
                 ax: Sequence[Axes] | None = None) -> np.ndarray:
    """Per tool: mean latency (t-CI) and failure rate (Wilson CI), two panels side by side.

    A multi-panel figure: it takes and returns a pair of Axes, as ``plt.subplots(1, 2)`` does.

    Parameters
    ----------
    tool_calls : DataFrame, Run or Runs
        ``run.tool_calls`` (a Run or Runs gives its ``tool_calls``) (tool_name, success,
        task_id; latency_seconds in seconds when recorded: without it the latency panel says
        "latency not recorded").
    top : int
        Show the ``top`` most-called tools.
    ci : float
        Level of both intervals, in (0, 1); the axis labels name it ("90% CI" for 0.9).
    ax : pair of Axes, optional
        (latency panel, failure-rate panel), e.g. ``plt.subplots(1, 2, sharey=True)[1]``;
        their tick labels shrink to fit (a warning below 4.5 pt). Default: a new two-column
        figure whose height grows with the number of tools.

    Returns
    -------
    ndarray of Axes
        Shape (2,): latency panel, failure-rate panel (sharing y). The figure is
        ``axes[0].figure``. Tools most-called first, top down, labelled "name (calls)"; a name
        over 40 characters keeps its first 20 and last 19 around a "…" and wraps onto two
        lines (full names: :func:`dabench_analysis.tables.timing.tool_usage`). Title on the
        left panel: "Tool latency and failures (N calls)". Without tool calls the left panel
        says so.

    Raises
    ------
    ValueError
        If a column is missing, ``ci`` is outside (0, 1) or ``ax`` is not two Axes.

    Examples
    --------
    >>> calls = pd.DataFrame({"task_id": ["a", "a", "b"], "tool_name": ["sql", "py", "sql"],
    ...                       "success": [True, False, True],
    ...                       "latency_seconds": [1.0, 2.0, 3.0], "tokens": [1, 2, 3]})
    >>> lat, fail = tool_latency(calls)
    >>> [t.get_text() for t in lat.get_yticklabels()], fail.get_xlabel()
    (['sql (2)', 'py (1)'], 'Failure rate (95% CI)')
    """
    label = _ci_label(ci)
    usage = (process.tool_usage(tool_calls, ci=ci).head(top) if not tool_calls.empty
             else pd.DataFrame({"tool_name": [], "n_calls": []}))
    labels = [f"{shorten(t)} ({n})" for t, n in zip(usage["tool_name"], usage["n_calls"],
                                                    strict=True)]
    given = ax is not None
    ax1, ax2 = _panels(ax, labels)
    if usage.empty:
        ax2.set_axis_off()
        ax1.text(0.5, 0.5, f"no tool calls recorded ({TOOL_CALLS_FILE} missing or empty)",
                 ha="center", va="center", transform=ax1.transAxes, color="0.35")
        ax1.set_xticks([])
        ax1.set_yticks([])
        return np.array([ax1, ax2], dtype=object)
    y = np.arange(len(usage))
    with mpl.rc_context(RC_PARAMS):
        if "mean_latency_s" in usage:
            ax1.barh(y, usage["mean_latency_s"], color=OKABE_ITO[0],
                     xerr=_err(usage["mean_latency_s"], usage["latency_ci_low"],
                               usage["latency_ci_high"]), capsize=2)
            ax1.set_xlabel(f"Mean latency (s, {label})")
        else:  # the harness records no latency: the panel says so, never a zero bar
            ax1.text(0.5, 0.5, "latency not recorded", ha="center", va="center",
                     transform=ax1.transAxes, color="0.35")
            ax1.set_xticks([])
        ax1.set_yticks(y, labels)
        ax1.set_ylim(len(usage) - 0.5, -0.5)
        ax2.barh(y, usage["failure_rate"], color=OKABE_ITO[3],
                 xerr=_err(usage["failure_rate"], usage["failure_ci_low"],
                           usage["failure_ci_high"]), capsize=2)
        ax2.set_xlabel(f"Failure rate ({label})")
        ax2.set_xlim(0, rate_limit(usage["failure_ci_high"]))
        ax1.set_title(f"Tool latency and failures ({int(usage['n_calls'].sum())} calls)",
                      loc="left")
        if given:
            fit_ticklabels(ax1, labels)
    return np.array([ax1, ax2], dtype=object)
