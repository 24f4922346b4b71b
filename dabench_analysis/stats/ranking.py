"""Rank intervals of many runs: a bootstrap over tasks, the tasks resampled jointly across runs
(one draw of tasks ranks every run), vectorised over runs with numpy.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.stats._inputs import check_ci, warn

#: Digits (relative to the largest absolute score) at which two bootstrap means count as equal.
TIE_DIGITS = 10


def _check_scores(scores: pd.DataFrame) -> np.ndarray:
    if not isinstance(scores, pd.DataFrame):
        raise TypeError(f"scores must be a wide DataFrame (index task_id, columns run_id), "
                        f"got {type(scores).__name__}")
    if scores.shape[1] == 0 or scores.shape[0] == 0:
        raise ValueError(f"scores has {scores.shape[0]} tasks and {scores.shape[1]} runs; "
                         "need at least one of each")
    if scores.columns.has_duplicates:
        dup = scores.columns[scores.columns.duplicated()][0]
        raise ValueError(f"run {dup!r} appears twice among the columns of scores")
    try:
        x = scores.to_numpy(dtype="float64", na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError("scores must be numeric (one column per run)") from None
    bad = ~np.isfinite(x)
    if bad.any():
        runs = [str(r) for r in scores.columns[bad.any(axis=0)]]
        raise ValueError(f"scores has {int(bad.sum())} missing or infinite values (runs "
                         f"{', '.join(runs[:5])}{' ...' if len(runs) > 5 else ''}); pass the "
                         "tasks every run has, complete (tables.sweep.shared_tasks)")
    return x


def bootstrap_counts(n_tasks: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each task is drawn in each bootstrap replicate: shape (n_boot, n_tasks).

    Replicate b draws ``rng.integers(0, n_tasks, size=(n_boot, n_tasks))[b]`` with
    ``rng = np.random.default_rng(seed)``: n_tasks task indices with replacement.

    Examples
    --------
    >>> bootstrap_counts(3, 2, 0).sum(axis=1).tolist()
    [3, 3]
    """
    idx = np.random.default_rng(seed).integers(0, n_tasks, size=(n_boot, n_tasks))
    flat = idx + (np.arange(n_boot) * n_tasks)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_tasks).reshape(n_boot, n_tasks)


def _ranks(means: np.ndarray, scale: float, higher_is_better: bool) -> np.ndarray:
    """Rank 1 = best along the last axis, ties averaged; equal to TIE_DIGITS digits of scale."""
    key = np.round(means / scale, TIE_DIGITS)
    return st.rankdata(-key if higher_is_better else key, method="average", axis=-1)


def _order_stat(sorted_ranks: np.ndarray, p: float) -> np.ndarray:
    """The ceil(p·B)-th smallest value of each column (Hyndman & Fan type 1)."""
    b = sorted_ranks.shape[0]
    j = max(1, math.ceil(round(p * b, 9)))
    return sorted_ranks[min(j, b) - 1]


def rank_intervals(scores: pd.DataFrame, *, n_boot: int = 2000, ci: float = 0.95, seed: int = 0,
                   higher_is_better: bool = True) -> pd.DataFrame:
    """Rank of each run by its mean score, with a bootstrap interval of the rank.

    Parameters
    ----------
    scores : DataFrame
        Wide: index ``task_id``, one column per ``run_id``, one score per task and run (e.g.
        ``final_score`` in [0, 1]); only tasks every run has, no missing values.
    n_boot : int
        Bootstrap replicates (>= 1).
    ci : float
        Level of the rank interval, in (0, 1).
    seed : int
        Seed of :func:`numpy.random.default_rng`: the same call gives the same intervals.
    higher_is_better : bool
        Rank 1 goes to the highest mean (default) or to the lowest (seconds, tokens).

    Returns
    -------
    DataFrame
        One row per run, in the order of the columns: ``run_id``, ``estimate`` (mean score over
        the tasks), ``rank`` (of the observed means; 1 = best, ties averaged), ``rank_low``,
        ``rank_high`` (the bootstrap interval of the rank: best and worst plausible rank),
        ``n_tasks``, ``n_boot``, ``ci``, ``seed``, ``method``.

    Raises
    ------
    TypeError
        If ``scores`` is not a DataFrame.
    ValueError
        Missing or infinite scores, no tasks or runs, a run twice, ``n_boot < 1``, ``ci``
        outside (0, 1).

    Notes
    -----
    Replicate b draws n task indices with replacement,
    ``rng.integers(0, n, size=(n_boot, n))[b]`` with ``rng = default_rng(seed)``; the same tasks
    count for every run (a joint, paired resample: runs are compared on the same draw, as the
    observed ranking compares them on the same tasks). In replicate b each run's mean over the
    drawn tasks is ranked among the runs (rank 1 = best; tied means get the average of their
    ranks, ``scipy.stats.rankdata(method="average")``; means equal to 10 significant digits of the
    largest abs(score) count as tied, so the order of floating-point summation cannot break a
    tie). The interval is the percentile interval of the B bootstrap ranks: with α = 1 − ci,
    ``rank_low`` is the ⌈Bα/2⌉-th smallest and ``rank_high`` the ⌈B(1 − α/2)⌉-th smallest
    (Hyndman & Fan 1996, type 1, so both are ranks that occurred). The means are computed as
    C·X/n with C the (B × n) matrix of draw counts, so the cost is one matrix product, linear in
    the number of runs. A run whose interval overlaps another's is not separable from it at
    this level (:func:`rank_ties`). With one task every replicate is the observed ranking
    (a warning says so).

    References
    ----------
    Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 13
    (percentile intervals). Hall, P., Miller, H. (2009). Using the bootstrap to quantify the
    authority of an empirical ranking. Annals of Statistics 37(6B), 3929–3959. Hyndman, R. J.,
    Fan, Y. (1996). Sample quantiles in statistical packages. The American Statistician 50(4),
    361–365.

    Examples
    --------
    >>> s = pd.DataFrame({"a": [0.9, 0.8, 0.95, 0.7], "b": [0.2, 0.1, 0.3, 0.25],
    ...                   "c": [0.21, 0.12, 0.28, 0.26]}, index=["t1", "t2", "t3", "t4"])
    >>> rank_intervals(s, n_boot=500)[["run_id", "rank", "rank_low", "rank_high"]]
      run_id  rank  rank_low  rank_high
    0      a   1.0       1.0        1.0
    1      b   3.0       2.0        3.0
    2      c   2.0       2.0        3.0
    """
    x = _check_scores(scores)
    check_ci(ci)
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a whole number >= 1, got {n_boot!r}")
    n, k = x.shape
    if n < 2:
        warn([f"{n} task: the bootstrap cannot vary, every rank interval is the observed rank"])
    scale = float(np.max(np.abs(x))) or 1.0
    observed = x.mean(axis=0)
    boot = _ranks(bootstrap_counts(n, int(n_boot), seed) @ x / n, scale, higher_is_better)
    boot.sort(axis=0)
    alpha = 1 - ci
    method = (f"bootstrap over tasks (B = {int(n_boot)}, tasks resampled jointly across runs), "
              f"rank of the mean, ties averaged, percentile {ci:.0%} interval")
    return pd.DataFrame({
        "run_id": list(scores.columns), "estimate": observed,
        "rank": _ranks(observed, scale, higher_is_better),
        "rank_low": _order_stat(boot, alpha / 2), "rank_high": _order_stat(boot, 1 - alpha / 2),
        "n_tasks": n, "n_boot": int(n_boot), "ci": float(ci), "seed": seed, "method": method})


def rank_ties(rank_low, rank_high) -> np.ndarray:
    """Whether each run's rank interval overlaps the interval of at least one other run.

    Parameters
    ----------
    rank_low, rank_high : array-like of float
        Rank intervals (as :func:`rank_intervals` gives them), same length.

    Returns
    -------
    ndarray of bool
        True where [rank_low_i, rank_high_i] and [rank_low_j, rank_high_j] share a point for
        some j ≠ i (closed intervals).

    Raises
    ------
    ValueError
        Lengths that differ.

    Examples
    --------
    >>> rank_ties([1, 2, 3], [1, 3, 3]).tolist()
    [False, True, True]
    """
    lo, hi = np.asarray(rank_low, dtype=float), np.asarray(rank_high, dtype=float)
    if lo.shape != hi.shape:
        raise ValueError(f"rank_low and rank_high differ in length: {lo.size} vs {hi.size}")
    overlap = (lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None])
    np.fill_diagonal(overlap, False)
    return overlap.any(axis=1)
