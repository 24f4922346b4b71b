"""Figures of a research-eval session: pass rate per profile, latency distributions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis.figures.theme import OKABE_ITO, _ci_label, axes_or_new
from dabench_analysis.schema import require_columns


def plot_latency(cases: pd.DataFrame, *, by: str = "run_id", column: str = "elapsed_ms",
                 ax: Any = None) -> Any:
    """Box plot of per-case latency in seconds per profile, cases drawn as points.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    by, column : str
        Profile column and a latency column in milliseconds.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a", "b"], "elapsed_ms": [1000.0, 2000.0, 500.0]})
    >>> [t.get_text() for t in plot_latency(c).get_yticklabels()]
    ['a', 'b']
    """

    require_columns(cases, [by, column], "cases")
    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.3 + 0.15 * cases[by].nunique()))
    groups = [(str(k), g[column].dropna().to_numpy() / 1000)
              for k, g in cases.groupby(by, sort=False, observed=True)]
    ax.boxplot([v for _, v in groups], orientation="horizontal", showfliers=False,
               tick_labels=[k for k, _ in groups])
    for i, (_, v) in enumerate(groups, start=1):
        ax.plot(v, np.full(len(v), float(i)), "o", ms=3, alpha=0.5, color=OKABE_ITO[0])
    ax.invert_yaxis()
    ax.set_xlabel(f"{column.removesuffix('_ms')} per case (s)")
    return ax


def plot_pass_rate(rates: pd.DataFrame, *, by: str = "run_id", ci: float = 0.95,
                   ax: Any = None) -> Any:
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
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> r = pd.DataFrame({"run_id": ["a"], "pass_rate": [0.5], "ci_low": [0.3], "ci_high": [0.7]})
    >>> len(plot_pass_rate(r).patches)
    1
    """

    label = _ci_label(ci)
    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.3 + 0.15 * len(rates)))
    y = np.arange(len(rates))
    err = np.vstack([rates["pass_rate"] - rates["ci_low"], rates["ci_high"] - rates["pass_rate"]])
    ax.barh(y, rates["pass_rate"], xerr=err, capsize=3, color=OKABE_ITO[0])
    ax.set_yticks(y, rates[by].astype(str))
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"pass rate (Wilson {label})")
    return ax
