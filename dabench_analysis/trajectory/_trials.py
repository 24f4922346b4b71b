"""P-values of the trajectory tables on repeated trials (another harness's: each trial its own
trace): the trials of one task are not independent, so a variant's accuracy is compared with
the other traces' by a Wald test with task-clustered standard errors rather than Fisher's exact
test over traces.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: How :func:`variant_p_values` names its test in a table's ``method``.
CLUSTERED_WALD = "task-clustered Wald t (CR1, G−1 df)"


def clustered_wald(y: np.ndarray, x: np.ndarray, clusters: np.ndarray) -> float:
    """Two-sided p-value of the difference in mean ``y`` between rows with ``x`` true and the
    others, with standard errors clustered by ``clusters``.

    Parameters
    ----------
    y : ndarray of float, shape (n,)
        The outcome of each trace (1.0 correct, 0.0 not).
    x : ndarray of bool, shape (n,)
        Whether the trace takes the variant.
    clusters : ndarray of int, shape (n,)
        Each trace's task.

    Returns
    -------
    float
        The p-value of the slope of the OLS fit ``y ~ 1 + x`` (the difference of the two
        means), CR1 cluster-robust covariance, t with G − 1 degrees of freedom (G tasks);
        1.0 where ``y`` is constant (no difference to find); NaN where fewer than two tasks
        have a trace with ``x`` true, or fewer than two a trace with ``x`` false (a variant
        seen in one task only: its clustered standard error is near zero), and NaN where
        ``y`` is constant on one side only (a variant whose traces all failed, or all
        succeeded: the Wald standard error takes that side's variation as zero, and on the
        tau-bench run gave p < 0.001 for 0 of 4 traces against 42 %, where Fisher's test over
        traces gives 0.3). In both cases the test would reject whatever the data; none is
        given.

    Notes
    -----
    statsmodels' ``OLS(...).fit(cov_type="cluster", use_t=True)``: V = c (X'X)⁻¹ (Σ_g X_g'e_g
    e_g'X_g) (X'X)⁻¹ with c = G/(G−1) · (n−1)/(n−k), the t reference with G − 1 df. With
    few clusters on one side the cluster-robust t over-rejects (Cameron & Miller 2015, §VI);
    the two-task minimum is this package's rule.

    References
    ----------
    Cameron, A. C., Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372, §II.C and §VI.

    Examples
    --------
    >>> y = np.array([1., 1., 0., 1., 0., 0., 1., 0.])
    >>> x = np.array([1, 1, 0, 1, 0, 0, 0, 1], dtype=bool)
    >>> round(clustered_wald(y, x, np.array([0, 0, 1, 1, 2, 2, 3, 3])), 4)
    0.4228
    """
    y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=bool)
    clusters = np.asarray(clusters)
    if min(len(np.unique(clusters[x])), len(np.unique(clusters[~x]))) < 2:
        return np.nan
    if np.ptp(y) == 0:
        return 1.0
    if np.ptp(y[x]) == 0 or np.ptp(y[~x]) == 0:
        return np.nan
    import statsmodels.api as sm  # heavy: only on repeated trials

    X = np.column_stack([np.ones(len(y)), x.astype(float)])
    fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True)
    p = float(fit.pvalues[1])
    return p if np.isfinite(p) else np.nan


def variant_p_values(s: pd.DataFrame, g: pd.DataFrame, clusters: np.ndarray) -> np.ndarray:
    """For each row of ``g`` (a variant of a group ``run_id``, ``difficulty``), the
    :func:`clustered_wald` p-value of its accuracy against the group's other scored traces.

    Parameters
    ----------
    s : DataFrame
        One row per trace and group: ``run_id``, ``difficulty``, ``pattern``, ``task_index``,
        ``ok`` (correct), ``scored``.
    g : DataFrame
        The variants: ``run_id``, ``difficulty``, ``pattern``, ``is_other``, ``untested``.
    clusters : ndarray of int
        Each task row's task (``Inputs.clusters``), indexed by ``task_index``.

    Returns
    -------
    ndarray of float
        One p-value per row of ``g``; NaN for the pooled rest and untested groups.
    """
    out = np.full(len(g), np.nan)
    scored = s[s["scored"].to_numpy(dtype=bool)]
    groups = dict(list(scored.groupby(["run_id", "difficulty"], sort=False, observed=True)))
    skip = g["is_other"].to_numpy(dtype=bool) | g["untested"].fillna(True).to_numpy(dtype=bool)
    for i, (run, level, pattern) in enumerate(zip(g["run_id"], g["difficulty"], g["pattern"],
                                                  strict=True)):
        part = groups.get((run, level))
        if skip[i] or part is None:
            continue
        out[i] = clustered_wald(part["ok"].to_numpy(dtype=float),
                                part["pattern"].eq(pattern).to_numpy(dtype=bool),
                                clusters[part["task_index"].to_numpy()])
    return out
