"""Ablation and MAS-effectiveness analyses of one run (seed 000 §Ablation Studies, Phase 0).

Observational comparisons inside one run: tasks that triggered verification differ from those
that did not in more than verification (harder tasks replan more, for instance), so these
tables describe associations, not causal effects. Every function returns a tidy frame.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._comparison import unpaired_comparison
from dabench_analysis.stats._descriptive import interval_method, mean_summary
from dabench_analysis.stats._inputs import as_bool, as_float, check_ci, warn
from dabench_analysis.stats.binning import ULPS, bin_index
from dabench_analysis.tables._common import TasksLike, takes_run


def _two_groups(tasks, metric, mask_a, mask_b, labels, comparison, ci, n_excluded, notes):
    x = as_float(tasks[metric], metric)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = unpaired_comparison(x[mask_a].to_numpy(), x[mask_b].to_numpy(), metric=metric, ci=ci)
    notes = notes + [str(w.message) for w in caught]
    how = interval_method(tasks, metric)
    sa, sb = (mean_summary(x[m].to_numpy(), ci, method=how) for m in (mask_a, mask_b))
    notes += [f"{metric}: {s['note']}" for s in (sa, sb) if s["note"]]
    res.insert(0, "comparison", comparison)
    res.insert(1, "group_a", labels[0])
    res.insert(2, "group_b", labels[1])
    res.insert(res.columns.get_loc("n_dropped_na") + 1, "n_excluded", n_excluded)
    pos = res.columns.get_loc("mean_b") + 1
    for i, (k, v) in enumerate({"ci_low_a": sa["ci_low"], "ci_high_a": sa["ci_high"],
                                "ci_low_b": sb["ci_low"], "ci_high_b": sb["ci_high"]}.items()):
        res.insert(pos + i, k, v)
    res["method"] = res["method"] + "; " + _group_methods(sa["method"], sb["method"])
    res["note"] = "; ".join(n for n in notes if n)
    warn(notes, 4)
    return res


def _group_methods(a: str, b: str) -> str:
    return f"{a} intervals of group means" if a == b else f"group a: {a}; group b: {b}"


_GROUP_DOC = """
    Returns
    -------
    DataFrame
        One row: ``comparison``, ``group_a``, ``group_b`` (labels), then the columns of
        :func:`dabench_analysis.stats.unpaired_comparison` for a vs b (``n_a``, ``n_b``,
        ``n_dropped_na``, ``n_excluded`` (tasks in neither group or with a missing flag),
        ``mean_a``, ``mean_b``, ``ci_low_a``, ``ci_high_a``, ``ci_low_b``, ``ci_high_b``
        (interval of each group mean: logit t for [0, 1] scores, inside [0, 1]; t for
        unbounded metrics), ``median_a``, ``median_b``, ``mean_diff`` (a − b),
        ``ci_low``, ``ci_high`` (Welch interval of the difference), ``statistic`` (U of a),
        ``p_value`` (Mann–Whitney), ``mwu_method``, ``effect_size`` / ``rank_biserial`` /
        ``cliffs_delta`` (positive: a larger), ``effect`` ("rank-biserial"), ``magnitude``, ``cles``, ``cohens_d``,
        ``hedges_g``, ``method`` (the test, the interval of the difference and that of the
        group means, e.g. "...; logit t intervals of group means"), ``note``.
"""


@needs("verification_triggered", "final_score")
@takes_run(named=("flag", "metric"))
def verification(tasks: TasksLike, *, metric: str = "final_score",
                 flag: str = "verification_triggered", ci: float = 0.95) -> pd.DataFrame:
    """Ablation 1: tasks with vs without verification (seed 000 §Ablation Studies).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``flag`` (pandas ``boolean`` or 0/1; <NA> excluded) and ``metric``.
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    metric : str
        Score compared (default ``final_score``, in [0, 1]).
    flag : str
        Group flag; a = flag True ("with verification"), b = False.
    ci : float
        Interval level.
    {returns}
    Raises
    ------
    ValueError
        Missing columns or a flag that is not boolean.

    Notes
    -----
    The seed runs ``mannwhitneyu(with, without)``; we do the same (R's exact/approximate policy,
    see ``unpaired_comparison``) and add intervals and effect sizes. An empty group gives p = NaN
    with a warning.

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")  # 1 task has no flag
    >>> df = pd.DataFrame({"verification_triggered": [True, True, True, False, False, None],
    ...                    "final_score": [0.9, 0.8, 1.0, 0.2, 0.5, 0.7]})
    >>> out = verification(df)
    >>> int(out.n_a[0]), int(out.n_b[0]), int(out.n_excluded[0]), round(float(out.p_value[0]), 4)
    (3, 2, 1, 0.2)
    """
    check_ci(ci)
    f = as_bool(tasks[flag], flag)
    n_na = int(f.isna().sum())
    notes = [f"{n_na} tasks with missing {flag} excluded"] if n_na else []
    return _two_groups(tasks, metric, (f == True).fillna(False).to_numpy(),  # noqa: E712
                       (f == False).fillna(False).to_numpy(),  # noqa: E712
                       ("with verification", "without verification"), flag, ci, n_na, notes)


verification.__doc__ = verification.__doc__.replace("{returns}", _GROUP_DOC.strip("\n"))


@needs("first_try_success", "replan_count", "final_score")
@takes_run(named=("metric",))
def replanning(tasks: TasksLike, *, metric: str = "final_score",
               ci: float = 0.95) -> pd.DataFrame:
    """Ablation 2: first-try successes vs tasks that replanned (seed 000 §Ablation Studies).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``first_try_success`` (flag), ``replan_count`` (count) and
        ``metric``.
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    metric : str
        Score compared (default ``final_score``).
    ci : float
        Interval level.
    {returns}
    Raises
    ------
    ValueError
        Missing columns, a non-boolean flag, a non-numeric count.

    Notes
    -----
    Group a: ``first_try_success`` is True; group b: ``replan_count > 0``. Tasks in neither
    group (failed without replanning) or with missing values are counted in ``n_excluded``; tasks
    in both (inconsistent records) are counted in both, with a warning. The groups are defined
    by outcome-related process variables, so the difference is descriptive only.

    Examples
    --------
    >>> df = pd.DataFrame({"first_try_success": [True, True, False, False, False],
    ...                    "replan_count": [0, 0, 1, 2, 0],
    ...                    "final_score": [1.0, 0.9, 0.6, 0.3, 0.0]})
    >>> out = replanning(df)
    >>> int(out.n_a[0]), int(out.n_b[0]), int(out.n_excluded[0])
    (2, 2, 1)
    """
    check_ci(ci)
    first = as_bool(tasks["first_try_success"], "first_try_success")
    rc = as_float(tasks["replan_count"], "replan_count")
    a = (first == True).fillna(False).to_numpy()  # noqa: E712
    b = (rc > 0).to_numpy() & ~rc.isna().to_numpy()
    notes = []
    if (a & b).any():
        notes.append(f"{int((a & b).sum())} tasks are first-try successes with replan_count > 0"
                     " (counted in both groups)")
    return _two_groups(tasks, metric, a, b, ("first try success", "replanned"), "replanning",
                       ci, int((~(a | b)).sum()), notes)


replanning.__doc__ = replanning.__doc__.replace("{returns}", _GROUP_DOC.strip("\n"))


def _fmt(v: float) -> str:
    return f"{v:g}"


def _quantile_labels(edges: np.ndarray, uniq: np.ndarray) -> list[str]:
    """Name each remaining bin by the requested quantile bins it absorbed (Q1–Q3, Q4, ...)."""
    span: dict[int, list[int]] = {}
    for i in range(1, edges.size):
        lo, hi = edges[i - 1], edges[i]
        k = int(np.searchsorted(uniq, lo)) if lo < hi else (
            0 if hi == uniq[0] else int(np.searchsorted(uniq, hi)) - 1)
        span.setdefault(min(k, uniq.size - 2), []).append(i)
    return [f"Q{min(v)}" if min(v) == max(v) else f"Q{min(v)}–Q{max(v)}"
            for _, v in sorted(span.items())]


def _snap(edges: np.ndarray, v: np.ndarray) -> np.ndarray:
    """An interpolated quantile within a few ulps of a data value is that value, so tied values
    give one edge (``np.quantile`` can return 0.7 - 1 ulp for a level k/q not exact in binary)."""
    tol = ULPS * np.finfo(float).eps * max(abs(v[0]), abs(v[-1]))
    hi = np.clip(np.searchsorted(v, edges), 0, v.size - 1)
    lo = np.clip(hi - 1, 0, v.size - 1)
    near = np.where(np.abs(edges - v[lo]) <= np.abs(v[hi] - edges), v[lo], v[hi])
    return np.where(np.abs(near - edges) <= tol, near, edges)


def _quantile_bins(x: pd.Series, q: int):
    """(codes Series of int/NaN, labels, intervals, lowers, uppers, note)."""
    valid = x.dropna()
    if valid.empty:
        return pd.Series(np.nan, index=x.index), [], [], [], [], "no non-missing values"
    v = np.sort(valid.to_numpy())
    edges = _snap(np.quantile(v, np.arange(q + 1) / q), v)
    uniq = np.unique(edges)
    if uniq.size == 1:
        codes = pd.Series(np.where(x.isna(), np.nan, 0.0), index=x.index)
        note = f"only 1 distinct quantile bin (requested {q}): all values equal {_fmt(uniq[0])}"
        return codes, [f"Q1–Q{q}"], [f"[{_fmt(uniq[0])}, {_fmt(uniq[0])}]"], [uniq[0]], \
            [uniq[0]], note
    idx = bin_index(x.to_numpy(), uniq, right=True)
    codes = pd.Series(np.where(idx < 0, np.nan, idx), index=x.index)
    intervals = [("[" if k == 0 else "(") + f"{_fmt(uniq[k])}, {_fmt(uniq[k + 1])}]"
                 for k in range(uniq.size - 1)]
    note = "" if uniq.size - 1 == q else (
        f"only {uniq.size - 1} distinct quantile bins (requested {q}): tied values share a bin")
    return codes, _quantile_labels(edges, uniq), intervals, list(uniq[:-1]), list(uniq[1:]), note


def quantile_bins(values, *, q: int = 4) -> pd.Series:
    """Assign each value to a quantile bin; ties always share a bin (pitfall P05).

    Parameters
    ----------
    values : array-like of float
        E.g. ``tasks["tool_efficiency"]``; NaN stays missing.
    q : int
        Requested number of quantile bins (4 = quartiles).

    Returns
    -------
    Series
        Ordered categorical of bin labels. When tied values make quantile edges coincide, the
        bins merge and are named by the quantiles they absorbed ("Q1–Q3", "Q4"); a warning says
        "only k distinct quantile bins". A constant column gives one bin "Q1–Q4".

    Raises
    ------
    ValueError
        q < 1 or non-numeric values.

    Notes
    -----
    Edges are ``np.quantile`` at levels k/q (linear interpolation, as ``pd.qcut``); an edge
    within a few ulps of a data value is set to it, duplicate edges are dropped and intervals
    are right-closed with the lowest included, placed by the package's one binning rule
    (:func:`dabench_analysis.stats.binning.bin_index` with ``right=True``). Unlike
    ``pd.qcut(..., duplicates="drop")`` this never fails on labels, never returns all-NaN for a
    constant column and, unlike ranking first, never splits ties by row order.

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> quantile_bins([0, 0, 0, 0, 0, 0, 1, 2, 3, 4]).value_counts(sort=False).to_dict()
    {'Q1–Q3': 7, 'Q4': 3}
    """
    if int(q) != q or q < 1:
        raise ValueError(f"q must be a positive integer, got {q!r}")
    x = as_float(values, "values")
    codes, labels, _, _, _, note = _quantile_bins(x, int(q))
    warn([note])
    cat = pd.Categorical.from_codes(codes.fillna(-1).astype(int), categories=labels, ordered=True)
    return pd.Series(cat, index=x.index, name="quantile_bin")


@needs("tool_efficiency", "final_score")
@takes_run(named=("column", "metric"))
def efficiency_quartiles(tasks: TasksLike, *, q: int = 4, column: str = "tool_efficiency",
                         metric: str = "final_score", ci: float = 0.95) -> pd.DataFrame:
    """Ablation 3: ``metric`` by quantile bin of tool efficiency (seed 000 §Ablation Studies).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``column`` (default ``tool_efficiency``, in [0, 1]) and ``metric``.
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    q : int
        Requested number of quantile bins.
    column : str
        Column to bin.
    metric : str
        Column summarised per bin (default ``final_score``).
    ci : float
        Level of the interval of each bin mean.

    Returns
    -------
    DataFrame
        One row per remaining bin, in order: ``quantile_bin`` (ordered categorical, e.g. "Q1",
        "Q1–Q3"), ``interval`` (e.g. "[0, 1.75]"), ``lower``, ``upper``, ``n``, ``mean``,
        ``std``, ``ci_low``, ``ci_high``, ``method`` (the interval: "logit t" for a [0, 1]
        metric, inside [0, 1]; "t" otherwise), ``note`` ("only k distinct quantile bins ..."
        when ties merged bins, else "").

    Raises
    ------
    ValueError
        Missing columns, q < 1.

    Notes
    -----
    Intervals by :func:`dabench_analysis.stats.mean_summary`. Binning as
    :func:`quantile_bins` (pitfall P05): with efficiency
    [0, 0, 0, 0, 0, 0, 1, 2, 3, 4] the quartile edges [0, 0, 0, 1.75, 4] reduce to [0, 1.75, 4],
    giving bins of 7 and 3 tasks. Tasks with a missing ``column`` are left out with a warning.

    Examples
    --------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> df = pd.DataFrame({"tool_efficiency": [0, 0, 0, 0, 0, 0, 1, 2, 3, 4],
    ...                    "final_score": [0, 0, 0, 1, 0, 0, 1, 1, 1, 1]})
    >>> efficiency_quartiles(df)[["quantile_bin", "interval", "n"]].to_string(index=False)
    'quantile_bin  interval  n\\n       Q1–Q3 [0, 1.75]  7\\n          Q4 (1.75, 4]  3'
    """
    check_ci(ci)
    if int(q) != q or q < 1:
        raise ValueError(f"q must be a positive integer, got {q!r}")
    x, y = as_float(tasks[column], column), as_float(tasks[metric], metric)
    codes, labels, intervals, lows, highs, note = _quantile_bins(x, int(q))
    notes = [note]
    if x.isna().any():
        notes.append(f"{int(x.isna().sum())} tasks with missing {column} left out")
    how = interval_method(tasks, metric)
    rows = []
    for k_, (lab, iv, lo, hi) in enumerate(zip(labels, intervals, lows, highs, strict=True)):
        r = mean_summary(y[codes == k_].to_numpy(), ci, method=how)
        notes.append(f"{lab}: {r['note']}" if r["note"] else "")
        rows.append({"quantile_bin": lab, "interval": iv, "lower": lo, "upper": hi, **r,
                     "note": note})
    warn(notes)
    out = pd.DataFrame(rows, columns=["quantile_bin", "interval", "lower", "upper", "n", "mean",
                                      "std", "sem", "ci_low", "ci_high", "method", "note"])
    out["quantile_bin"] = pd.Categorical(out["quantile_bin"], categories=labels, ordered=True)
    return out.drop(columns="sem")
