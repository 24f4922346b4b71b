"""Analysis figures re-exported by :mod:`dabench_analysis.figures` (see its module docstring)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import calibration, failures, process, schema, stats, tables
from dabench_analysis.style import OKABE_ITO, RC_PARAMS, empty_note, new_figure
from dabench_analysis.style import axes_or_new as _axes
from dabench_analysis.tables import require_columns

__all__ = ["correlation_matrix", "autonomy_vs_efficiency", "reliability_diagram",
           "difficulty_bars", "failure_by_stage", "tool_latency", "paired_difference"]


def _note(ax: Axes, text: str) -> Figure:
    return empty_note(ax, text).figure


def _err(mean, low, high) -> np.ndarray:
    mean, low, high = (np.asarray(v, dtype=float) for v in (mean, low, high))
    return np.vstack([np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)])


def correlation_matrix(
    tasks: pd.DataFrame,
    *,
    metrics: Sequence[str] = tuple(schema.CORRELATION_METRICS),
    method: str = "pearson",
    ax: Axes | None = None,
) -> Figure:
    """Annotated heatmap of the correlations of the seed's six metrics (§Correlation Analysis).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with the ``metrics`` columns.
    metrics : sequence of str
        Default: final_score, analyst_score, autonomy_score, tool_efficiency,
        verification_score, data_understanding_score.
    method : {"pearson", "spearman", "kendall"}
        Correlation coefficient (the seed uses pandas' default, Pearson).
    ax : Axes, optional

    Returns
    -------
    Figure
        Lower-and-upper triangle heatmap on a diverging colour-blind-safe map centred at 0,
        each cell annotated; a constant metric shows "n/a".

    Raises
    ------
    ValueError
        For a missing column or unknown method.
    """
    require_columns(tasks, list(metrics))
    if method not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"method must be pearson, spearman or kendall, got {method!r}")
    ax = _axes(ax, "one", aspect=1.0)
    data = tasks[list(metrics)].astype("float64")
    const = data.std() == 0
    corr = data.loc[:, ~const].corr(method=method).reindex(index=metrics, columns=metrics)
    with mpl.rc_context(RC_PARAMS):
        im = ax.imshow(corr.to_numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
        labels = [schema.label(m).replace(" score", "") for m in metrics]
        ax.set_xticks(range(len(metrics)), labels, rotation=40, ha="right")
        ax.set_yticks(range(len(metrics)), labels)
        for i in range(len(metrics)):
            for j in range(len(metrics)):
                v = corr.iat[i, j]
                ax.text(j, i, "n/a" if np.isnan(v) else f"{v:.2f}", ha="center", va="center",
                        fontsize=6, color="white" if abs(np.nan_to_num(v)) > 0.6 else "black")
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label=f"{method.capitalize()} r")
        ax.set_title(f"Correlations (n = {len(data)})")
        ax.spines[:].set_visible(False)
    return ax.figure


def autonomy_vs_efficiency(tasks: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Scatter of autonomy_score vs tool_efficiency coloured by final_score (seed §Generate
    Paper Figures).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with ``autonomy_score``, ``tool_efficiency`` and ``final_score``
        (all [0, 1]); rows missing any of them are left out.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure
        One point per task (viridis colour map, 0–1), with a colour bar. autonomy_score takes
        few distinct values (1 − replans/3), so points are jittered horizontally by up to ±0.025
        (seeded, said in the axis label) to show how many share a value.

    Raises
    ------
    ValueError
        For a missing column.
    """
    require_columns(tasks, ["autonomy_score", "tool_efficiency", "final_score"])
    ax = _axes(ax)
    d = tasks[["autonomy_score", "tool_efficiency", "final_score"]].astype("float64").dropna()
    if d.empty:
        return _note(ax, "no tasks with all three scores")
    with mpl.rc_context(RC_PARAMS):
        jitter = np.random.default_rng(0).uniform(-0.025, 0.025, len(d))
        sc = ax.scatter(d["autonomy_score"] + jitter, d["tool_efficiency"], c=d["final_score"],
                        cmap="viridis", vmin=0, vmax=1, s=14, alpha=0.85, edgecolors="none")
        ax.figure.colorbar(sc, ax=ax, label="Final score")
        ax.set_xlabel("Autonomy score (jittered ±0.025)")
        ax.set_ylabel("Tool efficiency")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"Autonomy vs tool efficiency (n = {len(d)})")
    return ax.figure


def reliability_diagram(
    tasks: pd.DataFrame,
    *,
    confidence: str = "confidence_score",
    threshold: float = schema.SUCCESS_THRESHOLD,
    ax: Axes | None = None,
) -> Figure:
    """Reliability diagram over the seed's five calibration buckets, with Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame
        With ``confidence`` ([0, 1]) and ``final_score``; correct = final_score ≥ threshold.
    confidence : str
        Confidence column.
    threshold : float
        Correctness threshold.
    ax : Axes, optional

    Returns
    -------
    Figure
        Accuracy per bucket (bars at the bucket, error bars = Wilson CI), mean confidence
        (markers), the diagonal of perfect calibration; ECE and n in the title; empty buckets
        are labelled n = 0.

    Raises
    ------
    ValueError
        For a missing column.
    """
    require_columns(tasks, [confidence, "final_score"])
    ax = _axes(ax)
    table = calibration.calibration_table(tasks, confidence=confidence, threshold=threshold)
    if table["n"].sum() == 0:
        return _note(ax, "no tasks with a confidence score")
    ece = calibration.expected_calibration_error(tasks, confidence=confidence,
                                                 threshold=threshold)
    mid = ((table["lower"] + table["upper"]) / 2).to_numpy()
    has = table["n"].to_numpy() > 0
    with mpl.rc_context(RC_PARAMS):
        ax.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=0.8, label="perfect")
        ax.bar(mid[has], table["accuracy"][has], width=0.18, color=OKABE_ITO[0], alpha=0.8,
               yerr=_err(table["accuracy"][has], table["ci_low"][has], table["ci_high"][has]),
               capsize=2, label="accuracy (95% CI)")
        ax.plot(table["mean_confidence"][has], table["accuracy"][has], "o", color=OKABE_ITO[1],
                markersize=3, label="mean confidence")
        for x, n in zip(mid, table["n"], strict=True):
            ax.text(x, 1.0, f"n={n}", ha="center", va="bottom", fontsize=5.5, color="0.2",
                    transform=ax.get_xaxis_transform())
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("Confidence")
        ax.set_ylabel(f"Accuracy (final_score ≥ {threshold})")
        ax.set_title(f"Reliability (ECE = {ece:.3f}, n = {int(table['n'].sum())})", pad=10)
        ax.legend(loc="upper left", frameon=False)
    return ax.figure


def difficulty_bars(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    ax: Axes | None = None,
) -> Figure:
    """Answer accuracy (Wilson CI) and mean final score (t-CI) per difficulty, as grouped bars.

    Parameters
    ----------
    tasks : DataFrame
        The columns of :func:`dabench_analysis.tables.difficulty_breakdown` (Table 2).
    threshold : float
        Answer accuracy = share with ``final_score >= threshold`` (seed: 0.8).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure
        Levels in the order Easy, Medium, Hard, Extreme (absent levels left out), n under
        each group.

    Raises
    ------
    ValueError
        For a missing column.
    """
    ax = _axes(ax, aspect=0.7)
    t2 = tables.difficulty_breakdown(tasks, threshold=threshold)
    if t2.empty:
        return _note(ax, "no tasks")
    x = np.arange(len(t2))
    with mpl.rc_context(RC_PARAMS):
        ax.bar(x - 0.2, t2["answer_accuracy"], width=0.38, color=OKABE_ITO[0],
               yerr=_err(t2["answer_accuracy"], t2["answer_accuracy_ci_low"],
                         t2["answer_accuracy_ci_high"]), capsize=2,
               label=f"answer accuracy (≥ {threshold})")
        ax.bar(x + 0.2, t2["mean_final_score"], width=0.38, color=OKABE_ITO[1],
               yerr=_err(t2["mean_final_score"], t2["mean_final_score_ci_low"],
                         t2["mean_final_score_ci_high"]), capsize=2, label="mean final score")
        ax.set_xticks(x, [f"{d}\nn={n}" for d, n in zip(t2["difficulty"], t2["n"], strict=True)])
        ax.set_ylim(0, 1.0)
        ax.set_ylabel("Share / score (95% CI)")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return ax.figure


def failure_by_stage(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    ax: Axes | None = None,
) -> Figure:
    """Failed tasks by AAT stage (UNDERSTAND → AGGREGATE), shares with Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame
        One row per task with ``final_score`` ([0, 1]) and ``failure_stage``.
    threshold : float
        Failed means ``final_score < threshold`` (seed: 0.8).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure
        One bar per stage in pipeline order (zero bars kept); "no failed tasks" when none.

    Raises
    ------
    ValueError
        For a missing column.
    """
    ax = _axes(ax, aspect=0.7)
    table = failures.failure_stages(tasks, threshold=threshold)
    if table.empty or table["n"].iloc[0] == 0:
        return _note(ax, f"no failed tasks (final_score < {threshold})")
    with mpl.rc_context(RC_PARAMS):
        x = np.arange(len(table))
        ax.bar(x, table["share"], color=OKABE_ITO[3],
               yerr=_err(table["share"], table["ci_low"], table["ci_high"]), capsize=2)
        ax.set_xticks(x, [f"{st.title()}\n({k})" for st, k in zip(table["failure_stage"],
                                                                 table["count"], strict=True)], fontsize=6)
        ax.set_ylabel("Share of failed tasks (95% CI)")
        ax.set_ylim(0, 1)
        ax.set_title(f"Failures by stage (n = {int(table['n'].iloc[0])})")
    return ax.figure


def tool_latency(tool_calls: pd.DataFrame, *, top: int = 14, fig: Figure | None = None) -> Figure:
    """Per tool: mean latency (t-CI) and failure rate (Wilson CI), two panels side by side.

    Parameters
    ----------
    tool_calls : DataFrame
        ``run.tool_calls`` (tool_name, success, latency_seconds in seconds, tokens, task_id).
    top : int
        Show the ``top`` most-called tools.
    fig : Figure, optional
        Draw into this (empty) figure; default a new two-column figure.

    Returns
    -------
    Figure
    """
    fig = fig if fig is not None else new_figure("two", aspect=0.45)
    if tool_calls.empty:
        ax = fig.add_subplot()
        ax.spines[:].set_visible(False)
        return _note(ax, "no tool calls recorded (tool_calls.csv missing or empty)")
    usage = process.tool_usage(tool_calls).head(top)
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(usage))
    with mpl.rc_context(RC_PARAMS):
        ax1.barh(y, usage["mean_latency_s"], color=OKABE_ITO[0],
                 xerr=_err(usage["mean_latency_s"], usage["latency_ci_low"],
                           usage["latency_ci_high"]), capsize=2)
        ax1.set_yticks(y, [f"{t} ({n})" for t, n in zip(usage["tool_name"], usage["n_calls"],
                                                        strict=True)])
        ax1.invert_yaxis()
        ax1.set_xlabel("Mean latency (s, 95% CI)")
        ax2.barh(y, usage["failure_rate"], color=OKABE_ITO[3],
                 xerr=_err(usage["failure_rate"], usage["failure_ci_low"],
                           usage["failure_ci_high"]), capsize=2)
        ax2.set_xlabel("Failure rate (95% CI)")
        ax2.set_xlim(0, 1)
        fig.suptitle(f"Tool latency and failures ({int(usage['n_calls'].sum())} calls)")
    return fig


def paired_difference(
    baseline: pd.DataFrame,
    proposed: pd.DataFrame,
    *,
    metric: str = "final_score",
    on: str = "task_id",
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
    ax : Axes, optional
        Draw here; default a new two-column figure.

    Returns
    -------
    Figure
        One bar per paired task (blue improved, vermillion regressed), a line at the mean
        difference and a band for its 95% t-interval, the Wilcoxon p in the title.
    """
    ax = _axes(ax, "two", aspect=0.4)
    res = stats.paired_comparison(baseline, proposed, metric=metric, on=on).iloc[0]
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
        ax.axhspan(res["ci_low"], res["ci_high"], color="0.5", alpha=0.25, label="95% CI")
        ax.set_xlabel("Tasks, sorted by difference")
        ax.set_ylabel(f"Δ {schema.label(metric)}")
        ax.set_xticks([])
        p = res["p_value"]
        ptxt = "not testable" if not np.isfinite(p) else f"{p:.3g}"
        ax.set_title(f"Paired differences, proposed − baseline (n = {int(res['n_pairs'])}, "
                     f"Wilcoxon p = {ptxt}, unadjusted)")
        ax.legend(loc="upper left", frameon=False)
    return ax.figure
