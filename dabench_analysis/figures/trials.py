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
from dabench_analysis.figures._labels import run_labels, shorten
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _err, empty_note, rate_limit
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.numbers import format_estimate

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
        ax.set_ylim(0, rate_limit(table[cols[2]]))
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
        on the frontier) labels each point, as a proportion (``P = 0.850``), when present.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        One point per run (filled: on the frontier; hollow: dominated) with both intervals;
        the frontier's line; x the mean cost per task in the column's unit, y accuracy (to 1,
        or near the data below 0.5: :func:`~dabench_analysis.figures._theme.rate_limit`). Run
        names lose the prefix and suffix all share (said under the x label); above
        :data:`MAX_LABELLED` runs only the runs on the frontier are marked, by a number, with
        the key of numbers to names under the x label.

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
    drawn = (table["accuracy"].notna() & table["mean_cost"].notna()).to_numpy()
    if not drawn.any():
        return empty_note(ax, "not computed: the runs share no task with a recorded cost")
    cost = str(table["cost"].iloc[0]) if "cost" in table else "cost"
    left = _not_drawn(table[~drawn], cost)
    table = table[drawn].reset_index(drop=True)
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
        key = _point_labels(ax, table, x, y, on)
        order = np.argsort(x[on], kind="stable")
        if on.sum() > 1:
            ax.plot(x[on][order], y[on][order], color=OKABE_ITO[0], linewidth=0.8,
                    drawstyle="steps-post")
        ax.set_xlabel("\n".join([_cost_label(cost), *key, *left]),
                      fontsize=6 if key or left else None)  # the key fits the column's width
        _thin_cost_ticks(ax)
        if left and ax.figure.get_constrained_layout():  # our own figure: room for the line
            w, h = ax.figure.get_size_inches()
            ax.figure.set_size_inches(w, h + 0.12 * len(left))
        ax.set_ylabel("Accuracy")
        ax.set_ylim(0, rate_limit(table["accuracy_ci_high"]))
        ax.legend(frameon=False, fontsize=6, loc="lower right")
    return ax


def _point_labels(ax: Axes, table: pd.DataFrame, x: np.ndarray, y: np.ndarray,
                  on: np.ndarray) -> list[str]:
    """Name the frontier's points: up to :data:`MAX_LABELLED` runs each by its name (common
    prefix and suffix left out), more by a number beside the runs on the frontier with a key
    under the x label. Returns the lines of the key (with the note of what names leave out)."""
    names, note = run_labels(table["run_id"].astype(str).tolist(), max_chars=40)
    numbered = len(table) > MAX_LABELLED
    key = []
    for i, r in enumerate(table.itertuples(index=False)):
        if numbered and not on[i]:
            continue
        p_on = getattr(r, "p_frontier", np.nan)
        p = f" (P = {format_estimate(p_on)})" if pd.notna(p_on) else ""
        text = str(len(key) + 1) if numbered else names[i] + p
        if numbered:
            key.append(f"{text}: {names[i]}{p}")
        right = x[i] > sum(ax.get_xlim()) / 2  # the right half: the name to the point's left
        ax.annotate(text, (x[i], y[i]), fontsize=5, xytext=(-3 if right else 3, 3),
                    textcoords="offset points", ha="right" if right else "left")
    if numbered and ax.figure.get_constrained_layout():  # our own figure: room for the key
        w, h = ax.figure.get_size_inches()
        ax.figure.set_size_inches(w, h + 0.12 * (len(key) + bool(note)))
    return key + ([note] if note else [])


def _not_drawn(rows: pd.DataFrame, cost: str) -> list[str]:
    """The line under the x label naming the runs without a point (their cost not recorded)."""
    if rows.empty:
        return []
    n = len(rows)
    return [f"not drawn: {n} run{'' if n == 1 else 's'}, {cost} not recorded (table's note)"]


def _thin_cost_ticks(ax: Axes) -> None:
    """At most 5 cost ticks, in plain or scientific numbers matplotlib chooses, never touching
    (tokens per task run to millions: wide labels on a one-column axis)."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, min_n_ticks=3))
    fmt = ScalarFormatter(useMathText=True)
    fmt.set_powerlimits((-3, 4))
    ax.xaxis.set_major_formatter(fmt)


def _cost_label(cost: str) -> str:
    """``Mean tokens per task``, ``Mean cost per task (USD)``, ``Mean runtime per task (s)``;
    another column with its catalogue unit."""
    names = {"total_tokens": "Mean tokens per task", "cost": "Mean cost per task (USD)",
             "execution_time": "Mean runtime per task (s)"}
    col = schema.TASK_COLUMNS.get(cost)
    unit = f" ({col.unit})" if col is not None and col.unit else ""
    return names.get(cost, f"Mean {cost} per task{unit}")
