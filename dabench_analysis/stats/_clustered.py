"""Clustered standard errors of a mean score and its interval (Miller 2024, "Adding Error Bars to\nEvals: A Statistical Approach to Language Model Evaluations", arXiv:2411.00640, Eq. 1-4; CR0/CR1\nas in statsmodels).\n"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.schema import require_columns
from dabench_analysis.stats._descriptive import bounded_interval
from dabench_analysis.stats._inputs import as_float, check_ci, check_frame, warn
from dabench_analysis.stats._results import StandardError

#: The standard errors by name, as ``method`` columns print them.
SE_NAMES = {"clt": "CLT (unclustered)", "bernoulli": "Bernoulli", "eq4": "Miller Eq. 4",
            "cr0": "CR0", "cr1": "CR1"}
_SE_METHODS = tuple(SE_NAMES)


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


def clustered_se(values, clusters=None, *, method: str = "cr1") -> StandardError:
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
    StandardError
        ``se``, ``n`` (values used), ``n_clusters``, ``method`` (its name: "CR1", "CR0",
        "Miller Eq. 4", "CLT (unclustered)", "Bernoulli") and ``note``. ``se`` is NaN for
        n < 2, and NaN with a warning and a note for a cluster method (``cr1``, ``cr0``,
        ``eq4``) with a single cluster.

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
    >>> round(clustered_se(s, g, method="eq4").se, 6), round(clustered_se(s, g).se, 6)
    (0.160202, 0.178226)
    >>> clustered_se(s, g).method, clustered_se(s, g).n_clusters
    ('CR1', 4)
    """
    if method not in _SE_METHODS:
        raise ValueError(f"method must be one of {', '.join(_SE_METHODS)}; got {method!r}")
    x = as_float(values, "values").to_numpy()
    c = None if clusters is None else pd.Series(clusters).to_numpy(dtype=object)
    if c is not None and c.size != x.size:
        raise ValueError(f"values and clusters differ in length: {x.size} vs {c.size}")
    keep = ~np.isnan(x) & (np.ones(x.size, bool) if c is None else ~pd.isna(c))
    c = None if c is None else c[keep]
    one = _one_cluster_note(int(keep.sum()), c, method)
    warn([f"{int((~keep).sum())} rows dropped: missing value or cluster" if not keep.all()
          else ""] + one)
    n = int(keep.sum())
    g = n if c is None or method in ("clt", "bernoulli") else int(pd.unique(c).size)
    note = one[0] if one else ("n < 2: standard error undefined" if n < 2 else "")
    return StandardError(_se(x[keep], c, method), n, g, SE_NAMES[method], note)


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
        Confidence level (normal quantile z_{(1+ci)/2}, as Miller's Eq. 3).
    method : {"cr1", "cr0", "eq4", "clt", "bernoulli"}
        See :func:`clustered_se`.

    Returns
    -------
    DataFrame
        One row: ``metric``, ``cluster``, ``n``, ``n_clusters``, ``mean``, ``se``, ``se_clt``
        (unclustered, Eq. 1), ``design_effect`` ((se/se_clt)²), ``ci_low``, ``ci_high``,
        ``method`` (the SE and the interval: "CR1; logit normal" for [0, 1] values, "CR1;
        normal" otherwise), ``note``. One cluster, n < 2 or zero SE: NaN ``se`` or interval,
        with a warning and a note (see :func:`clustered_se`).

    Raises
    ------
    ValueError
        Missing columns, unknown method, ``ci`` outside (0, 1).
    TypeError
        ``tasks`` is not a DataFrame (a Run: pass ``run.tasks``).

    Notes
    -----
    Values in [0, 1] (scores, flags) get the package's bounded interval
    (:func:`stats._descriptive.bounded_interval`): expit(logit(m) ± z · SE / (m(1 − m))),
    inside [0, 1], with the G clusters as the independent units of its all-0 / all-1 bound;
    Miller's Eq. 3, mean ± z · SE, is kept for unbounded values (it left [0, 1]: [0.852,
    1.048] for a mean of 0.95). The paper uses z = 1.96; we use the exact normal quantile
    (1.959964 for 95%).

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
    g = int(x.size if c is None else pd.unique(c).size)
    deff = (se / se_clt) ** 2 if se_clt and np.isfinite(se) and se_clt > 0 else np.nan
    lo, hi, how, note = _interval(x, mean, se, g, ci)
    notes = [f"n = {x.size}: standard error undefined" if x.size < 2 else ""] + \
        _one_cluster_note(x.size, c, method)
    notes += [note] if note and x.size >= 2 and not any(notes) else []
    warn(notes)
    return pd.DataFrame([{
        "metric": metric, "cluster": cluster, "n": int(x.size), "n_clusters": g, "mean": mean,
        "se": se, "se_clt": se_clt, "design_effect": deff, "ci_low": lo, "ci_high": hi,
        "method": f"{SE_NAMES[method]}; {how}", "note": "; ".join(n for n in notes if n)}])


def _interval(x: np.ndarray, mean: float, se: float, g: int, ci: float) -> tuple:
    """Bounded for values in [0, 1], else mean ± z · SE; NaN with a note when not estimable."""
    if x.size and (x >= 0).all() and (x <= 1).all():
        return tuple(bounded_interval(mean, se, n=g, ci=ci))
    if not np.isfinite(se) or se <= 0:
        return np.nan, np.nan, "normal", "standard error not estimable or zero"
    z = st.norm.ppf(0.5 + ci / 2)
    return mean - z * se, mean + z * se, "normal", ""


def cluster_bootstrap_ratio(num, den, groups, clusters, *, ci: float = 0.95,
                            n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Ratio of sums per group (a share of traces, errors or calls) with a percentile
    interval from a bootstrap over clusters: every row of a drawn cluster comes with it.

    Parameters
    ----------
    num, den : array-like of float, shape (n,)
        Each row's numerator and denominator (flags: 1 counted, 0 not).
    groups : array-like of int, shape (n,)
        Each row's group, 0 … G−1 (a table's row).
    clusters : array-like of int, shape (n,)
        Each row's cluster (a task, whose trials are its rows): integer labels; the C labels
        present are numbered 0 … C−1 in ascending order, the order of the draws.
    ci : float
        Confidence level in (0, 1).
    n_boot : int
        Bootstrap replicates.
    seed : int
        Seed of the draws (:func:`dabench_analysis.stats.ranking.bootstrap_counts`: replicate
        b draws the clusters ``default_rng(seed).integers(0, C, size=(n_boot, C))[b]``).

    Returns
    -------
    DataFrame
        One row per group: ``share`` (Σ num / Σ den, NaN when Σ den = 0), ``ci_low``,
        ``ci_high`` (the ``(1 − ci)/2`` and ``(1 + ci)/2`` quantiles, numpy's linear rule, of
        the replicates' ratios; replicates drawing no denominator left out; NaN with fewer
        than 2 clusters; a share of 0 or 1, where every replicate repeats it: the Wilson
        interval of 0 or G of the G clusters), ``n_clusters`` (clusters with a denominator
        in the group).

    Raises
    ------
    ValueError
        Lengths that differ, ``ci`` outside (0, 1), ``n_boot`` < 1.

    Notes
    -----
    Resampling clusters, not rows, keeps the correlation of the rows of one cluster (trials
    of one task) in the interval (Field & Welsh 2007, the cluster bootstrap); with one row per
    cluster it is the ordinary percentile bootstrap.

    References
    ----------
    Field, C. A., Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3), 369–390.

    Examples
    --------
    >>> r = cluster_bootstrap_ratio([1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 1, 2],
    ...                             n_boot=200)
    >>> float(r.loc[0, "share"]), int(r.loc[0, "n_clusters"])
    (0.5, 3)
    """
    check_ci(ci)
    share, reps, n_clusters = _replicates(num, den, groups, clusters, n_boot, seed)
    lo, hi = _percentiles(reps, n_clusters, ci)
    # every row 0 (or every row counted): each replicate repeats it, a zero-width interval;
    # the Wilson bound with the clusters as the independent units instead
    edge = (n_clusters >= 2) & ((share == 0) | (share == 1))
    if edge.any():
        from dabench_analysis.stats._proportions import proportion_intervals

        w_lo, w_hi = proportion_intervals(share[edge] * n_clusters[edge], n_clusters[edge], ci)
        lo[edge], hi[edge] = w_lo, w_hi
    return pd.DataFrame({"share": share, "ci_low": lo, "ci_high": hi,
                         "n_clusters": n_clusters.astype("int64")})


def cluster_bootstrap_difference(first, second, groups, clusters, *, ci: float = 0.95,
                                 n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Difference of two ratios of sums per group (accuracy with a loop minus without), with
    a percentile interval from one bootstrap over clusters (both ratios from the same draws).

    Parameters
    ----------
    first, second : tuple of two array-like of float, each of shape (n,)
        The (numerator, denominator) of each ratio, per row.
    groups, clusters, ci, n_boot, seed
        As :func:`cluster_bootstrap_ratio`.

    Returns
    -------
    DataFrame
        One row per group: ``diff`` (first − second), ``ci_low``, ``ci_high`` (NaN with
        fewer than 2 clusters in either).

    Raises
    ------
    ValueError
        As :func:`cluster_bootstrap_ratio`.

    Examples
    --------
    >>> r = cluster_bootstrap_difference(([1, 1, 0, 0], [1, 1, 0, 0]), ([0, 0, 0, 0],
    ...                                  [0, 0, 1, 1]), [0] * 4, [0, 1, 2, 3], n_boot=50)
    >>> float(r.loc[0, "diff"])
    1.0
    """
    check_ci(ci)
    a, ra, ca = _replicates(*first, groups, clusters, n_boot, seed)
    b, rb, cb = _replicates(*second, groups, clusters, n_boot, seed)
    lo, hi = _percentiles(ra - rb, np.minimum(ca, cb), ci)
    return pd.DataFrame({"diff": a - b, "ci_low": lo, "ci_high": hi})


def _replicates(num, den, groups, clusters, n_boot: int, seed: int) -> tuple:
    """Each group's ratio, its bootstrap replicates (n_boot × G, NaN where a replicate drew
    no denominator) and its clusters with a denominator."""
    from dabench_analysis.stats.ranking import bootstrap_counts

    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    x, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    g, c = np.asarray(groups, dtype=np.int64), np.asarray(clusters, dtype=np.int64)
    c = np.unique(c, return_inverse=True)[1].ravel()  # the clusters present, in label order
    if not x.size == d.size == g.size == c.size:
        raise ValueError(f"num, den, groups and clusters differ in length: {x.size}, "
                         f"{d.size}, {g.size}, {c.size}")
    n_g, n_c = (int(g.max()) + 1, int(c.max()) + 1) if x.size else (0, 0)
    s_num, s_den = np.zeros((n_c, n_g)), np.zeros((n_c, n_g))
    np.add.at(s_num, (c, g), x)
    np.add.at(s_den, (c, g), d)
    tot_num, tot_den = s_num.sum(axis=0), s_den.sum(axis=0)
    w = bootstrap_counts(n_c, n_boot, seed) if n_c else np.zeros((n_boot, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        b_den = w @ s_den
        reps = (w @ s_num) / np.where(b_den > 0, b_den, np.nan)
        share = np.where(tot_den > 0, tot_num / np.where(tot_den > 0, tot_den, 1), np.nan)
    return share, reps, (s_den > 0).sum(axis=0)


def _percentiles(reps: np.ndarray, n_clusters: np.ndarray, ci: float) -> tuple:
    """The (1 − ci)/2 and (1 + ci)/2 quantiles of each column's replicates (NaN ones left
    out); NaN for a column with fewer than 2 clusters or no replicate."""
    n_g = reps.shape[1]
    lo, hi = np.full(n_g, np.nan), np.full(n_g, np.nan)
    ok = (n_clusters >= 2) & ~np.isnan(reps).all(axis=0) if n_g else np.zeros(0, bool)
    if ok.any():
        q = np.nanquantile(reps[:, ok], [(1 - ci) / 2, (1 + ci) / 2], axis=0)
        lo[ok], hi[ok] = q[0], q[1]
    return lo, hi
