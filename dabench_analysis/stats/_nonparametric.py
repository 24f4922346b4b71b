"""Rank tests: Wilcoxon signed-rank with R's defaults (V = T+, exact without ties or zeros and
n < 50, else normal approximation with tie and continuity correction), Mann–Whitney U, and the
Welch interval of a difference of means.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as st

from dabench_analysis.stats._results import Interval


def signed_rank(d: np.ndarray, *, zero_method: str = "wilcox", correction: bool = True,
                alternative: str = "two-sided", method: str = "auto",
                decimals: int | None = None) -> dict:
    """Wilcoxon signed-rank test of differences ``d`` (no NaN) with an R-like policy.

    ``method="auto"``: exact null distribution only when there are no zeros, no ties among |d|
    and fewer than 50 non-zero differences (R's rule), else the normal approximation with tie
    correction (and continuity correction when ``correction``). ``method="exact"`` falls back to the
    approximation with a note when ties or zeros make the exact distribution invalid. Statistic is
    T+ (R's V). p = 1.0 when no difference is non-zero.
    """
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise ValueError(f"zero_method must be 'wilcox', 'pratt' or 'zsplit', got {zero_method!r}")
    if method not in ("auto", "exact", "approx"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approx', got {method!r}")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    d = np.asarray(d, dtype=float)
    if decimals is not None:
        d = np.round(d, decimals)
    nz = d[d != 0]
    n_nonzero, n_zero = nz.size, d.size - nz.size
    out = {"n_nonzero": n_nonzero, "statistic": np.nan, "p_value": np.nan,
           "rank_biserial": np.nan, "wilcoxon_method": "", "note": ""}
    if d.size == 0:
        out.update(wilcoxon_method="not testable (0 pairs)", note="no complete pairs")
        return out
    r = st.rankdata(np.abs(nz))
    t_plus, t_minus = float(r[nz > 0].sum()), float(r[nz < 0].sum())
    out["rank_biserial"] = (t_plus - t_minus) / (t_plus + t_minus) if n_nonzero else np.nan
    if zero_method == "wilcox":
        out["statistic"] = t_plus
    else:
        ra = st.rankdata(np.abs(d))
        out["statistic"] = float(ra[d > 0].sum() + (ra[d == 0].sum() / 2 if
                                                      zero_method == "zsplit" else 0))
    if n_nonzero == 0:
        out.update(p_value=1.0, wilcoxon_method="not testable (0 non-zero differences)",
                   note=f"all {d.size} paired differences are zero: no evidence of a "
                        "difference, p set to 1.0")
        return out
    ties = np.unique(np.abs(nz)).size < n_nonzero
    exact_ok = n_zero == 0 and not ties
    use_exact = exact_ok and n_nonzero < 50 if method == "auto" else method == "exact" and exact_ok
    if method == "exact" and not exact_ok:
        out["note"] = "exact p not available with ties or zeros; normal approximation used"
    if use_exact:
        res = st.wilcoxon(nz, method="exact", alternative=alternative)
        out["wilcoxon_method"] = "exact"
    else:
        res = st.wilcoxon(d, zero_method=zero_method, correction=correction, method="approx",
                          alternative=alternative)
        out["wilcoxon_method"] = ("normal approximation, tie-corrected"
                                  + (", continuity-corrected" if correction else ""))
    out["p_value"] = float(min(1.0, res.pvalue))
    return out


def mann_whitney(x: np.ndarray, y: np.ndarray, *, alternative: str = "two-sided",
                 method: str = "auto", correction: bool = True) -> dict:
    """Mann–Whitney U of x vs y with R's policy (exact if both n < 50 and no ties).

    Statistic is U_x (R's W). All values equal -> p = 1.0 (scipy; R gives NaN). An empty side
    -> NaN (untestable).
    """
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"method must be 'auto', 'exact' or 'asymptotic', got {method!r}")
    nx, ny = x.size, y.size
    out = {"statistic": np.nan, "p_value": np.nan, "rank_biserial": np.nan, "cles": np.nan,
           "mwu_method": "", "note": ""}
    if nx == 0 or ny == 0:
        out.update(mwu_method="not testable (empty group)",
                   note=f"Mann-Whitney not testable: group sizes {nx} and {ny}")
        return out
    both = np.concatenate([x, y])
    u_x = float(st.rankdata(both)[:nx].sum() - nx * (nx + 1) / 2)
    out["statistic"] = u_x
    out["cles"] = u_x / (nx * ny)
    out["rank_biserial"] = 2 * u_x / (nx * ny) - 1
    if np.all(both == both[0]):
        out.update(p_value=1.0, mwu_method="not testable (all values equal)",
                   note="all values are equal: no evidence of a difference, p set to 1.0")
        return out
    ties = np.unique(both).size < both.size
    exact_ok = not ties
    use_exact = (exact_ok and nx < 50 and ny < 50) if method == "auto" else \
        (method == "exact" and exact_ok)
    if method == "exact" and not exact_ok:
        out["note"] = "exact p not available with ties; normal approximation used"
    kind = "exact" if use_exact else "asymptotic"
    res = st.mannwhitneyu(x, y, alternative=alternative, method=kind, use_continuity=correction)
    out["p_value"] = float(min(1.0, res.pvalue))
    out["mwu_method"] = "exact" if use_exact else (
        "normal approximation, tie-corrected" + (", continuity-corrected" if correction else ""))
    return out


def welch_interval(x: np.ndarray, y: np.ndarray, ci: float = 0.95) -> Interval:
    """Welch t-interval of mean(x) − mean(y).

    Parameters
    ----------
    x, y : ndarray of float
        The two samples (no NaN), in the metric's unit.
    ci : float
        Confidence level.

    Returns
    -------
    Interval
        ``low``, ``high``, ``method`` ("Welch t") and ``note``. Not estimable, so NaN with the
        reason in ``note``: a side with n < 2, or both standard deviations 0 (R ``t.test``
        stops: "data are essentially constant").

    Notes
    -----
    d ± t_{ν, (1+ci)/2} · sqrt(s_x²/n_x + s_y²/n_y) with the Welch–Satterthwaite ν (R
    ``t.test(x, y)$conf.int``, scipy ``ttest_ind(equal_var=False).confidence_interval``).

    References
    ----------
    Welch, B. L. (1947). The generalization of "Student's" problem when several different
    population variances are involved. Biometrika 34, 28–35.

    Examples
    --------
    >>> res = welch_interval(np.array([1.0, 2, 3, 4]), np.array([2.0, 4, 6, 8, 10]))
    >>> round(res.low, 4), round(res.high, 4)  # R: t.test(x, y)$conf.int
    (-7.3854, 0.3854)
    >>> welch_interval(np.array([1.0, 1]), np.array([0.0, 0]))
    Interval(low=nan, high=nan, method='Welch t', note='zero variance in both groups: not estimable')
    """
    nx, ny = x.size, y.size
    if nx < 2 or ny < 2:
        return Interval(np.nan, np.nan, "Welch t", f"n = {nx} and {ny}: needs 2 per group")
    vx, vy = x.var(ddof=1) / nx, y.var(ddof=1) / ny
    diff = float(x.mean() - y.mean())
    se = np.sqrt(vx + vy)
    if se == 0:
        return Interval(np.nan, np.nan, "Welch t", "zero variance in both groups: not estimable")
    df = (vx + vy) ** 2 / (vx**2 / (nx - 1) + vy**2 / (ny - 1))
    half = st.t.ppf(0.5 + ci / 2, df) * se
    return Interval(float(diff - half), float(diff + half), "Welch t")
