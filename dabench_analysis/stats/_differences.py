"""Differences of two proportions: independent groups (Newcombe's hybrid score interval and
Fisher's exact test: the package's two-proportion rule) and paired ones (Newcombe's
square-and-add interval), for one comparison or many at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special
from statsmodels.stats.proportion import confint_proportions_2indep

from dabench_analysis.stats._inputs import check_ci
from dabench_analysis.stats._proportions import proportion_intervals

#: The method of :func:`compare_proportions`, as tables name it.
TWO_PROPORTIONS = "Newcombe hybrid score; Fisher exact"
#: scipy's relative tolerance: tables as likely as the observed one within it count as as
#: extreme (``scipy.stats.fisher_exact``, R ``fisher.test``'s ``relErr``).
_GAMMA = 1 + 1e-7


def fisher_exact(a, b, c, d) -> np.ndarray:
    """Two-sided Fisher's exact test of many 2×2 tables [[a, b], [c, d]] at once.

    Parameters
    ----------
    a, b, c, d : array-like of int
        The tables' cells (same length), non-negative.

    Returns
    -------
    ndarray of float
        One p-value per table; NaN for an empty table.

    Raises
    ------
    ValueError
        Cells of different lengths.

    Notes
    -----
    With the margins fixed, a has the hypergeometric distribution (population a+b+c+d, a+b
    successes, a+c draws; ``scipy.stats.hypergeom``, its pmf written with log-gamma); the
    p-value is the probability of the tables no more likely than the observed one (within
    the relative tolerance 1e-7), as ``scipy.stats.fisher_exact(..., alternative=
    "two-sided")`` and R ``fisher.test`` compute it (checked against scipy on every table of
    up to 14 observations in the tests); each distinct table once, all in one array call.

    References
    ----------
    Fisher, R. A. (1935). The logic of inductive inference. JRSS 98, 39–82.

    Examples
    --------
    >>> fisher_exact([3, 1], [1, 3], [1, 3], [3, 1]).round(4).tolist()  # R: 0.4857
    [0.4857, 0.4857]
    """
    a, b, c, d = (np.atleast_1d(np.asarray(x, dtype=np.int64)) for x in (a, b, c, d))
    if len({a.shape, b.shape, c.shape, d.shape}) > 1:
        raise ValueError("the cells a, b, c, d differ in length")
    tables, inverse = np.unique(np.stack([a, b, c, d], axis=1), axis=0, return_inverse=True)
    a, b, c, d = tables.T
    n, rows, cols = a + b + c + d, a + b, a + c
    out = np.full(len(a), np.nan)
    ok = n > 0
    if ok.any():
        n, rows, cols, a = n[ok], rows[ok], cols[ok], a[ok]
        low = np.maximum(0, rows + cols - n)
        high = np.minimum(rows, cols)
        x = low[:, None] + np.arange(int((high - low).max()) + 1)[None, :]
        inside = x <= high[:, None]
        logp = _log_hypergeom(np.where(inside, x, low[:, None]), n[:, None], rows[:, None],
                              cols[:, None])
        observed = _log_hypergeom(a, n, rows, cols)
        extreme = inside & (logp <= observed[:, None] + np.log(_GAMMA))
        out[ok] = np.minimum(1.0, np.where(extreme, np.exp(logp), 0.0).sum(axis=1))
    return out[np.ravel(inverse)]


def _log_hypergeom(x, n, rows, cols):
    """log P(a = x) for the table's margins: C(rows, x) C(n − rows, cols − x) / C(n, cols), the
    pmf of ``scipy.stats.hypergeom(n, rows, cols)``, from a table of log-factorials (each
    distinct table once, without the distribution object's per-call checks)."""
    log_factorial = special.gammaln(np.arange(int(np.max(n)) + 2, dtype=float) + 1)

    def log_choose(m, k):
        return log_factorial[m] - log_factorial[k] - log_factorial[m - k]
    return log_choose(rows, x) + log_choose(n - rows, cols - x) - log_choose(n, cols)


def compare_proportions(k1, n1, k2, n2, *, ci: float = 0.95) -> pd.DataFrame:
    """Many pairs of independent proportions compared at once (k1 of n1 against k2 of n2).

    Parameters
    ----------
    k1, n1, k2, n2 : array-like of int
        Successes and trials of group 1 and group 2, one entry per comparison.
    ci : float
        Confidence level.

    Returns
    -------
    DataFrame
        One row per comparison: ``p1``, ``p2``, ``diff`` (p1 − p2), ``ci_low``, ``ci_high``
        (Newcombe's hybrid score interval of the difference), ``p_value`` (Fisher's exact
        test, two-sided). An empty group gives NaN difference, interval and p.

    Raises
    ------
    ValueError
        Inputs of different lengths, or a ``ci`` outside (0, 1).

    Notes
    -----
    Newcombe (1998) method 10 via statsmodels ``confint_proportions_2indep(method="newcomb")``
    (vectorised); Fisher's exact test by :func:`fisher_exact`.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between independent
    proportions: comparison of eleven methods. Statistics in Medicine 17, 873–890.

    Examples
    --------
    >>> r = compare_proportions([3], [4], [1], [4]).iloc[0]
    >>> float(r["diff"]), round(float(r["p_value"]), 4)  # R fisher.test: p = 0.4857
    (0.5, 0.4857)
    """
    check_ci(ci)
    k1, n1, k2, n2 = (np.atleast_1d(np.asarray(x, dtype=np.int64)) for x in (k1, n1, k2, n2))
    if len({k1.shape, n1.shape, k2.shape, n2.shape}) > 1:
        raise ValueError("k1, n1, k2 and n2 differ in length")
    both = (n1 > 0) & (n2 > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = np.where(n1 > 0, k1 / np.maximum(n1, 1), np.nan), np.where(
            n2 > 0, k2 / np.maximum(n2, 1), np.nan)
    lo, hi = np.full(k1.shape, np.nan), np.full(k1.shape, np.nan)
    if both.any():
        lo[both], hi[both] = confint_proportions_2indep(
            k1[both], n1[both], k2[both], n2[both], method="newcomb", compare="diff",
            alpha=1 - ci)
    p = np.where(both, fisher_exact(k1, n1 - k1, k2, n2 - k2), np.nan)
    return pd.DataFrame({"p1": p1, "p2": p2, "diff": p1 - p2, "ci_low": lo, "ci_high": hi,
                         "p_value": p})


def two_proportions(k1: int, n1: int, k2: int, n2: int, *, ci: float = 0.95) -> dict:
    """One comparison of two independent proportions (:func:`compare_proportions`).

    Parameters
    ----------
    k1, n1, k2, n2 : int
        Successes and trials of group 1 and group 2.
    ci : float
        Confidence level.

    Returns
    -------
    dict
        ``p1``, ``p2``, ``diff``, ``ci_low``, ``ci_high``, ``p_value``, ``method``.

    Raises
    ------
    ValueError
        A ``ci`` outside (0, 1).

    Notes
    -----
    One row of :func:`compare_proportions`.

    References
    ----------
    Newcombe, R. G. (1998). Statistics in Medicine 17, 873–890.

    Examples
    --------
    >>> r = two_proportions(3, 4, 1, 4)  # R fisher.test(matrix(c(3, 1, 1, 3), 2)): p = 0.4857
    >>> r["diff"], round(r["p_value"], 4)
    (0.5, 0.4857)
    """
    row = compare_proportions([k1], [n1], [k2], [n2], ci=ci).iloc[0]
    return {k: float(v) for k, v in row.items()} | {"method": TWO_PROPORTIONS}


def newcombe_paired(a: int, b: int, c: int, d: int, *, ci: float = 0.95) -> tuple[float, float,
                                                                                     float]:
    """The difference of two paired proportions and Newcombe's square-and-add interval.

    Parameters
    ----------
    a, b, c, d : int
        The paired 2×2 table: both yes, first yes / second no, first no / second yes, both no.
    ci : float
        Confidence level.

    Returns
    -------
    tuple of float
        ``(diff, low, high)`` with diff = (a + b)/N − (a + c)/N (first − second); NaN for N = 0.

    Raises
    ------
    ValueError
        A ``ci`` outside (0, 1).

    Notes
    -----
    Newcombe (1998b) method 10: Wilson intervals [l1, u1], [l2, u2] of the two marginal
    proportions p1, p2, combined with the correlation estimate φ = C/√((a+b)(c+d)(a+c)(b+d)),
    C = ad − bc − N/2 if ad − bc > N/2, 0 if 0 <= ad − bc <= N/2, ad − bc if negative (φ = 0
    when a margin is 0): L = D − √((p1 − l1)² − 2φ(p1 − l1)(u2 − p2) + (u2 − p2)²), U = D +
    √((p2 − l2)² − 2φ(p2 − l2)(u1 − p1) + (u1 − p1)²). Recommended by Fagerland, Lydersen and
    Laake (2014) for paired proportions.

    References
    ----------
    Newcombe, R. G. (1998b). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Statistics in Medicine 17, 2635–2650. Fagerland, M. W.,
    Lydersen, S., Laake, P. (2014). Recommended tests and confidence intervals for paired
    binomial proportions. Statistics in Medicine 33, 2850–2875.

    Examples
    --------
    >>> [round(v, 4) for v in newcombe_paired(59, 6, 16, 80)]  # Fagerland et al.: Cavo 2012
    [-0.0621, -0.1186, -0.0046]
    """
    check_ci(ci)
    n = a + b + c + d
    if n == 0:
        return np.nan, np.nan, np.nan
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, l2), (u1, u2) = proportion_intervals([a + b, a + c], [n, n], ci)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    excess = cross - n / 2 if cross > n / 2 else 0.0 if cross >= 0 else cross
    phi = excess / np.sqrt(margins) if margins else 0.0
    low = p1 - p2 - np.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)
                                + (u2 - p2) ** 2))
    high = p1 - p2 + np.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)
                                 + (u1 - p1) ** 2))
    return float(p1 - p2), float(low), float(high)
