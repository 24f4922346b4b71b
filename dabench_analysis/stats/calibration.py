# Over 400 lines (<= 500): the calibration table, ECE, MCE, Brier and their summary share one
# binning and one input check; split, the summary and the scores it repeats could drift apart.
"""Confidence calibration of the agent's stated ``confidence_score`` (seed 000 §10).

A task is *correct* when ``final_score >= threshold`` (:func:`~dabench_analysis.schema.correct`,
default 0.8) unless another outcome is given. Confidence is binned into the seed's five
``calibration_bucket`` levels or into equal-width bins. ``figures`` draws the reliability diagram
from :func:`calibration_table`.

Bin-edge convention: bins are closed on the left and open on the right, [lo, hi), except the last,
which is closed, [0.8, 1.0]. So 0.2 is "low", 0.8 is "very_high" (matching the seed's
``confidence_correct = conf >= 0.8``) and 1.0 is "very_high". ``right=True`` switches to
(lo, hi] with the first bin closed. The one binning rule (:func:`~.binning.bin_index`) puts a
value on an edge in the bin its label says (0.7 in [0.70, 0.80) with 10 bins).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import as_bool, as_float, check_ci, check_frame, warn
from dabench_analysis.stats._proportions import proportion_interval
from dabench_analysis.stats._results import Score
from dabench_analysis.stats.binning import bin_index, edge_label, equal_edges

#: The seed's calibration buckets, in order.
BUCKETS: tuple[str, ...] = tuple(schema.columns.CALIBRATION_BUCKETS)

#: Their edges: very_low [0, 0.2), low [0.2, 0.4), medium [0.4, 0.6), high [0.6, 0.8),
#: very_high [0.8, 1.0].
BUCKET_EDGES: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)

_TOL = 1e-9


def _check_confidence(x: np.ndarray, name: str) -> np.ndarray:
    bad = ~np.isnan(x) & ((x < -_TOL) | (x > 1 + _TOL))
    if bad.any():
        raise ValueError(f"{name} must lie in [0, 1]; {int(bad.sum())} values outside, e.g. "
                         f"{x[bad][0]!r}")
    return np.clip(x, 0.0, 1.0)


def assign_bucket(confidence):
    """Seed calibration bucket of a confidence in [0, 1].

    Parameters
    ----------
    confidence : float or array-like of float
        Confidence scores in [0, 1]; NaN allowed.

    Returns
    -------
    str, None or Series
        For a scalar the bucket name (None for NaN); for array-like an ordered categorical
        Series with levels ``BUCKETS`` (NaN for missing).

    Raises
    ------
    ValueError
        A value outside [0, 1].

    Notes
    -----
    Edges [0, 0.2), [0.2, 0.4), [0.4, 0.6), [0.6, 0.8), [0.8, 1.0] (see the module docstring):
    five equal-width bins placed by :func:`~dabench_analysis.stats.binning.bin_index`.

    Examples
    --------
    >>> assign_bucket(0.8), assign_bucket(0.79), assign_bucket(1.0)
    ('very_high', 'high', 'very_high')
    >>> assign_bucket([0.0, 0.2, None]).tolist()
    ['very_low', 'low', nan]
    """
    if np.ndim(confidence) == 0:
        x = np.array([np.nan if confidence is None else float(confidence)])
    else:
        x = as_float(confidence, "confidence").to_numpy()
    x = _check_confidence(x, "confidence")
    idx = bin_index(x, len(BUCKETS), right=False)
    codes = np.where(np.isnan(x), -1, idx)
    if np.ndim(confidence) == 0:
        return None if codes[0] < 0 else BUCKETS[codes[0]]
    index = confidence.index if isinstance(confidence, pd.Series) else None
    cat = pd.Categorical.from_codes(codes, categories=list(BUCKETS), ordered=True)
    return pd.Series(cat, index=index, name="calibration_bucket")


def _inputs(tasks, confidence, correct, threshold):
    """Resolve (confidence, correct) to aligned float/bool arrays with missing rows dropped."""
    tasks = None if tasks is None else check_frame(tasks)
    schema.check_threshold(threshold, scale=correct if isinstance(correct, str) else "final_score")
    def col(v, name):
        if isinstance(v, str):
            if tasks is None:
                raise ValueError(f"{name}={v!r} names a column but no tasks frame was given")
            require_columns(tasks, [v])
            return tasks[v], v
        return (v if isinstance(v, pd.Series) else pd.Series(np.asarray(v))), name

    conf, cname = col(confidence, "confidence")
    conf = _check_confidence(as_float(conf, cname).to_numpy(), cname)
    if correct is None:
        score, sname = col("final_score", "final_score")
        ok = schema.correct(as_float(score, sname), threshold).to_numpy(float, na_value=np.nan)
    else:
        raw, name = col(correct, "correct")
        try:
            ok = as_bool(raw, name).to_numpy(dtype=float, na_value=np.nan)
        except ValueError:
            ok = schema.correct(as_float(raw, name), threshold).to_numpy(float, na_value=np.nan)
    if conf.size != ok.size:
        raise ValueError(f"confidence and correct differ in length: {conf.size} vs {ok.size}")
    keep = ~(np.isnan(conf) | np.isnan(ok))
    n_drop = int((~keep).sum())
    notes = [f"{n_drop} tasks dropped: confidence or correctness missing"] if n_drop else []
    return conf[keep], ok[keep].astype(bool), notes, n_drop


def _n_bins(n_bins: int | None) -> int:
    if n_bins is None:
        return len(BUCKETS)
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer or None, got {n_bins!r}")
    return int(n_bins)


def _bins(conf, ok, n_bins, right, ci=0.95) -> pd.DataFrame:
    k = _n_bins(n_bins)
    edges = equal_edges(k)
    idx = bin_index(conf, k, right=right)
    rows = []
    for b in range(k):
        m = idx == b
        n, hits = int(m.sum()), int(ok[m].sum())
        lo, hi = proportion_interval(hits, n, ci, "wilson")[:2]
        if n_bins is None:
            name = BUCKETS[b]
        else:
            left = "[" if (not right or b == 0) else "("
            rgt = "]" if (right or b == k - 1) else ")"
            name = f"{left}{edge_label(b, k)}, {edge_label(b + 1, k)}{rgt}"
        mc = float(conf[m].mean()) if n else np.nan
        acc = hits / n if n else np.nan
        rows.append({"bucket": name, "lower": edges[b], "upper": edges[b + 1], "n": n,
                     "n_correct": hits, "mean_confidence": mc, "accuracy": acc,
                     "gap": mc - acc if n else np.nan, "ci_low": lo, "ci_high": hi})
    out = pd.DataFrame(rows)
    out["bucket"] = pd.Categorical(out["bucket"], categories=list(out["bucket"]), ordered=True)
    return out


def _ece_mce(conf, ok, n_bins, right) -> tuple[float, float]:
    """ECE = sum_b (n_b / N) |acc_b - conf_b| and MCE = max_b |acc_b - conf_b| (n_b > 0)."""
    if conf.size == 0:
        return np.nan, np.nan
    t = _bins(conf, ok, n_bins, right)
    t = t[t.n > 0]
    gaps = np.abs(t.accuracy - t.mean_confidence)
    return float(np.sum(t.n / t.n.sum() * gaps)), float(gaps.max())


def _binning(n_bins: int | None, right: bool) -> str:
    edges = "(lo, hi]" if right else "[lo, hi)"
    return ("the guide's five buckets, " if n_bins is None else
            f"{int(n_bins)} equal-width bins, ") + edges


def _errors(tasks, confidence, correct, threshold, n_bins, right, what) -> Score:
    conf, ok, notes, _ = _inputs(tasks, confidence, correct, threshold)
    empty = [f"no tasks: {what} undefined"] if conf.size == 0 else []
    warn(notes + empty)
    value = _ece_mce(conf, ok, n_bins, right)[0 if what == "ECE" else 1]
    return Score(value, int(conf.size), f"{what}, {_binning(n_bins, right)}",
                 "; ".join(empty))


@needs("confidence_score", "final_score")
def calibration_table(tasks: pd.DataFrame | None = None, *, confidence="confidence_score",
                      correct=None, threshold: float = schema.SUCCESS_THRESHOLD,
                      n_bins: int | None = None, right: bool = False,
                      ci: float = 0.95) -> pd.DataFrame:
    """Accuracy against stated confidence per bucket (the data of a reliability diagram).

    Parameters
    ----------
    tasks : DataFrame, optional
        One row per task (``run.tasks``; every row is one task, so a frame of several runs is
        pooled). None when ``confidence`` and ``correct`` are arrays.
    confidence : str or array-like
        Column name (default ``confidence_score``, in [0, 1]) or values.
    correct : str, array-like or None
        Outcome: a flag column/array (pandas ``boolean`` or 0/1), or a score column/array
        thresholded at ``threshold``. None: ``final_score >= threshold``
        (:func:`dabench_analysis.schema.correct`).
    threshold : float
        Success threshold on scores, in (0, 1] (default 0.8, the seed's).
    n_bins : int or None
        None: the seed's five named buckets. An integer: that many equal-width bins on [0, 1],
        labelled by their exact edges ("[0.60, 0.70)", "[1/15, 2/15)").
    right : bool
        Bin edges (lo, hi] instead of [lo, hi) (see the module docstring).
    ci : float
        Level of the Wilson interval of each bucket's accuracy.

    Returns
    -------
    DataFrame
        One row per bucket, in order, empty buckets kept with n = 0: ``bucket`` (ordered
        categorical), ``lower``, ``upper``, ``n``, ``n_correct``, ``mean_confidence``,
        ``accuracy``, ``gap`` (mean_confidence − accuracy; positive = overconfident),
        ``ci_low``, ``ci_high`` (Wilson interval of accuracy; NaN when n = 0).

    Raises
    ------
    ValueError
        Missing columns, confidence outside [0, 1], unequal lengths, ``threshold`` outside
        (0, 1] (:func:`~dabench_analysis.stats._inputs.check_threshold`).
    TypeError
        ``tasks`` is a Run or Runs (pass ``run.tasks``).

    Notes
    -----
    Bin b of k holds the confidences c with b/k <= c < (b+1)/k (the last bin also holds 1.0;
    with ``right=True``: b/k < c <= (b+1)/k, the first also holds 0), decided exactly by
    :func:`~dabench_analysis.stats.binning.bin_index`: 0.7 is in [0.70, 0.80) with 10 bins,
    where a comparison with ``np.linspace(0, 1, 11)`` put it in [0.60, 0.70). scikit-learn's
    ``calibration_curve`` puts edge values in the lower bin ((lo, hi], i.e. ``right=True``).

    Examples
    --------
    >>> df = pd.DataFrame({"confidence_score": [0.9, 0.85, 0.3, 0.5],
    ...                    "final_score": [1.0, 0.2, 0.0, 0.9]})
    >>> calibration_table(df)[["bucket", "n", "accuracy"]].to_string(index=False)
    '   bucket  n  accuracy\\n very_low  0       NaN\\n      low  1       0.0\\n   medium  1       1.0\\n     high  0       NaN\\nvery_high  2       0.5'
    """
    check_ci(ci)
    conf, ok, notes, n_drop = _inputs(tasks, confidence, correct, threshold)
    warn(notes)
    return _bins(conf, ok, n_bins, right, ci)


def expected_calibration_error(tasks: pd.DataFrame | None = None, *,
                               confidence="confidence_score", correct=None,
                               threshold: float = schema.SUCCESS_THRESHOLD,
                               n_bins: int | None = None, right: bool = False) -> Score:
    """Expected calibration error: Σ_b (n_b/N) abs(accuracy_b − mean_confidence_b).

    Parameters
    ----------
    tasks, confidence, correct, threshold, n_bins, right
        As in :func:`calibration_table` (default: the seed's five buckets, [lo, hi) edges).

    Returns
    -------
    Score
        ``estimate`` (ECE in [0, 1]; NaN, with a warning and a note, when no task has both
        values), ``n`` (tasks with both), ``method`` ("ECE, " and the binning).

    Raises
    ------
    ValueError
        As :func:`calibration_table`.

    Notes
    -----
    Confidence is the agent's probability that *its answer* is correct, so this is the
    top-label ECE of Guo et al. (2017) and the reliability-diagram ECE at once. For a binary
    classifier with positive-class probability p, pass ``confidence=p, correct=y`` for the
    positive-class ECE or ``confidence=max(p, 1 - p), correct=(p > 0.5) == y`` for the
    top-label ECE; the conventions give different numbers (refvectors README item 16).
    Equal-width bins with ``n_bins=10`` are the common choice in papers; the default uses the
    seed's five buckets so that the ECE matches :func:`calibration_table`.

    References
    ----------
    Naeini, M. P., Cooper, G., Hauskrecht, M. (2015). Obtaining well calibrated probabilities
    using Bayesian binning. AAAI. Guo, C., Pleiss, G., Sun, Y., Weinberger, K. Q. (2017). On
    calibration of modern neural networks. ICML.

    Examples
    --------
    >>> p = [0.1, 0.2, 0.3, 0.4, 0.65, 0.7, 0.8, 0.9, 1.0]
    >>> y = [0, 0, 0, 0, 1, 1, 1, 1, 1]
    >>> res = expected_calibration_error(confidence=p, correct=y, n_bins=3)
    >>> round(res.estimate, 6), res.n, res.method
    (0.138889, 9, 'ECE, 3 equal-width bins, [lo, hi)')
    """
    return _errors(tasks, confidence, correct, threshold, n_bins, right, "ECE")


def max_calibration_error(tasks: pd.DataFrame | None = None, *, confidence="confidence_score",
                          correct=None, threshold: float = schema.SUCCESS_THRESHOLD,
                          n_bins: int | None = None, right: bool = False) -> Score:
    """Maximum calibration error: max over non-empty bins of abs(accuracy_b − mean_confidence_b).

    Parameters
    ----------
    tasks, confidence, correct, threshold, n_bins, right
        As in :func:`calibration_table`.

    Returns
    -------
    Score
        ``estimate`` (MCE in [0, 1]; NaN, with a warning and a note, when no task has both
        values), ``n``, ``method`` ("MCE, " and the binning).

    Raises
    ------
    ValueError
        As :func:`calibration_table`.

    Notes
    -----
    MCE = max_b abs(acc_b − conf_b) over bins with n_b > 0 (Naeini et al. 2015, eq. 2); bins as in
    :func:`calibration_table`.

    References
    ----------
    Naeini, M. P., Cooper, G., Hauskrecht, M. (2015). Obtaining well calibrated probabilities
    using Bayesian binning. AAAI.

    Examples
    --------
    >>> round(max_calibration_error(confidence=[0.9, 0.9, 0.1], correct=[1, 0, 0]).estimate, 4)
    0.4
    """
    return _errors(tasks, confidence, correct, threshold, n_bins, right, "MCE")


def brier_score(tasks: pd.DataFrame | None = None, *, confidence="confidence_score",
                correct=None, threshold: float = schema.SUCCESS_THRESHOLD,
                scale_by_half: bool = True) -> Score:
    """Brier score: mean of (confidence − correct)², lower is better.

    Parameters
    ----------
    tasks, confidence, correct, threshold
        As in :func:`calibration_table`.
    scale_by_half : bool
        True (default): the mean squared error of the confidence, in [0, 1] (scikit-learn's
        ``brier_score_loss`` default). False: Brier's (1950) two-class sum, twice as large.

    Returns
    -------
    Score
        ``estimate`` (the Brier score; NaN, with a warning and a note, when no task has both
        values), ``n``, ``method`` ("Brier (mean squared error)" or "Brier (two-class sum)").

    Raises
    ------
    ValueError
        As :func:`calibration_table`.

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. Monthly
    Weather Review 78(1), 1–3.

    Examples
    --------
    >>> res = brier_score(confidence=[0.1, 0.9, 0.8, 0.3], correct=[0, 1, 1, 0])
    >>> round(res.estimate, 6), res.method  # sklearn brier_score_loss: 0.0375
    (0.0375, 'Brier (mean squared error)')
    """
    conf, ok, notes, n_drop = _inputs(tasks, confidence, correct, threshold)
    name = "Brier (mean squared error)" if scale_by_half else "Brier (two-class sum)"
    if conf.size == 0:
        warn(notes + ["no tasks: Brier score undefined"])
        return Score(float("nan"), 0, name, "no tasks: Brier score undefined")
    warn(notes)
    b = float(np.mean((conf - ok) ** 2))
    return Score(b if scale_by_half else 2 * b, int(conf.size), name)


@needs("confidence_score", "final_score")
def calibration_summary(tasks: pd.DataFrame | None = None, *, confidence="confidence_score",
                        correct=None, threshold: float = schema.SUCCESS_THRESHOLD,
                        n_bins: int | None = None, right: bool = False) -> pd.DataFrame:
    """One-row calibration summary for tables.

    Parameters
    ----------
    tasks, confidence, correct, threshold, n_bins, right
        As in :func:`calibration_table`.

    Returns
    -------
    DataFrame
        One row: ``n``, ``n_dropped``, ``accuracy``, ``mean_confidence``, ``ece``, ``mce``,
        ``brier``, ``n_bins``, ``binning`` (e.g. "seed buckets, [lo, hi)").

    Raises
    ------
    ValueError
        As :func:`calibration_table`.

    Examples
    --------
    >>> df = pd.DataFrame({"confidence_score": [0.9, 0.1], "final_score": [1.0, 0.0]})
    >>> round(float(calibration_summary(df).ece[0]), 4)
    0.1
    """
    conf, ok, notes, n_drop = _inputs(tasks, confidence, correct, threshold)
    warn(notes)
    ece, mce = _ece_mce(conf, ok, n_bins, right)
    brier, acc, mc = ((float(np.mean((conf - ok) ** 2)), float(ok.mean()), float(conf.mean()))
                      if conf.size else (np.nan, np.nan, np.nan))
    return pd.DataFrame([{
        "n": int(conf.size), "n_dropped": n_drop, "accuracy": acc,
        "mean_confidence": mc, "ece": ece, "mce": mce, "brier": brier,
        "n_bins": len(BUCKETS) if n_bins is None else int(n_bins),
        "binning": _binning(n_bins, right)}])
