"""Descriptive summaries with t-intervals, and bootstrap intervals (scipy.stats.bootstrap)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.stats.inputs import as_float, check_ci, warn


def t_summary(x: np.ndarray, ci: float = 0.95) -> dict:
    """n, mean, std (ddof=1), sem and the t-interval of the mean, guarded for n < 2."""
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    out = {"n": n, "mean": np.nan, "std": np.nan, "sem": np.nan, "ci_low": np.nan,
           "ci_high": np.nan}
    if n == 0:
        return out
    out["mean"] = float(x.mean())
    if n < 2:
        return out
    sd = float(x.std(ddof=1))
    sem = sd / np.sqrt(n)
    half = st.t.ppf(0.5 + ci / 2, n - 1) * sem
    out.update(std=sd, sem=sem, ci_low=out["mean"] - half, ci_high=out["mean"] + half)
    return out


def _as_list(x) -> list:
    return [x] if isinstance(x, str) else list(x)


def _enum_order(frame: pd.DataFrame, col: str) -> pd.Series:
    """Give catalogue enums (difficulty, ...) their fixed order when they arrive as strings."""
    s = frame[col]
    if not isinstance(s.dtype, pd.CategoricalDtype) and col in schema.ENUMS:
        levels = schema.ENUMS[col]
        if set(s.dropna().unique()) <= set(levels):
            return s.astype(pd.CategoricalDtype(levels, ordered=col in schema.ORDERED_ENUMS))
    return s


def describe(tasks: pd.DataFrame, metrics: str | Sequence[str], *,
             by: str | Sequence[str] | None = None, ci: float = 0.95) -> pd.DataFrame:
    """Mean, spread and t-interval per metric (and group).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with the ``metrics`` columns (scores in [0, 1], seconds, tokens or flags;
        flags are summarised as rates) and the ``by`` columns.
    metrics : str or list of str
        Columns to summarise.
    by : str or list of str, optional
        Grouping columns. Categorical columns keep their category order and empty levels
        (``observed=False``, pitfall P07); catalogue enums given as strings (``difficulty``) get
        their fixed order (Easy < Medium < Hard < Extreme).
    ci : float
        Confidence level of the interval.

    Returns
    -------
    DataFrame
        One row per (group, metric): the ``by`` columns, ``metric``, ``n`` (non-missing values),
        ``n_missing``, ``mean``, ``std`` (ddof = 1), ``sem``, ``ci_low``, ``ci_high``.
        Empty groups have n = 0 and NaN statistics; n = 1 gives NaN std/sem/interval.

    Raises
    ------
    ValueError
        If a column is missing or not numeric, or ``ci`` is not in (0, 1).

    Notes
    -----
    Interval: mean ± t_{n-1, (1+ci)/2} · s/√n (as R ``t.test(x)$conf.int``). It is not clipped:
    for scores bounded in [0, 1] and piled up at 1 it can pass the bound, a sign that
    :func:`bootstrap_ci` (or :func:`proportion_ci` for pass rates) suits the data better. Rows
    whose group key is missing are dropped with a warning.

    Examples
    --------
    >>> df = pd.DataFrame({"difficulty": ["Hard", "Easy", "Medium", "Easy", "Hard"],
    ...                    "final_score": [0.0, 1.0, 1.0, 1.0, 1.0]})
    >>> out = describe(df, "final_score", by="difficulty")
    >>> out[["difficulty", "n", "mean"]].to_string(index=False)
    'difficulty  n  mean\\n      Easy  2   1.0\\n    Medium  1   1.0\\n      Hard  2   0.5\\n   Extreme  0   NaN'
    """
    metrics, by_cols = _as_list(metrics), ([] if by is None else _as_list(by))
    require_columns(tasks, metrics + by_cols)
    check_ci(ci)
    data = pd.DataFrame({m: as_float(tasks[m], m) for m in metrics}, index=tasks.index)
    rows = []
    if not by_cols:
        for m in metrics:
            rows.append({"metric": m, "n_missing": int(data[m].isna().sum()),
                         **t_summary(data[m].to_numpy(), ci)})
        return _order(pd.DataFrame(rows), [])
    keys = pd.DataFrame({c: _enum_order(tasks, c) for c in by_cols}, index=tasks.index)
    missing_key = keys.isna().any(axis=1)
    if missing_key.any():
        warn([f"{int(missing_key.sum())} rows dropped: missing value in {', '.join(by_cols)}"])
    grouped = pd.concat([keys, data], axis=1)[~missing_key].groupby(by_cols, observed=False,
                                                                  sort=True)
    sizes = grouped.size()
    for key in sizes.index:
        key_t = key if isinstance(key, tuple) else (key,)
        vals = grouped.get_group(key_t) if sizes[key] else None
        for m in metrics:
            v = np.array([]) if vals is None else vals[m].to_numpy()
            rows.append({**dict(zip(by_cols, key_t, strict=True)), "metric": m,
                         "n_missing": int(np.isnan(v).sum()), **t_summary(v, ci)})
    out = pd.DataFrame(rows)
    for c in by_cols:
        out[c] = out[c].astype(keys[c].dtype) if isinstance(keys[c].dtype, pd.CategoricalDtype) \
            else out[c]
    return _order(out, by_cols)


def _order(out: pd.DataFrame, by_cols: list[str]) -> pd.DataFrame:
    cols = by_cols + ["metric", "n", "n_missing", "mean", "std", "sem", "ci_low", "ci_high"]
    return out[cols].astype({"n": "int64", "n_missing": "int64"})


def bootstrap_ci(values, *, statistic: Callable = np.mean, n_resamples: int = 10_000,
                 method: str = "bca", seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Bootstrap confidence interval of a statistic (BCa by default).

    Parameters
    ----------
    values : array-like of float
        One sample (NaN dropped with a warning).
    statistic : callable
        Vectorised statistic accepting ``axis`` (``np.mean``, ``np.median``, ...).
    n_resamples : int
        Bootstrap resamples.
    method : {"bca", "percentile", "basic"}
        Interval type passed to :func:`scipy.stats.bootstrap`.
    seed : int
        Seed of the generator: the same call gives the same interval.
    ci : float
        Confidence level.

    Returns
    -------
    DataFrame
        One row: ``n``, ``estimate`` (statistic of the sample), ``se`` (bootstrap standard
        error), ``ci_low``, ``ci_high``, ``method``, ``n_resamples``, ``note``.

    Raises
    ------
    ValueError
        Unknown method or ``n_resamples < 1``.

    Notes
    -----
    Degenerate input is defined, with a :class:`StatisticsWarning`: n = 0 gives NaN everywhere;
    all values equal (including n = 1) gives a zero-width interval at the estimate and se = 0
    (every resample has the same statistic; scipy would return NaN). If BCa cannot be computed
    for other reasons (e.g. a statistic with a degenerate jackknife) the percentile interval is
    returned and ``method`` says so.

    References
    ----------
    Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 14.

    Examples
    --------
    >>> out = bootstrap_ci([0.2, 0.4, 0.5, 0.9, 1.0], n_resamples=2000)
    >>> bool(out.loc[0, "ci_low"] < 0.6 < out.loc[0, "ci_high"])
    True
    """
    methods = {"bca": "BCa", "percentile": "percentile", "basic": "basic"}
    if method not in methods:
        raise ValueError(f"method must be 'bca', 'percentile' or 'basic'; got {method!r}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    check_ci(ci)
    x = as_float(values, "values").to_numpy()
    notes = []
    if np.isnan(x).any():
        notes.append(f"{int(np.isnan(x).sum())} missing values dropped")
        x = x[~np.isnan(x)]
    row = {"n": x.size, "estimate": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
           "method": method, "n_resamples": int(n_resamples), "note": ""}
    if x.size == 0:
        notes.append("no values: bootstrap undefined")
    elif np.all(x == x[0]):
        est = float(statistic(x))
        row.update(estimate=est, se=0.0, ci_low=est, ci_high=est)
        notes.append(f"degenerate sample (n = {x.size}, all values equal): zero-width interval")
    else:
        row["estimate"] = float(statistic(x))
        res = _scipy_bootstrap(x, statistic, n_resamples, methods[method], seed, ci)
        if method == "bca" and not np.isfinite(res.confidence_interval.low):
            res = _scipy_bootstrap(x, statistic, n_resamples, "percentile", seed, ci)
            row["method"] = "percentile (BCa undefined)"
            notes.append("BCa interval undefined for this sample; percentile interval used")
        row.update(se=float(res.standard_error), ci_low=float(res.confidence_interval.low),
                   ci_high=float(res.confidence_interval.high))
    row["note"] = "; ".join(notes)
    warn(notes)
    return pd.DataFrame([row])


def _scipy_bootstrap(x, statistic, n_resamples, method, seed, ci):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return st.bootstrap((x,), statistic, n_resamples=int(n_resamples), method=method,
                            confidence_level=ci, rng=np.random.default_rng(seed))
