"""The reliability profile as one figure: each metric of
:func:`dabench_analysis.tables.reliability` as a point with its interval, grouped by dimension,
one colour per run; and the risk–coverage curve of selective prediction. Both draw on ``ax=``
or a new one-column figure and change no global state.
"""

from __future__ import annotations

import textwrap

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis.figures._labels import shorten
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _err, empty_note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns

__all__ = ["LABELS", "reliability_profile", "risk_coverage_curve"]

#: Axis label of each metric (higher is better unless marked "lower").
LABELS = {"outcome_consistency": "Outcome consistency",
          "trajectory_action_consistency": "Action-distribution consistency",
          "trajectory_order_consistency": "Action-order consistency",
          "resource_cv_cost": "CV of cost (lower: steadier)",
          "resource_cv_tokens": "CV of tokens (lower: steadier)",
          "resource_cv_steps": "CV of steps (lower: steadier)",
          "resource_cv_time": "CV of time (lower: steadier)",
          "confidence_auroc": "AUROC of confidence",
          "aurc": "AuRC (lower: better)",
          "excess_aurc": "Excess AuRC (lower: better)"}
#: Runs drawn with their own colour (the others grey, unlabelled).
MAX_RUNS = 8


def _label(metric: str) -> str:
    if metric.startswith("robustness_ratio:"):
        return f"Accuracy ratio, {metric.split(':', 1)[1]}"
    return LABELS.get(metric, metric)


def reliability_profile(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Each reliability metric of each run as a point with its bootstrap interval.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.reliability`: ``run_id``, ``dimension``, ``metric``,
        ``value``, ``ci_low``, ``ci_high``.
    ax : Axes, optional
        Draw here; default a new one-column figure whose height grows with the metrics.

    Returns
    -------
    Axes
        One row per metric that has a value (top to bottom in the table's order, labelled on
        the y axis, a thin line between dimensions), x the metric's value; one point with
        error bars per run and metric (runs side by side, in the palette, with a legend when
        there are several). The metrics without a value are named under the x label; a dotted
        line at 1 beside the robustness ratios (no loss under the condition).

    Raises
    ------
    ValueError
        Missing columns.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": "a", "dimension": ["consistency", "predictability"],
    ...                   "metric": ["outcome_consistency", "aurc"], "value": [0.6, np.nan],
    ...                   "ci_low": [0.5, np.nan], "ci_high": [0.7, np.nan]})
    >>> ax = reliability_profile(t)
    >>> [x.get_text() for x in ax.get_yticklabels()], ax.get_xlabel()
    (['Outcome consistency'], "Value (bootstrap interval over tasks)\\nnot computed (see the table's notes): aurc")
    """
    require_columns(table, ["run_id", "dimension", "metric", "value", "ci_low", "ci_high"],
                    what="table")
    drawn = table[np.isfinite(table["value"].to_numpy(float))]
    metrics = list(dict.fromkeys(drawn["metric"]))
    missing = [m for m in dict.fromkeys(table["metric"]) if m not in metrics]
    label = "Value (bootstrap interval over tasks)"
    if missing:
        label += "\n" + textwrap.fill("not computed (see the table's notes): "
                                      + ", ".join(missing), 45)
    ax = _axes(ax, "one", height=1.0 + 0.3 * len(metrics) + 0.1 * label.count("\n"))
    if drawn.empty:
        return empty_note(ax, "no reliability metric computed (see the table's notes)")
    dims = drawn.drop_duplicates("metric").set_index("metric")["dimension"]
    runs = list(dict.fromkeys(drawn["run_id"].astype(str)))
    step = 0.6 / max(1, len(runs))
    with mpl.rc_context(RC_PARAMS):
        for i, rid in enumerate(runs):
            g = drawn[drawn["run_id"].astype(str) == rid]
            offset = (i - (len(runs) - 1) / 2) * step
            y = np.array([metrics.index(m) for m in g["metric"]]) + offset
            x = g["value"].to_numpy(float)
            colour = OKABE_ITO[i % len(OKABE_ITO)] if i < MAX_RUNS else "0.75"
            ax.errorbar(x, y, xerr=_err(x, g["ci_low"].fillna(g["value"]),
                                        g["ci_high"].fillna(g["value"])),
                        fmt="o", color=colour, markersize=3.5, elinewidth=0.9, capsize=2,
                        label=shorten(rid, line_chars=40) if i < MAX_RUNS else None)
        ratios = [k for k, m in enumerate(metrics) if m.startswith("robustness_ratio")]
        if ratios:  # no loss under the condition
            ax.plot([1, 1], [min(ratios) - 0.5, max(ratios) + 0.5], color="0.5",
                    linestyle=":", linewidth=0.8, zorder=0)
        for k in range(1, len(metrics)):
            if dims[metrics[k]] != dims[metrics[k - 1]]:
                ax.axhline(k - 0.5, color="0.8", linewidth=0.6)
        ax.set_yticks(range(len(metrics)), [_label(m) for m in metrics])
        ax.set_ylim(len(metrics) - 0.5, -0.5)
        top = np.nanmax(np.r_[drawn["ci_high"].to_numpy(float), drawn["value"].to_numpy(float)])
        ax.set_xlim(min(0.0, np.nanmin(drawn["value"].to_numpy(float))), max(1.0, top) * 1.05)
        ax.set_xlabel(label, fontsize=6 if missing else None)
        if len(runs) > 1:
            ax.legend(frameon=False, fontsize=6)
    return ax


def risk_coverage_curve(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Risk against coverage per run (solid), beside the best ordering's curve (dashed).

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.risk_coverage`: ``run_id``, ``coverage``, ``risk``,
        ``optimal_risk``.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        x coverage in (0, 1] (the most confident share of trials answered), y risk (the share
        of those answers that is wrong); per run a solid line and, in its colour, a dashed
        line for the oracle that answers every correct trial first. The area between them is
        the excess AuRC.

    Raises
    ------
    ValueError
        Missing columns.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": "a", "coverage": [0.5, 1.0], "risk": [1.0, 0.5],
    ...                   "optimal_risk": [0.0, 0.5]})
    >>> ax = risk_coverage_curve(t)
    >>> ax.lines[0].get_ydata().tolist(), ax.lines[1].get_linestyle()
    ([1.0, 0.5], '--')
    """
    require_columns(table, ["run_id", "coverage", "risk", "optimal_risk"], what="table")
    ax = _axes(ax, "one")
    if table.empty:
        return empty_note(ax, "no confidence recorded")
    with mpl.rc_context(RC_PARAMS):
        for i, (rid, g) in enumerate(table.groupby("run_id", sort=False)):
            colour = OKABE_ITO[i % len(OKABE_ITO)] if i < MAX_RUNS else "0.75"
            name = shorten(str(rid), line_chars=40) if i < MAX_RUNS else None
            x = g["coverage"].to_numpy(float)
            ax.plot(x, g["risk"].to_numpy(float), color=colour, linewidth=1.1, label=name)
            ax.plot(x, g["optimal_risk"].to_numpy(float), color=colour, linewidth=0.8,
                    linestyle="--", label=f"{name}: best ordering" if name else None)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, max(0.05, float(np.nanmax(table[["risk", "optimal_risk"]].to_numpy(
            float)))) * 1.05)
        ax.set_xlabel("Coverage (most confident share of trials answered)")
        ax.set_ylabel("Risk (share of answers wrong)")
        ax.legend(frameon=False, fontsize=6)
    return ax
