"""Clustered standard errors and power / sample-size helpers (re-exported by ``stats``).

After Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language Model
Evaluations", arXiv:2411.00640, and statsmodels' power classes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats as st
from statsmodels.stats.power import TTestIndPower, TTestPower

from dabench_analysis.schema import require_columns
from dabench_analysis.stats.inputs import as_float, check_ci, warn

_SE_METHODS = ("clt", "bernoulli", "eq4", "cr0", "cr1")


_ALT = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def _se(values: np.ndarray, clusters: np.ndarray | None, method: str) -> float:
    n = values.size
    if n < 2:
        return np.nan
    e = values - values.mean()
    se_clt2 = float(np.sum(e**2) / (n - 1) / n)
    if method == "clt":
        return math.sqrt(se_clt2)
    if method == "bernoulli":
        m = float(values.mean())
        return math.sqrt(max(m * (1 - m), 0.0) / n)
    if clusters is None:
        clusters = np.arange(n)
    sums = pd.Series(e).groupby(clusters).sum().to_numpy()
    g = sums.size
    between = float(np.sum(sums**2))
    if method == "eq4":
        return math.sqrt(se_clt2 + (between - float(np.sum(e**2))) / n**2)
    if method == "cr0":
        return math.sqrt(between) / n
    return math.sqrt(between / n**2 * g / (g - 1)) if g > 1 else np.nan


def clustered_se(values, clusters=None, *, method: str = "cr1") -> float:
    """Standard error of a mean score when tasks are clustered (Miller 2024).

    Parameters
    ----------
    values : array-like of float
        Per-task scores (in [0, 1] for eval scores); NaN rows are dropped with a warning.
    clusters : array-like, optional
        Cluster label per task (e.g. ``task_type``); None = every task its own cluster.
    method : {"cr1", "cr0", "eq4", "clt", "bernoulli"}
        ``"cr1"`` (default): CR0 × G/(G−1), the finite-cluster correction used by statsmodels'
        cluster-robust SE and inspect_ai's ``stderr(cluster=...)``. ``"cr0"``: Miller App. A,
        Σ_c(Σ_i e_ic)²/n². ``"eq4"``: Miller Eq. 4, SE_CLT² + (1/n²)Σ_c Σ_i Σ_{j≠i} e_ic e_jc.
        ``"clt"``: Eq. 1, sqrt(s²/n) ignoring clusters. ``"bernoulli"``: Eq. 2, sqrt(p̄(1−p̄)/n).

    Returns
    -------
    float
        The standard error; NaN for n < 2 (and for ``cr1`` with a single cluster).

    Raises
    ------
    ValueError
        Unknown method or lengths that differ.

    Notes
    -----
    We default to CR1 because it is the most common software convention, is conservative with
    the few clusters evals have (G task types), and, like Eq. 4, reduces exactly to SE_CLT when
    every cluster holds one task. The paper's Eq. 4 and its Appendix-A derivation differ on the
    diagonal by n/(n−1) (refvectors README): on the worked example SE_CLT = 0.148647,
    Eq. 4 = 0.160202, CR0 = 0.154348, CR1 = 0.178226.

    References
    ----------
    Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, Eq. 1, 2, 4 and Appendix A.
    Cameron, A. C., Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372.

    Examples
    --------
    >>> s = [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0]
    >>> g = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    >>> round(clustered_se(s, g, method="eq4"), 6), round(clustered_se(s, g), 6)
    (0.160202, 0.178226)
    """
    if method not in _SE_METHODS:
        raise ValueError(f"method must be one of {', '.join(_SE_METHODS)}; got {method!r}")
    x = as_float(values, "values").to_numpy()
    c = None if clusters is None else pd.Series(clusters).to_numpy(dtype=object)
    if c is not None and c.size != x.size:
        raise ValueError(f"values and clusters differ in length: {x.size} vs {c.size}")
    keep = ~np.isnan(x) & (np.ones(x.size, bool) if c is None else ~pd.isna(c))
    if not keep.all():
        warn([f"{int((~keep).sum())} rows dropped: missing value or cluster"])
    return _se(x[keep], None if c is None else c[keep], method)


def clustered_mean_ci(tasks: pd.DataFrame, *, metric: str = "final_score",
                      cluster: str | None = "task_type", ci: float = 0.95,
                      method: str = "cr1") -> pd.DataFrame:
    """Mean score with a cluster-robust normal interval (Miller 2024, Eq. 3 with Eq. 4 / App. A).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with ``metric`` and ``cluster`` columns.
    metric : str
        Score column (or flag, as a rate).
    cluster : str or None
        Cluster column (default ``task_type``); None treats tasks as independent.
    ci : float
        Confidence level; the interval is mean ± z_{(1+ci)/2} · SE.
    method : {"cr1", "cr0", "eq4", "clt", "bernoulli"}
        See :func:`clustered_se`.

    Returns
    -------
    DataFrame
        One row: ``metric``, ``cluster``, ``n``, ``n_clusters``, ``mean``, ``se``, ``se_clt``
        (unclustered, Eq. 1), ``design_effect`` ((se/se_clt)²), ``ci_low``, ``ci_high``,
        ``method``.

    Raises
    ------
    ValueError
        Missing columns, unknown method, ``ci`` outside (0, 1).

    Notes
    -----
    The paper uses z = 1.96; we use the exact normal quantile (1.959964 for 95%), which moves
    the bounds by ~1e-6 on its worked example.

    References
    ----------
    Miller, E. (2024). arXiv:2411.00640.

    Examples
    --------
    >>> df = pd.DataFrame({"final_score": [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0],
    ...                    "task_type": list("aaabbbccccdd")})
    >>> round(float(clustered_mean_ci(df).se[0]), 6)
    0.178226
    """
    if method not in _SE_METHODS:
        raise ValueError(f"method must be one of {', '.join(_SE_METHODS)}; got {method!r}")
    require_columns(tasks, [metric] + ([] if cluster is None else [cluster]))
    check_ci(ci)
    x = as_float(tasks[metric], metric).to_numpy()
    c = None if cluster is None else tasks[cluster].to_numpy(dtype=object)
    keep = ~np.isnan(x) & (np.ones(x.size, bool) if c is None else ~pd.isna(c))
    if not keep.all():
        warn([f"{int((~keep).sum())} rows dropped: missing {metric} or {cluster}"])
    x = x[keep]
    c = None if c is None else c[keep]
    se, se_clt = _se(x, c, method), _se(x, None, "clt")
    mean = float(x.mean()) if x.size else np.nan
    z = st.norm.ppf(0.5 + ci / 2)
    deff = (se / se_clt) ** 2 if se_clt and np.isfinite(se) and se_clt > 0 else np.nan
    if x.size < 2:
        warn([f"n = {x.size}: standard error undefined"])
    return pd.DataFrame([{
        "metric": metric, "cluster": cluster, "n": int(x.size),
        "n_clusters": int(x.size if c is None else pd.unique(c).size), "mean": mean, "se": se,
        "se_clt": se_clt, "design_effect": deff, "ci_low": mean - z * se,
        "ci_high": mean + z * se, "method": method}])


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
        One row: ``n``, ``alpha``, ``power``, ``paired``, ``effect_size``, ``method``.
        n < 2 gives NaN with a warning.

    Raises
    ------
    ValueError
        alpha or power outside (0, 1), unknown alternative.

    Notes
    -----
    Noncentral-t power, as R ``pwr::pwr.t.test``. For a raw-scale MDE from eval variances use
    :func:`miller_min_detectable_effect`.

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
    eff = np.nan
    if n < 2:
        warn([f"n = {n}: minimum detectable effect undefined"])
    else:
        kw = {"nobs": n} if paired else {"nobs1": n, "ratio": 1.0}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            eff = float(_power_cls(paired).solve_power(effect_size=None, alpha=alpha, power=power,
                                                       alternative=_ALT[alternative], **kw))
    return pd.DataFrame([{"n": n, "alpha": alpha, "power": power, "paired": paired,
                          "effect_size": abs(eff),
                          "method": "paired t (TTestPower)" if paired else
                          "two-sample t (TTestIndPower)"}])


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
        One row: ``effect_size``, ``alpha``, ``power``, ``paired``, ``n_exact`` (solver value),
        ``n`` (rounded up), ``method``. effect = 0 gives NaN with a warning (never inf).

    Raises
    ------
    ValueError
        alpha or power outside (0, 1), unknown alternative.

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.), Table 2.4.1.

    Examples
    --------
    >>> int(required_n(0.5, paired=False).n[0])  # Cohen (1988): 64 per group
    64
    """
    _check_power_args(alpha, power, alternative)
    n_exact = np.nan
    if not np.isfinite(effect) or effect == 0:
        warn([f"effect {effect!r}: no finite sample size detects it"])
    else:
        e = abs(effect) if alternative == "two-sided" else effect
        kw = {"nobs": None} if paired else {"nobs1": None, "ratio": 1.0}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            n_exact = float(_power_cls(paired).solve_power(effect_size=e, alpha=alpha,
                                                           power=power,
                                                           alternative=_ALT[alternative], **kw))
    n = math.ceil(n_exact - 1e-9) if np.isfinite(n_exact) else np.nan
    return pd.DataFrame([{"effect_size": effect, "alpha": alpha, "power": power,
                          "paired": paired, "n_exact": n_exact, "n": n,
                          "method": "paired t (TTestPower)" if paired else
                          "two-sample t (TTestIndPower)"}])


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
