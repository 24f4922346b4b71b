"""Figures of repeated trials and costs: pass^k (or pass@k) against k per run, and the
cost–accuracy frontier of a sweep. Both draw on ``ax=`` or a new one-column figure; neither
changes global matplotlib state.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema
from dabench_analysis.figures._labels import shorten
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _err, empty_note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns

#: Axis label of each measure of :func:`dabench_analysis.tables.trials.pass_k`.
MEASURES = {"pass_hat_k": "pass^k (all k trials succeed)",
            "pass_at_k": "pass@k (at least one of k trials succeeds)"}
#: Runs drawn with their own colour and label (the others in grey, unlabelled).
MAX_LABELLED = 8


def pass_k_curve(table: pd.DataFrame, *, measure: str = "pass_hat_k",
                 ax: Axes | None = None) -> Axes:
    """pass^k (or pass@k) against k, one line per run with its interval as error bars.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.trials.pass_k`: ``run_id``, ``k``, ``<measure>``,
        ``<measure>_ci_low``, ``<measure>_ci_high``.
    measure : {"pass_hat_k", "pass_at_k"}
        Which curve.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        x: k (whole numbers), y: the measure in [0, 1]; one line per run (the first
        :data:`MAX_LABELLED` in the palette and the legend).

    Raises
    ------
    ValueError
        An unknown measure or missing columns.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 2, "k": [1, 2], "pass_hat_k": [0.5, 0.3],
    ...                   "pass_hat_k_ci_low": [0.4, 0.2], "pass_hat_k_ci_high": [0.6, 0.4]})
    >>> ax = pass_k_curve(t)
    >>> ax.lines[0].get_xdata().tolist(), ax.lines[0].get_ydata().tolist()
    ([1, 2], [0.5, 0.3])
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    cols = [measure, f"{measure}_ci_low", f"{measure}_ci_high"]
    require_columns(table, ["run_id", "k", *cols], what="table")
    ax = _axes(ax, "one")
    if table.empty:
        return empty_note(ax, "no repeated trials")
    with mpl.rc_context(RC_PARAMS):
        for i, (rid, g) in enumerate(table.groupby("run_id", sort=False)):
            g = g.sort_values("k")
            labelled = i < MAX_LABELLED
            colour = OKABE_ITO[i % len(OKABE_ITO)] if labelled else "0.75"
            y = g[measure].to_numpy(float)
            ax.errorbar(g["k"].to_numpy(int), y, yerr=_err(y, g[cols[1]], g[cols[2]]),
                        color=colour, marker="o", markersize=3, linewidth=1, capsize=2,
                        label=shorten(rid, line_chars=40) if labelled else None)
        ax.set_xticks(sorted(table["k"].astype(int).unique()))
        ax.set_ylim(0, 1)
        ax.set_xlabel("k (trials)")
        ax.set_ylabel(MEASURES[measure])
        if table["run_id"].nunique() > 1:
            ax.legend(frameon=False, fontsize=6)
    return ax


def frontier(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """The cost–accuracy plane: each run's accuracy against its mean cost per task with
    intervals, the Pareto frontier as a step line through the runs on it.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.sweep.frontier`: ``run_id``, ``accuracy``,
        ``accuracy_ci_low/high``, ``mean_cost``, ``mean_cost_ci_low/high``, ``on_frontier``,
        ``cost`` (the cost column's name); ``p_frontier`` (the bootstrap probability of being
        on the frontier) labels each point, as a percentage, when present.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        One point per run (filled: on the frontier; hollow: dominated) with both intervals;
        the frontier's line; x the mean cost per task in the column's unit, y accuracy.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "b"], "accuracy": [0.8, 0.5],
    ...                   "accuracy_ci_low": [0.7, 0.4], "accuracy_ci_high": [0.9, 0.6],
    ...                   "mean_cost": [100.0, 20.0], "mean_cost_ci_low": [90.0, 15.0],
    ...                   "mean_cost_ci_high": [110.0, 25.0], "on_frontier": [True, True],
    ...                   "cost": "total_tokens"})
    >>> ax = frontier(t)
    >>> ax.lines[-1].get_xdata().tolist(), ax.get_xlabel()
    ([20.0, 100.0], 'Mean tokens per task')
    """
    require_columns(table, ["run_id", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
                            "mean_cost", "mean_cost_ci_low", "mean_cost_ci_high",
                            "on_frontier"], what="table")
    ax = _axes(ax, "one")
    if table.empty:
        return empty_note(ax, "no runs")
    x, y = table["mean_cost"].to_numpy(float), table["accuracy"].to_numpy(float)
    on = table["on_frontier"].fillna(False).astype(bool).to_numpy()
    with mpl.rc_context(RC_PARAMS):
        ax.errorbar(x, y, xerr=_err(x, table["mean_cost_ci_low"], table["mean_cost_ci_high"]),
                    yerr=_err(y, table["accuracy_ci_low"], table["accuracy_ci_high"]),
                    fmt="none", ecolor="0.6", elinewidth=0.7)
        for mask, face, name in ((on, OKABE_ITO[0], "on the frontier"),
                                 (~on, "white", "dominated")):
            if mask.any():
                ax.scatter(x[mask], y[mask], s=18, facecolors=face, edgecolors=OKABE_ITO[0],
                           linewidths=0.9, zorder=3, label=name)
        for xi, yi, (_, r) in zip(x, y, table.iterrows(), strict=True):
            p = f" ({r['p_frontier']:.0%})" if "p_frontier" in r and pd.notna(
                r["p_frontier"]) else ""
            ax.annotate(shorten(r["run_id"], line_chars=24) + p, (xi, yi), fontsize=5,
                        xytext=(3, 3), textcoords="offset points")
        order = np.argsort(x[on], kind="stable")
        if on.sum() > 1:
            ax.plot(x[on][order], y[on][order], color=OKABE_ITO[0], linewidth=0.8,
                    drawstyle="steps-post")
        ax.set_xlabel(_cost_label(str(table["cost"].iloc[0]) if "cost" in table else "cost"))
        ax.set_ylabel("Accuracy")
        ax.set_ylim(0, 1)
        ax.legend(frameon=False, fontsize=6, loc="lower right")
    return ax


def _cost_label(cost: str) -> str:
    """``Mean tokens per task``, ``Mean cost per task (USD)``, ``Mean runtime per task (s)``;
    another column with its catalogue unit."""
    names = {"total_tokens": "Mean tokens per task", "cost": "Mean cost per task (USD)",
             "execution_time": "Mean runtime per task (s)"}
    col = schema.TASK_COLUMNS.get(cost)
    unit = f" ({col.unit})" if col is not None and col.unit else ""
    return names.get(cost, f"Mean {cost} per task{unit}")
