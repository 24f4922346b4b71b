"""Figures of a research-eval session: pass rate per profile, latency distributions.

Both draw one row per profile: a new figure grows with the number of profiles (one row is
``(lines · 1.25 · 7 pt + 3 pt)`` high), long profile names are shortened (middle "…", at most 40
characters on two lines), and on an Axes the caller gave the labels shrink to fit.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures._theme import OKABE_ITO, ONE_COLUMN, RC_PARAMS, _ci_label, axes_or_new
from dabench_analysis.schema import require_columns
from dabench_analysis.schema._labels import value_label

#: An ``error`` matching this (case-insensitive) marks a case that hit the harness's time limit.
TIMEOUT_PATTERN = r"time\s*-?\s*out|timed\s+out"


def _profile_axes(ax: Axes | None, labels: list[str]) -> Axes:
    height = max(ONE_COLUMN * min(0.75, 0.3 + 0.15 * len(labels)), height_for(labels))
    return axes_or_new(ax, "one", height=height)


def _timed_out(cases: pd.DataFrame) -> pd.Series:
    """Which cases ended on the harness's time limit (``error`` matches :data:`TIMEOUT_PATTERN`).

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``; without an ``error`` column no case is a timeout.

    Returns
    -------
    Series of bool
        Indexed like ``cases``.

    Examples
    --------
    >>> _timed_out(pd.DataFrame({"error": ["TimeoutError: run_turn exceeded 120 s", None,
    ...                                   "ValueError: bad"]})).tolist()
    [True, False, False]
    """
    if "error" not in cases:
        return pd.Series(False, index=cases.index)
    return cases["error"].astype("string").str.contains(TIMEOUT_PATTERN, case=False,
                                                        regex=True).fillna(False).astype(bool)


def plot_latency(cases: pd.DataFrame, *, by: str = "run_id", column: str = "elapsed_ms",
                 ax: Axes | None = None) -> Axes:
    """Box plot of per-case latency in seconds per profile, cases drawn as points; timeouts apart.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    by, column : str
        Profile column and a latency column in milliseconds.
    ax : Axes, optional
        Draw here; default a new one-column figure whose height grows with the profiles.

    Returns
    -------
    Axes
        One row per profile in order of appearance: box (quartiles, whiskers at 1.5 IQR) and
        points of the cases that finished. A case that timed out (its ``error`` matches :data:`TIMEOUT_PATTERN`) has no
        latency, only a lower bound: it is not drawn as a point or counted in the box but
        written at the right edge of its row ("▶ 2 timed out", vermillion).

    Raises
    ------
    ValueError
        If ``by`` or ``column`` is missing.

    Notes
    -----
    The box summarises completed cases only; with timeouts the profile's true latency
    distribution is right-censored at the limit, so its median is an underestimate.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a", "b"], "elapsed_ms": [1000.0, 120500.0, 500.0],
    ...                   "error": [None, "TimeoutError: run_turn exceeded 120 s", None]})
    >>> ax = plot_latency(c)
    >>> [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.texts]
    (['a', 'b'], ['1 timed out ▶'])
    >>> bool(ax.get_xlim()[1] < 120)
    True
    """
    require_columns(cases, [by, column], "cases")
    out = _timed_out(cases)
    groups = [(str(k), g.loc[~out.loc[g.index], column].dropna().to_numpy() / 1000,
               int(out.loc[g.index].sum()))
              for k, g in cases.groupby(by, sort=False, observed=True)]
    labels = [shorten(k) for k, _, _ in groups]
    given = ax is not None
    ax = _profile_axes(ax, labels)
    with mpl.rc_context(RC_PARAMS):
        ax.boxplot([v for _, v, _ in groups], orientation="horizontal", showfliers=False,
                   tick_labels=labels)
        for i, (_, v, k) in enumerate(groups, start=1):
            ax.plot(v, np.full(len(v), float(i)), "o", ms=3, alpha=0.5, color=OKABE_ITO[0])
            if k:  # inside the Axes, at its right edge (room is made below)
                ax.text(0.99, i, f"{k} timed out ▶", ha="right", va="center", fontsize=6,
                        color=OKABE_ITO[3], transform=ax.get_yaxis_transform())
        ax.set_ylim(len(groups) + 0.5, 0.5)
        if any(k for *_, k in groups):
            low, high = ax.get_xlim()
            ax.set_xlim(low, high + 0.3 * (high - low))  # the notes' room beside the data
        name = value_label("metric", column.removesuffix("_ms") + "_s").removesuffix(" (s)")
        ax.set_xlabel(f"{name} (s)"
                      + ("; timeouts at the right, not drawn" if any(k for *_, k in groups)
                         else ""))
        if given:
            fit_ticklabels(ax, labels)
    return ax


def plot_pass_rate(rates: pd.DataFrame, *, by: str = "run_id", ci: float = 0.95,
                   ax: Axes | None = None) -> Axes:
    """Horizontal bars of pass rate per profile with the Wilson interval.

    Parameters
    ----------
    rates : DataFrame
        Output of :func:`pass_rate`.
    by : str
        Label column.
    ci : float
        The level ``rates`` was computed at (``pass_rate(..., ci=ci)``), in (0, 1); it only
        names the interval on the axis ("Wilson 90% CI" for 0.9).
    ax : Axes, optional
        Draw here; default a new one-column figure whose height grows with the profiles.

    Returns
    -------
    Axes
        One bar per row of ``rates``, top down, x from 0 to 1.

    Raises
    ------
    ValueError
        If ``ci`` is outside (0, 1).

    Examples
    --------
    >>> r = pd.DataFrame({"run_id": ["a"], "pass_rate": [0.5], "ci_low": [0.3], "ci_high": [0.7]})
    >>> len(plot_pass_rate(r).patches)
    1
    """
    label = _ci_label(ci)
    labels = [shorten(v) for v in rates[by]]
    given = ax is not None
    ax = _profile_axes(ax, labels)
    y = np.arange(len(rates))
    err = np.vstack([rates["pass_rate"] - rates["ci_low"], rates["ci_high"] - rates["pass_rate"]])
    with mpl.rc_context(RC_PARAMS):
        ax.barh(y, rates["pass_rate"], xerr=err, capsize=3, color=OKABE_ITO[0])
        ax.set_yticks(y, labels)
        ax.set_ylim(len(rates) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"Pass rate (Wilson {label})")
        if given:
            fit_ticklabels(ax, labels)
    return ax
