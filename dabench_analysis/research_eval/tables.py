"""Research-eval sessions as tables: pass rate per profile (Wilson), McNemar between profiles,
latency and token distributions, tool mix and its test, failure listing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from dabench_analysis import stats as da_stats
from dabench_analysis.research_eval._load import STATUS
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.numbers import format_estimate


def pass_rate(cases: pd.DataFrame, *, by: str = "run_id", ci: float = 0.95,
              exclude: tuple[str, ...] = ()) -> pd.DataFrame:
    """Pass rate per run profile with a Wilson score interval.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases`` (columns ``by`` and ``status``).
    by : str
        Grouping column.
    ci : float
        Confidence level.
    exclude : tuple of str
        Statuses removed from the denominator, e.g. ``("ERROR",)`` to rate answer quality
        only (seed 002: errors are infrastructure, not quality misses). Default: none, so
        ERROR and HALTED count as not passed.

    Returns
    -------
    DataFrame
        One row per group: ``by, n, n_pass, n_fail, n_error, n_halted, pass_rate, ci_low,
        ci_high, method``.

    Notes
    -----
    statsmodels ``proportion_confint(method="wilson")`` = R ``prop.test(correct=FALSE)``; at
    20/20 the upper bound is exactly 1 and the lower n/(n + z²).

    References
    ----------
    Wilson, E. B. (1927). JASA 22(158), 209–212. Newcombe, R. G. (1998). Stat Med 17, 857–872.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a"] * 25, "status": ["PASS"] * 5 + ["FAIL"] * 20})
    >>> pass_rate(c)[["n", "n_pass", "ci_low", "ci_high"]].round(4).values.tolist()
    [[25.0, 5.0, 0.0886, 0.3913]]
    """
    require_columns(cases, [by, "status"], "cases")
    bad = sorted(set(exclude) - set(STATUS.categories))
    if bad:
        raise ValueError(f"exclude {bad} not statuses; known: {', '.join(STATUS.categories)}")
    kept = cases[~cases["status"].isin(exclude)]
    rows = []
    for name, g in kept.groupby(by, sort=False, observed=True):
        counts = g["status"].astype(STATUS).value_counts()
        n, k = len(g), int(counts["PASS"])
        interval = da_stats.proportion_ci(k, n, ci=ci).iloc[0]
        lo, hi = interval["ci_low"], interval["ci_high"]
        rows.append({by: name, "n": n, "n_pass": k, "n_fail": int(counts["FAIL"]),
                     "n_error": int(counts["ERROR"]), "n_halted": int(counts["HALTED"]),
                     "pass_rate": k / n, "ci_low": float(lo), "ci_high": float(hi),
                     "method": "Wilson score interval (statsmodels)"})
    return pd.DataFrame(rows)


def mcnemar_profiles(cases: pd.DataFrame, a: str, b: str, *, by: str = "run_id",
                     exact: bool = True, correction: bool = True) -> pd.DataFrame:
    """Paired McNemar test of PASS between two run profiles on their shared cases.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases`` (``by``, ``case_id``, ``status``).
    a, b : str
        The two profiles (values of ``by``).
    by : str
        Profile column.
    exact : bool
        Exact binomial test on the discordant pairs (default); else the chi-square test.
    correction : bool
        Continuity correction of the chi-square test (R's default); ignored when exact.

    Returns
    -------
    DataFrame
        One row: ``profile_a, profile_b, n_pairs, both_pass, a_only, b_only, both_fail,
        pass_rate_a, pass_rate_b, diff`` (b − a), ``statistic, p_value, method``.

    Raises
    ------
    ValueError
        Unknown profile or no shared case.

    Notes
    -----
    :func:`dabench_analysis.stats.mcnemar` on the aligned cases; the exact statistic is min(b, c) (not a chi-square). With no
    discordant pair p = 1; with b = c the corrected chi-square is 0 and p = 1, as in R
    (statsmodels alone gives 0.1 and 0.75). ERROR/HALTED count as not passed.

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12(2), 153–157.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["x"] * 3 + ["y"] * 3, "case_id": list("pqr") * 2,
    ...                   "status": ["PASS", "FAIL", "FAIL", "PASS", "PASS", "PASS"]})
    >>> mcnemar_profiles(c, "x", "y")[["b_only", "statistic", "p_value"]].values.tolist()
    [[2.0, 0.0, 0.5]]
    """
    require_columns(cases, [by, "case_id", "status"], "cases")
    known = cases[by].unique().tolist()
    for p in (a, b):
        if p not in known:
            raise ValueError(f"profile {p!r} not in {by}; known: {', '.join(map(str, known))}")
    wide = cases[cases[by].isin([a, b])].pivot(index="case_id", columns=by, values="status")
    wide = wide.dropna()
    if wide.empty:
        raise ValueError(f"profiles {a!r} and {b!r} share no case")
    pa, pb = (wide[a] == "PASS").to_numpy(), (wide[b] == "PASS").to_numpy()
    t = [[int((pa & pb).sum()), int((pa & ~pb).sum())], [int((~pa & pb).sum()),
                                                         int((~pa & ~pb).sum())]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", da_stats.StatisticsWarning)  # the method column says it
        res = da_stats.mcnemar(pa, pb, exact=exact, correction=correction).iloc[0]
    stat, p, method = float(res["statistic"]), float(res["p_value"]), str(res["method"])
    return pd.DataFrame([{"profile_a": a, "profile_b": b, "n_pairs": len(wide),
                          "both_pass": t[0][0], "a_only": t[0][1], "b_only": t[1][0],
                          "both_fail": t[1][1], "pass_rate_a": pa.mean(), "pass_rate_b": pb.mean(),
                          "diff": pb.mean() - pa.mean(), "statistic": stat, "p_value": min(p, 1.0),
                          "method": method}])


def describe_profiles(cases: pd.DataFrame, *, columns: tuple[str, ...] = (
        "elapsed_ms", "total_tokens"), by: str = "run_id") -> pd.DataFrame:
    """Distribution summaries (latency, tokens, …) per run profile, long and tidy.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    columns : tuple of str
        Numeric columns to describe (milliseconds, tokens, counts).
    by : str
        Profile column.

    Returns
    -------
    DataFrame
        One row per (profile, metric): ``by, metric, n, mean, std, min, q25, median, q75,
        max`` (in the metric's unit; ``std`` NaN for n < 2). Times are given in seconds: a
        column ``X_ms`` becomes the metric ``X_s``, its values divided by 1000.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a"], "elapsed_ms": [1000.0, 3000.0]})
    >>> out = describe_profiles(c, columns=("elapsed_ms",))
    >>> out["metric"].tolist(), out[["n", "mean", "median"]].values.tolist()
    (['elapsed_s'], [[2.0, 2.0, 2.0]])
    """
    require_columns(cases, [by, *columns], "cases")
    long = cases.melt(id_vars=[by], value_vars=list(columns), var_name="metric")
    long["value"] = pd.to_numeric(long["value"]).astype(float)
    ms = long["metric"].str.endswith("_ms")
    long.loc[ms, "value"] = long.loc[ms, "value"] / 1000
    long["metric"] = long["metric"].str.replace(r"_ms$", "_s", regex=True)
    g = long.dropna(subset=["value"]).groupby([by, "metric"], sort=False, observed=True)["value"]
    out = g.describe().rename(columns={"count": "n", "25%": "q25", "50%": "median",
                                       "75%": "q75"}).reset_index()
    return out[[by, "metric", "n", "mean", "std", "min", "q25", "median", "q75", "max"]]


def tool_mix(cases: pd.DataFrame, *, by: str = "run_id") -> pd.DataFrame:
    """Tool calls per tool and profile: counts, shares and calls per case.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases`` with its ``calls_<tool>`` count columns.
    by : str
        Profile column.

    Returns
    -------
    DataFrame
        One row per (profile, tool), tools a profile never called included with 0:
        ``by, tool, n_calls, share`` (of the profile's calls, NaN if it made none),
        ``calls_per_case``.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "b"], "calls_x": [2, 0], "calls_y": [2, 1]})
    >>> tool_mix(c)["share"].tolist()
    [0.5, 0.5, 0.0, 1.0]
    """
    tools = [c for c in cases.columns if c.startswith("calls_")]
    require_columns(cases, [by], "cases")
    sums = cases.groupby(by, sort=False, observed=True)[tools].sum().astype(float)
    n_cases = cases.groupby(by, sort=False, observed=True).size()
    total = sums.sum(axis=1)
    share = sums.div(total.where(total > 0), axis=0)
    out = sums.stack().rename("n_calls").to_frame().join(share.stack().rename("share"))
    out = out.reset_index().rename(columns={"level_1": "tool"})
    out.columns = [by, "tool", "n_calls", "share"]
    out["tool"] = out["tool"].str.removeprefix("calls_")
    out["n_calls"] = out["n_calls"].astype(int)
    out["calls_per_case"] = out["n_calls"] / out[by].map(n_cases).astype(float)
    return out


def tool_mix_test(cases: pd.DataFrame, *, by: str = "run_id") -> pd.DataFrame:
    """Chi-square test that the tool mix (shares of calls per tool) is the same across profiles.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    by : str
        Profile column.

    Returns
    -------
    DataFrame
        One row: ``n_calls, n_profiles, n_tools, statistic, dof, p_value, effect_size``
        (Cramér's V), ``effect`` ("Cramér's V"), ``method, note`` (a note if > 20 % of expected counts are < 5, or if the
        test is undefined: fewer than 2 profiles or tools with calls, p = 1.0 then).

    Notes
    -----
    :func:`scipy.stats.chi2_contingency` on the profile × tool table of call counts (tools and
    profiles with no call dropped; Yates' correction for a 2 × 2 table, as R ``chisq.test``);
    Cramér's V from the uncorrected statistic (``scipy.stats.contingency.association``).
    Calls within a case are not independent, so read p as
    descriptive; a tool disabled in a profile is a structural zero the test does not model.

    References
    ----------
    Cramér, H. (1946). Mathematical Methods of Statistics. Princeton University Press.

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "b"], "calls_x": [30, 10], "calls_y": [10, 30]})
    >>> tool_mix_test(c)[["statistic", "p_value", "effect_size"]].round(6).values.tolist()
    [[18.05, 2.2e-05, 0.5]]
    """
    mix = tool_mix(cases, by=by)
    table = mix.pivot_table(index=by, columns="tool", values="n_calls", aggfunc="sum",
                            observed=True)
    table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
    row = {"n_calls": int(table.to_numpy().sum()), "n_profiles": table.shape[0],
           "n_tools": table.shape[1], "method": "chi-square test of independence "
           "(scipy.stats.chi2_contingency), Cramér's V"}
    if min(table.shape) < 2:
        return pd.DataFrame([row | {"statistic": 0.0, "dof": 0, "p_value": 1.0,
                                    "effect_size": np.nan, "effect": "Cramér's V",
                                    "note": "not testable: fewer than 2 "
                                    "profiles or tools with calls"}])
    res = stats.chi2_contingency(table.to_numpy())
    low = float((res.expected_freq < 5).mean())
    v = float(stats.contingency.association(table.to_numpy(), method="cramer"))
    note = (f"a share of {format_estimate(low)} of the expected counts below 5: p approximate"
            if low > 0.2 else "")
    return pd.DataFrame([row | {"statistic": float(res.statistic), "dof": int(res.dof),
                                "p_value": float(res.pvalue), "effect_size": v,
                                "effect": "Cramér's V", "note": note}])


def failures(cases: pd.DataFrame, run_id: str, *, by: str = "run_id") -> pd.DataFrame:
    """The non-PASS cases of one profile: what was asked, expected and answered.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    run_id : str
        The profile.
    by : str
        Profile column.

    Returns
    -------
    DataFrame
        ``profile`` (``run_id``, in every row: a reader's table names it in its note),
        ``case_id, status, query, expected_type, expected, answer, error, n_tool_calls,
        source``, ordered by status then case (empty if every case passed).

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a"], "case_id": ["p", "q"],
    ...                   "status": pd.Categorical(["PASS", "FAIL"], categories=STATUS.categories)})
    >>> failures(c, "a")[["profile", "case_id"]].values.tolist()
    [['a', 'q']]
    """
    require_columns(cases, [by, "case_id", "status"], "cases")
    if run_id not in set(cases[by]):
        raise ValueError(f"{by} {run_id!r} not in cases; known: "
                         f"{', '.join(map(str, cases[by].unique()))}")
    cols = [c for c in ("case_id", "status", "query", "expected_type", "expected", "answer",
                        "error", "n_tool_calls", "source") if c in cases.columns]
    out = cases.loc[(cases[by] == run_id) & (cases["status"] != "PASS"), cols]
    out = out.sort_values(["status", "case_id"]).reset_index(drop=True)
    out.insert(0, "profile", run_id)
    return out
