"""Prediction-powered inference for a mean (PPI and PPI++): many cheap labels (an LLM judge's)
corrected by a few gold ones (humans') into a valid interval for the gold mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.stats._inputs import check_ci


def ppi_mean(y, yhat, yhat_unlabelled, *, lam: float | None = None,
             ci: float = 0.95) -> pd.DataFrame:
    """Prediction-powered estimate and interval of the mean of ``y``.

    Parameters
    ----------
    y : array-like of float, shape (n,)
        Gold labels (human verdicts as 0/1) on the labelled cases.
    yhat : array-like of float, shape (n,)
        Predictions (judge verdicts as 0/1) on the same cases.
    yhat_unlabelled : array-like of float, shape (N,)
        Predictions on the cases without a gold label.
    lam : float or None
        Power-tuning weight λ: 1 is PPI (Angelopoulos et al. 2023), 0 the classical mean of
        ``y``; None (default) estimates it from the data (PPI++).
    ci : float
        Level of the two-sided interval.

    Returns
    -------
    DataFrame
        One row: ``estimate``, ``ci_low``, ``ci_high``, ``se``, ``lam``, ``n_labelled``,
        ``n_unlabelled``, ``method``.

    Raises
    ------
    ValueError
        ``y`` and ``yhat`` of different lengths, fewer than 2 labelled or no unlabelled case,
        ``ci`` outside (0, 1).

    Notes
    -----
    θ̂_λ = λ·mean(ŷᵘ) + mean(y − λ·ŷ), se² = λ²·var(ŷᵘ)/N + var(y − λ·ŷ)/n (variances with
    divisor N and n), interval θ̂ ± z·se, z = Φ⁻¹((1 + ci)/2) (CLT; not clipped to [0, 1]).
    PPI++ (Angelopoulos, Duchi, Zrnic 2023, eq. for the mean): λ̂ = cov(y, ŷ) /
    ((1 + n/N)·var(ŷ ∪ ŷᵘ)), the covariance with divisor n, the variance of all predictions
    with divisor n + N − 1, clipped to [0, 1]; these are ``ppi_py``'s ``ppi_mean_ci``
    choices (``lam=None``), which the tests check. Predictions without spread: λ̂ = 0.

    References
    ----------
    Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I., Zrnic, T. (2023).
    Prediction-powered inference. Science 382(6671), 669–674. Angelopoulos, A. N., Duchi,
    J. C., Zrnic, T. (2023). PPI++: Efficient prediction-powered inference. arXiv:2311.01453.

    Examples
    --------
    >>> r = ppi_mean([1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 0, 1, 1, 0], lam=1)
    >>> round(float(r["estimate"].iloc[0]), 4), int(r["n_unlabelled"].iloc[0])
    (0.9167, 6)
    """
    check_ci(ci)
    y, yh, yu = (np.asarray(a, dtype="float64").ravel() for a in (y, yhat, yhat_unlabelled))
    n, N = len(y), len(yu)
    if len(yh) != n:
        raise ValueError(f"y has {n} labels, yhat {len(yh)}")
    if n < 2 or N < 1:
        raise ValueError(f"PPI needs >= 2 labelled and >= 1 unlabelled case; got {n} and {N}")
    tuned = lam is None
    if tuned:
        var_all = np.var(np.concatenate([yh, yu]), ddof=1)
        cov = np.mean((y - y.mean()) * (yh - yh.mean()))
        lam = float(np.clip(cov / ((1 + n / N) * var_all), 0, 1)) if var_all > 0 else 0.0
    est = lam * yu.mean() + np.mean(y - lam * yh)
    se = float(np.sqrt(lam ** 2 * np.var(yu) / N + np.var(y - lam * yh) / n))
    z = st.norm.ppf((1 + ci) / 2)
    how = "PPI++ (power-tuned lambda), CLT" if tuned else f"PPI (lambda = {lam:g}), CLT"
    return pd.DataFrame([{"estimate": float(est), "ci_low": est - z * se, "ci_high": est + z * se,
                          "se": se, "lam": float(lam), "n_labelled": n, "n_unlabelled": N,
                          "method": how}])
