"""Repeated trials of a task: the unbiased estimators of pass@k and pass^k, per task and averaged
over tasks with a bootstrap interval over tasks.

For a task tried n times with c successes:

* pass@k, the chance that at least one of k trials drawn without replacement succeeds:
  ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, eq. 1; computed as their numerically
  stable product ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)``);
* pass^k, the chance that all k succeed: ``C(c, k) / C(n, k)`` (Yao et al. 2024, eq. in §4).

Both are unbiased for the task's per-trial success probability's k-trial quantity; the run's
value is their mean over tasks. pass@1 = pass^1 = the mean success rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import comb

from dabench_analysis.stats._descriptive import bootstrap_ci
from dabench_analysis.stats._inputs import check_ci


def _counts(n, c, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.shape != c.shape:
        raise ValueError(f"n and c must have one value per task; got shapes {n.shape} and "
                         f"{c.shape}")
    if (c < 0).any() or (c > n).any():
        raise ValueError("successes c must lie in [0, n] for every task")
    if int(k) < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return n, c


def pass_at_k(n, c, k: int) -> np.ndarray:
    """pass@k of each task: 1 - C(n - c, k) / C(n, k) (NaN where k > n).

    Parameters
    ----------
    n : array-like of int
        Trials of each task.
    c : array-like of int
        Successful trials of each task, 0 <= c <= n.
    k : int
        Trials drawn, >= 1.

    Returns
    -------
    numpy.ndarray of float
        One value per task in [0, 1]; NaN where the task has fewer than k trials.

    Raises
    ------
    ValueError
        Shapes that differ, c outside [0, n], k < 1.

    Notes
    -----
    Chen et al. (2021), eq. 1, with their numerically stable product: 1 when n - c < k,
    else ``1 - prod_{i=n-c+1}^{n} (1 - k / i)``.

    References
    ----------
    Chen, M. et al. (2021). Evaluating Large Language Models Trained on Code.
    arXiv:2107.03374.

    Examples
    --------
    >>> pass_at_k([4, 4, 4], [0, 1, 4], 2).round(4).tolist()  # 1 - C(3, 2) / C(4, 2) = 0.5
    [0.0, 0.5, 1.0]
    """
    n, c = _counts(n, c, k)
    out = np.full(n.shape, np.nan)
    for i, (ni, ci) in enumerate(zip(n.ravel(), c.ravel(), strict=True)):
        if k > ni:
            continue
        out.flat[i] = 1.0 if ni - ci < k else 1.0 - float(np.prod(
            1.0 - k / np.arange(ni - ci + 1, ni + 1)))
    return out


def pass_hat_k(n, c, k: int) -> np.ndarray:
    """pass^k of each task: C(c, k) / C(n, k) (NaN where k > n).

    Parameters
    ----------
    n, c, k
        As :func:`pass_at_k`.

    Returns
    -------
    numpy.ndarray of float
        One value per task in [0, 1]; NaN where the task has fewer than k trials.

    Notes
    -----
    Yao et al. (2024), §4: the chance that k trials drawn without replacement all succeed,
    estimated without bias by C(c, k) / C(n, k) (exact binomial coefficients).

    References
    ----------
    Yao, S., Shinn, N., Razavi, P., Narasimhan, K. (2024). tau-bench: A Benchmark for
    Tool-Agent-User Interaction in Real-World Domains. arXiv:2406.12045.

    Examples
    --------
    >>> pass_hat_k([4, 4, 4], [2, 3, 4], 2).round(4).tolist()  # C(3, 2) / C(4, 2) = 0.5
    [0.1667, 0.5, 1.0]
    """
    n, c = _counts(n, c, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = comb(c, k, exact=False) / comb(n, k, exact=False)
    return np.where(k > n, np.nan, out)


def pass_k_summary(n, c, *, ks=None, n_boot: int = 2000, seed: int = 0,
                   ci: float = 0.95) -> pd.DataFrame:
    """pass@k and pass^k of a set of tasks for k = 1, 2, ...: the mean over tasks with a
    bootstrap interval over tasks.

    Parameters
    ----------
    n, c : array-like of int
        Trials and successes of each task.
    ks : sequence of int, optional
        The k to report; default 1 ... max(n).
    n_boot, seed : int
        Bootstrap resamples and seed (:func:`dabench_analysis.stats.bootstrap_ci`, BCa, the
        tasks resampled).
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        One row per k: ``k``, ``pass_at_k``, ``pass_at_k_ci_low``, ``pass_at_k_ci_high``,
        ``pass_hat_k``, ``pass_hat_k_ci_low``, ``pass_hat_k_ci_high``, ``n_tasks`` (tasks with
        at least k trials: the mean is over them), ``n_trials`` (fewest trials among them),
        ``method``, ``note`` (tasks left out for having fewer than k trials; a degenerate
        bootstrap).

    Examples
    --------
    >>> out = pass_k_summary([2, 2, 2, 2], [2, 1, 0, 2], n_boot=200)
    >>> out[["k", "pass_at_k", "pass_hat_k", "n_tasks"]].values.tolist()
    [[1.0, 0.625, 0.625, 4.0], [2.0, 0.75, 0.5, 4.0]]
    """
    check_ci(ci)
    n, c = _counts(n, c, 1)
    ks = list(range(1, int(n.max()) + 1)) if ks is None and n.size else list(ks or [])
    rows = []
    for k in ks:
        at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
        use = n >= k
        notes = [f"{int((~use).sum())} task(s) with fewer than {k} trials left out"] \
            if (~use).any() else []
        row = {"k": int(k), "n_tasks": int(use.sum()),
               "n_trials": int(n[use].min()) if use.any() else 0}
        for name, values in (("pass_at_k", at[use]), ("pass_hat_k", hat[use])):
            b = bootstrap_ci(values, n_resamples=n_boot, seed=seed, ci=ci) if values.size \
                else pd.DataFrame([{"estimate": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                                    "method": "bca", "note": "no task with k trials"}])
            row.update({name: b["estimate"].iloc[0], f"{name}_ci_low": b["ci_low"].iloc[0],
                        f"{name}_ci_high": b["ci_high"].iloc[0]})
            shown = {"pass_at_k": "pass@k", "pass_hat_k": "pass^k"}[name]
            notes += [f"{shown}: {b['note'].iloc[0]}"] if b["note"].iloc[0] else []
            how = str(b["method"].iloc[0])
            row["method"] = (f"unbiased estimator; {'BCa' if how == 'bca' else how} bootstrap "
                             "over tasks")
        rows.append({**row, "note": "; ".join(notes)})
    cols = ["k", "pass_at_k", "pass_at_k_ci_low", "pass_at_k_ci_high", "pass_hat_k",
            "pass_hat_k_ci_low", "pass_hat_k_ci_high", "n_tasks", "n_trials", "method", "note"]
    return pd.DataFrame(rows, columns=cols)
