# Over 400 lines (under 500): one concept, the formulas of the reliability profile (consistency,
# AUROC, risk-coverage), the last also from counts by confidence level (the one home of the
# table's bootstrap); most of the length is their docstrings with definitions and sources.
"""The reliability profile's formulas (Rabanser et al. 2026; HAL's ``reliability_eval/``): outcome,
trajectory and resource consistency of a task's repeated trials, and confidence discrimination
and selective prediction (AUROC, the risk–coverage curve, AuRC and excess AuRC; Geifman et al.
2019). Arrays in, numbers (or a curve frame) out; the per-run table with its bootstrap over tasks
is :func:`dabench_analysis.tables.reliability`, whose resamples' AUROC and AuRC come from the
same counts by confidence level (:func:`_by_level`) as those of :func:`auroc` and :func:`aurc`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = ["action_consistency", "aurc", "auroc", "coefficient_of_variation",
           "js_divergence", "order_consistency", "outcome_consistency", "risk_coverage"]


def outcome_consistency(n, c) -> np.ndarray:
    """Outcome consistency of each task: ``(2 p - 1)^2 = 1 - p (1 - p) / 0.25`` with ``p = c / n``.

    Parameters
    ----------
    n : array-like of int
        Trials of each task (with a score).
    c : array-like of int
        Successful trials of each task, 0 <= c <= n.

    Returns
    -------
    numpy.ndarray of float
        One value per task in [0, 1]: 1 when every trial agrees (all succeed or all fail), 0 when
        half succeed; NaN for a task with fewer than 2 trials.

    Raises
    ------
    ValueError
        Shapes that differ, or c outside [0, n].

    Notes
    -----
    Rabanser et al. (2026, Definition 3.1) write ``C_out(t) = 1 - s_t^2 / (p_t (1 - p_t) + eps)``
    with the sample variance ``s_t^2`` (ddof = 1). For Bernoulli outcomes ``s_t^2 = K / (K - 1)
    p_t (1 - p_t)``, so that ratio is K/(K - 1) > 1 whenever the trials disagree: clipped at 0 it
    is only an indicator of unanimity. HAL's ``reliability_eval/metrics/consistency.py`` (since
    its PR 179) normalises the population variance ``p_t (1 - p_t)`` by its largest value, 1/4,
    giving ``(2 p_t - 1)^2``; we follow the code, because it is the one that grades partial
    agreement. A task where every trial succeeds or every trial fails (``p (1 - p) = 0``) has
    consistency 1 under both (the paper through its ``eps``). The run's value is the mean over
    tasks with at least two trials.

    References
    ----------
    Rabanser, S., Kapoor, S., Kirgis, P., Liu, K., Utpala, S., Narayanan, A. (2026). Towards a
    Science of AI Agent Reliability. arXiv:2602.16666.

    Examples
    --------
    >>> outcome_consistency([4, 4, 4, 1], [4, 2, 1, 1]).tolist()  # (2 * 0.25 - 1)^2 = 0.25
    [1.0, 0.0, 0.25, nan]
    """
    n = np.asarray(n, dtype=float)
    c = np.asarray(c, dtype=float)
    if n.shape != c.shape:
        raise ValueError(f"n and c must have one value per task; got shapes {n.shape} and "
                         f"{c.shape}")
    if (c < 0).any() or (c > n).any():
        raise ValueError("successes c must lie in [0, n] for every task")
    out = np.full(n.shape, np.nan)
    ok = n >= 2
    out[ok] = (2 * c[ok] / n[ok] - 1) ** 2
    return out


def js_divergence(p, q) -> float:
    """Jensen–Shannon divergence of two distributions over the same categories, in bits.

    Parameters
    ----------
    p, q : array-like of float
        Non-negative weights of one length (normalised here; counts are fine).

    Returns
    -------
    float
        ``JSD = H(m) - (H(p) + H(q)) / 2`` with ``m = (p + q) / 2`` and base-2 entropies: 0 for
        equal distributions, 1 for distributions on disjoint categories.

    Raises
    ------
    ValueError
        Lengths that differ, negative weights, or a distribution with no weight.

    Notes
    -----
    Lin (1991), eq. 4.1, computed as ``scipy.spatial.distance.jensenshannon(p, q, base=2) ** 2``
    (scipy returns the square root of the divergence, a distance; weights are normalised by it).

    References
    ----------
    Lin, J. (1991). Divergence measures based on the Shannon entropy. IEEE Transactions on
    Information Theory 37(1), 145–151.

    Examples
    --------
    >>> js_divergence([1, 1], [1, 1]), js_divergence([1, 0], [0, 1])
    (0.0, 1.0)
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have one weight per category; got {p.shape}, {q.shape}")
    if (p < 0).any() or (q < 0).any() or p.sum() <= 0 or q.sum() <= 0:
        raise ValueError("p and q must be non-negative with a positive total")
    from scipy.spatial.distance import jensenshannon

    return float(min(1.0, max(0.0, jensenshannon(p, q, base=2) ** 2)))


def _pairs(seqs: Sequence[Sequence[str]]) -> list[tuple[list[str], list[str]]]:
    kept = [list(s) for s in seqs if s is not None and len(s)]
    return list(combinations(kept, 2))


def action_consistency(sequences: Sequence[Sequence[str]]) -> float:
    """Trajectory (action-distribution) consistency of one task's trials: 1 minus the mean
    pairwise Jensen–Shannon divergence of their action frequency distributions.

    Parameters
    ----------
    sequences : sequence of sequences of str
        The actions (tool names) of each trial, in order; an empty or None trial is not
        recorded and left out.

    Returns
    -------
    float
        In [0, 1]; NaN with fewer than two recorded trials.

    Notes
    -----
    Rabanser et al. (2026), Definition 3.2 (C_traj_d): ``1 - mean_{i<j} JSD(P_i, P_j)``, ``P_i``
    the relative frequencies of the actions of trial i. HAL's code uses
    :func:`scipy.spatial.distance.jensenshannon`, the square root of the divergence in nats (so
    its values lie in [1 - sqrt(ln 2), 1]); we use the divergence itself in bits, which the
    paper names and which spans [0, 1] (:func:`js_divergence`). The table passes the successful
    trials only, as the paper and HAL do (a failed trial's path is expected to differ).

    Examples
    --------
    >>> action_consistency([["a", "b"], ["a", "b", "b", "a"], []])
    1.0
    >>> action_consistency([["a"], ["b"]])
    0.0
    """
    pairs = _pairs(sequences)
    if not pairs:
        return np.nan
    out = []
    for s, t in pairs:
        cs, ct = Counter(s), Counter(t)
        keys = sorted(set(cs) | set(ct))
        out.append(js_divergence([cs[k] for k in keys], [ct[k] for k in keys]))
    return float(1 - np.mean(out))


def _levenshtein(s: list[str], t: list[str]) -> int:
    """Edit distance (insertions, deletions, substitutions of cost 1), one numpy row at a time."""
    codes = {a: i for i, a in enumerate(dict.fromkeys(s + t))}
    a = np.array([codes[x] for x in s])
    b = np.array([codes[x] for x in t])
    prev = np.arange(len(b) + 1)
    ramp = np.arange(len(b) + 1)
    for i, x in enumerate(a, start=1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (b != x))
        cur = np.minimum.accumulate(cur - ramp) + ramp  # insertions: cur[j - 1] + 1
        prev = cur
    return int(prev[-1])


def order_consistency(sequences: Sequence[Sequence[str]]) -> float:
    """Trajectory (order) consistency of one task's trials: the mean pairwise similarity
    ``1 - lev(s, t) / max(|s|, |t|)`` of their action sequences.

    Parameters
    ----------
    sequences : sequence of sequences of str
        The actions of each trial in order; an empty or None trial is left out.

    Returns
    -------
    float
        In [0, 1]: 1 when every trial takes the same actions in the same order; NaN with fewer
        than two recorded trials.

    Notes
    -----
    Rabanser et al. (2026) C_traj_s: the paper asks whether actions occur in the same order;
    HAL's ``compute_sequence_consistency`` measures it with the Levenshtein distance normalised by
    the longer sequence, which we follow (Levenshtein 1966).

    References
    ----------
    Levenshtein, V. I. (1966). Binary codes capable of correcting deletions, insertions, and
    reversals. Soviet Physics Doklady 10(8), 707–710.

    Examples
    --------
    >>> round(order_consistency([["a", "b", "c"], ["a", "c", "b"]]), 4)  # 2 edits of 3
    0.3333
    """
    pairs = _pairs(sequences)
    if not pairs:
        return np.nan
    return float(np.mean([1 - _levenshtein(s, t) / max(len(s), len(t)) for s, t in pairs]))


def coefficient_of_variation(values) -> float:
    """Coefficient of variation ``sd / mean`` (sd with ddof = 1) of one task's recorded values.

    Parameters
    ----------
    values : array-like of float
        A resource of each (successful) trial: US dollars, tokens, steps or seconds; NaN = not
        recorded, left out.

    Returns
    -------
    float
        >= 0; NaN with fewer than two recorded values or a mean that is not positive.

    Notes
    -----
    Rabanser et al. (2026), Definition 3.3, and HAL's ``compute_resource_consistency`` use the CV
    (ddof = 1) and report ``exp(-CV)``; the table reports the CV itself (lower is more
    consistent), per resource, among the successful trials of a task.

    Examples
    --------
    >>> round(coefficient_of_variation([1.0, 2.0, 3.0, None]), 4)  # sd 1 / mean 2
    0.5
    """
    x = pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce").to_numpy(float)
    x = x[np.isfinite(x)]
    if len(x) < 2 or x.mean() <= 0:
        return np.nan
    return float(x.std(ddof=1) / x.mean())


def _check_pairs(confidence, correct) -> tuple[np.ndarray, np.ndarray]:
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=float)
    if conf.shape != ok.shape or conf.ndim != 1:
        raise ValueError(f"confidence and correct must be 1-d of one length; got {conf.shape} "
                         f"and {ok.shape}")
    keep = np.isfinite(conf) & np.isfinite(ok)
    if not set(np.unique(ok[keep])) <= {0.0, 1.0}:
        raise ValueError("correct must be 0/1 (or True/False)")
    return conf[keep], ok[keep]


def _level_counts(conf: np.ndarray, ok: np.ndarray,
                  groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Correct and wrong trials at each confidence level, most confident level first.

    Parameters
    ----------
    conf, ok : numpy.ndarray of float, shape (n,)
        Checked trials (:func:`_check_pairs`): finite confidences, 0/1 correctness.
    groups : numpy.ndarray of int, shape (n,), optional
        Each trial's group, 0..g-1 (the table: its task).

    Returns
    -------
    (won, lost) : numpy.ndarray of float
        Shape (levels,), or (g, levels) with ``groups``; levels are the distinct confidences,
        decreasing.
    """
    levels, level = np.unique(-conf, return_inverse=True)
    g = 1 if groups is None else int(groups.max()) + 1
    cell = level if groups is None else groups * len(levels) + level
    won, lost = (np.bincount(cell, weights=w, minlength=g * len(levels)).reshape(g, -1)
                 for w in (ok, 1 - ok))
    return (won[0], lost[0]) if groups is None else (won, lost)


def _risk_rows(size: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Risk and optimal risk at coverage i / n, i = 1..n, of rows of one total ``n``.

    Parameters
    ----------
    size, err : numpy.ndarray, shape (rows, levels)
        Trials (int) and wrong trials (float, whole numbers) at each level, most confident
        first; every row has ``size.sum() == n >= 1``.

    Returns
    -------
    (risk, optimal) : numpy.ndarray of float, shape (rows, n)
        ``risk``: expected share wrong among the i most confident, a level's errors spread
        evenly over its positions (tied trials in random order); ``optimal``: correct trials
        first (Geifman et al. 2019, §3).
    """
    n = int(size[0].sum())
    r = np.arange(len(size))[:, None]
    lev = np.repeat(np.tile(np.arange(size.shape[1]), len(size)), size.ravel())
    lev = lev.reshape(len(size), n)  # each position's level
    start = (np.cumsum(size, axis=1) - size)[r, lev]  # positions before its level
    before = (np.cumsum(err, axis=1) - err)[r, lev]  # errors before its level
    share = err / np.where(size > 0, size, 1)  # a level's errors per position
    i = np.arange(1, n + 1)
    risk = (before + (i - start) * share[r, lev]) / i
    return risk, np.maximum(i - (n - err.sum(axis=1, keepdims=True)), 0) / i


def _by_level(won, lost) -> dict:
    """AUROC, AuRC, optimal AuRC and excess AuRC from counts of correct and wrong trials by
    confidence level, of one sample or of each row.

    Parameters
    ----------
    won, lost : array-like of float (whole numbers)
        Correct and wrong trials at each confidence level, most confident first (a level may
        hold none); shape (levels,) for one sample, (rows, levels) for many (the table's
        bootstrap: the drawn trials of each resample).

    Returns
    -------
    dict
        ``auroc``, ``aurc``, ``aurc_optimal``, ``excess_aurc`` (float; NaN: AUROC without both
        a correct and a wrong trial, the others without a trial) and ``n`` (trials): floats and
        an int for one sample, arrays of shape (rows,) for many.

    Notes
    -----
    AUROC: the Mann–Whitney form (Hanley & McNeil 1982), ``U_1 / (n_1 n_0)`` with
    ``U_1 = sum_l won_l (lost at less confident levels + lost_l / 2)`` (ties one half). AuRC:
    the mean of :func:`_risk_rows`' risk over the n coverage levels, optimal AuRC that of its
    optimal risk, excess their difference (Geifman et al. 2019, §3). Every sum is of whole or
    half numbers, exact in floating point: the values are those of the trials themselves.
    """
    w1, w0 = np.asarray(won, dtype=float), np.asarray(lost, dtype=float)
    one = w1.ndim == 1
    w1, w0 = np.atleast_2d(w1), np.atleast_2d(w0)
    n1, n0 = w1.sum(axis=1), w0.sum(axis=1)
    u = (w1 * (np.cumsum(w0[:, ::-1], axis=1)[:, ::-1] - w0 / 2)).sum(axis=1)
    both = (n1 > 0) & (n0 > 0)
    out = {"auroc": np.where(both, u / np.where(both, n1 * n0, 1), np.nan)}
    size = (w1 + w0).astype(np.int64)
    total = size.sum(axis=1)
    a, b = np.full(len(size), np.nan), np.full(len(size), np.nan)
    for n in np.unique(total[total > 0]):
        rows = np.flatnonzero(total == n)
        risk, best = _risk_rows(size[rows], w0[rows])
        a[rows], b[rows] = risk.mean(axis=1), best.mean(axis=1)
    out.update(aurc=a, aurc_optimal=b, excess_aurc=a - b, n=total)
    if one:
        return {k: int(v[0]) if k == "n" else float(v[0]) for k, v in out.items()}
    return out


def auroc(confidence, correct) -> float:
    """Area under the ROC curve of confidence for correctness: P(conf of a correct trial >
    conf of a wrong one) + P(equal) / 2.

    Parameters
    ----------
    confidence : array-like of float
        Stated confidence per trial (any scale; NaN left out).
    correct : array-like of bool or 0/1
        Whether the trial is correct (NaN left out).

    Returns
    -------
    float
        In [0, 1] (0.5: no discrimination); NaN without both a correct and a wrong trial.

    Raises
    ------
    ValueError
        Lengths that differ, or ``correct`` not 0/1.

    Notes
    -----
    The Mann–Whitney form (Hanley & McNeil 1982): ``U_1 / (n_1 n_0)``, with ``U_1`` the
    Mann–Whitney statistic of the correct trials (pairs a correct trial wins, ties counted one
    half), counted by confidence level (:func:`_by_level`); equal to the statistic of
    :func:`scipy.stats.mannwhitneyu`, to HAL's pair count and to
    ``sklearn.metrics.roc_auc_score``.

    References
    ----------
    Hanley, J. A., McNeil, B. J. (1982). The meaning and use of the area under a receiver
    operating characteristic (ROC) curve. Radiology 143(1), 29–36.

    Examples
    --------
    >>> auroc([0.9, 0.8, 0.3, 0.8], [1, 1, 0, 0])  # pairs: 1, 1 (0.9 > 0.3, 0.8), 1, 0.5
    0.875
    """
    return _by_level(*_level_counts(*_check_pairs(confidence, correct)))["auroc"]


def risk_coverage(confidence, correct) -> pd.DataFrame:
    """The risk–coverage curve of selective prediction by confidence, beside the best one.

    Parameters
    ----------
    confidence : array-like of float
        Stated confidence per trial (NaN left out).
    correct : array-like of bool or 0/1
        Whether the trial is correct.

    Returns
    -------
    DataFrame
        One row per coverage level i / n, i = 1..n: ``coverage``, ``risk`` (share of wrong
        answers among the i most confident trials; tied confidences in random order, so the
        expected share), ``optimal_risk`` (the same with every correct trial ranked first).

    Notes
    -----
    Geifman & El-Yaniv (2017) define the curve; Geifman, Uziel & El-Yaniv (2019), §3, its area
    (:func:`aurc`).

    Examples
    --------
    >>> risk_coverage([0.5, 0.9, 0.7], [1, 0, 0]).round(3).values.tolist()
    [[0.333, 1.0, 0.0], [0.667, 1.0, 0.5], [1.0, 0.667, 0.667]]
    """
    won, lost = _level_counts(*_check_pairs(confidence, correct))
    size = (won + lost).astype(np.int64)
    n = int(size.sum())
    risk, best = _risk_rows(size[None], lost[None])
    return pd.DataFrame({"coverage": np.arange(1, n + 1) / n, "risk": risk[0],
                         "optimal_risk": best[0]})


def aurc(confidence, correct) -> dict:
    """Area under the risk–coverage curve, its best value and the excess.

    Parameters
    ----------
    confidence : array-like of float
        Stated confidence per trial (NaN left out).
    correct : array-like of bool or 0/1
        Whether the trial is correct.

    Returns
    -------
    dict
        ``aurc`` (mean risk over the n coverage levels, lower is better), ``aurc_optimal`` (the
        same for the oracle ordering: correct trials first), ``excess_aurc`` (their difference,
        >= 0), ``n``; NaN values without a trial.

    Notes
    -----
    Geifman, Uziel & El-Yaniv (2019), §3: ``AURC = (1/n) sum_i risk(i/n)`` and
    ``E-AURC = AURC - AURC*``; their closed form ``AURC* ≈ r + (1 - r) ln(1 - r)`` (r the error
    rate) is the continuous limit of the exact ``AURC*`` used here. HAL's
    ``compute_aurc_metrics`` integrates the same curve on a 100-point grid by the trapezoid rule
    and reports ``1 - E-AURC / (r - AURC*)``; we report the AuRC and excess AuRC themselves, as
    Geifman et al. define them.

    References
    ----------
    Geifman, Y., Uziel, G., El-Yaniv, R. (2019). Bias-reduced uncertainty estimation for deep
    neural classifiers. ICLR 2019. Geifman, Y., El-Yaniv, R. (2017). Selective classification
    for deep neural networks. NeurIPS 2017.

    Examples
    --------
    >>> r = aurc([0.5, 0.9, 0.7], [1, 0, 0])  # risks 1, 1, 2/3 vs 0, 1/2, 2/3
    >>> round(r["aurc"], 4), round(r["aurc_optimal"], 4), round(r["excess_aurc"], 4)
    (0.8889, 0.3889, 0.5)
    """
    out = _by_level(*_level_counts(*_check_pairs(confidence, correct)))
    return {k: out[k] for k in ("aurc", "aurc_optimal", "excess_aurc", "n")}
