"""Judge–human agreement and inter-rater reliability for factoid-level judging (seed 004).

Factoid scores (Eq. 2), Likert rescaling, PASS/FAIL agreement of an LLM judge with a human
reference (Table 3), inter-annotator reliability (Table 2) and the configuration comparison.
Frames in, tidy frames out; no file IO. Inter-rater coefficients come from irrCAC, krippendorff
and statsmodels; intervals from :func:`scipy.stats.bootstrap` (seeded) or the libraries' SEs.

Conventions chosen here (refvectors README items 11–13, 18):

* Weights are built from category *values* (Gwet/irrCAC), so unused levels of a scale still
  count; ``"ordinal"`` means Gwet's ordinal weights for AC2, Fleiss, Conger and Cohen, but
  Krippendorff's own ordinal metric for alpha (the two differ: 0.834 vs 0.815 on Krippendorff's
  canonical data). ``"quadratic"`` = Krippendorff ``"interval"``.
* Fleiss' kappa is Gwet's generalised form (missing ratings allowed), not statsmodels' classic
  one, which needs the same number of raters per item.
* A metric whose formula is 0/0 (no positives, one category only) is NaN with the reason in
  ``note`` and a :class:`UserWarning`; scikit-learn instead returns 0 for F1 and MCC.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["factoid_scores", "likert_to_scale", "judge_agreement", "aggregate_annotators",
           "inter_rater", "configuration_table", "plot_configurations"]

_METRICS = ("precision", "recall", "f1", "mcc", "accuracy")
_WEIGHTS = {"identity": "identity", "nominal": "identity", "unweighted": "identity",
            "ordinal": "ordinal", "linear": "linear", "quadratic": "quadratic"}
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
        |F_r| response factoids, |F_g| query-relevant ground-truth factoids and |F_rg| matched
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
    P = |F_rg|/|F_r|, R = |F_rg|/|F_g|, A = |F_rg|/(|F_g| + |F_r| − |F_rg|). An empty side makes
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
                      "recall is NaN (see note)", stacklevel=2)
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


def _to_flag(s: pd.Series, name: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("boolean")
    text = s.astype("string").str.strip().str.lower()
    lookup = {"true": True, "1": True, "1.0": True, "pass": True,
              "false": False, "0": False, "0.0": False, "fail": False}
    out = text.map(lookup).astype("boolean")
    bad = text.notna() & out.isna()
    if bad.any():
        raise ValueError(f"{name} must be boolean (True/False, 1/0, PASS/FAIL); got "
                         f"{s[bad].iloc[0]!r} at index {s[bad].index[0]!r}")
    return out


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
                          "were dropped", stacklevel=3)
    elif len(j) != len(h):
        raise ValueError(f"judge_pass has {len(j)} cases, human_pass {len(h)}")
    j, h = _to_flag(j.reset_index(drop=True), "judge_pass"), _to_flag(
        h.reset_index(drop=True), "human_pass")
    missing = j.isna() | h.isna()
    if missing.any():
        warnings.warn(f"{int(missing.sum())} case(s) with a missing judge or human verdict were "
                      "dropped", stacklevel=3)
    if (~missing).sum() == 0:
        raise ValueError("no case has both a judge and a human verdict")
    return j[~missing].to_numpy(bool), h[~missing].to_numpy(bool)


def _warn_undefined(df: pd.DataFrame, where: str) -> None:
    undefined = df.loc[df["estimate"].isna(), "metric"].tolist()
    if undefined:
        warnings.warn(f"{where}: {', '.join(undefined)} undefined (0/0), reported as NaN; see "
                      "the note column", stacklevel=3)


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


def aggregate_annotators(ratings: pd.DataFrame, *, rule: str = "majority",
                         pass_threshold: float) -> pd.Series:
    """Human PASS/FAIL reference per item from several annotators' ratings.

    Parameters
    ----------
    ratings : DataFrame
        Items × annotators, numeric ratings (e.g. Likert 1–5 or 0–9 scores); NaN = not rated.
    rule : {"majority", "mean", "median", "unanimous", "any"}
        ``majority``: PASS if more than half of the available ratings are ≥ threshold, FAIL if
        more than half are below, <NA> on a tie. ``mean``/``median``: the statistic of the
        available ratings ≥ threshold. ``unanimous``/``any``: all/any available rating passes.
    pass_threshold : float
        A rating ≥ this counts as PASS, in the units of ``ratings`` (required: no default).

    Returns
    -------
    Series
        ``human_pass`` (pandas ``boolean``), indexed like ``ratings``; <NA> for unrated items
        and majority ties (with a warning).

    Raises
    ------
    ValueError
        Unknown rule or non-numeric ratings.

    Examples
    --------
    >>> r = pd.DataFrame({"a": [5, 2, 4], "b": [4, 1, 2], "c": [1, 2, 5]})
    >>> aggregate_annotators(r, pass_threshold=4).tolist()
    [True, False, True]
    """
    rules = ("majority", "mean", "median", "unanimous", "any")
    if rule not in rules:
        raise ValueError(f"rule {rule!r} unknown; known: {', '.join(rules)}")
    try:
        x = pd.DataFrame(ratings).apply(pd.to_numeric).astype("float64")
    except (TypeError, ValueError) as err:
        raise ValueError(f"ratings must be numeric: {err}") from None
    n = x.notna().sum(axis=1)
    passes = (x >= pass_threshold).sum(axis=1)
    if rule == "majority":
        out = pd.Series(pd.NA, index=x.index, dtype="boolean")
        out[2 * passes > n] = True
        out[2 * (n - passes) > n] = False
    elif rule in ("mean", "median"):
        stat = x.mean(axis=1) if rule == "mean" else x.median(axis=1)
        out = (stat >= pass_threshold).astype("boolean")
    else:
        out = ((passes == n) if rule == "unanimous" else (passes > 0)).astype("boolean")
    out[n == 0] = pd.NA
    if out.isna().any():
        warnings.warn(f"{int(out.isna().sum())} item(s) have no human verdict ({int((n == 0).sum())}"
                      " unrated, the rest majority ties); they are <NA>", stacklevel=2)
    return out.rename("human_pass")


def _prepare_ratings(ratings: Any, categories: Sequence | None) -> tuple[pd.DataFrame, list]:
    frame = pd.DataFrame(ratings)
    if frame.shape[1] < 2:
        raise ValueError(f"ratings must be items x raters with >= 2 rater columns, got "
                         f"{frame.shape[1]}")
    values = [v for v in frame.to_numpy(dtype=object).ravel() if not pd.isna(v)]
    if categories is not None:
        cats = list(categories)
    elif all(isinstance(d, pd.CategoricalDtype) and d.ordered for d in frame.dtypes):
        cats = list(frame.dtypes.iloc[0].categories)
    else:
        cats = sorted(set(values), key=lambda v: (isinstance(v, str), v))
    if len(set(cats)) != len(cats):
        raise ValueError(f"categories must be unique, got {cats}")
    numeric = all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in cats)
    cats = sorted(cats) if numeric else cats
    scores = [float(c) for c in cats] if numeric else [float(i) for i in range(1, len(cats) + 1)]
    lookup = dict(zip(cats, scores, strict=True))
    unknown = [v for v in values if v not in lookup]
    if unknown:
        raise ValueError(f"rating(s) {unknown[:3]} not among categories {cats}")
    if len(scores) < 2:
        raise ValueError(f"need >= 2 categories, got {cats}; pass categories= with the full scale")
    codes = frame.map(lambda v: np.nan if pd.isna(v) else lookup[v]).astype("float64")
    return codes.dropna(how="all").dropna(axis=1, how="all"), scores


def _cac(codes: pd.DataFrame, scores: list, weights: str, method: str, ci: float) -> dict:
    from irrCAC.raw import CAC

    # irrCAC 0.4.4 under pandas 3: without explicit categories, DataFrame.stack() keeps NaN, so
    # NaN became a category and AC1 was silently wrong (0.786 vs 0.775); categories are always
    # passed. Its Pandas4Warning (DataFrame.all positional axis, in conger) is silenced here only.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(pd.errors, "Pandas4Warning", DeprecationWarning))
        with np.errstate(divide="raise", invalid="raise"):
            cac = CAC(codes, weights=weights, categories=scores, confidence_level=ci, digits=15)
            est = getattr(cac, method)()["est"]
    se = float(est["se"])
    return {"estimate": float(est["coefficient_value"]), "se": 0.0 if se <= 1e-15 else se,
            "ci_low": float(est["confidence_interval"][0]),
            "ci_high": float(est["confidence_interval"][1]), "pa": float(est["pa"]),
            "pe": float(est["pe"])}


def _abs_metric(v1, v2, i1, i2, n_v, dtype=np.float64):  # noqa: ARG001 (krippendorff API)
    return np.abs(v1 - v2).astype(dtype)


def _kripp(arr: np.ndarray, scores: list, weights: str) -> float:
    import krippendorff

    level = {"identity": "nominal", "ordinal": "ordinal", "quadratic": "interval",
             "linear": _abs_metric}[weights]
    with np.errstate(all="ignore"):
        value = float(krippendorff.alpha(arr, value_domain=scores, level_of_measurement=level))
    return value if np.isfinite(value) else np.nan


def _cohen(codes: pd.DataFrame, scores: list, weights: str, ci: float) -> dict:
    from irrCAC.weights import Weights
    from statsmodels.stats.inter_rater import cohens_kappa

    pair = codes.dropna()
    table = pd.crosstab(pair.iloc[:, 0], pair.iloc[:, 1]).reindex(
        index=scores, columns=scores, fill_value=0).to_numpy(float)
    w = None if weights == "identity" else 1 - np.asarray(Weights(scores)[weights])
    with np.errstate(divide="raise", invalid="raise"):
        res = cohens_kappa(table, weights=w)
    half = stats.norm.ppf(0.5 + ci / 2) * res["std_kappa"]
    return {"estimate": float(res["kappa"]), "se": float(res["std_kappa"]),
            "ci_low": max(-1.0, float(res["kappa"] - half)),
            "ci_high": min(1.0, float(res["kappa"] + half)),
            "n_items": len(pair)}


def inter_rater(ratings: pd.DataFrame, *, weights: str = "ordinal",
                categories: Sequence | None = None, ci: float = 0.95,
                n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Inter-rater reliability of an items × raters table, one row per coefficient (Table 2).

    Parameters
    ----------
    ratings : DataFrame
        One row per item, one column per rater; ordinal scores (e.g. Likert 1–5) or category
        labels; NaN/None = not rated (missing ratings allowed).
    weights : {"ordinal", "linear", "quadratic", "identity"}
        Disagreement weights of the weighted coefficients ("nominal"/"unweighted" = identity).
    categories : sequence, optional
        The full scale, e.g. ``[1, 2, 3, 4, 5]``. Default: the observed values (an ordered
        Categorical's categories). Gwet's chance agreement depends on the number of categories,
        so pass the scale. Labels are weighted by position, numbers by value.
    ci : float in [0.90, 0.99]
        Confidence level (irrCAC's permitted range).
    n_resamples, seed : int
        Bootstrap resamples and seed for Krippendorff's alpha interval.

    Returns
    -------
    DataFrame
        Rows ``percent_agreement``, ``gwet_ac1``, ``gwet_ac2`` (not for identity weights),
        ``fleiss_kappa``, ``krippendorff_alpha`` and ``cohens_kappa`` (2 raters) or
        ``conger_kappa`` (> 2 raters); columns ``coefficient, estimate, se, ci_low, ci_high,
        n_items, n_raters, weights, method, note`` (``n_items``: items the coefficient used).

    Raises
    ------
    ValueError
        Fewer than 2 raters, 2 categories or 2 items rated twice; unknown weights; ratings
        outside ``categories``; ``ci`` outside [0.90, 0.99].

    Notes
    -----
    AC1/AC2, generalised Fleiss and Conger: irrCAC ``CAC`` (Gwet 2014), t-intervals on Gwet's
    variance (df = items − 1, upper bound capped at 1). Percent agreement (unweighted) is
    irrCAC's p_a over items with ≥ 2 ratings; its SE is Brennan–Prediger's scaled by (1 − 1/q),
    which equals Gwet's SE of p_a. Krippendorff's alpha: ``krippendorff`` package (ordinal
    metric for "ordinal", interval for "quadratic", |a − b| for "linear"), percentile bootstrap
    over items. Cohen: statsmodels ``cohens_kappa`` with 1 − Gwet weights, Wald interval.
    If all ratings fall in one category, kappa-type coefficients and alpha are 0/0: NaN, note,
    warning; AC1/AC2 and percent agreement are 1. Checked against irrCAC's README (raw4raters),
    Krippendorff (2011), the SAS kappa example and the Wikipedia Fleiss example.

    References
    ----------
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School.
    Fleiss, J. L. (1971). Psychological Bulletin 76(5), 378–382.
    Cohen, J. (1968). Psychological Bulletin 70(4), 213–220.

    Examples
    --------
    >>> r = pd.DataFrame({"a": [1, 2, 3, 3, 5, 4], "b": [1, 2, 3, 4, 5, 4], "c": [2, 2, 3, 3, 5, 4]})
    >>> out = inter_rater(r, categories=[1, 2, 3, 4, 5], n_resamples=200)
    >>> out["coefficient"].tolist()
    ['percent_agreement', 'gwet_ac1', 'gwet_ac2', 'fleiss_kappa', 'krippendorff_alpha', 'conger_kappa']
    >>> float(round(out.set_index("coefficient").loc["gwet_ac2", "estimate"], 4))
    0.9245
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights {weights!r} unknown; known: {', '.join(_WEIGHTS)}")
    if not 0.90 <= ci <= 0.99:
        raise ValueError(f"ci must be in [0.90, 0.99] (irrCAC), got {ci}")
    w = _WEIGHTS[weights]
    codes, scores = _prepare_ratings(ratings, categories)
    rated = codes.notna().sum(axis=1)
    if (rated >= 2).sum() < 2:
        raise ValueError("need at least 2 items rated by at least 2 raters")
    one_cat = len(np.unique(codes.to_numpy()[~np.isnan(codes.to_numpy())])) == 1
    n, r, pe_bp = len(codes), codes.shape[1], 1 / len(scores)
    base = {"n_items": n, "n_raters": r, "note": ""}
    rows = []
    bp = _cac(codes[rated >= 2], scores, "identity", "bp", ci)
    rows.append(base | {"coefficient": "percent_agreement", "estimate": bp["pa"],
                        "se": bp["se"] * (1 - pe_bp), "ci_low": pe_bp + (1 - pe_bp) * bp["ci_low"],
                        "ci_high": pe_bp + (1 - pe_bp) * bp["ci_high"], "n_items": int(
                            (rated >= 2).sum()), "weights": "identity", "method":
                        "percent agreement (irrCAC p_a; SE via Brennan-Prediger, t-interval)"})
    gw = [("gwet_ac1", "identity")] + ([("gwet_ac2", w)] if w != "identity" else [])
    for name, wt in gw + [("fleiss_kappa", w)] + ([("conger_kappa", w)] if r > 2 else []):
        method = {"g": "gwet", "f": "fleiss", "c": "conger"}[name[0]]
        row = base | {"coefficient": name, "weights": wt,
                      "method": f"irrCAC CAC.{method} (Gwet 2014), t-interval"}
        if one_cat and name[0] != "g":
            rows.append(row | _nan_row("all ratings in one category (chance agreement = 1)"))
        else:
            rows.append(row | {k: v for k, v in _cac(codes, scores, wt, method, ci).items()
                               if k not in ("pa", "pe")})
    rows.insert(len(rows) - (r > 2), _alpha_row(codes, scores, w, ci, n_resamples, seed, base,
                                                one_cat))
    if r == 2:
        row = base | {"coefficient": "cohens_kappa", "weights": w,
                      "method": "statsmodels cohens_kappa, Wald interval"}
        rows.append(row | (_nan_row("all ratings in one category (chance agreement = 1)")
                           if one_cat else _cohen(codes, scores, w, ci)))
    cols = ["coefficient", "estimate", "se", "ci_low", "ci_high", "n_items", "n_raters",
            "weights", "method", "note"]
    out = pd.DataFrame(rows)[cols]
    undefined = out.loc[out["estimate"].isna(), "coefficient"].tolist()
    if undefined:
        warnings.warn(f"inter_rater: {', '.join(undefined)} undefined: all ratings fall in one "
                      "category; reported as NaN", stacklevel=2)
    return out


def _nan_row(reason: str) -> dict:
    return {"estimate": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
            "note": f"undefined: {reason}"}


def _alpha_row(codes, scores, w, ci, n_resamples, seed, base, one_cat) -> dict:
    level = {"identity": "nominal", "ordinal": "ordinal", "quadratic": "interval",
             "linear": "|a-b|"}[w]
    row = base | {"coefficient": "krippendorff_alpha", "weights": w, "n_items": int(
        (codes.notna().sum(axis=1) >= 2).sum()), "method": f"krippendorff package ({level} "
        f"metric), percentile bootstrap over items (B={n_resamples}, seed={seed})"}
    if one_cat:
        return row | _nan_row("all ratings in one category (expected disagreement = 0)")
    arr = codes.to_numpy().T
    res = _bootstrap((np.arange(arr.shape[1]),), lambda i: _kripp(arr[:, i], scores, w), ci,
                     n_resamples, seed, vectorized=False)
    n_nan = int(np.isnan(res.bootstrap_distribution).sum())
    note = f"CI undefined: {n_nan} of {n_resamples} resamples undefined" if n_nan else ""
    return row | {"estimate": _kripp(arr, scores, w), "se": float(res.standard_error),
                  "ci_low": float(res.confidence_interval.low),
                  "ci_high": float(res.confidence_interval.high), "note": note}


def configuration_table(cases: pd.DataFrame, *, by: str = "configuration",
                        reference: Any = None, judge: str = "judge_pass",
                        human: str = "human_pass", tokens: str | None = "tokens",
                        ci: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Judge configurations compared on agreement with humans and cost (seed 004, Table 3).

    Parameters
    ----------
    cases : DataFrame
        One row per (test case, configuration) with columns ``by``, ``judge``, ``human``
        (booleans) and ``tokens`` (tokens per test case). Rows with a missing verdict are
        dropped with a warning.
    by : str
        Column naming the judge configuration.
    reference : scalar, optional
        Configuration the relative changes are taken against (default: the first one).
    judge, human, tokens : str
        Column names; ``tokens=None`` leaves ``tokens_mean`` NaN.
    ci, n_resamples, seed
        Bootstrap settings as in :func:`judge_agreement` (interval for MCC).

    Returns
    -------
    DataFrame
        One row per configuration (order of appearance): ``by, n, tp, fp, fn, tn, mcc,
        mcc_ci_low, mcc_ci_high, precision, recall, f1, tokens_mean`` and
        ``<metric>_rel_change`` = (x − x_ref)/|x_ref| for mcc, precision, recall, f1 and
        tokens_mean (NaN if the reference value is 0 or undefined).

    Raises
    ------
    ValueError
        Missing columns or an unknown ``reference``.

    Notes
    -----
    The paper reports +29 % MCC (0.427 vs 0.331) and −16 % tokens (24.6k vs 29.2k) against
    the natural-language baseline; |x_ref| keeps the sign meaningful for a negative MCC.
    ``tokens_mean`` is over the rows used for agreement.

    Examples
    --------
    >>> c = pd.DataFrame({"configuration": ["a"] * 4 + ["b"] * 4,
    ...                   "judge_pass": [1, 1, 0, 0, 1, 0, 0, 1], "human_pass": [1, 0, 0, 1] * 2,
    ...                   "tokens": [10, 10, 10, 10, 5, 5, 5, 5]})
    >>> configuration_table(c, reference="a", n_resamples=100)[["mcc", "tokens_mean_rel_change"]]
       mcc  tokens_mean_rel_change
    0  0.0                     0.0
    1  1.0                    -0.5
    """
    needed = [c for c in (by, judge, human, tokens) if c is not None]
    missing = [c for c in needed if c not in cases.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in cases; known: {', '.join(map(str, cases))}")
    rows, dropped = [], 0
    for name, g in cases.groupby(by, sort=False, observed=True):
        j, h = _to_flag(g[judge], judge), _to_flag(g[human], human)
        keep = (j.notna() & h.notna()).to_numpy()
        dropped += int((~keep).sum())
        a = _agreement(j[keep].to_numpy(bool), h[keep].to_numpy(bool), ci, n_resamples,
                       seed).set_index("metric")
        tok = pd.to_numeric(g.loc[keep, tokens]).mean() if tokens else np.nan
        rows.append({by: name, **a.loc["mcc", ["n", "tp", "fp", "fn", "tn"]].to_dict(),
                     "mcc": a.at["mcc", "estimate"], "mcc_ci_low": a.at["mcc", "ci_low"],
                     "mcc_ci_high": a.at["mcc", "ci_high"],
                     **{k: a.at[k, "estimate"] for k in ("precision", "recall", "f1")},
                     "tokens_mean": float(tok)})
    if dropped:
        warnings.warn(f"{dropped} row(s) with a missing judge or human verdict were dropped",
                      stacklevel=2)
    table = pd.DataFrame(rows)
    names = table[by].tolist()
    reference = names[0] if reference is None else reference
    if reference not in names:
        raise ValueError(f"reference {reference!r} not in {by}; known: {', '.join(map(str, names))}")
    ref = table.loc[names.index(reference)]
    for col in ("mcc", "precision", "recall", "f1", "tokens_mean"):
        base = abs(ref[col]) if np.isfinite(ref[col]) and ref[col] != 0 else np.nan
        table[f"{col}_rel_change"] = (table[col] - ref[col]) / base
    undefined = table.loc[table[["mcc", "precision", "recall", "f1"]].isna().any(axis=1), by]
    if len(undefined):
        warnings.warn(f"configuration_table: a metric is undefined (0/0) for "
                      f"{', '.join(map(str, undefined))}; reported as NaN", stacklevel=2)
    return table


def plot_configurations(table: pd.DataFrame, *, by: str = "configuration", metric: str = "mcc",
                        ax: Any = None) -> Any:
    """Horizontal bars of one agreement metric per judge configuration, with its interval.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`configuration_table`.
    by, metric : str
        Label column and metric column (``<metric>_ci_low/high`` drawn if present).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is made otherwise.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> t = pd.DataFrame({"configuration": ["a", "b"], "mcc": [0.2, 0.5],
    ...                   "mcc_ci_low": [0.0, 0.3], "mcc_ci_high": [0.4, 0.7]})
    >>> len(plot_configurations(t).patches)
    2
    """
    from dabench_analysis.style import OKABE_ITO, axes_or_new

    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.25 + 0.15 * len(table)))
    y = np.arange(len(table))
    err = None
    if f"{metric}_ci_low" in table:
        lo, hi = table[f"{metric}_ci_low"], table[f"{metric}_ci_high"]
        err = np.vstack([(table[metric] - lo).clip(lower=0), (hi - table[metric]).clip(lower=0)])
    ax.barh(y, table[metric], xerr=err, color=OKABE_ITO[0], capsize=3)
    ax.set_yticks(y, table[by].astype(str))
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_xlabel(f"{metric.upper() if metric == 'mcc' else metric} (judge vs human reference)")
    return ax
