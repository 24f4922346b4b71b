"""Distributions of one run: final scores (stacked by a category) and failure categories.

Histogram bins follow the package's one binning rule
(:func:`dabench_analysis.stats.binning.bin_index`): [lo, hi), the last bin closed, with values on an edge
in the bin that starts there. A [0, 1] score is binned over [0, 1] with the success threshold
drawn; any other column (seconds, tokens, counts) over its data range, with its median drawn and
labelled in its unit.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from dabench_analysis import schema
from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, count_axis, empty_note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema._labels import value_label
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate
from dabench_analysis.stats._inputs import check_threshold
from dabench_analysis.stats.binning import bin_index, equal_edges
from dabench_analysis.tables._common import correct_mask, takes_run


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
    :func:`dabench_analysis.stats.binning.bin_index`, not by a float comparison with the edges.

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


#: Height (inches) of a one-column figure at aspect 0.8, the least failure_distribution gets.
ONE_COLUMN_HEIGHT = 2.8


def _on_score_scale(x: str) -> bool:
    """True for a catalogue column on the [0, 1] scale (final_score, answer_f1, ...)."""
    col = schema.TASK_COLUMNS.get(schema.ALIASES.get(x, x))
    return col is not None and col.unit == "[0, 1]"


def _unit(x: str) -> str:
    col = schema.TASK_COLUMNS.get(schema.ALIASES.get(x, x))
    return {"s": " s", "tokens": " tokens"}.get(col.unit, "") if col is not None else ""


def _nice_binwidth(values: np.ndarray, n_bins: int = 20) -> float:
    """A 1, 2, 2.5 or 5 × 10^k width giving about ``n_bins`` bins over the values' range."""
    span = float(values.max() - values.min())
    if span == 0:
        return 10.0 ** np.floor(np.log10(abs(values[0]))) / 10 if values[0] != 0 else 1.0
    raw = span / n_bins
    mag = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-12)))


def _reference(x: str, threshold, scale) -> float | None:
    """The reference line: the success threshold on [0, 1] scores, any finite value otherwise."""
    if threshold == "auto":
        return schema.SUCCESS_THRESHOLD if scale is not None and _on_score_scale(x) else None
    if threshold is None:
        return None
    if _on_score_scale(x) or (scale is not None and tuple(scale) == (0.0, 1.0)):
        return check_threshold(threshold, scale=x)
    if isinstance(threshold, bool) or not np.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number in the units of {x!r}, "
                         f"got {threshold!r}")
    return float(threshold)


@needs(uses=("difficulty",))  # x and hue: checked by takes_run
@takes_run(named=("x", "hue"))
def score_distribution(
    tasks: pd.DataFrame,
    *,
    x: str = "final_score",
    hue: str | None = None,
    binwidth: float | None = None,
    threshold: float | str | None = "auto",
    scale: tuple[float, float] | str | None = "auto",
    ax: Axes | None = None,
) -> Axes:
    """Histogram of one metric over tasks (seed 000 §Generate Paper Figures).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with column ``x`` (and ``hue`` if given). A Run or Runs gives its
        ``tasks``.
    x : str
        A column: a [0, 1] score (final_score, answer_f1, ...) or any numeric metric in its
        own unit (execution_time in seconds, total_tokens, ...).
    hue : str, optional
        Column to split bars by (stacked), e.g. ``difficulty`` (catalogue order).
    binwidth : float, optional
        Bin width in the units of ``x``. Default: 0.05 on a [0, 1] scale; otherwise a round
        width (1, 2, 2.5 or 5 × 10^k) giving about 20 bins over the data's range.
    threshold : float, None or "auto"
        Reference line. "auto": the success threshold 0.8 for a [0, 1] score (pass the
        analysis' threshold to draw another), none for other columns. A number: on a [0, 1] score a threshold in (0, 1]; on another column
        a value in its unit. None: no line.
    scale : (low, high), None or "auto"
        Range the bins cover (see :func:`score_bins`). "auto": (0, 1) for a catalogue [0, 1]
        score, the data's range (None) otherwise.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        The histogram; title "<label> distribution (n = N)". On a column that is not a [0, 1]
        score the median is drawn as a dotted line labelled with its value and unit.

    Raises
    ------
    ValueError
        If ``x`` or ``hue`` is not a column, or ``threshold`` is outside (0, 1] on a [0, 1]
        score (or not finite on another column).

    Notes
    -----
    Each value is put in its bin by :func:`dabench_analysis.stats.binning.bin_index` ([lo, hi), the
    last bin closed) and drawn at the bin's midpoint, so a score of exactly 0.15 is counted in
    [0.15, 0.20) whatever the float image of the edge. With a fixed ``scale``, values outside
    it are not drawn; the title says how many. Bins over the data range start at a multiple of
    the bin width at or below the smallest value (pitfall P08: constant or narrow data draws
    one bar, no exception).

    Examples
    --------
    >>> ax = score_distribution(pd.DataFrame({"final_score": [0.5, 0.5, 0.5, 0.5]}))
    >>> [float(p.get_height()) for p in ax.patches if p.get_height() > 0]
    [4.0]
    >>> ax = score_distribution(pd.DataFrame({"execution_time": [12.0, 30.0, 95.0]}),
    ...                         x="execution_time")
    >>> ax.get_xlabel(), ax.texts[0].get_text()
    ('Execution time (s)', ' median 30.0 s')
    """
    if isinstance(scale, str):
        if scale != "auto":
            raise ValueError(f"scale must be (low, high), None or 'auto', got {scale!r}")
        scale = (0.0, 1.0) if _on_score_scale(x) else None
    line = _reference(x, threshold, scale)
    ax = _axes(ax)
    data = tasks[[x] + ([hue] if hue else [])].copy()
    data[x] = data[x].astype("float64")
    data = data.dropna(subset=[x])
    if data.empty:
        return empty_note(ax, f"no {x} values")
    values = data[x].to_numpy()
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return empty_note(ax, f"no finite {x} values")
    if binwidth is None:
        binwidth = (scale[1] - scale[0]) / 20 if scale is not None else _nice_binwidth(finite)
    edges = score_bins(binwidth, scale=scale, values=values)
    idx = bin_index(values, edges)
    n_out = int((idx < 0).sum())
    data = data[idx >= 0].assign(**{x: ((edges[:-1] + edges[1:]) / 2)[idx[idx >= 0]]})
    with mpl.rc_context(RC_PARAMS):
        sns.histplot(data=data, x=x, bins=edges, ax=ax, edgecolor="white",
                     linewidth=0.5, color=OKABE_ITO[0], **_hue_kwargs(data, hue))
        legend = ax.get_legend()
        if hue and legend is not None:  # the catalogue's words, as the tables print them
            legend.set_title(schema.label(hue))
            for text in legend.get_texts():
                text.set_text(value_label(hue, text.get_text()))
        if line is not None:
            ax.axvline(line, color="0.3", linestyle="--", linewidth=0.8)
        if scale is not None:
            ax.set_xlim(*scale)
        else:
            median = float(np.median(finite))
            ax.axvline(median, color="0.2", linestyle=":", linewidth=0.9)
            ax.text(median, 1.0, f" median {format_estimate(median)}{_unit(x)}", va="top", fontsize=6.5,
                    color="0.2", transform=ax.get_xaxis_transform())
            ax.set_xlim(edges[0], edges[-1])
        ax.set_xlabel(schema.label(x))
        ax.set_ylabel("Tasks")
        count_axis(ax.yaxis)
        outside = f"; {n_out} outside [{edges[0]:g}, {edges[-1]:g}] not drawn" if n_out else ""
        ax.set_title(f"{schema.label(x)} distribution (n = {len(data)}{outside})")
    return ax


def _hue_kwargs(data: pd.DataFrame, hue: str | None) -> dict:
    if not hue:
        return {}
    levels = schema.ENUMS.get(hue) or sorted(data[hue].dropna().astype(str).unique())
    present = [o for o in levels if (data[hue].astype("string") == o).any()]
    return {"hue": hue, "multiple": "stack", "hue_order": present,
            "palette": list(OKABE_ITO[:len(present)]) if len(present) <= len(OKABE_ITO)
            else "viridis"}


def _category_name(value: str, by: str) -> str:
    """The catalogue's label of a category (as the tables print it), else the value shortened."""
    label = value_label(by, value)
    return label if label != value else shorten(value)


@needs("final_score", "failure_category", by_argument={"by": "{}"})
@takes_run(named=("by",), grouping=None)
def failure_distribution(
    tasks: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    by: str = "failure_category",
    ax: Axes | None = None,
) -> Axes:
    """Bar chart of failure categories among failed tasks (seed 000 Figure 2).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``final_score`` and ``by``. A Run or Runs gives its ``tasks``.
    threshold : float
        Failed means ``final_score < threshold`` (seed: 0.8); in (0, 1].
    by : str
        ``failure_category`` (default), ``failure_stage`` or ``outcome_error_type``. Catalogue
        enums show every level in the catalogue's fixed order, those that never occur at zero,
        so that two runs' figures line up bar for bar; other columns are sorted by count, with
        long values shortened (middle "…", at most 40 characters on two lines).
    ax : Axes, optional
        Draw here; default a new one-column figure whose height grows with the number of
        categories. On a given Axes the labels shrink to fit (a warning below 4.5 pt).

    Returns
    -------
    Axes
        Horizontal bars, top down, labelled with count and share of failed tasks; a failed task
        without a category is counted as "(missing)", last. With no failed tasks, the Axes says
        so.

    Raises
    ------
    ValueError
        If a column is missing or ``threshold`` is outside (0, 1].

    Notes
    -----
    Failed tasks as :func:`dabench_analysis.tables._common.correct_mask`; shares are of failed tasks.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [1.0, 0.2, 0.0],
    ...                   "failure_category": [None, "REASONING_FAILURE", "REASONING_FAILURE"]})
    >>> ax = failure_distribution(t)
    >>> [float(p.get_width()) for p in ax.patches if p.get_width() > 0], len(ax.patches)
    ([2.0], 10)
    """
    failed = tasks[(~correct_mask(tasks, threshold=threshold)).fillna(False).to_numpy()]
    counts = failed[by].astype("string").fillna("(missing)").value_counts()
    order = list(schema.ENUMS.get(by, ()))
    order += [c for c in counts.index if c not in order and c != "(missing)"]
    order += ["(missing)"] if "(missing)" in counts.index else []
    counts = counts.reindex(order, fill_value=0)
    labels = [_category_name(c, by) for c in order]
    given = ax is not None
    ax = _axes(ax, height=max(ONE_COLUMN_HEIGHT, height_for(labels)))
    if failed.empty:
        return empty_note(ax, f"no failed tasks (final_score < {threshold})")
    with mpl.rc_context(RC_PARAMS):
        y = np.arange(len(counts))
        ax.barh(y, counts.to_numpy(), color=OKABE_ITO[3])
        ax.set_yticks(y, labels)
        ax.set_ylim(len(counts) - 0.5, -0.5)
        for yi, v in zip(y, counts.to_numpy(), strict=True):
            ax.text(v, yi, f" {v} ({format_estimate(v / len(failed))})", va="center",
                    fontsize=6.5)
        ax.set_xlim(0, counts.max() * 1.35)
        ax.set_xlabel(f"Failed tasks (final_score < {threshold}, n = {len(failed)})")
        count_axis(ax.xaxis)
        ax.set_title(schema.label(by))
        if given:
            fit_ticklabels(ax, labels)
    return ax

