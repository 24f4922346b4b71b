"""Two runs compared on one metric: paired (Wilcoxon signed-rank) and unpaired (Mann–Whitney U)
tests with their effect sizes and intervals, as tidy one-row frames."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.schema import require_columns
from dabench_analysis.stats._descriptive import t_summary
from dabench_analysis.stats._effsize import magnitude_d, magnitude_delta, standardized_effects
from dabench_analysis.stats._inputs import as_float, check_ci, check_frame, pair_runs, warn
from dabench_analysis.stats._nonparametric import mann_whitney, signed_rank, welch_interval


def _drop_nonfinite(pairs: pd.DataFrame, counts: dict, metric: str) -> tuple[pd.DataFrame,
                                                                               dict, str]:
    """Drop pairs holding inf/-inf (a score cannot be infinite); count them with the NaN ones."""
    bad = ~np.isfinite(pairs.to_numpy(dtype=float)).all(axis=1)
    k = int(bad.sum())
    if not k:
        return pairs, counts, ""
    counts = {**counts, "n_pairs": counts["n_pairs"] - k,
              "n_dropped_na": counts["n_dropped_na"] + k}
    return pairs[~bad], counts, (f"{k} pair{'s' if k != 1 else ''} dropped: {metric} is "
                                 "infinite in either run")


def paired_comparison(baseline, proposed, *, metric: str = "final_score", on: str = "task_id",
                      ci: float = 0.95, alternative: str = "two-sided",
                      zero_method: str = "wilcox", correction: bool = True,
                      method: str = "auto", decimals: int | None = None) -> pd.DataFrame:
    """Compare two runs on the same tasks: mean difference, Wilcoxon signed-rank, effect sizes.

    Parameters
    ----------
    baseline, proposed : DataFrame or array-like
        Task frames (``run.tasks``) with ``on`` and ``metric`` columns (paired by ``on``; tasks
        in only one run are counted in ``n_unpaired``). Two Series are aligned on their index;
        two plain sequences are paired by position. Scores are floats in [0, 1] or flags
        (pandas ``boolean`` or 0/1, compared as 1.0/0.0).
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
        One row: ``metric``, ``n_pairs``, ``n_unpaired``, ``n_dropped_na`` (pairs with a
        missing or infinite value on either side), ``n_nonzero``,
        ``mean_baseline``, ``mean_proposed``, ``mean_diff``, ``se_diff``, ``ci_low``, ``ci_high``
        (t-interval of the mean difference), ``statistic`` (T+, sum of ranks of positive
        differences = R's V), ``p_value``, ``alternative``, ``zero_method``, ``wilcoxon_method``,
        ``effect_size`` (= ``cohens_d_z``), ``effect`` ("d_z": the kind of ``effect_size``),
        ``magnitude`` (Cohen label of d_z or "undefined"),
        ``cohens_d_z``, ``cohens_d`` (pooled SD sqrt((s1²+s2²)/2), as in the seed), ``hedges_g``,
        ``rank_biserial`` (matched pairs, (T+ − T−)/(T+ + T−)), ``method``, ``note``.

    Raises
    ------
    ValueError
        Missing columns, duplicate task keys (a frame holding several runs is named as such),
        unequal lengths of position-paired samples, or an invalid option.
    TypeError
        A Run or Runs (pass ``run.tasks``).

    Notes
    -----
    Pairs with a missing value on either side are dropped pairwise and counted (pitfall P02;
    never drop NaN per side). Pairs with an infinite value are dropped the same way, with a
    warning naming how many (an inf would otherwise give ``mean_diff = ±inf`` and a false
    "zero variance" note). Signed-rank policy (``method="auto"``), as R ``wilcox.test``: the
    exact null distribution only when there are no zero differences, no ties among abs(d) and fewer
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
    >>> import warnings; from dabench_analysis.stats import StatisticsWarning
    >>> warnings.simplefilter("ignore", StatisticsWarning)
    >>> out = paired_comparison(base, prop)
    >>> int(out.n_pairs[0]), int(out.n_dropped_na[0]), float(out.p_value[0])
    (4, 2, 0.125)
    """
    baseline = check_frame(baseline, "baseline", others=True)
    proposed = check_frame(proposed, "proposed", others=True)
    check_ci(ci)
    pairs, counts, notes = pair_runs(baseline, proposed, metric, on, as_float)
    pairs, counts, inf_note = _drop_nonfinite(pairs, counts, metric)
    notes.append(inf_note)
    xb, xp = pairs["baseline"].to_numpy(float), pairs["proposed"].to_numpy(float)
    sr = signed_rank(xp - xb, zero_method=zero_method, correction=correction,
                     alternative=alternative, method=method, decimals=decimals)
    summ = t_summary(xp - xb, ci)
    eff, eff_notes = standardized_effects(xp, xb, paired=True)
    notes += [sr["note"], f"mean difference: {summ['note']}" if summ["note"] else ""] + eff_notes
    row = {"metric": metric, **counts, "n_nonzero": sr["n_nonzero"],
           "mean_baseline": xb.mean() if xb.size else np.nan,
           "mean_proposed": xp.mean() if xp.size else np.nan,
           "mean_diff": summ["mean"], "se_diff": summ["sem"], "ci_low": summ["ci_low"],
           "ci_high": summ["ci_high"], "statistic": sr["statistic"], "p_value": sr["p_value"],
           "alternative": alternative, "zero_method": zero_method,
           "wilcoxon_method": sr["wilcoxon_method"], "effect_size": eff["cohens_d_z"],
           "effect": "d_z",
           "magnitude": magnitude_d(eff["cohens_d_z"]), **eff,
           "rank_biserial": sr["rank_biserial"],
           "method": "Wilcoxon signed-rank; t-interval of mean difference",
           "note": "; ".join(n for n in notes if n)}
    warn(notes)
    return pd.DataFrame([row])


def unpaired_comparison(a, b, *, metric: str = "final_score", alternative: str = "two-sided",
                        ci: float = 0.95, method: str = "auto") -> pd.DataFrame:
    """Compare two independent groups: Mann–Whitney U, rank effect sizes, medians, means.

    Parameters
    ----------
    a, b : DataFrame or array-like
        The two groups; frames contribute their ``metric`` column (every row is one
        observation: a frame of several runs is one pooled group). Effects are of ``a``
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
        One row: ``metric``, ``n_a``, ``n_b``, ``n_dropped_na`` (missing or infinite
        values), ``mean_a``, ``mean_b``,
        ``median_a``, ``median_b``, ``mean_diff`` (a − b), ``ci_low``, ``ci_high`` (Welch
        t-interval), ``statistic`` (U of a = R's W), ``p_value``, ``mwu_method``, ``effect_size``
        (= ``rank_biserial``), ``effect`` ("rank-biserial": the kind of ``effect_size``),
        ``magnitude`` (Romano et al. 2006 label of Cliff's delta),
        ``rank_biserial`` (2U/(n_a n_b) − 1), ``cliffs_delta`` (P(a>b) − P(a<b); equal to the
        rank-biserial), ``cles`` (P(a>b) + ½P(a=b)), ``cohens_d``, ``hedges_g``, ``method``,
        ``note``.

    Raises
    ------
    ValueError
        Missing ``metric`` column or invalid options.
    TypeError
        A Run or Runs (pass ``run.tasks``).

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
        g = check_frame(g, name, others=True)
        if isinstance(g, pd.DataFrame):
            require_columns(g, [metric], name)
            g = g[metric]
        xs.append(as_float(g, metric).to_numpy())
    n_na = int(np.isnan(xs[0]).sum() + np.isnan(xs[1]).sum())
    n_inf = int(np.isinf(xs[0]).sum() + np.isinf(xs[1]).sum())
    if n_na:
        notes.append(f"{n_na} missing values of {metric} dropped")
    if n_inf:
        notes.append(f"{n_inf} infinite values of {metric} dropped")
    x, y = xs[0][np.isfinite(xs[0])], xs[1][np.isfinite(xs[1])]
    n_na += n_inf
    mw = mann_whitney(x, y, alternative=alternative, method=method)
    eff, eff_notes = standardized_effects(x, y, paired=False)
    welch = welch_interval(x, y, ci)
    lo, hi = welch.low, welch.high
    notes += [mw["note"], welch.note if x.size and y.size else ""] + eff_notes
    row = {"metric": metric, "n_a": x.size, "n_b": y.size, "n_dropped_na": n_na,
           "mean_a": x.mean() if x.size else np.nan, "mean_b": y.mean() if y.size else np.nan,
           "median_a": np.median(x) if x.size else np.nan,
           "median_b": np.median(y) if y.size else np.nan,
           "mean_diff": x.mean() - y.mean() if x.size and y.size else np.nan,
           "ci_low": lo, "ci_high": hi, "statistic": mw["statistic"], "p_value": mw["p_value"],
           "alternative": alternative, "mwu_method": mw["mwu_method"],
           "effect_size": mw["rank_biserial"], "effect": "rank-biserial",
           "magnitude": magnitude_delta(mw["rank_biserial"]),
           "rank_biserial": mw["rank_biserial"], "cliffs_delta": mw["rank_biserial"],
           "cles": mw["cles"], "cohens_d": eff["cohens_d"], "hedges_g": eff["hedges_g"],
           "method": "Mann-Whitney U; Welch t-interval of mean difference",
           "note": "; ".join(n for n in notes if n)}
    warn(notes)
    return pd.DataFrame([row])
