"""Tests, intervals and effect sizes for eval-v2 task frames (no plotting, no file IO).

Every function returns a tidy DataFrame (one row per metric, group or test) with snake_case
columns; intervals are ``ci_low``/``ci_high``; the method used is named in a column. Degenerate
input gives defined output (p = 1.0, NaN with a note, "undefined") plus a
:class:`StatisticsWarning`, never an exception from deep inside scipy and never ``inf``.

Where our default differs from R or scipy, the function's Notes say so. The values are checked
against published reference vectors in ``tests/test_refvectors.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar
from statsmodels.stats.multitest import multipletests

from dabench_analysis import schema
from dabench_analysis._stats_core import (
    StatisticsWarning,
    as_bool,
    as_float,
    check_ci,
    check_columns,
    magnitude_d,
    magnitude_delta,
    mann_whitney,
    pair_runs,
    signed_rank,
    standardized_effects,
    t_summary,
    warn,
    welch_interval,
)
from dabench_analysis._stats_power import (
    clustered_mean_ci,
    clustered_se,
    miller_min_detectable_effect,
    miller_required_n,
    min_detectable_effect,
    required_n,
)
from dabench_analysis._stats_summary import (
    _as_list,
    bootstrap_ci,
    correlation,
    describe,
    proportion_ci,
)

__all__ = [
    "StatisticsWarning", "describe", "proportion_ci", "bootstrap_ci", "effect_sizes",
    "paired_comparison", "compare_runs", "adjust_pvalues", "unpaired_comparison", "mcnemar",
    "correlation", "clustered_se", "clustered_mean_ci", "min_detectable_effect", "required_n",
    "miller_min_detectable_effect", "miller_required_n",
]


def effect_sizes(x, y, *, paired: bool = False,
                 hedges_correction: str = "approx") -> pd.DataFrame:
    """Standardized and rank effect sizes of ``x`` relative to ``y`` (positive: x larger).

    Parameters
    ----------
    x, y : array-like of float
        Two samples (equal length and position-paired when ``paired``). NaN is dropped
        (pairwise when paired).
    paired : bool
        Adds ``cohens_d_z`` and uses the matched-pairs rank-biserial.
    hedges_correction : {"approx", "exact"}
        J = 1 − 3/(4(nx+ny) − 9) (Hedges & Olkin; pingouin, Lakens 2013), or the exact
        gamma-function J (R ``effectsize``). They differ by < 1e-3 for n >= 10.

    Returns
    -------
    DataFrame
        One row: ``n_x``, ``n_y``, ``mean_diff``, ``cohens_d``, ``hedges_g``, ``cohens_d_z``
        (NaN unless paired), ``rank_biserial``, ``cles`` (unpaired: P(X>Y) + ½P(X=Y)),
        ``magnitude`` (Cohen 1988 label of d_z when paired, else of d), ``note``.

    Raises
    ------
    ValueError
        Paired samples of different length, unknown ``hedges_correction``.

    Notes
    -----
    d = (x̄ − ȳ)/s_p with s_p² = ((nx−1)s_x² + (ny−1)s_y²)/(nx+ny−2); for equal n this is the
    seed's sqrt((s_x² + s_y²)/2). d_z = mean(x − y)/sd(x − y) (Lakens 2013). Zero variance or
    n < 2 gives NaN (never inf) with a note and magnitude "undefined". Note that pingouin's paired
    ``eftype="cohen"`` is this pooled d, not d_z.

    References
    ----------
    Lakens, D. (2013). Calculating and reporting effect sizes to facilitate cumulative science.
    Frontiers in Psychology 4:863. doi:10.3389/fpsyg.2013.00863.
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.). Erlbaum.

    Examples
    --------
    >>> x = [9, 7, 8, 9, 8, 9, 9, 10, 9, 9]
    >>> y = [9, 6, 7, 8, 7, 9, 8, 8, 8, 7]
    >>> round(float(effect_sizes(x, y).loc[0, "cohens_d"]), 4)  # Lakens (2013): d_s = 1.13
    1.1259
    """
    xs, ys = as_float(x, "x").to_numpy(), as_float(y, "y").to_numpy()
    if paired:
        if xs.size != ys.size:
            raise ValueError(f"paired samples differ in length: {xs.size} vs {ys.size}")
        keep = ~(np.isnan(xs) | np.isnan(ys))
        xs, ys = xs[keep], ys[keep]
    else:
        xs, ys = xs[~np.isnan(xs)], ys[~np.isnan(ys)]
    eff, notes = standardized_effects(xs, ys, paired=paired, hedges_correction=hedges_correction)
    if paired:
        rb = signed_rank(xs - ys)["rank_biserial"] if xs.size else np.nan
        cles = np.nan
    else:
        mw = mann_whitney(xs, ys)
        rb, cles = mw["rank_biserial"], mw["cles"]
    diff = float(xs.mean() - ys.mean()) if xs.size and ys.size else np.nan
    row = {"n_x": xs.size, "n_y": ys.size, "mean_diff": diff, **eff, "rank_biserial": rb,
           "cles": cles, "magnitude": magnitude_d(eff["cohens_d_z" if paired else "cohens_d"]),
           "note": "; ".join(notes)}
    warn(notes)
    return pd.DataFrame([row])


def paired_comparison(baseline, proposed, *, metric: str = "final_score", on: str = "task_id",
                      ci: float = 0.95, alternative: str = "two-sided",
                      zero_method: str = "wilcox", correction: bool = True,
                      method: str = "auto", decimals: int | None = None) -> pd.DataFrame:
    """Compare two runs on the same tasks: mean difference, Wilcoxon signed-rank, effect sizes.

    Parameters
    ----------
    baseline, proposed : DataFrame or array-like
        Task frames with ``on`` and ``metric`` columns (paired by ``on``; tasks in only one run
        are counted in ``n_unpaired``). Two Series are aligned on their index; two plain
        sequences are paired by position. Scores are floats in [0, 1] or flags (pandas
        ``boolean`` or 0/1, compared as 1.0/0.0).
    metric : str
        Column to compare. Differences are ``proposed - baseline``.
    on : str
        Task key.
    ci : float
        Level of the t-interval of the mean difference.
    alternative : {"two-sided", "greater", "less"}
        For the signed-rank test; "greater" means proposed > baseline.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences: dropped (R's only option, default), ranked (Pratt) or split.
    correction : bool
        Continuity correction in the normal approximation (R default True; scipy default False).
    method : {"auto", "exact", "approx"}
        See Notes.
    decimals : int or None
        Round the differences to this many decimals before ranking, so that floating-point
        pseudo-ties (0.05 vs 0.05000000000000002) count as ties and zeros. Default None: no
        rounding, exactly as R and scipy (refvectors README item 5); e.g. ``decimals=10``
        treats such pseudo-ties as ties (which then selects the normal approximation).

    Returns
    -------
    DataFrame
        One row: ``metric``, ``n_pairs``, ``n_unpaired``, ``n_dropped_na``, ``n_nonzero``,
        ``mean_baseline``, ``mean_proposed``, ``mean_diff``, ``se_diff``, ``ci_low``, ``ci_high``
        (t-interval of the mean difference), ``statistic`` (T+, sum of ranks of positive
        differences = R's V), ``p_value``, ``alternative``, ``zero_method``, ``wilcoxon_method``,
        ``effect_size`` (= ``cohens_d_z``), ``magnitude`` (Cohen label of d_z or "undefined"),
        ``cohens_d_z``, ``cohens_d`` (pooled SD sqrt((s1²+s2²)/2), as in the seed), ``hedges_g``,
        ``rank_biserial`` (matched pairs, (T+ − T−)/(T+ + T−)), ``method``, ``note``.

    Raises
    ------
    ValueError
        Missing columns, duplicate task keys, unequal lengths of position-paired samples, or an
        invalid option.

    Notes
    -----
    Pairs with a missing value on either side are dropped pairwise and counted (pitfall P02;
    never drop NaN per side). Signed-rank policy (``method="auto"``), as R ``wilcox.test``: the
    exact null distribution only when there are no zero differences, no ties among |d| and fewer
    than 50 pairs; otherwise the normal approximation with tie correction and (by default)
    continuity correction. Differences from scipy (1.17): scipy's ``method="auto"`` may use the
    exact or a permutation distribution in the presence of ties, defaults to no continuity
    correction, and reports min(T+, T−) for two-sided tests; p-values then differ (refvectors
    README items 1–5). When every difference is zero the test is not testable: p = 1.0, the
    ``wilcoxon_method`` says so, and a warning is issued (pitfall P01). With no complete pairs
    p is NaN (untestable; ``compare_runs`` leaves it out of the correction). Zero variance gives
    NaN effect sizes with magnitude "undefined" (pitfall P03).

    References
    ----------
    Hollander, M., Wolfe, D. A. (1973). Nonparametric Statistical Methods. Wiley, pp. 27–33.
    Kerby, D. S. (2014). The simple difference formula. Comprehensive Psychology 3, 11.IT.3.1.
    Lakens, D. (2013). Frontiers in Psychology 4:863.

    Examples
    --------
    >>> base = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4", "t5", "t6"],
    ...                      "final_score": [0.4, 0.3, None, 0.2, 0.6, 0.1]})
    >>> prop = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4", "t5", "t6"],
    ...                      "final_score": [0.9, None, 0.7, 0.6, 0.8, 0.5]})
    >>> import warnings; warnings.simplefilter("ignore", StatisticsWarning)
    >>> out = paired_comparison(base, prop)
    >>> int(out.n_pairs[0]), int(out.n_dropped_na[0]), float(out.p_value[0])
    (4, 2, 0.125)
    """
    check_ci(ci)
    pairs, counts, notes = pair_runs(baseline, proposed, metric, on, as_float)
    xb, xp = pairs["baseline"].to_numpy(float), pairs["proposed"].to_numpy(float)
    sr = signed_rank(xp - xb, zero_method=zero_method, correction=correction,
                     alternative=alternative, method=method, decimals=decimals)
    summ = t_summary(xp - xb, ci)
    eff, eff_notes = standardized_effects(xp, xb, paired=True)
    notes += [sr["note"]] + eff_notes
    row = {"metric": metric, **counts, "n_nonzero": sr["n_nonzero"],
           "mean_baseline": xb.mean() if xb.size else np.nan,
           "mean_proposed": xp.mean() if xp.size else np.nan,
           "mean_diff": summ["mean"], "se_diff": summ["sem"], "ci_low": summ["ci_low"],
           "ci_high": summ["ci_high"], "statistic": sr["statistic"], "p_value": sr["p_value"],
           "alternative": alternative, "zero_method": zero_method,
           "wilcoxon_method": sr["wilcoxon_method"], "effect_size": eff["cohens_d_z"],
           "magnitude": magnitude_d(eff["cohens_d_z"]), **eff,
           "rank_biserial": sr["rank_biserial"],
           "method": "Wilcoxon signed-rank; t-interval of mean difference",
           "note": "; ".join(n for n in notes if n)}
    warn(notes)
    return pd.DataFrame([row])


_ADJUST = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "fdr_bh": "fdr_bh",
           "by": "fdr_by", "fdr_by": "fdr_by", "hochberg": "simes-hochberg", "hommel": "hommel"}


def adjust_pvalues(p, *, method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons, leaving NaN in place (as R ``p.adjust``).

    Parameters
    ----------
    p : array-like of float
        Raw p-values in [0, 1]; NaN marks an untestable comparison.
    method : {"holm", "bh", "by", "bonferroni", "hochberg", "hommel"}
        ``"bh"`` = Benjamini–Hochberg (``"fdr_bh"`` also accepted), ``"by"`` = Benjamini–Yekutieli.

    Returns
    -------
    ndarray of float
        Adjusted p-values, same length and order, NaN where the input is NaN.

    Raises
    ------
    ValueError
        Unknown method or p-values outside [0, 1].

    Notes
    -----
    NaN p-values are not counted in the number of tests m (R's default ``n = sum(!is.na(p))``,
    pitfall P04). statsmodels ``multipletests`` would return all-NaN for such input.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist.
    6, 65–70. Benjamini, Y., Hochberg, Y. (1995). Controlling the false discovery rate. JRSS-B 57,
    289–300.

    Examples
    --------
    >>> adjust_pvalues([0.01, float("nan"), 0.04, 0.20], method="bh").round(4).tolist()
    [0.03, nan, 0.06, 0.2]
    """
    if method not in _ADJUST:
        raise ValueError(f"method must be one of {', '.join(_ADJUST)}; got {method!r}")
    p = np.asarray(p, dtype=float).ravel()
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    if ok.any():
        out[ok] = multipletests(p[ok], method=_ADJUST[method])[1]
    return out


def compare_runs(baseline: pd.DataFrame, proposed: pd.DataFrame, *,
                 metrics: Sequence[str] | None = None, correction: str = "holm",
                 on: str = "task_id", ci: float = 0.95) -> pd.DataFrame:
    """:func:`paired_comparison` for several metrics with a multiple-comparison correction.

    Parameters
    ----------
    baseline, proposed : DataFrame
        Task frames of two runs with ``on`` and the metric columns.
    metrics : list of str, optional
        Default: the seed's Table 1 metrics (``schema.MAIN_METRICS``) present in both frames
        (absent ones are skipped with a warning). Explicit metrics must exist.
    correction : {"holm", "bh", "by", "bonferroni", "hochberg", "hommel"}
        See :func:`adjust_pvalues`.
    on : str
        Task key.
    ci : float
        Level of the mean-difference intervals.

    Returns
    -------
    DataFrame
        One row per metric with every :func:`paired_comparison` column plus ``p_adjusted`` and
        ``correction``. Untestable comparisons (no complete pairs, p = NaN) keep NaN and are not
        counted in m.

    Raises
    ------
    ValueError
        Missing columns or an unknown correction.

    Examples
    --------
    >>> b = pd.DataFrame({"task_id": list("abcdef"), "final_score": [.1, .2, .3, .4, .5, .6],
    ...                   "answer_f1": [.5, .6, .7, .5, .6, .7]})
    >>> p = b.assign(final_score=[.4, .4, .7, .5, .85, .85], answer_f1=[.6, .5, .7, .4, .7, .6])
    >>> out = compare_runs(b, p, metrics=["final_score", "answer_f1"], correction="holm")
    >>> [round(float(v), 4) for v in out.p_adjusted]
    [0.0625, 0.7656]
    """
    if correction not in _ADJUST:
        raise ValueError(f"correction must be one of {', '.join(_ADJUST)}; got {correction!r}")
    if metrics is None:
        metrics = [m for m in schema.MAIN_METRICS
                   if m in baseline.columns and m in proposed.columns]
        skipped = [m for m in schema.MAIN_METRICS if m not in metrics]
        if skipped:
            warn([f"metrics not in both runs, skipped: {', '.join(skipped)}"])
        if not metrics:
            raise ValueError("none of the default metrics "
                             f"({', '.join(schema.MAIN_METRICS)}) is in both runs")
    rows, notes = [], []
    for m in _as_list(metrics):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StatisticsWarning)
            rows.append(paired_comparison(baseline, proposed, metric=m, on=on, ci=ci))
        notes += [f"{m}: {w.message}" for w in caught if issubclass(w.category, StatisticsWarning)]
    out = pd.concat(rows, ignore_index=True)
    out["p_adjusted"] = adjust_pvalues(out["p_value"].to_numpy(), method=correction)
    out["correction"] = correction
    warn(notes)
    return out


def unpaired_comparison(a, b, *, metric: str = "final_score", alternative: str = "two-sided",
                        ci: float = 0.95, method: str = "auto") -> pd.DataFrame:
    """Compare two independent groups: Mann–Whitney U, rank effect sizes, medians, means.

    Parameters
    ----------
    a, b : DataFrame or array-like
        The two groups; frames contribute their ``metric`` column. Effects are of ``a``
        relative to ``b`` (positive: a tends to be larger), as R ``wilcox.test(a, b)``.
    metric : str
        Column used when ``a``/``b`` are frames (scores or flags).
    alternative : {"two-sided", "greater", "less"}
        "greater": a tends to exceed b.
    ci : float
        Level of the Welch interval of the mean difference.
    method : {"auto", "exact", "asymptotic"}
        ``auto`` (R's rule): exact when both n < 50 and there are no ties, else the normal
        approximation with tie and continuity correction.

    Returns
    -------
    DataFrame
        One row: ``metric``, ``n_a``, ``n_b``, ``n_dropped_na``, ``mean_a``, ``mean_b``,
        ``median_a``, ``median_b``, ``mean_diff`` (a − b), ``ci_low``, ``ci_high`` (Welch
        t-interval), ``statistic`` (U of a = R's W), ``p_value``, ``mwu_method``, ``effect_size``
        (= ``rank_biserial``), ``magnitude`` (Romano et al. 2006 label of Cliff's delta),
        ``rank_biserial`` (2U/(n_a n_b) − 1), ``cliffs_delta`` (P(a>b) − P(a<b); equal to the
        rank-biserial), ``cles`` (P(a>b) + ½P(a=b)), ``cohens_d``, ``hedges_g``, ``method``,
        ``note``.

    Raises
    ------
    ValueError
        Missing ``metric`` column or invalid options.

    Notes
    -----
    All values equal: p = 1.0 with a warning (scipy's choice; R returns NaN because the
    tie-corrected variance is 0). An empty group: p = NaN (untestable) with a warning. scipy's
    own ``method="auto"`` switches to exact only for n <= 8, so its p can differ from R's and
    ours for 8 < n < 50 without ties.

    References
    ----------
    Mann, H. B., Whitney, D. R. (1947). Ann. Math. Statist. 18, 50–60.
    Cliff, N. (1993). Dominance statistics. Psychological Bulletin 114, 494–509.
    Romano, J. et al. (2006). Appropriate statistics for ordinal level data. Annual meeting of
    the Florida Association of Institutional Research.

    Examples
    --------
    >>> out = unpaired_comparison([19, 22, 16, 29, 24], [20, 11, 17, 12])
    >>> float(out.statistic[0]), round(float(out.p_value[0]), 4)  # scipy docs: U=17, p=0.1111
    (17.0, 0.1111)
    """
    check_ci(ci)
    xs, notes = [], []
    for name, g in (("a", a), ("b", b)):
        if isinstance(g, pd.DataFrame):
            check_columns(g, [metric], name)
            g = g[metric]
        xs.append(as_float(g, metric).to_numpy())
    n_na = int(np.isnan(xs[0]).sum() + np.isnan(xs[1]).sum())
    if n_na:
        notes.append(f"{n_na} missing values of {metric} dropped")
    x, y = xs[0][~np.isnan(xs[0])], xs[1][~np.isnan(xs[1])]
    mw = mann_whitney(x, y, alternative=alternative, method=method)
    eff, eff_notes = standardized_effects(x, y, paired=False)
    lo, hi = welch_interval(x, y, ci)
    notes += [mw["note"]] + eff_notes
    row = {"metric": metric, "n_a": x.size, "n_b": y.size, "n_dropped_na": n_na,
           "mean_a": x.mean() if x.size else np.nan, "mean_b": y.mean() if y.size else np.nan,
           "median_a": np.median(x) if x.size else np.nan,
           "median_b": np.median(y) if y.size else np.nan,
           "mean_diff": x.mean() - y.mean() if x.size and y.size else np.nan,
           "ci_low": lo, "ci_high": hi, "statistic": mw["statistic"], "p_value": mw["p_value"],
           "alternative": alternative, "mwu_method": mw["mwu_method"],
           "effect_size": mw["rank_biserial"], "magnitude": magnitude_delta(mw["rank_biserial"]),
           "rank_biserial": mw["rank_biserial"], "cliffs_delta": mw["rank_biserial"],
           "cles": mw["cles"], "cohens_d": eff["cohens_d"], "hedges_g": eff["hedges_g"],
           "method": "Mann-Whitney U; Welch t-interval of mean difference",
           "note": "; ".join(n for n in notes if n)}
    warn(notes)
    return pd.DataFrame([row])


def mcnemar(baseline_correct, proposed_correct, *, exact: bool = True, correction: bool = True,
            on: str = "task_id", column: str = "final_score",
            threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """McNemar's test of paired correct/incorrect outcomes of two runs.

    Parameters
    ----------
    baseline_correct, proposed_correct : array-like, Series or DataFrame
        Flags (pandas ``boolean``, bool or 0/1; <NA> allowed), paired by position (sequences),
        index (two Series) or ``on`` (task frames). For frames, ``column`` is used: a flag
        column as is, a score column as ``column >= threshold``.
    exact : bool
        Exact binomial test on the discordant pairs (default) or the chi-square statistic.
    correction : bool
        Continuity correction of the chi-square statistic (ignored when ``exact``).
    on, column, threshold : str, str, float
        Task key, outcome column and accuracy threshold for task frames.

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
        Values that are not flags, duplicate task keys, unequal lengths.

    Notes
    -----
    Exact: statistic = min(b, c) and p = min(1, 2·BinomCDF(min(b, c); b + c, ½)) (statsmodels;
    R ``binom.test(b, b + c)``). Chi-square: (|b − c| − 1)²/(b + c) with correction; when b = c
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
    def convert(s, name):
        if isinstance(baseline_correct, pd.DataFrame) and not (
                pd.api.types.is_bool_dtype(s.dtype) or isinstance(s.dtype, pd.BooleanDtype)):
            f = as_float(s, name)
            if not f.dropna().isin([0.0, 1.0]).all():
                return (f >= threshold).astype("boolean").mask(f.isna())
        return as_bool(s, name)

    pairs, counts, notes = pair_runs(baseline_correct, proposed_correct, column, on, convert)
    xb, xp = pairs["baseline"].astype(bool).to_numpy(), pairs["proposed"].astype(bool).to_numpy()
    a, b = int(np.sum(xb & xp)), int(np.sum(xb & ~xp))
    c, d = int(np.sum(~xb & xp)), int(np.sum(~xb & ~xp))
    n = counts["n_pairs"]
    row = {**counts, "n_both_correct": a, "b": b, "c": c, "n_both_wrong": d,
           "accuracy_baseline": xb.mean() if n else np.nan,
           "accuracy_proposed": xp.mean() if n else np.nan}
    if b + c == 0:
        stat, p = (0.0, 1.0) if n else (np.nan, np.nan)
        notes.append("no discordant pairs: p set to 1.0" if n else "no complete pairs")
        meth = "McNemar not testable (no discordant pairs)"
    elif exact:
        res = _sm_mcnemar([[a, b], [c, d]], exact=True)
        stat, p, meth = float(res.statistic), float(res.pvalue), "McNemar exact (binomial)"
    else:
        corr = correction and b != c
        res = _sm_mcnemar([[a, b], [c, d]], exact=False, correction=corr)
        stat, p = float(res.statistic), float(res.pvalue)
        meth = "McNemar chi-square" + (", continuity-corrected" if corr else "")
    row.update(statistic=stat, p_value=min(1.0, p), method=meth,
               note="; ".join(n for n in notes if n))
    warn(notes)
    return pd.DataFrame([row])
