"""Multiple comparisons: Holm, Bonferroni and Benjamini–Hochberg adjustment (statsmodels), and
all main metrics of two runs compared at once with adjusted p-values.
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from dabench_analysis import schema
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._comparison import paired_comparison
from dabench_analysis.stats._descriptive import _as_list
from dabench_analysis.stats._inputs import StatisticsWarning, check_frame, warn
from dabench_analysis.stats._results import AdjustedPValues

#: The names of the adjustments, as ``method`` columns and notes print them.
ADJUSTMENT_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "fdr_bh": "Benjamini-Hochberg",
                    "fdr_by": "Benjamini-Yekutieli", "simes-hochberg": "Hochberg",
                    "hommel": "Hommel"}
_ADJUST = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "fdr_bh": "fdr_bh",
           "by": "fdr_by", "fdr_by": "fdr_by", "hochberg": "simes-hochberg", "hommel": "hommel"}


def adjust_pvalues(p, *, method: str = "holm") -> AdjustedPValues:
    """Adjust p-values for multiple comparisons, leaving NaN in place (as R ``p.adjust``).

    Parameters
    ----------
    p : array-like of float
        Raw p-values in [0, 1]; NaN marks an untestable comparison.
    method : {"holm", "bh", "by", "bonferroni", "hochberg", "hommel"}
        ``"bh"`` = Benjamini–Hochberg (``"fdr_bh"`` also accepted), ``"by"`` = Benjamini–Yekutieli.

    Returns
    -------
    AdjustedPValues
        ``p_adjusted`` (ndarray: same length and order as ``p``, NaN where the input is NaN),
        ``m`` (the number of tests counted) and ``method`` (its name: "Holm",
        "Benjamini-Hochberg", ...).

    Raises
    ------
    ValueError
        Unknown method or p-values outside [0, 1].

    Notes
    -----
    NaN p-values are not counted in the number of tests m (R's default ``n = sum(!is.na(p))``,
    pitfall P04). statsmodels ``multipletests`` would return all-NaN for such input.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist.
    6, 65–70. Benjamini, Y., Hochberg, Y. (1995). Controlling the false discovery rate. JRSS-B 57,
    289–300.

    Examples
    --------
    >>> res = adjust_pvalues([0.01, float("nan"), 0.04, 0.20], method="bh")
    >>> res.p_adjusted.round(4).tolist(), res.m, res.method  # R: p.adjust(p, "BH")
    ([0.03, nan, 0.06, 0.2], 3, 'Benjamini-Hochberg')
    """
    if method not in _ADJUST:
        raise ValueError(f"method must be one of {', '.join(_ADJUST)}; got {method!r}")
    p = np.asarray(p, dtype=float).ravel()
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    if ok.any():
        with _no_full_collection():
            out[ok] = multipletests(p[ok], method=_ADJUST[method])[1]
    return AdjustedPValues(out, int(ok.sum()), ADJUSTMENT_NAMES[_ADJUST[method]])


@needs("task_id", "final_score",
       uses=("analyst_score", "answer_f1", "autonomy_score", "tool_efficiency"), inputs=2)
def compare_runs(baseline: pd.DataFrame, proposed: pd.DataFrame, *,
                 metrics: Sequence[str] | None = None, correction: str = "holm",
                 on: str = "task_id", ci: float = 0.95) -> pd.DataFrame:
    """:func:`paired_comparison` for several metrics with a multiple-comparison correction.

    Parameters
    ----------
    baseline, proposed : DataFrame
        The task frames of two runs (``run.tasks``) with ``on`` and the metric columns.
    metrics : list of str, optional
        Default: the seed's Table 1 metrics (``schema.columns.MAIN_METRICS``) present in both frames
        (absent ones are skipped with a warning). Explicit metrics must exist.
    correction : {"holm", "bh", "by", "bonferroni", "hochberg", "hommel"}
        See :func:`adjust_pvalues`.
    on : str
        Task key.
    ci : float
        Level of the mean-difference intervals.

    Returns
    -------
    DataFrame
        One row per metric with every :func:`paired_comparison` column plus ``p_adjusted`` and
        ``correction``. Untestable comparisons (no complete pairs, p = NaN) keep NaN and are not
        counted in m.

    Raises
    ------
    ValueError
        Missing columns, an unknown correction, or a frame holding several runs.
    TypeError
        If a side is not a DataFrame (a Run: pass ``run.tasks``).

    Examples
    --------
    >>> b = pd.DataFrame({"task_id": list("abcdef"), "final_score": [.1, .2, .3, .4, .5, .6],
    ...                   "answer_f1": [.5, .6, .7, .5, .6, .7]})
    >>> p = b.assign(final_score=[.4, .4, .7, .5, .85, .85], answer_f1=[.6, .5, .7, .4, .7, .6])
    >>> out = compare_runs(b, p, metrics=["final_score", "answer_f1"], correction="holm")
    >>> [round(float(v), 4) for v in out.p_adjusted]
    [0.0625, 0.7656]
    """
    baseline = check_frame(baseline, "baseline")
    proposed = check_frame(proposed, "proposed")
    if correction not in _ADJUST:
        raise ValueError(f"correction must be one of {', '.join(_ADJUST)}; got {correction!r}")
    if metrics is None:
        metrics = [m for m in schema.columns.MAIN_METRICS
                   if m in baseline.columns and m in proposed.columns]
        skipped = [m for m in schema.columns.MAIN_METRICS if m not in metrics]
        if skipped:
            warn([f"metrics not in both runs, skipped: {', '.join(skipped)}"])
        if not metrics:
            raise ValueError("none of the default metrics "
                             f"({', '.join(schema.columns.MAIN_METRICS)}) is in both runs")
    rows, notes = [], []
    for m in _as_list(metrics):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StatisticsWarning)
            rows.append(paired_comparison(baseline, proposed, metric=m, on=on, ci=ci))
        notes += [f"{m}: {w.message}" for w in caught if issubclass(w.category, StatisticsWarning)]
    out = pd.concat(rows, ignore_index=True)
    out["p_adjusted"] = adjust_pvalues(out["p_value"].to_numpy(), method=correction).p_adjusted
    out["correction"] = correction
    warn(notes)
    return out


@contextlib.contextmanager
def _no_full_collection() -> Iterator[None]:
    """statsmodels' Holm branch (0.14, 0.15) imports ``gc`` and ends with ``gc.collect()``: a
    full collection, ~0.5 s with a large frame of Python strings alive, paid on every call (a
    trajectory table adjusts one small family per run and difficulty). Its numbers do not
    depend on it: while it runs, ``import gc`` finds a stand-in whose ``collect`` does nothing
    (``sys.modules`` only; the interpreter's collector and every other reference are as they
    were)."""
    stand_in = types.ModuleType("gc")
    stand_in.collect = lambda *args: 0
    saved = sys.modules.get("gc")
    sys.modules["gc"] = stand_in
    try:
        yield
    finally:
        if saved is not None:
            sys.modules["gc"] = saved
