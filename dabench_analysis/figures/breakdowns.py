"""Figures of the paper's breakdowns: accuracy and scores by difficulty, failures by stage."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema, tables
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _ci_label, _err, _note, rate_limit
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema._labels import value_label
from dabench_analysis.schema.needs import needs
from dabench_analysis.tables import failures
from dabench_analysis.tables._common import takes_run


@needs("difficulty", "execution_success", "final_score", "execution_time", "total_tokens")
@takes_run()
def difficulty_bars(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    ci: float = 0.95,
    ax: Axes | None = None,
) -> Axes:
    """Answer accuracy (Wilson CI) and mean final score (logit-t CI, as Table 2) per difficulty, as grouped bars.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        The columns of :func:`dabench_analysis.tables.difficulty_breakdown` (Table 2).
        A Run or Runs gives its ``tasks``.
    threshold : float
        Answer accuracy = share with ``final_score >= threshold`` (seed: 0.8), in (0, 1].
    ci : float
        Level of the intervals, in (0, 1); the axis label names it ("90% CI" for 0.9).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        All four levels in the order Easy, Medium, Hard, Extreme, n under each group; a level
        without tasks keeps its place (no bars, "n=0"), so two runs' figures line up.

    Raises
    ------
    ValueError
        For a missing column, a ``threshold`` outside (0, 1] or a ``ci`` outside (0, 1).

    Notes
    -----
    Error bars are the table's intervals: Wilson for accuracy, logit t for the mean score
    (:func:`dabench_analysis.tables.difficulty_breakdown`), so none passes 1.

    Examples
    --------
    >>> t = pd.DataFrame({"difficulty": ["Easy", "Hard"], "execution_success": [1, 1],
    ...                   "final_score": [0.9, 0.2], "execution_time": [1.0, 2.0],
    ...                   "total_tokens": [10, 20]})
    >>> [x.get_text() for x in difficulty_bars(t).get_xticklabels()]
    ['Easy\\nn=1', 'Medium\\nn=0', 'Hard\\nn=1', 'Extreme\\nn=0']
    """
    ax = _axes(ax, aspect=0.7)
    label = _ci_label(ci)
    t2 = tables.difficulty_breakdown(tasks, threshold=threshold, ci=ci)
    if t2.empty:
        return _note(ax, "no tasks")
    levels = list(schema.DIFFICULTY_ORDER)
    t2 = t2[t2["difficulty"].astype("string").isin(levels)]
    x = np.array([levels.index(d) for d in t2["difficulty"].astype("string")])
    n = dict(zip(t2["difficulty"].astype("string"), t2["n"], strict=True))
    with mpl.rc_context(RC_PARAMS):
        ax.bar(x - 0.2, t2["answer_accuracy"], width=0.38, color=OKABE_ITO[0],
               yerr=_err(t2["answer_accuracy"], t2["answer_accuracy_ci_low"],
                         t2["answer_accuracy_ci_high"]), capsize=2,
               label=f"answer accuracy (≥ {threshold})")
        ax.bar(x + 0.2, t2["mean_final_score"], width=0.38, color=OKABE_ITO[1],
               yerr=_err(t2["mean_final_score"], t2["mean_final_score_ci_low"],
                         t2["mean_final_score_ci_high"]), capsize=2, label="mean final score")
        ax.set_xticks(range(len(levels)), [f"{d}\nn={n.get(d, 0)}" for d in levels])
        ax.set_xlim(-0.6, len(levels) - 0.4)
        ax.set_ylim(0, 1.0)
        ax.set_ylabel(f"Share / score ({label})")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return ax


@needs("final_score", "failure_stage")
@takes_run()
def failure_by_stage(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    ci: float = 0.95,
    ax: Axes | None = None,
) -> Axes:
    """Failed tasks by AAT stage (UNDERSTAND → AGGREGATE), shares with Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``final_score`` ([0, 1]) and ``failure_stage``.
        A Run or Runs gives its ``tasks``.
    threshold : float
        Failed means ``final_score < threshold`` (seed: 0.8), in (0, 1].
    ci : float
        Level of the Wilson intervals, in (0, 1); the axis label names it.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        One bar per stage in pipeline order (zero bars kept); "no failed tasks" when none.

    Raises
    ------
    ValueError
        For a missing column, a ``threshold`` outside (0, 1] or a ``ci`` outside (0, 1).

    Notes
    -----
    Shares of failed tasks with Wilson intervals: the table of
    :func:`dabench_analysis.tables.failures.failure_stages`, at level ``ci``.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0.1, 0.9], "failure_stage": ["PLAN", None]})
    >>> [float(p.get_height()) for p in failure_by_stage(t).patches]
    [0.0, 1.0, 0.0, 0.0, 0.0]
    """
    ax = _axes(ax, aspect=0.7)
    label = _ci_label(ci)
    table = failures.distribution(failures.failed_tasks(tasks, threshold=threshold),
                                  "failure_stage", order=schema.columns.FAILURE_STAGES, ci=ci)
    if table.empty or table["n"].iloc[0] == 0:
        return _note(ax, f"no failed tasks (final_score < {threshold})")
    with mpl.rc_context(RC_PARAMS):
        x = np.arange(len(table))
        ax.bar(x, table["share"], color=OKABE_ITO[3],
               yerr=_err(table["share"], table["ci_low"], table["ci_high"]), capsize=2)
        ax.set_xticks(x, [f"{value_label('failure_stage', st)}\n({k})" for st, k in
                          zip(table["failure_stage"], table["count"], strict=True)], fontsize=6)
        ax.set_ylabel(f"Share of failed tasks ({label})")
        ax.set_ylim(0, rate_limit(table["ci_high"]))
        ax.set_title(f"Failures by stage (n = {int(table['n'].iloc[0])})")
    return ax
