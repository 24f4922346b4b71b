"""Relations between metrics: the correlation heatmap and autonomy against tool efficiency."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import schema
from dabench_analysis.figures.theme import RC_PARAMS, _note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns


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
