"""Judge–human agreement on binary verdicts (seed 004): factoid-level precision, recall and
accuracy, Likert rescaling, and MCC, P/R/F1 and accuracy of a judge against human labels with
bootstrap intervals.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dabench_analysis._caller import outside_level
from dabench_analysis.stats._inputs import as_bool

_METRICS = ("precision", "recall", "f1", "mcc", "accuracy")


_UNDEFINED = {"precision": "undefined: the judge passed no case (TP + FP = 0)",
              "recall": "undefined: the human reference has no PASS (TP + FN = 0)",
              "f1": "undefined: no PASS from judge or humans (2TP + FP + FN = 0)",
              "mcc": "undefined: judge or human labels are all the same (a margin is 0)",
              "accuracy": "undefined: no cases"}


def _series(x: Any, name: str, index: pd.Index | None = None) -> pd.Series:
    if isinstance(x, pd.Series):
        return x.rename(name)
    arr = np.atleast_1d(np.asarray(x, dtype=object))
    return pd.Series(arr, index=index if index is not None and len(index) == len(arr) else None,
                     name=name)


def factoid_scores(n_response: Any, n_ground_truth: Any, n_matched: Any, *,
                   scale: float | None = 9) -> pd.DataFrame:
    """Factoid precision, recall and accuracy of one or many test cases (seed 004, Eq. 2).

    Parameters
    ----------
    n_response, n_ground_truth, n_matched : int or array-like of int
        ``|F_r|`` response factoids, ``|F_g|`` query-relevant ground-truth factoids and ``|F_rg|`` matched
        (one-to-one) factoids; scalars or equal-length Series/arrays (a Series' index is kept).
        Missing counts give NaN scores.
    scale : float or None
        Multiply the [0, 1] fractions by this (default 9: the paper's 0–9 scale); None keeps [0, 1].

    Returns
    -------
    DataFrame
        One row per test case: ``n_response``, ``n_ground_truth``, ``n_matched`` (float64),
        ``precision``, ``recall``, ``accuracy`` (0–``scale``) and ``note`` (why a score is NaN,
        else ``""``).

    Raises
    ------
    ValueError
        Negative or non-integer counts, ``n_matched`` above either side, unequal lengths.

    Notes
    -----
    ``P = |F_rg|/|F_r|``, ``R = |F_rg|/|F_g|``, ``A = |F_rg|/(|F_g| + |F_r| − |F_rg|)``. An empty side makes
    its ratio undefined (NaN, with a note), not a division error; A is 0 if one side is empty.

    References
    ----------
    Tamhane, A. et al. (2026). Skill-based Agentic Evaluation for Real-time Data Science Tasks.
    arXiv:2609.16487, Section 3.5 and Appendix A.

    Examples
    --------
    >>> factoid_scores(14, 12, 5)[["precision", "recall", "accuracy"]].round(2)  # Table 4
       precision  recall  accuracy
    0       3.21    3.75      2.14
    """
    if scale is not None and not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number or None, got {scale!r}")
    first = next((x for x in (n_response, n_ground_truth, n_matched)
                  if isinstance(x, pd.Series)), None)
    index = first.index if first is not None else None
    cols = {}
    for name, x in (("n_response", n_response), ("n_ground_truth", n_ground_truth),
                    ("n_matched", n_matched)):
        s = _series(x, name, index)
        try:
            cols[name] = pd.to_numeric(s, errors="raise").astype("float64")
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must be numeric counts: {err}") from None
    lengths = {len(c) for c in cols.values()}
    if len(lengths) > 1:
        raise ValueError(f"n_response, n_ground_truth, n_matched differ in length: {lengths}")
    if index is not None:
        cols = {k: v.set_axis(index) for k, v in cols.items()}
    df = pd.DataFrame(cols)
    r, g, m = df["n_response"], df["n_ground_truth"], df["n_matched"]
    bad = ((df < 0) | (df - np.floor(df) > 0)).any(axis=1) | (m > r) | (m > g)
    if bad.any():
        row = bad.idxmax()
        raise ValueError(
            f"inconsistent factoid counts for {int(bad.sum())} test case(s), first at index "
            f"{row!r}: n_response={r[row]}, n_ground_truth={g[row]}, n_matched={m[row]}; "
            "counts must be whole numbers >= 0 with n_matched <= min(n_response, n_ground_truth)")
    factor = 1.0 if scale is None else float(scale)
    df["precision"] = m / r.where(r > 0) * factor
    df["recall"] = m / g.where(g > 0) * factor
    union = g + r - m
    df["accuracy"] = m / union.where(union > 0) * factor
    note = pd.Series("", index=df.index, dtype=object)
    note[r == 0] = "no response factoids: precision undefined"
    note[g == 0] = "no ground-truth factoids: recall undefined"
    note[(r == 0) & (g == 0)] = "no factoids on either side: scores undefined"
    note[df[["n_response", "n_ground_truth", "n_matched"]].isna().any(axis=1)] = "missing count"
    df["note"] = note
    empty = int(((r == 0) | (g == 0)).sum())
    if empty:
        warnings.warn(f"{empty} test case(s) with no factoids on a side: their precision or "
                      "recall is NaN (see note)", stacklevel=outside_level())
    return df


def likert_to_scale(x: Any, *, low: float = 1, high: float = 5, scale: float = 9) -> Any:
    """Rescale Likert ratings linearly to 0–``scale``: (x − low)·scale/(high − low).

    Parameters
    ----------
    x : float, array-like or Series
        Ratings in [low, high]; NaN stays NaN.
    low, high : float
        Ends of the Likert scale (default 1–5).
    scale : float
        Top of the target scale (default 9, seed 004 §5: (x − 1)·9/4).

    Returns
    -------
    float, ndarray or Series
        Same shape as ``x`` (a Series keeps its index and name).

    Raises
    ------
    ValueError
        If ``high <= low`` or a rating lies outside [low, high].

    Examples
    --------
    >>> likert_to_scale([1, 3, 5])
    array([0. , 4.5, 9. ])
    """
    if not high > low:
        raise ValueError(f"need high > low, got low={low}, high={high}")
    values = pd.to_numeric(x.astype("float64"), errors="raise") if isinstance(x, pd.Series) \
        else np.asarray(x, dtype="float64")
    arr = np.asarray(values, dtype="float64")
    outside = ~np.isnan(arr) & ((arr < low) | (arr > high))
    if outside.any():
        raise ValueError(f"{int(outside.sum())} rating(s) outside [{low}, {high}], e.g. "
                         f"{arr[outside][0]}")
    out = (values - low) * scale / (high - low)
    return float(out) if np.ndim(x) == 0 else out


def _binary_metrics(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    tp, fp, fn, tn = (np.asarray(v, dtype="float64") for v in (tp, fp, fn, tn))
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        return {"precision": tp / (tp + fp), "recall": tp / (tp + fn),
                "f1": 2 * tp / (2 * tp + fp + fn),
                "mcc": np.where(denom > 0, (tp * tn - fp * fn) / denom, np.nan),
                "accuracy": (tp + tn) / (tp + fp + fn + tn)}


def _bootstrap(data: tuple, stat: Any, ci: float, n_resamples: int, seed: int, **kw: Any) -> Any:
    # scipy >= 1.15 warns (DegenerateDataWarning, a RuntimeWarning) whenever an interval is NaN;
    # we report that case in the ``note`` column instead.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        return stats.bootstrap(data, stat, confidence_level=ci, n_resamples=n_resamples,
                               method="percentile", rng=np.random.default_rng(seed), **kw)


def _agreement(j: np.ndarray, h: np.ndarray, ci: float, n_resamples: int, seed: int) -> pd.DataFrame:
    tp, fp = int((j & h).sum()), int((j & ~h).sum())
    fn, tn = int((~j & h).sum()), int((~j & ~h).sum())
    est = _binary_metrics(tp, fp, fn, tn)
    low = high = {k: np.nan for k in _METRICS}
    boot_nan = dict.fromkeys(_METRICS, 0)
    if len(j) >= 2:
        def stat(a, b, axis=-1):
            a, b = a.astype(bool), b.astype(bool)
            m = _binary_metrics((a & b).sum(axis), (a & ~b).sum(axis), (~a & b).sum(axis),
                                (~a & ~b).sum(axis))
            return np.stack([m[k] for k in _METRICS])
        res = _bootstrap((j, h), stat, ci, n_resamples, seed, paired=True, vectorized=True)
        low = dict(zip(_METRICS, res.confidence_interval.low, strict=True))
        high = dict(zip(_METRICS, res.confidence_interval.high, strict=True))
        boot_nan = dict(zip(_METRICS, np.isnan(res.bootstrap_distribution).sum(axis=-1),
                            strict=True))
    rows = []
    for k in _METRICS:
        note = _UNDEFINED[k] if np.isnan(est[k]) else (
            f"CI undefined: {boot_nan[k]} of {n_resamples} resamples undefined"
            if boot_nan[k] else "")
        rows.append({"metric": k, "estimate": float(est[k]), "ci_low": float(low[k]),
                     "ci_high": float(high[k]), "n": len(j), "tp": tp, "fp": fp, "fn": fn,
                     "tn": tn, "method": f"bootstrap percentile CI (scipy.stats.bootstrap, "
                     f"paired, B={n_resamples}, seed={seed})", "note": note})
    return pd.DataFrame(rows)


def _pairs(judge_pass: Any, human_pass: Any) -> tuple[np.ndarray, np.ndarray]:
    j, h = _series(judge_pass, "judge_pass"), _series(human_pass, "human_pass")
    if isinstance(judge_pass, pd.Series) and isinstance(human_pass, pd.Series):
        if not j.index.is_unique or not h.index.is_unique:
            raise ValueError("judge_pass and human_pass need unique indexes to be aligned")
        n_before = max(len(j), len(h))
        j, h = j.align(h, join="inner")
        if len(j) < n_before:
            warnings.warn(f"{n_before - len(j)} case(s) not in both judge_pass and human_pass "
                          "were dropped", stacklevel=outside_level())
    elif len(j) != len(h):
        raise ValueError(f"judge_pass has {len(j)} cases, human_pass {len(h)}")
    # verdicts through the package's one flag parser (PASS/FAIL, yes/no, 1/0, true/false)
    j, h = as_bool(j.reset_index(drop=True), "judge_pass"), as_bool(
        h.reset_index(drop=True), "human_pass")
    missing = j.isna() | h.isna()
    if missing.any():
        warnings.warn(f"{int(missing.sum())} case(s) with a missing judge or human verdict were "
                      "dropped", stacklevel=outside_level())
    if (~missing).sum() == 0:
        raise ValueError("no case has both a judge and a human verdict")
    return j[~missing].to_numpy(bool), h[~missing].to_numpy(bool)


def _warn_undefined(df: pd.DataFrame, where: str) -> None:
    undefined = df.loc[df["estimate"].isna(), "metric"].tolist()
    if undefined:
        warnings.warn(f"{where}: {', '.join(undefined)} undefined (0/0), reported as NaN; see "
                      "the note column", stacklevel=outside_level())


def judge_agreement(judge_pass: Any, human_pass: Any, *, ci: float = 0.95,
                    n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """PASS/FAIL agreement of a judge with a human reference, with bootstrap intervals.

    Parameters
    ----------
    judge_pass, human_pass : array-like or Series of bool
        One verdict per test case (True/False, 1/0 or "PASS"/"FAIL"); human PASS is the
        positive class. Two Series are aligned on their index; missing verdicts are dropped
        with a warning.
    ci : float
        Confidence level of the intervals.
    n_resamples : int
        Bootstrap resamples of test cases.
    seed : int
        Seed of the bootstrap generator (same seed, same intervals).

    Returns
    -------
    DataFrame
        One row per metric (``precision``, ``recall``, ``f1``, ``mcc``, ``accuracy``) with
        ``metric, estimate, ci_low, ci_high, n, tp, fp, fn, tn, method, note``.

    Raises
    ------
    ValueError
        Non-boolean verdicts, unequal lengths, or no complete pair.

    Notes
    -----
    Precision TP/(TP+FP), recall TP/(TP+FN), F1 2TP/(2TP+FP+FN), MCC (TP·TN − FP·FN)/
    √((TP+FP)(TP+FN)(TN+FP)(TN+FN)), accuracy (TP+TN)/n. A 0/0 metric is NaN with a note and a
    warning (scikit-learn returns 0 for F1/MCC). Intervals: percentile bootstrap over test
    cases (paired); NaN if a resample leaves the metric undefined (said in ``note``). Checked
    against scikit-learn and the paper's Table 3 (MCC 0.427 from TP 25, FP 19, FN 0, TN 9).

    References
    ----------
    Matthews, B. W. (1975). Biochim. Biophys. Acta 405(2), 442–451.
    Chicco, D. & Jurman, G. (2020). BMC Genomics 21, 6.

    Examples
    --------
    >>> out = judge_agreement([1, 1, 0, 0, 1], [1, 0, 0, 0, 1], n_resamples=200)
    >>> row = out.set_index("metric").loc["precision"]
    >>> float(row["estimate"]), int(row["tp"]), int(row["fp"]), row["note"]
    (0.6666666666666666, 2, 1, 'CI undefined: 5 of 200 resamples undefined')
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    j, h = _pairs(judge_pass, human_pass)
    out = _agreement(j, h, ci, n_resamples, seed)
    _warn_undefined(out, "judge_agreement")
    return out
