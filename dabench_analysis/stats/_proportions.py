"""Proportions: intervals (Wilson by default; Clopper–Pearson, Jeffreys, ...), and McNemar's test
of paired outcomes with the package's one rule for its degenerate cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as st
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from dabench_analysis import schema
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import (
    as_bool,
    as_float,
    check_ci,
    check_frame,
    pair_runs,
    warn,
)
from dabench_analysis.stats._results import Interval, TestResult

_METHOD_NAMES = {"wilson": "Wilson", "wilson_cc": "Wilson, continuity-corrected (Newcombe 4)",
                 "clopper-pearson": "Clopper-Pearson", "beta": "Clopper-Pearson",
                 "exact": "Clopper-Pearson", "agresti-coull": "Agresti-Coull",
                 "jeffreys": "Jeffreys (Brown-Cai-DasGupta end points)", "wald": "Wald"}
PROPORTION_METHODS = tuple(_METHOD_NAMES)


def proportion_interval(k: int, n: int, ci: float = 0.95, method: str = "wilson") -> Interval:
    """The interval of a proportion: k successes in n trials.

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n.
    ci : float
        Confidence level in (0, 1).
    method : str
        One of :data:`PROPORTION_METHODS` (see :func:`proportion_ci`).

    Returns
    -------
    Interval
        ``low``, ``high``, ``method`` (the method's name: "Wilson", "Clopper-Pearson", ...) and
        ``note``: NaN bounds with the note "n = 0" for n = 0; a Wald interval of zero width
        (k = 0 or k = n) is not estimable: NaN bounds and a note saying so.

    Notes
    -----
    At k = 0 every method's low bound is exactly 0 and at k = n the high bound exactly 1: for
    Jeffreys this is Brown, Cai & DasGupta's (2001, §4.1.2) modification (the plain Beta
    quantiles exclude the estimate itself there); for Wilson it removes statsmodels' 2.8e-17
    (R ``prop.test`` gives 0). ``wilson_cc`` is Newcombe's (1998) method 4.

    References
    ----------
    Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion.
    Statistics in Medicine 17, 857–872.

    Examples
    --------
    >>> res = proportion_interval(5, 25)  # R: prop.test(5, 25, correct = FALSE): 0.0886 0.3913
    >>> round(res.low, 4), round(res.high, 4), res.method
    (0.0886, 0.3913, 'Wilson')
    >>> proportion_interval(0, 20, method="wald").note
    'Wald interval has zero width at 0 of 20 (it claims certainty): not estimable; use wilson or jeffreys'
    """
    name = _METHOD_NAMES[method]
    if n == 0:
        return Interval(np.nan, np.nan, name, "n = 0")
    if method == "wald" and k in (0, n):
        return Interval(np.nan, np.nan, name, (
            f"Wald interval has zero width at {k} of {n} (it claims certainty): not estimable; "
            "use wilson or jeffreys"))
    lo, hi = proportion_intervals([k], [n], ci, method)
    return Interval(float(lo[0]), float(hi[0]), name)


def proportion_intervals(k, n, ci: float = 0.95,
                         method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`proportion_interval`: arrays of lows and highs (NaN where n = 0, and
    for Wald where k = 0 or k = n: a zero-width interval is not estimable).

    Parameters
    ----------
    k, n : array-like of int, same shape
        Successes and trials.
    ci : float
        Confidence level in (0, 1).
    method : str
        As :func:`proportion_interval` (statsmodels' ``proportion_confint``; ``wilson_cc``
        Newcombe's method 4).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Lower and upper bounds in [0, 1], the shape of ``k``.

    Examples
    --------
    >>> lo, hi = proportion_intervals([0, 5], [12, 25])
    >>> float(lo[0]), [round(float(v), 4) for v in (lo[1], hi[1])]
    (0.0, [0.0886, 0.3913])
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    lo, hi = np.full(k.shape, np.nan), np.full(k.shape, np.nan)
    ok = n > 0
    if method == "wilson_cc":
        pairs = [_wilson_cc(int(a), int(b), ci) for a, b in zip(k[ok], n[ok], strict=True)]
        lo[ok], hi[ok] = [p[0] for p in pairs], [p[1] for p in pairs]
    elif ok.any():
        sm = {"wilson": "wilson", "clopper-pearson": "beta", "beta": "beta", "exact": "beta",
              "agresti-coull": "agresti_coull", "jeffreys": "jeffreys", "wald": "normal"}
        lo[ok], hi[ok] = proportion_confint(k[ok], n[ok], alpha=1 - ci, method=sm[method])
    # at k = 0 / k = n the bound is exactly 0 / 1 (Jeffreys: BCD's modification; Wilson:
    # statsmodels leaves 2.8e-17 at 0 of 12 where R prop.test gives 0)
    lo, hi = np.where(ok & (k == 0), 0.0, lo), np.where(ok & (k == n), 1.0, hi)
    if method == "wald":  # zero width at k = 0 or k = n: not estimable
        edge = (k == 0) | (k == n)
        lo, hi = np.where(edge, np.nan, lo), np.where(edge, np.nan, hi)
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


def _wilson_cc(k: int, n: int, ci: float) -> tuple[float, float]:
    # Newcombe (1998), method 4: R prop.test(k, n, correct = TRUE)$conf.int for every k but
    # k = n/2, where R's correction min(0.5, |k - n/2|) is 0 (its uncorrected Wilson interval).
    z = st.norm.ppf(0.5 + ci / 2)
    p = k / n
    lo = 0.0 if k == 0 else (2 * n * p + z**2 - 1 - z * np.sqrt(
        z**2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / (2 * (n + z**2))
    hi = 1.0 if k == n else (2 * n * p + z**2 + 1 + z * np.sqrt(
        z**2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / (2 * (n + z**2))
    return float(max(lo, 0.0)), float(min(hi, 1.0))


def proportion_ci(successes, n, *, method: str = "wilson", ci: float = 0.95) -> pd.DataFrame:
    """Confidence interval for a proportion (pass rate, accuracy).

    Parameters
    ----------
    successes, n : int or array-like of int
        Number of successes and of trials (same length when array-like).
    method : {"wilson", "clopper-pearson", "wilson_cc", "agresti-coull", "jeffreys", "wald"}
        ``"wilson"`` (default): score interval without continuity correction
        (statsmodels ``proportion_confint(method="wilson")``, R ``prop.test(correct=FALSE)``).
        ``"clopper-pearson"`` (aliases ``"exact"``, ``"beta"``): R ``binom.test``.
        ``"wilson_cc"``: continuity-corrected Wilson (Newcombe 1998 method 4). It equals R's
        ``prop.test(k, n, correct = TRUE)$conf.int`` for every k except k = n/2, where R's
        continuity correction min(0.5, abs(k − n/2)) is 0 and R prints the uncorrected Wilson
        interval (5 of 10: ours [0.2014, 0.7986], R [0.2366, 0.7634]).
    ci : float
        Confidence level.

    Returns
    -------
    DataFrame
        One row per input: ``successes``, ``n``, ``proportion``, ``ci_low``, ``ci_high``,
        ``method``, ``note``. n = 0 gives NaN proportion and interval (with a warning); a
        Wald interval at k = 0 or k = n (zero width: it claims certainty) is not estimable:
        NaN bounds, with a warning and a ``note``.

    Raises
    ------
    ValueError
        Negative counts, successes > n, non-integer counts or an unknown method.

    Notes
    -----
    Our default (Wilson, no correction) differs from R's ``prop.test`` default (continuity
    corrected) and from ``binom.test`` (Clopper–Pearson). Wilson has close-to-nominal coverage for
    small n and stays inside [0, 1] (Brown, Cai & DasGupta 2001). ``"jeffreys"`` is the
    equal-tailed Beta(k + ½, n − k + ½) interval with Brown, Cai & DasGupta's modification
    (low = 0 at k = 0, high = 1 at k = n; statsmodels returns e.g. 2.4e-5 as the low bound
    at 0 of 20, which excludes the estimate 0). ``"wald"`` (p ± z·sqrt(p(1 − p)/n), clipped to
    [0, 1]) is offered for comparison only.

    References
    ----------
    Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison
    of seven methods. Statistics in Medicine 17, 857–872.
    Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> out = proportion_ci(5, 25)
    >>> [round(float(v), 4) for v in out.loc[0, ["proportion", "ci_low", "ci_high"]]]
    [0.2, 0.0886, 0.3913]
    """
    if method not in PROPORTION_METHODS:
        raise ValueError(f"method must be one of {', '.join(PROPORTION_METHODS)}; got {method!r}")
    check_ci(ci)
    k, m = np.atleast_1d(np.asarray(successes)), np.atleast_1d(np.asarray(n))
    if k.shape != m.shape:
        raise ValueError(f"successes and n differ in length: {k.size} vs {m.size}")
    if not (np.all(np.mod(k, 1) == 0) and np.all(np.mod(m, 1) == 0)):
        raise ValueError("successes and n must be whole numbers")
    if np.any(k < 0) or np.any(k > m):
        raise ValueError("need 0 <= successes <= n for every entry")
    rows = []
    for ki, ni in zip(k.astype(int), m.astype(int), strict=True):
        res = proportion_interval(ki, ni, ci, method)
        rows.append({"successes": ki, "n": ni, "proportion": ki / ni if ni else np.nan,
                     "ci_low": res.low, "ci_high": res.high, "method": method,
                     "note": res.note if ni else ""})
    notes = [r["note"] for r in rows]
    if np.any(m == 0):
        notes.append(f"{int(np.sum(m == 0))} proportion(s) with n = 0: NaN interval")
    warn(notes)
    return pd.DataFrame(rows)


@needs("task_id", "final_score", inputs=2)
def mcnemar(baseline_correct, proposed_correct, *, exact: bool = True, correction: bool = True,
            on: str = "task_id", column: str = "final_score",
            threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """McNemar's test of paired correct/incorrect outcomes of two runs.

    Parameters
    ----------
    baseline_correct, proposed_correct : array-like, Series or DataFrame
        Flags (pandas ``boolean``, bool or 0/1; <NA> allowed), paired by position (sequences),
        index (two Series) or ``on`` (task frames, ``run.tasks``). For frames, ``column`` is
        used: a flag column as is, a score column as correct when ``column >= threshold``
        (:func:`dabench_analysis.schema.correct`).
    exact : bool
        Exact binomial test on the discordant pairs (default) or the chi-square statistic.
    correction : bool
        Continuity correction of the chi-square statistic (ignored when ``exact``).
    on, column, threshold : str, str, float
        Task key, outcome column and success threshold (in (0, 1]; default
        :data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`) for task frames.

    Returns
    -------
    DataFrame
        One row: ``n_pairs``, ``n_unpaired``, ``n_dropped_na``, ``n_both_correct``, ``b``
        (baseline correct, proposed wrong), ``c`` (baseline wrong, proposed correct),
        ``n_both_wrong``, ``accuracy_baseline``, ``accuracy_proposed``, ``statistic``,
        ``p_value``, ``method``, ``note``.

    Raises
    ------
    ValueError
        Values that are not flags, duplicate task keys (a frame holding several runs is named
        as such), unequal lengths, a threshold outside (0, 1].
    TypeError
        A Run or Runs (pass ``run.tasks``).

    Notes
    -----
    Exact: statistic = min(b, c) and p = min(1, 2·BinomCDF(min(b, c); b + c, ½)) (statsmodels;
    R ``binom.test(b, b + c)``). Chi-square: (abs(b − c) − 1)²/(b + c) with correction; when b = c
    the correction is skipped (statistic 0, p = 1) as in R ``mcnemar.test``; statsmodels would
    report 0.1 for b = c = 5. No discordant pairs: p = 1.0 with a warning.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12, 153–157.

    Examples
    --------
    >>> base = [True] * 794 + [True] * 150 + [False] * 86 + [False] * 570
    >>> prop = [True] * 794 + [False] * 150 + [True] * 86 + [False] * 570
    >>> out = mcnemar(base, prop, exact=False, correction=False)  # R: 17.356, p = 3.099e-05
    >>> round(float(out.statistic[0]), 3), int(out.b[0]), int(out.c[0])
    (17.356, 150, 86)
    """
    baseline_correct = check_frame(baseline_correct, "baseline", others=True)
    proposed_correct = check_frame(proposed_correct, "proposed", others=True)
    threshold = schema.check_threshold(threshold)

    def convert(s, name):
        if isinstance(baseline_correct, pd.DataFrame) and not (
                pd.api.types.is_bool_dtype(s.dtype) or isinstance(s.dtype, pd.BooleanDtype)):
            f = as_float(s, name)
            if not f.dropna().isin([0.0, 1.0]).all():
                return schema.correct(f, threshold)
        return as_bool(s, name)

    pairs, counts, notes = pair_runs(baseline_correct, proposed_correct, column, on, convert)
    xb, xp = pairs["baseline"].astype(bool).to_numpy(), pairs["proposed"].astype(bool).to_numpy()
    a, b = int(np.sum(xb & xp)), int(np.sum(xb & ~xp))
    c, d = int(np.sum(~xb & xp)), int(np.sum(~xb & ~xp))
    n = counts["n_pairs"]
    row = {**counts, "n_both_correct": a, "b": b, "c": c, "n_both_wrong": d,
           "accuracy_baseline": xb.mean() if n else np.nan,
           "accuracy_proposed": xp.mean() if n else np.nan}
    res = mcnemar_discordant(b, c, n=n, exact=exact, correction=correction)
    stat, p, meth, note = res.statistic, res.p_value, res.method, res.note
    notes.append(note)
    row.update(statistic=stat, p_value=p, method=meth, note="; ".join(n for n in notes if n))
    warn(notes)
    return pd.DataFrame([row])


def mcnemar_discordant(b: int, c: int, *, n: int, exact: bool = True,
                       correction: bool = True) -> TestResult:
    """McNemar's test from the discordant counts: the one implementation of the package.

    Parameters
    ----------
    b, c : int
        Discordant pairs (first yes / second no, first no / second yes).
    n : int
        All complete pairs (0 means there was nothing to test).
    exact, correction : bool
        As in :func:`mcnemar`.

    Returns
    -------
    TestResult
        ``statistic``, ``p_value``, ``method``, ``note`` (empty unless the test is degenerate).

    Notes
    -----
    Degenerate cases, defined once: no pairs gives NaN statistic and p with the note "no complete
    pairs"; pairs without discordant ones (b + c = 0) give statistic 0 and p = 1.0 (R's
    ``mcnemar.test`` gives NaN; ``binom.test(0, 0)`` is undefined) with the note "no discordant
    pairs: p set to 1.0".

    Examples
    --------
    >>> res = mcnemar_discordant(3, 14, n=80)  # R: binom.test(3, 17)$p.value = 0.01273
    >>> res.statistic, res.p_value, res.method
    (3.0, 0.012725830078125, 'McNemar exact (binomial)')
    >>> mcnemar_discordant(0, 0, n=10)
    TestResult(statistic=0.0, p_value=1.0, method='McNemar not testable (no discordant pairs)', note='no discordant pairs: p set to 1.0')
    """
    if b + c == 0:
        if not n:
            return TestResult(np.nan, np.nan, "McNemar not testable (no pairs)",
                              "no complete pairs")
        return TestResult(0.0, 1.0, "McNemar not testable (no discordant pairs)",
                          "no discordant pairs: p set to 1.0")
    if exact:
        res = _sm_mcnemar([[0, b], [c, 0]], exact=True)
        return TestResult(float(res.statistic), min(1.0, float(res.pvalue)),
                          "McNemar exact (binomial)")
    corr = correction and b != c
    res = _sm_mcnemar([[0, b], [c, 0]], exact=False, correction=corr)
    meth = "McNemar chi-square" + (", continuity-corrected" if corr else "")
    return TestResult(float(res.statistic), min(1.0, float(res.pvalue)), meth)


def discordant_counts(correct) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """McNemar's counts for every pair of runs from one task × run matrix of outcomes.

    Parameters
    ----------
    correct : array-like, shape (n_tasks, n_runs)
        1 (success), 0 (failure) or NaN (no outcome).

    Returns
    -------
    n, b, c : numpy.ndarray, shape (n_runs, n_runs)
        Tasks both runs have an outcome for; tasks run a (row) solves and run b (column) does
        not; tasks b solves and a does not (the arguments of :func:`mcnemar_discordant`).

    Examples
    --------
    >>> n, b, c = discordant_counts([[1, 0], [1, 1], [0, 1], [1, float("nan")]])
    >>> int(n[0, 1]), int(b[0, 1]), int(c[0, 1])
    (3, 1, 1)
    """
    x = np.asarray(correct, dtype=float)
    known = ~np.isnan(x)
    p, f = (known & (x == 1)).astype(float), (known & (x == 0)).astype(float)
    return known.astype(float).T @ known, p.T @ f, f.T @ p
