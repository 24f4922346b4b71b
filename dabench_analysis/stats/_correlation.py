"""Correlations between metrics (Spearman, Pearson, Kendall) with p-values, as a tidy frame."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.schema import require_columns
from dabench_analysis.stats._descriptive import _as_list
from dabench_analysis.stats._inputs import as_float, check_ci, check_frame, warn


def _kendall_method(x: np.ndarray, y: np.ndarray) -> str:
    """R ``cor.test(method = "kendall")``: exact for n < 50 without ties, else asymptotic."""
    no_ties = np.unique(x).size == x.size and np.unique(y).size == y.size
    return "exact" if no_ties and x.size < 50 else "asymptotic"


def correlation(tasks: pd.DataFrame, metrics: Sequence[str], *, method: str = "spearman",
                ci: float = 0.95) -> pd.DataFrame:
    """Pairwise correlations between metrics with p-values (long format).

    Parameters
    ----------
    tasks : DataFrame
        One row per task (``run.tasks``) with the ``metrics`` columns (pairwise-complete rows
        are used).
    metrics : list of str
        At least two columns.
    method : {"spearman", "pearson", "kendall"}
        Spearman's rho (default; robust to the bounded, tied scores of evals), Pearson's r or
        Kendall's tau-b.
    ci : float
        Level of the Fisher-z interval (Pearson only; NaN for rank methods).

    Returns
    -------
    DataFrame
        One row per unordered pair: ``x``, ``y``, ``n``, ``estimate``, ``p_value``, ``ci_low``,
        ``ci_high``, ``method``, ``note``. A constant column gives NaN with a note.

    Raises
    ------
    ValueError
        Fewer than two metrics, missing columns, unknown method.
    TypeError
        ``tasks`` is not a DataFrame (a Run: pass ``run.tasks``).

    Notes
    -----
    p-values: Pearson t-test (= R ``cor.test``). Kendall: R ``cor.test``'s rule, the exact
    null distribution when there are no ties and n < 50, else the normal approximation with tie
    correction and no continuity correction (scipy ``kendalltau(method="exact")`` /
    ``"asymptotic"``; scipy's own ``"auto"`` is exact only up to n = 33, so its p differs from
    R's for 34 <= n < 50). Spearman: always the t approximation (scipy), whereas R
    ``cor.test`` uses the exact null distribution (AS 89) for n < 1290 without ties; the two
    differ most for small n (refvectors README item 15).

    References
    ----------
    Hollander, M., Wolfe, D. A. (1973). Nonparametric Statistical Methods. Wiley, pp. 185–194.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2, 2, 3, 4, 4, 5], "b": [2, 1, 3, 3, 5, 4, 4]})
    >>> round(float(correlation(df, ["a", "b"]).estimate[0]), 4)  # R cor(a, b, "spearman")
    0.8333
    """
    if method not in ("spearman", "pearson", "kendall"):
        raise ValueError(f"method must be 'spearman', 'pearson' or 'kendall'; got {method!r}")
    metrics = _as_list(metrics)
    if len(metrics) < 2:
        raise ValueError("need at least two metrics")
    tasks = check_frame(tasks)
    require_columns(tasks, metrics)
    check_ci(ci)
    data = {m: as_float(tasks[m], m).to_numpy() for m in metrics}
    rows, notes = [], []
    for i, mx in enumerate(metrics):
        for my in metrics[i + 1:]:
            keep = ~(np.isnan(data[mx]) | np.isnan(data[my]))
            x, y = data[mx][keep], data[my][keep]
            row = {"x": mx, "y": my, "n": int(keep.sum()), "estimate": np.nan,
                   "p_value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "method": method,
                   "note": ""}
            if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
                row["note"] = "undefined: constant input or n < 3"
                notes.append(f"{mx} vs {my}: {row['note']}")
            elif method == "pearson":
                res = st.pearsonr(x, y)
                lo, hi = res.confidence_interval(confidence_level=ci)
                row.update(estimate=res.statistic, p_value=res.pvalue, ci_low=lo, ci_high=hi)
            elif method == "spearman":
                res = st.spearmanr(x, y)
                row.update(estimate=float(res.statistic), p_value=float(res.pvalue))
            else:
                res = st.kendalltau(x, y, method=_kendall_method(x, y))
                row.update(estimate=float(res.statistic), p_value=float(res.pvalue))
            rows.append(row)
    warn(notes)
    return pd.DataFrame(rows)
