"""Relations between metrics: the correlation heatmap and autonomy against tool efficiency.

Colour bars sit in an inset of the plotting Axes (``ax.inset_axes``), so they follow the Axes'
drawn box: a heatmap of square cells and its colour bar have the same height, on a new figure or
on an Axes the caller gave.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colorbar import Colorbar

from dabench_analysis import schema
from dabench_analysis.figures._theme import RC_PARAMS, SEQUENTIAL, _note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate
from dabench_analysis.tables._common import takes_run


@needs("final_score",
       uses=("analyst_score", "autonomy_score", "tool_efficiency", "verification_score", "data_understanding_score"),
       uses_at_least=1)
@takes_run(named=("metrics",))
def correlation_matrix(
    tasks: pd.DataFrame,
    *,
    metrics: Sequence[str] = tuple(schema.columns.CORRELATION_METRICS),
    method: str = "pearson",
    ax: Axes | None = None,
) -> Axes:
    """Annotated heatmap of the correlations of the seed's six metrics (§Correlation Analysis).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with the ``metrics`` columns (a Run or Runs: its ``tasks``).
    metrics : sequence of str
        Default: final_score, analyst_score, autonomy_score, tool_efficiency,
        verification_score, data_understanding_score.
    method : {"pearson", "spearman", "kendall"}
        Correlation coefficient (the seed uses pandas' default, Pearson).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        The heatmap: lower and upper triangle on a diverging map centred at 0 (RdBu_r, -1 to
        1), each cell annotated, a constant metric "n/a"; its colour bar, as tall as the
        heatmap, is ``ax.images[0].colorbar``.

    Raises
    ------
    ValueError
        For a missing column or unknown method.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0.1, 0.5, 0.9], "analyst_score": [0.2, 0.4, 0.9]})
    >>> ax = correlation_matrix(t, metrics=["final_score", "analyst_score"])
    >>> [x.get_text() for x in ax.texts], ax.images[0].colorbar.ax.get_ylabel()
    (['1.000', '0.971', '0.971', '1.000'], 'Pearson r')
    """
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
                ax.text(j, i, format_estimate(v), ha="center", va="center",
                        fontsize=6, color="white" if abs(np.nan_to_num(v)) > 0.6 else "black")
        _colorbar(ax, im, f"{method.capitalize()} r")
        ax.set_title(f"Correlations (n = {len(data)})")
        ax.spines[:].set_visible(False)
    return ax


def _colorbar(ax: Axes, mappable, label: str) -> Colorbar:
    """A colour bar beside ``ax``, exactly as tall as its drawn box (an inset Axes)."""
    cax = ax.inset_axes([1.04, 0.0, 0.05, 1.0])
    return ax.figure.colorbar(mappable, cax=cax, label=label)


def _jitter(values: np.ndarray, half_width: float, seed: int = 0) -> np.ndarray:
    """Uniform jitter of ±half_width, reflected at the ends of [min(0, v), max(1, v)]."""
    lo, hi = min(0.0, float(values.min())), max(1.0, float(values.max()))
    x = values + np.random.default_rng(seed).uniform(-half_width, half_width, values.size)
    x = np.where(x > hi, 2 * hi - x, x)
    return np.where(x < lo, 2 * lo - x, x)


@needs("autonomy_score", "tool_efficiency", "final_score")
@takes_run()
def autonomy_vs_efficiency(tasks: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Scatter of autonomy_score vs tool_efficiency coloured by final_score (seed §Generate
    Paper Figures).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``autonomy_score``, ``tool_efficiency`` and ``final_score``
        (all [0, 1]); rows missing any of them are left out. A Run or Runs gives its ``tasks``.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        One point per task, coloured by final_score on viridis cut at 0.85 (its light yellow
        end is hard to see on white; :data:`~dabench_analysis.figures._theme.SEQUENTIAL`), each
        with a thin dark edge; the colour bar (0–1) is ``ax.collections[0].colorbar``.
        autonomy_score takes few distinct values (1 − replans/3), so points are jittered
        horizontally by up to ±0.025 (seeded, said in the axis label), reflected at 0 and 1 so
        that no point leaves the scale. Both axes' limits hold every point with a margin.

    Raises
    ------
    ValueError
        For a missing column.

    Examples
    --------
    >>> t = pd.DataFrame({"autonomy_score": [1.0, 1.0, 2 / 3], "tool_efficiency": [1.0, 0.5, 0.0],
    ...                   "final_score": [1.0, 0.4, 0.0]})
    >>> ax = autonomy_vs_efficiency(t)
    >>> bool(ax.collections[0].get_offsets()[:, 0].max() <= 1.0), tuple(map(float, ax.get_xlim()))
    (True, (-0.05, 1.05))
    """
    ax = _axes(ax)
    d = tasks[["autonomy_score", "tool_efficiency", "final_score"]].astype("float64").dropna()
    if d.empty:
        return _note(ax, "no tasks with all three scores")
    x = _jitter(d["autonomy_score"].to_numpy(), 0.025)
    y = d["tool_efficiency"].to_numpy()
    with mpl.rc_context(RC_PARAMS):
        sc = ax.scatter(x, y, c=d["final_score"], cmap=SEQUENTIAL, vmin=0, vmax=1, s=14,
                        alpha=0.9, edgecolors="0.25", linewidths=0.3)
        _colorbar(ax, sc, "Final score")
        ax.set_xlabel("Autonomy score (jittered ±0.025 within the scale)")
        ax.set_ylabel("Tool efficiency")
        ax.set_xlim(min(0.0, float(x.min())) - 0.05, max(1.0, float(x.max())) + 0.05)
        ax.set_ylim(min(0.0, float(y.min())) - 0.05, max(1.0, float(y.max())) + 0.05)
        ax.set_title(f"Autonomy vs tool efficiency (n = {len(d)})")
    return ax
