"""Power and sample size (re-exported by ``stats``): paired and two-sample t tests through
statsmodels' solvers, each answer checked against the power it reaches (noncentral t), and
Miller (2024), arXiv:2411.00640, Eq. 9/10 for clustered evaluations.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats as st
from scipy.optimize import brentq
from statsmodels.stats.power import TTestIndPower, TTestPower

from dabench_analysis.stats._inputs import warn

_ALT = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def _power_cls(paired: bool):
    return TTestPower() if paired else TTestIndPower()


def _check_power_args(alpha: float, power: float, alternative: str) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1); got {alpha!r}, {power!r}")
    if alternative not in _ALT:
        raise ValueError(f"alternative must be one of {', '.join(_ALT)}; got {alternative!r}")


def min_detectable_effect(n: int, *, alpha: float = 0.05, power: float = 0.8,
                          paired: bool = True, alternative: str = "two-sided") -> pd.DataFrame:
    """Smallest standardized effect a t-test on ``n`` tasks detects with the given power.

    Parameters
    ----------
    n : int
        Number of paired tasks (``paired``) or tasks per run (two independent groups of n).
    alpha, power : float
        Type-I error rate and power.
    paired : bool
        Paired (one-sample t on differences; effect = d_z, statsmodels ``TTestPower``) or
        two-sample (effect = Cohen's d, ``TTestIndPower`` with equal group sizes).
    alternative : {"two-sided", "greater", "less"}

    Returns
    -------
    DataFrame
        One row: ``n``, ``alpha``, ``power``, ``paired``, ``effect_size``, ``effect`` ("d_z"
        paired, "d" otherwise), ``method``, ``note``. n < 2 gives NaN with a warning.

    Raises
    ------
    ValueError
        alpha or power outside (0, 1), unknown alternative.

    Notes
    -----
    Noncentral-t power, as R ``pwr::pwr.t.test``. statsmodels' solver is checked against the
    power its effect reaches (it can be far off: n = 10**6, one-sided, power 0.99 gave 0.0235
    instead of 0.00397); a failed check solves by bracketing, with a warning and a ``note``.
    For a raw-scale MDE from eval variances use :func:`miller_min_detectable_effect`.

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.).

    Examples
    --------
    >>> round(float(min_detectable_effect(30, paired=False, power=0.967708258242517)
    ...             .effect_size[0]), 4)  # R pwr.t.test(d=1, n=30) -> power 0.9677
    1.0
    """
    _check_power_args(alpha, power, alternative)
    eff, note = np.nan, ""
    if n < 2:
        note = f"n = {n}: minimum detectable effect undefined"
    else:
        kw = {"nobs": n} if paired else {"nobs1": n, "ratio": 1.0}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            eff = float(np.ravel(_power_cls(paired).solve_power(  # may be a 1-element array
                effect_size=None, alpha=alpha, power=power, alternative=_ALT[alternative],
                **kw))[0])
        eff, note = _checked_effect(eff, n, alpha, power, alternative, paired)
    warn([note])
    return pd.DataFrame([{"n": n, "alpha": alpha, "power": power, "paired": paired,
                          "effect_size": abs(eff), "effect": "d_z" if paired else "d",
                          "method": "paired t (TTestPower)" if paired else
                          "two-sample t (TTestIndPower)", "note": note}])


def _t_power(e: float, n: float, alpha: float, alternative: str, paired: bool) -> float:
    """Noncentral-t power at n (per group if not paired); two-sided counts both tails."""
    df, nc = (n - 1, e * math.sqrt(n)) if paired else (2 * n - 2, e * math.sqrt(n / 2))
    two = alternative == "two-sided"
    crit = st.t.isf(alpha / 2 if two else alpha, df)
    nc = abs(nc) if two else (-nc if alternative == "less" else nc)
    with np.errstate(all="ignore"):
        tails = [st.nct.sf(crit, df, nc)] + ([st.nct.cdf(-crit, df, nc)] if two else [])
    return float(sum(t for t in tails if np.isfinite(t)))  # NaN = underflow of a far tail


def _checked_n(e: float, n_exact: float, alpha: float, power: float, alternative: str,
               paired: bool) -> tuple[float, float, float, str]:
    """Check the solver against the power it reaches; else search n directly (bisection)."""
    def pw(v):  # power to within 1e-6 counts as reached (solver tolerance)
        return _t_power(e, v, alpha, alternative, paired) + 1e-6

    n = math.ceil(n_exact - 1e-9) if np.isfinite(n_exact) else np.nan
    if (np.isfinite(n_exact) and abs(pw(n_exact) - power) < 1e-4 and pw(n) >= power
            and (n <= 2 or pw(n - 1) < power)):
        return n_exact, n, pw(n) - 1e-6, ""
    lo, hi = 2, 2
    while pw(hi) < power:
        if hi > 1e12:
            return np.nan, np.nan, np.nan, "no n up to 1e12 reaches the power"
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
    if hi == 2:
        return np.nan, 2, pw(2) - 1e-6, (f"the smallest n (2) already has power "
                                         f"{pw(2) - 1e-6:.3g} >= {power:g}; the solver's n = "
                                         f"{n_exact:.4g} is not used")
    return (brentq(lambda v: pw(v) - 1e-6 - power, hi - 1, hi), hi, pw(hi) - 1e-6,
            f"solver returned n = {n_exact:.4g}, which does not reach power {power:g}; n "
            "found by a direct search")


def _checked_effect(eff: float, n: int, alpha: float, power: float, alternative: str,
                    paired: bool) -> tuple[float, str]:
    """Check the solver's effect against the power it reaches; else solve by bracketing."""
    alt = "greater" if alternative == "less" else alternative  # symmetric in the sign

    def gap(e):
        return _t_power(e, n, alpha, alt, paired) - power

    if np.isfinite(eff) and abs(gap(abs(eff))) < 1e-4:
        return abs(eff), ""
    hi = 1.0
    while gap(hi) < 0:
        hi *= 2
    return (brentq(gap, 0.0, hi, xtol=1e-12), f"solver returned {eff:.4g}, which does not "
            f"reach power {power:g}; effect found by bracketing")


def required_n(effect: float, *, alpha: float = 0.05, power: float = 0.8, paired: bool = True,
               alternative: str = "two-sided") -> pd.DataFrame:
    """Tasks needed to detect a standardized effect (d_z if paired, else d per group).

    Parameters
    ----------
    effect : float
        Standardized effect (sign ignored for two-sided tests).
    alpha, power : float
        Type-I error rate and power.
    paired : bool
        See :func:`min_detectable_effect`; when False, n is per run.
    alternative : {"two-sided", "greater", "less"}

    Returns
    -------
    DataFrame
        One row: ``effect_size``, ``effect`` ("d_z" paired, "d" otherwise), ``alpha``,
        ``power``, ``paired``, ``n_exact`` (the real n at
        which the power is reached; NaN when already n = 2 exceeds it), ``n`` (smallest whole
        n reaching the power), ``achieved_power`` (at ``n``), ``method``, ``note``. effect = 0
        gives NaN with a warning (never inf).

    Raises
    ------
    ValueError
        alpha or power outside (0, 1), unknown alternative, a one-sided alternative against
        the sign of ``effect``.

    Notes
    -----
    statsmodels' ``solve_power`` is checked, not trusted: its n must reach the power (and
    n − 1 must not); otherwise (e.g. d_z = 10, where it returns n = 2 with power 0.73) n is
    found by bisection on the noncentral-t power, with a warning and a ``note``. Two-sided power
    counts both tails, as R ``power.t.test(strict = TRUE)`` and ``pwr.t.test``.

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.), Table 2.4.1.

    Examples
    --------
    >>> int(required_n(0.5, paired=False).n[0])  # Cohen (1988): 64 per group
    64
    """
    _check_power_args(alpha, power, alternative)
    n_exact = n = achieved = np.nan
    note = ""
    if not np.isfinite(effect) or effect == 0:
        note = f"effect {effect!r}: no finite sample size detects it"
    else:
        e = abs(effect) if alternative == "two-sided" else effect
        kw = {"nobs": None} if paired else {"nobs1": None, "ratio": 1.0}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            n_exact = float(np.ravel(_power_cls(paired).solve_power(  # may be an array
                effect_size=e, alpha=alpha, power=power, alternative=_ALT[alternative],
                **kw))[0])
        n_exact, n, achieved, note = _checked_n(e, n_exact, alpha, power, alternative, paired)
    warn([note])
    return pd.DataFrame([{"effect_size": effect, "effect": "d_z" if paired else "d",
                          "alpha": alpha, "power": power,
                          "paired": paired, "n_exact": n_exact, "n": n,
                          "achieved_power": achieved,
                          "method": "paired t (TTestPower)" if paired else
                          "two-sample t (TTestIndPower)", "note": note}])


def _miller_var(omega2, sigma2_a, sigma2_b, k_a, k_b) -> float:
    if omega2 < 0 or sigma2_a < 0 or sigma2_b < 0 or k_a < 1 or k_b < 1:
        raise ValueError("variances must be >= 0 and resample counts k >= 1")
    return omega2 + sigma2_a / k_a + sigma2_b / k_b


def miller_required_n(delta: float, *, omega2: float, sigma2_a: float = 0.0,
                      sigma2_b: float = 0.0, k_a: int = 1, k_b: int = 1, alpha: float = 0.05,
                      power: float = 0.8) -> pd.DataFrame:
    """Questions needed to detect a raw score difference ``delta`` (Miller 2024, Eq. 9).

    Parameters
    ----------
    delta : float
        Difference in mean score to detect (same units as the scores).
    omega2 : float
        Var(x_A) + Var(x_B) − 2 Cov(x_A, x_B) of the per-question expected scores.
    sigma2_a, sigma2_b : float
        Mean within-question (conditional) score variance of each model.
    k_a, k_b : int
        Resamples (answers) per question for each model.
    alpha, power : float

    Returns
    -------
    DataFrame
        One row: ``delta``, ``alpha``, ``power``, ``n_exact``, ``n`` (rounded up), ``method``.

    Raises
    ------
    ValueError
        Negative variances, k < 1, alpha or power outside (0, 1).

    Notes
    -----
    n = (z_{α/2} + z_β)² (ω² + σ_A²/K_A + σ_B²/K_B)/δ² with normal quantiles, so it is a
    little smaller than the noncentral-t answer of :func:`required_n`.

    References
    ----------
    Miller, E. (2024). arXiv:2411.00640, Section 5, Eq. 9.

    Examples
    --------
    >>> int(miller_required_n(0.03, omega2=1/9).n[0])  # paper: 969
    969
    """
    _check_power_args(alpha, power, "two-sided")
    v = _miller_var(omega2, sigma2_a, sigma2_b, k_a, k_b)
    z = st.norm.ppf(1 - alpha / 2) + st.norm.ppf(power)
    n_exact = z**2 * v / delta**2 if delta else np.nan
    if not delta:
        warn(["delta = 0: no finite sample size detects it"])
    return pd.DataFrame([{"delta": delta, "alpha": alpha, "power": power, "n_exact": n_exact,
                          "n": math.ceil(n_exact - 1e-9) if np.isfinite(n_exact) else np.nan,
                          "method": "Miller (2024) Eq. 9"}])


def miller_min_detectable_effect(n: int, *, omega2: float, sigma2_a: float = 0.0,
                                 sigma2_b: float = 0.0, k_a: int = 1, k_b: int = 1,
                                 alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """Minimum detectable raw score difference with n questions (Miller 2024, Eq. 10).

    Parameters
    ----------
    n : int
        Number of questions (tasks).
    omega2, sigma2_a, sigma2_b, k_a, k_b, alpha, power
        As in :func:`miller_required_n`.

    Returns
    -------
    DataFrame
        One row: ``n``, ``alpha``, ``power``, ``k_a``, ``k_b``, ``mde``, ``method``.

    Raises
    ------
    ValueError
        Negative variances, k < 1, n < 1, alpha or power outside (0, 1).

    Notes
    -----
    δ = (z_{α/2} + z_β) sqrt((ω² + σ_A²/K_A + σ_B²/K_B)/n). The paper's "13.2% → 7.5%" example
    (n = 198) is 0.13273 → 0.07567 exactly; the printed figures are truncated.

    References
    ----------
    Miller, E. (2024). arXiv:2411.00640, Section 5, Eq. 10.

    Examples
    --------
    >>> round(float(miller_min_detectable_effect(198, omega2=1/9, sigma2_a=1/6,
    ...                                          sigma2_b=1/6).mde[0]), 5)
    0.13273
    """
    _check_power_args(alpha, power, "two-sided")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    v = _miller_var(omega2, sigma2_a, sigma2_b, k_a, k_b)
    z = st.norm.ppf(1 - alpha / 2) + st.norm.ppf(power)
    return pd.DataFrame([{"n": n, "alpha": alpha, "power": power, "k_a": k_a, "k_b": k_b,
                          "mde": z * math.sqrt(v / n), "method": "Miller (2024) Eq. 10"}])
