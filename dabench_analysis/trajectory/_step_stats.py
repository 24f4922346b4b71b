"""Two summaries of step data for the step tables (:mod:`dabench_analysis.trajectory.profile`):
latency quantiles of many groups at once with distribution-free intervals, and the empirical
share of tasks solved within k steps or t seconds with Wilson intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.stats._proportions import proportion_intervals


def grouped_quantiles(values, groups, *, quantiles: tuple[float, ...] = (0.5, 0.9, 0.99),
                      ci: float = 0.95) -> pd.DataFrame:
    """n and quantiles of each group of a sample, with a distribution-free interval of each.

    Parameters
    ----------
    values : array-like of float
        The sample (seconds, tokens); NaN left out.
    groups : array-like of int
        Group codes 0 … k−1, one per value.
    quantiles : tuple of float
        Probabilities in (0, 1).
    ci : float
        Confidence level of the intervals.

    Returns
    -------
    DataFrame
        One row per group code 0 … max(groups): ``n``, and for each probability p (named
        ``p50``, ``p90``, ``p99``): ``p<k>``, ``p<k>_ci_low``, ``p<k>_ci_high``. An interval
        bound is NaN where n is too small for the level (e.g. the upper bound of p99 below a
        few hundred values); every column is NaN for a group without values.

    Raises
    ------
    ValueError
        ``values`` and ``groups`` differ in length.

    Notes
    -----
    Quantiles by linear interpolation (numpy's default, R ``quantile(type = 7)``). Intervals:
    the order statistics x_(l), x_(u) with l = F⁻¹(α/2) and u = F⁻¹(1 − α/2) + 1 of the
    Binomial(n, p) distribution F, α = 1 − ci (Conover 1999, §3.2), valid for any continuous
    distribution; the same bounds as ``scipy.stats.quantile_test(...).confidence_interval``,
    computed for every group at once.

    References
    ----------
    Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed. Wiley, §3.2.

    Examples
    --------
    >>> r = grouped_quantiles(np.arange(1.0, 21.0), np.zeros(20, int), quantiles=(0.5,))
    >>> r.loc[0].tolist()  # scipy quantile_test(x, p=0.5).confidence_interval(): (6, 15)
    [20.0, 10.5, 6.0, 15.0]
    """
    from scipy.stats import binom

    v = np.asarray(values, dtype="float64")
    g = np.asarray(groups, dtype=np.int64)
    if v.shape != g.shape:
        raise ValueError(f"values and groups differ in length: {v.size} vs {g.size}")
    k = int(g.max(initial=-1)) + 1
    keep = ~np.isnan(v)
    v, g = v[keep], g[keep]
    n = np.bincount(g, minlength=k)
    start = np.cumsum(n) - n
    # by group (a stable radix sort of 16-bit codes), then each group's slice in place: the
    # values of v[np.lexsort((v, g))], several times faster than sorting on two keys
    v = v[np.argsort(g.astype(np.uint16 if k <= 2**16 else np.int64), kind="stable")]
    for at, size in zip(start[n > 1].tolist(), n[n > 1].tolist(), strict=True):
        v[at:at + size].sort()
    has = n > 0
    out = {"n": n}
    alpha = (1 - ci) / 2
    for p in quantiles:
        name = f"p{p * 100:g}"
        h = (np.maximum(n, 1) - 1) * p
        lo_i = np.floor(h).astype(np.int64)
        hi_i = np.minimum(lo_i + 1, np.maximum(n - 1, 0))
        take = lambda i: v[np.where(has, start + i, 0)] if v.size else np.zeros(k)  # noqa: E731
        est = take(lo_i) + (h - lo_i) * (take(hi_i) - take(lo_i))
        low_i = binom.ppf(alpha, n, p).astype(np.int64) - 1
        high_i = binom.isf(alpha, n, p).astype(np.int64)
        out[name] = np.where(has, est, np.nan)
        out[f"{name}_ci_low"] = np.where(has & (low_i >= 0), take(np.clip(low_i, 0, None)),
                                         np.nan)
        out[f"{name}_ci_high"] = np.where(has & (high_i < n), take(np.minimum(
            high_i, np.maximum(n - 1, 0))), np.nan)
    return pd.DataFrame(out)


def cumulative_share(ends, solved, grid, *, ci: float = 0.95) -> pd.DataFrame:
    """The share of all tasks that ended solved at or before each point of ``grid``.

    Parameters
    ----------
    ends : array-like of float
        Where each task ended (its number of steps, or its seconds); NaN: left out.
    solved : array-like of bool
        Whether each task ended correct.
    grid : array-like of float
        Points at which to count.
    ci : float
        Level of the pointwise Wilson intervals.

    Returns
    -------
    DataFrame
        One row per grid point: ``at``, ``n`` (tasks), ``n_solved`` (solved with end <= at),
        ``share``, ``ci_low``, ``ci_high``.

    Notes
    -----
    Every task ends within the run, so this is an empirical cumulative share (unsolved tasks
    count in n and never as solved), not a survival estimate; there is no censoring. Wilson
    score intervals, pointwise (not a simultaneous band).

    Raises
    ------
    ValueError
        ``ends`` and ``solved`` differ in length.

    References
    ----------
    Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial
    proportion. Statistical Science 16(2), 101–133 (the Wilson interval).

    Examples
    --------
    >>> cumulative_share([2, 3, 5, 4], [True, False, True, True], [2, 4])[["at", "share"]]
       at  share
    0   2   0.25
    1   4   0.50
    """
    e = np.asarray(ends, dtype="float64")
    ok = np.asarray(solved, dtype=bool)
    if e.shape != ok.shape:
        raise ValueError(f"ends and solved differ in length: {e.size} vs {ok.size}")
    keep = ~np.isnan(e)
    e, ok = e[keep], ok[keep]
    g = np.asarray(grid)
    done = np.sort(e[ok])
    k = np.searchsorted(done, g, side="right")
    n = np.full(len(g), e.size)
    lo, hi = proportion_intervals(k, n, ci)
    return pd.DataFrame({"at": g, "n": n, "n_solved": k,
                         "share": k / e.size if e.size else np.full(len(g), np.nan),
                         "ci_low": lo, "ci_high": hi})
