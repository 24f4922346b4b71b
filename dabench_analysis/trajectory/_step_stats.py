"""Latency quantiles of many groups at once with distribution-free intervals, for the step
tables (:mod:`dabench_analysis.trajectory.profile`; the solve curve's counting is there, one
rule for steps and seconds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


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
