"""Distributions of one run: final scores (stacked by a category) and failure categories.

Histogram bins follow the package's one binning rule
(:func:`dabench_analysis.stats.bin_index`): [lo, hi), the last bin closed, with values on an edge
in the bin that starts there.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import schema
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, empty_note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.stats import bin_index, check_threshold
from dabench_analysis.stats.binning import equal_edges
from dabench_analysis.tables.common import correct_mask


def score_bins(
    binwidth: float = 0.05,
    *,
    scale: tuple[float, float] | None = (0.0, 1.0),
    values=None,
) -> np.ndarray:
    """Fixed histogram edges, so constant or narrow data still bins (pitfall P08).

    Parameters
    ----------
    binwidth : float
        Width of a bin, in the data's units.
    scale : (low, high) or None
        The scale the edges cover: (0, 1) for eval-v2 scores, (0, 9) for judge scores. With
        None the edges are whole multiples of ``binwidth`` around ``values``.
    values : array-like, optional
        Needed when ``scale`` is None.

    Returns
    -------
    ndarray
        Increasing edges, at least two.

    Raises
    ------
    ValueError
        If ``binwidth`` is not positive, the scale is empty, or ``scale`` is None without
        finite ``values``.

    Notes
    -----
    When ``binwidth`` divides ``scale`` (0.05 on [0, 1]) the edges are
    :func:`dabench_analysis.stats.binning.equal_edges`, each the double nearest its decimal
    (0.15, not 0.15000000000000002); otherwise ``low + k * binwidth`` rounded to 12 places,
    the last edge at or past ``high``. Values are placed in these bins by
    :func:`dabench_analysis.stats.bin_index`, not by a float comparison with the edges.

    Examples
    --------
    >>> score_bins(0.25).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> score_bins(7, scale=None, values=[1, 2, 3]).tolist()
    [0.0, 7.0]
    """
    if not binwidth > 0:
        raise ValueError(f"binwidth must be positive, got {binwidth}")
    if scale is None:
        v = np.asarray(values if values is not None else [], dtype=float)
        v = v[np.isfinite(v)]
        if v.size == 0:
            raise ValueError("score_bins needs finite values when scale is None")
        low = np.floor(v.min() / binwidth) * binwidth
        high = (np.floor(v.max() / binwidth) + 1) * binwidth
    else:
        low, high = scale
    if not high > low:
        raise ValueError(f"empty scale [{low}, {high}]")
    ratio = (high - low) / binwidth
    if scale is not None and round(ratio) >= 1 and abs(ratio - round(ratio)) <= 1e-9 * ratio:
        return equal_edges(int(round(ratio)), range=(low, high))
    n = int(np.ceil(ratio))
    return np.round(low + binwidth * np.arange(n + 1), 12)


def score_distribution(
    tasks: pd.DataFrame,
    *,
    x: str = "final_score",
    hue: str | None = None,
    binwidth: float = 0.05,
    threshold: float | None = schema.SUCCESS_THRESHOLD,
    scale: tuple[float, float] | None = (0.0, 1.0),
    ax: Axes | None = None,
) -> Figure:
    """Histogram of a [0, 1] score over tasks (seed 000 §Generate Paper Figures).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with column ``x`` (and ``hue`` if given).
    x : str
        A score column on the [0, 1] scale.
    hue : str, optional
        Column to split bars by (stacked), e.g. ``difficulty`` (catalogue order).
    binwidth : float
        Bin width; edges are fixed over [0, 1] so constant or narrow data still draws
        (pitfall P08: seaborn raises for ``binwidth`` on constant data).
    threshold : float or None
        Draw a dashed line at the answer-accuracy threshold, in (0, 1].
    scale : (low, high) or None
        Range the bins cover (see :func:`score_bins`); None for non-score columns.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure

    Raises
    ------
    ValueError
        If ``x`` or ``hue`` is not a column, or ``threshold`` is outside (0, 1].

    Notes
    -----
    Each value is put in its bin by :func:`dabench_analysis.stats.bin_index` ([lo, hi), the
    last bin closed) and drawn at the bin's midpoint, so a score of exactly 0.15 is counted in
    [0.15, 0.20) whatever the float image of the edge. Values outside the bins' range are not
    drawn; the title says how many.

    Examples
    --------
    >>> fig = score_distribution(pd.DataFrame({"final_score": [0.5, 0.5, 0.5, 0.5]}))
    >>> [float(p.get_height()) for p in fig.axes[0].patches if p.get_height() > 0]
    [4.0]
    """
    require_columns(tasks, [x] + ([hue] if hue else []))
    if threshold is not None:
        threshold = check_threshold(threshold, scale=x)
    ax = _axes(ax)
    data = tasks[[x] + ([hue] if hue else [])].copy()
    data[x] = data[x].astype("float64")
    data = data.dropna(subset=[x])
    if data.empty:
        return empty_note(ax, f"no {x} values").figure
    edges = score_bins(binwidth, scale=scale, values=data[x])
    idx = bin_index(data[x].to_numpy(), edges)
    n_out = int((idx < 0).sum())
    data = data[idx >= 0].assign(**{x: ((edges[:-1] + edges[1:]) / 2)[idx[idx >= 0]]})
    kwargs = {}
    if hue:
        levels = schema.ENUMS.get(hue) or sorted(data[hue].dropna().astype(str).unique())
        present = [o for o in levels if (data[hue].astype("string") == o).any()]
        kwargs = {"hue": hue, "multiple": "stack", "hue_order": present,
                  "palette": list(OKABE_ITO[:len(present)]) if len(present) <= len(OKABE_ITO)
                  else "viridis"}
    with mpl.rc_context(RC_PARAMS):
        sns.histplot(data=data, x=x, bins=edges, ax=ax, edgecolor="white",
                     linewidth=0.5, color=OKABE_ITO[0], **kwargs)
        if threshold is not None:
            ax.axvline(threshold, color="0.3", linestyle="--", linewidth=0.8)
        if scale is not None:
            ax.set_xlim(*scale)
        ax.set_xlabel(schema.label(x))
        ax.set_ylabel("Tasks")
        outside = f"; {n_out} outside [{edges[0]:g}, {edges[-1]:g}] not drawn" if n_out else ""
        ax.set_title(f"{schema.label(x)} distribution (n = {len(data)}{outside})")
    return ax.figure


def failure_distribution(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    by: str = "failure_category",
    ax: Axes | None = None,
) -> Figure:
    """Bar chart of failure categories among failed tasks (seed 000 Figure 2).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with ``final_score`` and ``by``.
    threshold : float
        Failed means ``final_score < threshold`` (seed: 0.8); in (0, 1].
    by : str
        ``failure_category`` (default), ``failure_stage`` or ``outcome_error_type``. Catalogue
        enums keep their fixed order (categories that never occur are left out); others are
        sorted by count.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure
        Bars labelled with count and share of failed tasks; a failed task without a category is
        counted as "(missing)". With no failed tasks, the figure says so.

    Raises
    ------
    ValueError
        If a column is missing or ``threshold`` is outside (0, 1].

    Notes
    -----
    Failed tasks as :func:`dabench_analysis.tables.correct_mask`; shares are of failed tasks.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [1.0, 0.2, 0.0],
    ...                   "failure_category": [None, "REASONING_FAILURE", "REASONING_FAILURE"]})
    >>> [float(p.get_width()) for p in failure_distribution(t).axes[0].patches]
    [2.0]
    """
    require_columns(tasks, ["final_score", by])
    threshold = check_threshold(threshold)
    ax = _axes(ax, aspect=0.8)
    failed = tasks[(~correct_mask(tasks, threshold=threshold)).fillna(False).to_numpy()]
    if failed.empty:
        return empty_note(ax, f"no failed tasks (final_score < {threshold})").figure
    counts = failed[by].astype("string").fillna("(missing)").value_counts()
    order = [c for c in schema.ENUMS.get(by, ()) if c in counts.index]
    order += [c for c in counts.index if c not in order]
    counts = counts.reindex(order)
    with mpl.rc_context(RC_PARAMS):
        y = np.arange(len(counts))
        ax.barh(y, counts.to_numpy(), color=OKABE_ITO[3])
        ax.set_yticks(y, [c.replace("_FAILURE", "").replace("_", " ").title() for c in order])
        ax.invert_yaxis()
        for yi, v in zip(y, counts.to_numpy(), strict=True):
            ax.text(v, yi, f" {v} ({v / len(failed):.0%})", va="center", fontsize=6.5)
        ax.set_xlim(0, counts.max() * 1.35)
        ax.set_xlabel(f"Failed tasks (final_score < {threshold}, n = {len(failed)})")
        ax.set_title(schema.label(by).replace(" ", " ", 1))
    return ax.figure
