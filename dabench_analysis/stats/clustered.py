"""Clustered standard errors of a mean score and its interval (Miller 2024, "Adding Error Bars to\nEvals: A Statistical Approach to Language Model Evaluations", arXiv:2411.00640, Eq. 1-4; CR0/CR1\nas in statsmodels).\n"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.schema import require_columns
from dabench_analysis.stats.inputs import as_float, check_ci, check_frame, warn

_SE_METHODS = ("clt", "bernoulli", "eq4", "cr0", "cr1")


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
    if g < 2:  # one cluster: sum(e) = 0, so CR0 = 0 and Eq. 4 = SE_CLT/sqrt(n): not estimable
        return np.nan
    between = float(np.sum(sums**2))
    if method == "eq4":
        return math.sqrt(se_clt2 + (between - float(np.sum(e**2))) / n**2)
    if method == "cr0":
        return math.sqrt(between) / n
    return math.sqrt(between / n**2 * g / (g - 1))


def _one_cluster_note(n: int, clusters: np.ndarray | None, method: str) -> list[str]:
    if method in ("clt", "bernoulli") or clusters is None or n < 2:
        return []
    g = pd.unique(clusters).size
    return [f"{g} cluster: clustered standard error not estimable (needs >= 2 clusters); "
            "NaN"] if g < 2 else []


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
        The standard error; NaN for n < 2, and NaN with a warning for a cluster method
        (``cr1``, ``cr0``, ``eq4``) with a single cluster.

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
    Eq. 4 = 0.160202, CR0 = 0.154348, CR1 = 0.178226. With one cluster the between-cluster
    sum is (Σ e_i)² = 0, so CR0 would print rounding noise (~1e-17) and Eq. 4 SE_CLT/sqrt(n),
    below the unclustered SE: the variance is not estimable from one cluster (Cameron & Miller
    2015, §VI), so every cluster method returns NaN there (statsmodels' CR1 divides by G − 1 = 0).

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
    c = None if c is None else c[keep]
    warn([f"{int((~keep).sum())} rows dropped: missing value or cluster" if not keep.all()
          else ""] + _one_cluster_note(int(keep.sum()), c, method))
    return _se(x[keep], c, method)


def clustered_mean_ci(tasks: pd.DataFrame, *, metric: str = "final_score",
                      cluster: str | None = "task_type", ci: float = 0.95,
                      method: str = "cr1") -> pd.DataFrame:
    """Mean score with a cluster-robust normal interval (Miller 2024, Eq. 3 with Eq. 4 / App. A).

    Parameters
    ----------
    tasks : DataFrame
        One row per task (``run.tasks``) with ``metric`` and ``cluster`` columns; every row
        is one observation.
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
        ``method``. One cluster: NaN ``se`` and interval, with a warning (see
        :func:`clustered_se`).

    Raises
    ------
    ValueError
        Missing columns, unknown method, ``ci`` outside (0, 1).
    TypeError
        ``tasks`` is not a DataFrame (a Run: pass ``run.tasks``).

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
    tasks = check_frame(tasks)
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
    warn([f"n = {x.size}: standard error undefined" if x.size < 2 else ""]
         + _one_cluster_note(x.size, c, method))
    return pd.DataFrame([{
        "metric": metric, "cluster": cluster, "n": int(x.size),
        "n_clusters": int(x.size if c is None else pd.unique(c).size), "mean": mean, "se": se,
        "se_clt": se_clt, "design_effect": deff, "ci_low": mean - z * se,
        "ci_high": mean + z * se, "method": method}])
