# Over 400 lines (<= 500): every interval of a mean (t, logit t with its bounds, Wilson, the
# bootstrap) and the summaries built on them; the bounded-interval rule is shared from here.
"""Descriptive summaries with intervals of the mean, and bootstrap intervals
(scipy.stats.bootstrap).

Intervals respect the quantity's range: a mean of [0, 1] scores gets a logit-t interval (inside
(0, 1) by construction), a rate of a flag a Wilson interval, an unbounded quantity (seconds,
tokens) the t-interval. The choice comes from the column catalogue (kind ``score``, ``flag``)
and is named in the ``method`` column.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as st

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.stats._inputs import as_float, check_ci, check_frame, warn
from dabench_analysis.stats._proportions import proportion_interval
from dabench_analysis.stats._results import Interval

#: Interval methods, as named in ``method`` columns.
T, LOGIT_T, WILSON = "t", "logit t", "Wilson"


#: Why an interval is NaN, as its ``note`` says.
NOT_ESTIMABLE_N = "n = {n}: interval not estimable (needs 2 values)"
NOT_ESTIMABLE_CONSTANT = "zero variance (every value {v:g}): interval not estimable"
NOT_ESTIMABLE_ROUNDING = "zero variance to rounding (R: data are essentially constant): " \
    "interval not estimable"


def t_summary(x: np.ndarray, ci: float = 0.95) -> dict:
    """n, mean, std (ddof = 1), sem, the t-interval of the mean and a note.

    Parameters
    ----------
    x : ndarray of float
        One sample; NaN dropped.
    ci : float
        Confidence level.

    Returns
    -------
    dict
        ``n``, ``mean``, ``std``, ``sem``, ``ci_low``, ``ci_high``, ``note``. The interval is
        NaN, with the reason in ``note`` (empty for n = 0), when it is not estimable: n < 2,
        or every value equal (to rounding: s/√n <= 10 ε |mean|, R's test)
        (zero variance; R ``t.test`` stops with "data are essentially constant"), never a
        zero-width interval.

    Notes
    -----
    mean ± t_{n−1, (1+ci)/2} · s/√n (R ``t.test(x)$conf.int``).

    Examples
    --------
    >>> r = t_summary(np.array([1.0, 2.0, 3.0, 4.0]))  # R: t.test(1:4)$conf.int
    >>> round(r["ci_low"], 4), round(r["ci_high"], 4)
    (0.4457, 4.5543)
    >>> t_summary(np.array([0.25, 0.25]))["note"]
    'zero variance (every value 0.25): interval not estimable'
    """
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    out = {"n": n, "mean": np.nan, "std": np.nan, "sem": np.nan, "ci_low": np.nan,
           "ci_high": np.nan, "note": NOT_ESTIMABLE_N.format(n=n) if n == 1 else ""}
    if n == 0:
        return out
    out["mean"] = float(x.mean())
    if n < 2:
        return out
    sd = float(x.std(ddof=1))
    sem = sd / np.sqrt(n)
    out.update(std=sd, sem=sem)
    if sem <= 10 * np.finfo(float).eps * abs(out["mean"]) or np.all(x == x[0]):  # R's rule
        return out | {"note": NOT_ESTIMABLE_CONSTANT.format(v=float(f"{x[0]:.12g}"))
                      if np.all(x == x[0]) else NOT_ESTIMABLE_ROUNDING}
    half = st.t.ppf(0.5 + ci / 2, n - 1) * sem
    out.update(ci_low=float(out["mean"] - half), ci_high=float(out["mean"] + half))
    return out


def mean_summary(x, ci: float = 0.95, *, method: str = T) -> dict:
    """n, mean, std, sem and an interval of the mean by ``method``, named in ``method``.

    Parameters
    ----------
    x : array-like of float
        One sample; NaN dropped.
    ci : float
        Confidence level.
    method : {"t", "logit t", "Wilson"}
        ``"t"``: mean ± t·s/√n, for unbounded quantities (seconds, tokens). ``"logit t"``: for
        means of values in [0, 1] (scores, shares). ``"Wilson"``: for rates of 0/1 flags.

    Returns
    -------
    dict
        ``n``, ``mean``, ``std`` (ddof = 1), ``sem``, ``ci_low``, ``ci_high``, ``method``
        (the method used, with the bound rule or a fall-back named), ``note``.

    Raises
    ------
    ValueError
        An unknown ``method``.

    Notes
    -----
    Logit t (a delta-method interval on the logit scale): with mean m in (0, 1) and
    s_e = s/√n, the interval is expit(logit(m) ± t_{n-1,(1+ci)/2} · s_e / (m(1 − m))). It lies
    inside (0, 1), contains m and is asymmetric near a bound, where the t-interval passes it
    (0.95 ± 0.105 for 19 ones and one zero). It is the "logit" interval of Brown, Cai and
    DasGupta (2001) with the binomial variance m(1 − m)/n replaced by s²/n, so that it applies
    to continuous scores. When every value is 1 (m = 1), the logit is infinite; the interval
    is then [(α/2)^(1/n), 1] with α = 1 − ci, the Clopper–Pearson bound at k = n, which holds
    for any variable in [0, 1] because P(X = 1) <= E[X] (Markov), so P(all n are 1) <= m^n;
    symmetrically [0, 1 − (α/2)^(1/n)] when every value is 0 (:func:`bounded_interval`).
    Constant values inside (0, 1), and constant values with the t-interval, have no
    estimable interval: NaN with a note (R ``t.test`` stops: "data are essentially
    constant"), never a zero-width interval. Values outside [0, 1] fall back to
    the t-interval, named "t (values outside [0, 1])". Wilson: the score interval of
    k = Σx successes in n (``statsmodels`` ``proportion_confint(method="wilson")``, R
    ``prop.test(k, n, correct = FALSE)``); non-0/1 values fall back to logit t. Every method
    gives NaN intervals for n < 2, as R ``t.test`` refuses n = 1. Neither R nor scipy has the
    logit-t interval built in; R: ``plogis(qlogis(m) + c(-1, 1) * qt(0.975, n - 1) *
    sd(x) / sqrt(n) / (m * (1 - m)))``.

    References
    ----------
    Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial
    proportion. Statistical Science 16(2), 101–133. Clopper, C. J., Pearson, E. S. (1934). The
    use of confidence or fiducial limits illustrated in the case of the binomial. Biometrika
    26(4), 404–413.

    Examples
    --------
    >>> r = mean_summary([1.0] * 19 + [0.0], method="logit t")
    >>> round(r["ci_low"], 4), round(r["ci_high"], 4), r["method"]
    (0.6773, 0.9942, 'logit t')
    >>> round(mean_summary([1.0, 1.0], method="logit t")["ci_low"], 4)  # sqrt(0.025)
    0.1581
    """
    if method not in (T, LOGIT_T, WILSON):
        raise ValueError(f"method must be 't', 'logit t' or 'Wilson'; got {method!r}")
    out = t_summary(x, ci) | {"method": method}
    v = np.asarray(x, dtype=float)
    v = v[~np.isnan(v)]
    if method == T or out["n"] < 2:
        return out
    if (v < 0).any() or (v > 1).any():
        note = f"{int(((v < 0) | (v > 1)).sum())} values outside [0, 1]: t-interval"
        return out | {"method": "t (values outside [0, 1])",
                      "note": "; ".join(n for n in (note, out["note"]) if n)}
    if method == WILSON and np.isin(v, (0.0, 1.0)).all():
        res = proportion_interval(int(v.sum()), v.size, ci, "wilson")
        return out | {"ci_low": res.low, "ci_high": res.high, "note": res.note}
    res = bounded_interval(out["mean"], out["sem"], n=out["n"], ci=ci, df=out["n"] - 1)
    return out | {"ci_low": res.low, "ci_high": res.high, "method": res.method,
                  "note": (out["note"] or res.note) if res.note else ""}


def bounded_interval(mean: float, se: float, *, n: int, ci: float = 0.95,
                     df: float | None = None) -> Interval:
    """The package's interval of a mean of values in [0, 1]: logit-t (or logit-normal).

    Parameters
    ----------
    mean : float
        The mean, in [0, 1].
    se : float
        Its standard error (s/√n, or a clustered one).
    n : int
        Independent units behind the mean (tasks; clusters for a clustered SE): the exponent
        of the bound when every value is 0 or 1.
    ci : float
        Confidence level.
    df : float, optional
        Degrees of freedom of the t quantile; None: the normal quantile.

    Returns
    -------
    Interval
        ``low``, ``high`` (inside [0, 1]), ``method`` ("logit t" or "logit normal", with the
        bound rule named when it applies) and ``note``. Not estimable (NaN, with the reason
        in ``note``): n < 2, a missing SE, or a zero SE (to rounding: se <= 10 ε · mean, R's
        ``t.test`` rule) with a mean inside (0, 1).

    Notes
    -----
    expit(logit(m) ± q · se / (m(1 − m))), q the t (``df``) or normal quantile of (1 + ci)/2:
    the delta-method interval on the logit scale, inside (0, 1) and asymmetric near a bound
    (Brown, Cai and DasGupta 2001, with the binomial variance replaced by se²). When m = 1
    the logit is infinite and the interval is [(α/2)^(1/n), 1] (α = 1 − ci), the
    Clopper–Pearson bound at k = n, valid for any variable in [0, 1] since P(all n units
    are 1) <= m^n (Markov); [0, 1 − (α/2)^(1/n)] when m = 0.

    References
    ----------
    Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial
    proportion. Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> res = bounded_interval(0.95, 0.05, n=20, df=19)  # 19 ones and a zero
    >>> round(res.low, 4), round(res.high, 4), res.method
    (0.6773, 0.9942, 'logit t')
    >>> bounded_interval(0.5, 0.0, n=4, df=3).note
    'zero variance to rounding (R: data are essentially constant): interval not estimable'
    """
    name = LOGIT_T if df is not None else "logit normal"
    if n < 2 or not np.isfinite(se):
        return Interval(np.nan, np.nan, name, NOT_ESTIMABLE_N.format(n=n) if n < 2 else
                        "standard error not estimable")
    bound = ((1 - ci) / 2) ** (1 / n)
    if mean >= 1.0:
        return Interval(bound, 1.0, f"{name}; Clopper-Pearson bound (all values 1)")
    if mean <= 0.0:
        return Interval(0.0, 1.0 - bound, f"{name}; Clopper-Pearson bound (all values 0)")
    if se <= 10 * np.finfo(float).eps * abs(mean):  # zero, to rounding (R's t.test rule)
        return Interval(np.nan, np.nan, name, NOT_ESTIMABLE_ROUNDING)
    q = st.t.ppf(0.5 + ci / 2, df) if df is not None else st.norm.ppf(0.5 + ci / 2)
    half = q * se / (mean * (1 - mean))
    centre = special.logit(mean)
    return Interval(float(special.expit(centre - half)), float(special.expit(centre + half)),
                    name)


def _as_list(x) -> list:
    return [x] if isinstance(x, str) else list(x)


def _enum_order(frame: pd.DataFrame, col: str) -> pd.Series:
    """Give catalogue enums (difficulty, ...) their fixed order when they arrive as strings."""
    s = frame[col]
    if not isinstance(s.dtype, pd.CategoricalDtype) and col in schema.ENUMS:
        levels = schema.ENUMS[col]
        if set(s.dropna().unique()) <= set(levels):
            return s.astype(pd.CategoricalDtype(levels, ordered=col in schema.columns.ORDERED_ENUMS))
    return s


def interval_method(tasks: pd.DataFrame, metric: str, *,
                    bounded: bool | Sequence[str] | None = None) -> str:
    """The interval method for the mean of ``metric``: "logit t", "Wilson" or "t".

    Parameters
    ----------
    tasks : DataFrame
        Holds the column ``metric``.
    metric : str
        Column name.
    bounded : bool, sequence of str or None
        None (default): from the catalogue, kind ``score`` ([0, 1]) -> "logit t", kind ``flag``
        or a boolean column -> "Wilson", anything else (seconds, tokens, counts, columns the
        catalogue does not know) -> "t". True: every non-flag metric is a [0, 1] quantity.
        False: "t" for every metric (the earlier behaviour). A sequence: these metrics are
        [0, 1] quantities, the others as for None.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``metric`` is not a column.

    Notes
    -----
    The catalogue's kind ``score`` is "float in [0, 1]" (:mod:`dabench_analysis.schema`), which
    covers scores, accuracies, rates and shares such as ``specialist_participation``. The
    methods themselves: :func:`mean_summary`.

    Examples
    --------
    >>> df = pd.DataFrame({"final_score": [0.5], "execution_time": [3.0], "ok": [True]})
    >>> [interval_method(df, m) for m in df.columns]
    ['logit t', 't', 'Wilson']
    """
    tasks = check_frame(tasks)
    require_columns(tasks, [metric])
    col = schema.TASK_COLUMNS.get(metric)
    kind = col.kind if col is not None else None
    if pd.api.types.is_bool_dtype(tasks[metric].dtype):
        kind = "flag"
    if bounded is False:
        return T
    if bounded is True or (bounded is not None and metric in _as_list(bounded)):
        kind = "flag" if kind == "flag" else "score"
    return {"score": LOGIT_T, "flag": WILSON}.get(kind, T)


def describe(tasks: pd.DataFrame, metrics: str | Sequence[str], *,
             by: str | Sequence[str] | None = None, ci: float = 0.95,
             bounded: bool | Sequence[str] | None = None) -> pd.DataFrame:
    """Mean, spread and an interval of the mean per metric (and group).

    Parameters
    ----------
    tasks : DataFrame
        One row per task with the ``metrics`` columns (scores in [0, 1], seconds, tokens or flags;
        flags are summarised as rates) and the ``by`` columns (``run.tasks``; every row is one
        sample unless ``by`` splits them, e.g. ``by="run_id"`` for a sweep's stacked tasks).
    metrics : str or list of str
        Columns to summarise.
    by : str or list of str, optional
        Grouping columns (``"run_id"``: one row per run and metric). Categorical columns keep
        their category order and empty levels (``observed=False``, pitfall P07); catalogue
        enums given as strings (``difficulty``) get their fixed order (Easy < Medium < Hard <
        Extreme).
    ci : float
        Confidence level of the interval.
    bounded : bool, sequence of str or None
        Which metrics are [0, 1] quantities (see :func:`interval_method`; default: the
        catalogue decides).

    Returns
    -------
    DataFrame
        One row per (group, metric): the ``by`` columns, ``metric``, ``n`` (non-missing values),
        ``n_missing``, ``mean``, ``std`` (ddof = 1), ``sem``, ``ci_low``, ``ci_high``,
        ``method`` (the interval's method, see :func:`mean_summary`).
        Empty groups have n = 0 and NaN statistics; n = 1 gives NaN std/sem/interval.

    Raises
    ------
    ValueError
        If a column is missing or not numeric, or ``ci`` is not in (0, 1).
    TypeError
        If ``tasks`` is not a DataFrame (a Run: pass ``run.tasks``).

    Notes
    -----
    Intervals by :func:`mean_summary`: scores in [0, 1] get the logit-t interval, which never
    leaves [0, 1] (the t-interval of 0.95 ± 0.105 for 19 ones and a zero reached 1.055); rates
    of flags the Wilson interval; unbounded quantities mean ± t_{n-1, (1+ci)/2} · s/√n (as R
    ``t.test(x)$conf.int``). Means, std and sem do not depend on the method. Rows whose group
    key is missing are dropped with a warning.

    Examples
    --------
    >>> df = pd.DataFrame({"difficulty": ["Hard", "Easy", "Medium", "Easy", "Hard"],
    ...                    "final_score": [0.0, 1.0, 1.0, 1.0, 1.0]})
    >>> out = describe(df, "final_score", by="difficulty")
    >>> out[["difficulty", "n", "mean"]].to_string(index=False)
    'difficulty  n  mean\\n      Easy  2   1.0\\n    Medium  1   1.0\\n      Hard  2   0.5\\n   Extreme  0   NaN'
    """
    metrics, by_cols = _as_list(metrics), ([] if by is None else _as_list(by))
    tasks = check_frame(tasks)
    require_columns(tasks, metrics + by_cols)
    check_ci(ci)
    how = {m: interval_method(tasks, m, bounded=bounded) for m in metrics}
    data = pd.DataFrame({m: as_float(tasks[m], m) for m in metrics}, index=tasks.index)
    rows, notes = [], []

    def summary(m: str, v: np.ndarray) -> dict:
        r = mean_summary(v, ci, method=how[m])
        note = r.pop("note")
        if note and not note.startswith("n = "):  # n = 1 speaks for itself in the n column
            notes.append(f"{schema.label(m)}: {note}")
        return r

    if not by_cols:
        for m in metrics:
            rows.append({"metric": m, "n_missing": int(data[m].isna().sum()),
                         **summary(m, data[m].to_numpy())})
        warn(sorted(set(notes)))
        return _order(pd.DataFrame(rows), [])
    keys = pd.DataFrame({c: _enum_order(tasks, c) for c in by_cols}, index=tasks.index)
    missing_key = keys.isna().any(axis=1)
    if missing_key.any():
        warn([f"{int(missing_key.sum())} rows dropped: missing value in {', '.join(by_cols)}"])
    grouped = pd.concat([keys, data], axis=1)[~missing_key].groupby(by_cols, observed=False,
                                                                  sort=True)
    sizes = grouped.size()
    for key in sizes.index:
        key_t = key if isinstance(key, tuple) else (key,)
        vals = grouped.get_group(key_t) if sizes[key] else None
        for m in metrics:
            v = np.array([]) if vals is None else vals[m].to_numpy()
            rows.append({**dict(zip(by_cols, key_t, strict=True)), "metric": m,
                         "n_missing": int(np.isnan(v).sum()), **summary(m, v)})
    warn(sorted(set(notes)))
    out = pd.DataFrame(rows)
    for c in by_cols:
        out[c] = out[c].astype(keys[c].dtype) if isinstance(keys[c].dtype, pd.CategoricalDtype) \
            else out[c]
    return _order(out, by_cols)


def _order(out: pd.DataFrame, by_cols: list[str]) -> pd.DataFrame:
    cols = by_cols + ["metric", "n", "n_missing", "mean", "std", "sem", "ci_low", "ci_high",
                      "method"]
    out = out[cols]
    return out.assign(n=out["n"].astype("int64"), n_missing=out["n_missing"].astype("int64"))


def bootstrap_ci(values, *, statistic: Callable = np.mean, n_resamples: int = 10_000,
                 method: str = "bca", seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Bootstrap confidence interval of a statistic (BCa by default).

    Parameters
    ----------
    values : array-like of float
        One sample (NaN dropped with a warning).
    statistic : callable
        Vectorised statistic accepting ``axis`` (``np.mean``, ``np.median``, ...).
    n_resamples : int
        Bootstrap resamples.
    method : {"bca", "percentile", "basic"}
        Interval type passed to :func:`scipy.stats.bootstrap`.
    seed : int
        Seed of the generator: the same call gives the same interval.
    ci : float
        Confidence level.

    Returns
    -------
    DataFrame
        One row: ``n``, ``estimate`` (statistic of the sample), ``se`` (bootstrap standard
        error), ``ci_low``, ``ci_high``, ``method``, ``n_resamples``, ``note``.

    Raises
    ------
    ValueError
        Unknown method or ``n_resamples < 1``.

    Notes
    -----
    Degenerate input is defined, with a :class:`StatisticsWarning`: n = 0 gives NaN everywhere;
    all values equal (including n = 1) gives the estimate, se = 0 and a NaN interval with a note
    (every resample has the same statistic: the interval is not estimable, never zero-width;
    scipy returns NaN too). If BCa cannot be computed
    for other reasons (e.g. a statistic with a degenerate jackknife) the percentile interval is
    returned and ``method`` says so.

    References
    ----------
    Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 14.

    Examples
    --------
    >>> out = bootstrap_ci([0.2, 0.4, 0.5, 0.9, 1.0], n_resamples=2000)
    >>> bool(out.loc[0, "ci_low"] < 0.6 < out.loc[0, "ci_high"])
    True
    """
    methods = {"bca": "BCa", "percentile": "percentile", "basic": "basic"}
    if method not in methods:
        raise ValueError(f"method must be 'bca', 'percentile' or 'basic'; got {method!r}")
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be >= 1")
    check_ci(ci)
    x = as_float(values, "values").to_numpy()
    notes = []
    if np.isnan(x).any():
        notes.append(f"{int(np.isnan(x).sum())} missing values dropped")
        x = x[~np.isnan(x)]
    row = {"n": x.size, "estimate": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
           "method": method, "n_resamples": int(n_resamples), "note": ""}
    if x.size == 0:
        notes.append("no values: bootstrap undefined")
    elif np.all(x == x[0]):
        est = float(statistic(x))
        row.update(estimate=est, se=0.0)
        notes.append(f"degenerate sample (n = {x.size}, all values equal): interval not "
                     "estimable")
    else:
        row["estimate"] = float(statistic(x))
        res = _scipy_bootstrap(x, statistic, n_resamples, methods[method], seed, ci)
        if method == "bca" and not np.isfinite(res.confidence_interval.low):
            res = _scipy_bootstrap(x, statistic, n_resamples, "percentile", seed, ci)
            row["method"] = "percentile (BCa undefined)"
            notes.append("BCa interval undefined for this sample; percentile interval used")
        row.update(se=float(res.standard_error), ci_low=float(res.confidence_interval.low),
                   ci_high=float(res.confidence_interval.high))
    row["note"] = "; ".join(notes)
    warn(notes)
    return pd.DataFrame([row])


def _scipy_bootstrap(x, statistic, n_resamples, method, seed, ci):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return st.bootstrap((x,), statistic, n_resamples=int(n_resamples), method=method,
                            confidence_level=ci, rng=np.random.default_rng(seed))
