"""Research-eval harness sessions (seed 002): loading and profile comparisons.

A session directory holds ``summary.json`` and, per run profile, ``<run_id>/artifacts/
results.jsonl`` (one test case per line) and ``<run_id>/artifacts/summary.json``; the row
format is described in :mod:`dabench_analysis.synthetic.research_eval`. :func:`load_research_eval`
is the only function here that touches files, and it only reads. The analyses take the
``cases`` frame and return tidy frames; plot helpers return Axes.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dabench_analysis import stats as da_stats

__all__ = ["STATUS", "ResearchEval", "load_research_eval", "pass_rate", "mcnemar_profiles",
           "describe_profiles", "tool_mix", "tool_mix_test", "failures", "plot_latency",
           "plot_pass_rate"]

STATUS = pd.CategoricalDtype(["PASS", "FAIL", "ERROR", "HALTED"], ordered=True)
ROLES = ("main", "summarizer", "audit_planner")
TOKENS = ("input_tokens", "output_tokens", "total_tokens")
TIMINGS = ("source_prepare_ms", "client_init_ms", "run_turn_ms", "llm_total_ms",
           "tool_total_ms", "local_ingestion_ms", "shortlist_ms", "case_total_ms")


@dataclass(frozen=True)
class ResearchEval:
    """A loaded session.

    Attributes
    ----------
    path : Path
    cases : DataFrame
        One row per (run_id, case_id): ``run_id, case_id, status`` (ordered categorical PASS <
        FAIL < ERROR < HALTED), ``passed`` (boolean), ``query, expected_type, expected,
        doc_ids, answer, error, elapsed_ms``, ``<role>_<input|output|total>_tokens`` (Int64)
        for main/summarizer/audit_planner, ``total_tokens``, every ``timings_ms`` field
        (float64, ms), ``n_tool_calls`` and ``calls_<tool>`` counts (Int64), and ``source``
        (``<run_id>/artifacts/results.jsonl:<line>``).
    runs : DataFrame
        One row per run profile from its ``summary.json``: ``run_id, model_alias,
        research_mode, source_provider, disabled_tools, total_cases, passed_cases,
        failed_cases, error_cases, halted_cases, avg_elapsed_ms, run_wall_ms``.
    tool_calls : DataFrame
        One row per call: ``run_id, case_id, call_index, tool, arguments`` (JSON text).
    session : dict
        The session ``summary.json``.
    """

    path: Path
    cases: pd.DataFrame
    runs: pd.DataFrame
    tool_calls: pd.DataFrame
    session: dict = field(default_factory=dict)


def _read_json(file: Path) -> Any:
    if not file.is_file():
        raise ValueError(f"{file}: file not found")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{file}:{err.lineno}: malformed JSON: {err.msg}") from None


def _case_row(obj: Any, where: str) -> tuple[dict, list[dict]]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("case_id", "status"):
        if key not in obj:
            raise ValueError(f"{where}: missing field {key!r}")
    if obj["status"] not in STATUS.categories:
        raise ValueError(f"{where}: status {obj['status']!r} not one of "
                         f"{', '.join(STATUS.categories)}")
    expected = obj.get("expected") or {}
    row = {"case_id": str(obj["case_id"]), "status": obj["status"], "passed": obj.get("passed"),
           "query": obj.get("query"), "expected_type": expected.get("type"),
           "expected": expected.get("text", expected.get("pattern")),
           "doc_ids": ",".join(obj.get("doc_ids") or []), "answer": obj.get("answer"),
           "error": obj.get("error"), "elapsed_ms": obj.get("elapsed_ms")}
    usage = obj.get("token_usage") or {}
    for role in ROLES:
        for tok in TOKENS:
            row[f"{role}_{tok}"] = (usage.get(role) or {}).get(tok)
    row |= {k: (obj.get("timings_ms") or {}).get(k) for k in TIMINGS}
    calls = obj.get("tool_calls") or []
    if not isinstance(calls, list) or any(not isinstance(c, dict) or "name" not in c
                                          for c in calls):
        raise ValueError(f"{where}: tool_calls must be a list of objects with a 'name'")
    return row, calls


def _read_run(run_dir: Path) -> tuple[list[dict], list[dict], dict]:
    file = run_dir / "artifacts" / "results.jsonl"
    if not file.is_file():
        raise ValueError(f"{file}: file not found (every run needs artifacts/results.jsonl)")
    rows, calls = [], []
    with file.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{file}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{where}: malformed JSON: {err.msg}") from None
            row, case_calls = _case_row(obj, where)
            row |= {"run_id": run_dir.name, "source": f"{run_dir.name}/artifacts/"
                    f"results.jsonl:{lineno}"}
            row["tool_counts"] = dict(Counter(str(c["name"]) for c in case_calls))
            calls += [{"run_id": run_dir.name, "case_id": row["case_id"], "call_index": i,
                       "tool": c["name"], "arguments": json.dumps(c.get("arguments"),
                                                                  sort_keys=True)}
                      for i, c in enumerate(case_calls)]
            rows.append(row)
    return rows, calls, _read_json(run_dir / "artifacts" / "summary.json")


def _typed_cases(rows: list[dict]) -> pd.DataFrame:
    counts = pd.DataFrame([r.pop("tool_counts") for r in rows], index=range(len(rows))).fillna(0)
    df = pd.DataFrame(rows)
    df["status"] = df["status"].astype(STATUS)
    df["passed"] = df["passed"].astype("boolean")
    for col in ("query", "expected_type", "expected", "doc_ids", "answer", "error"):
        df[col] = df[col].astype("string")
    tok = [f"{r}_{t}" for r in ROLES for t in TOKENS]
    df[tok] = df[tok].apply(pd.to_numeric).astype("Int64")
    df["total_tokens"] = df[[f"{r}_total_tokens" for r in ROLES]].sum(axis=1, min_count=1)
    df[["elapsed_ms", *TIMINGS]] = df[["elapsed_ms", *TIMINGS]].apply(pd.to_numeric).astype(float)
    counts = counts.reindex(sorted(counts.columns), axis=1).astype("Int64").add_prefix("calls_")
    df["n_tool_calls"] = counts.sum(axis=1).astype("Int64")
    first = ["run_id", "case_id", "status", "passed"]
    df = pd.concat([df[first + [c for c in df if c not in first + ["source"]]],
                    counts.set_axis(df.index), df[["source"]]], axis=1)
    dup = df.duplicated(["run_id", "case_id"])
    if dup.any():
        raise ValueError(f"duplicate case {df.loc[dup, 'case_id'].iloc[0]!r} in "
                         f"{df.loc[dup, 'source'].iloc[0]}")
    return df


def load_research_eval(path: str | Path) -> ResearchEval:
    """Read a research-eval session directory (seed 002 layout); never writes into it.

    Parameters
    ----------
    path : path-like
        Session directory: ``summary.json`` and ``<run_id>/artifacts/{results.jsonl,
        summary.json}`` per run profile.

    Returns
    -------
    ResearchEval
        ``cases``, ``runs``, ``tool_calls`` and ``session`` (see :class:`ResearchEval`).

    Raises
    ------
    ValueError
        Missing directory or files, malformed JSON (file and line named), a row without
        ``case_id``/``status`` or with an unknown status, duplicate cases, a run listed in
        the session summary without a directory.

    Warns
    -----
    UserWarning
        When a run summary's case counts disagree with its results.jsonl.

    Examples
    --------
    >>> import tempfile
    >>> from dabench_analysis.synthetic.research_eval import generate
    >>> d = tempfile.mkdtemp(); _ = generate(d)
    >>> ev = load_research_eval(d)
    >>> ev.cases.groupby("run_id", sort=False).size().tolist()
    [24, 24, 24]
    """
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"session directory {root} not found")
    session = _read_json(root / "summary.json")
    run_dirs = sorted(p for p in root.iterdir() if (p / "artifacts").is_dir())
    listed = [r.get("run_id") for r in session.get("runs", []) if isinstance(r, dict)]
    absent = [r for r in listed if r not in {p.name for p in run_dirs}]
    if absent:
        raise ValueError(f"{root / 'summary.json'} lists run(s) {absent} with no "
                         "<run_id>/artifacts directory")
    if not run_dirs:
        raise ValueError(f"{root}: no <run_id>/artifacts directories found")
    order = {r: i for i, r in enumerate(listed)}
    run_dirs.sort(key=lambda p: order.get(p.name, len(order)))
    rows, calls, runs = [], [], []
    for run_dir in run_dirs:
        run_rows, run_calls, summary = _read_run(run_dir)
        rows += run_rows
        calls += run_calls
        counts = pd.Series([r["status"] for r in run_rows]).value_counts()
        for key, status in (("passed_cases", "PASS"), ("failed_cases", "FAIL"),
                            ("error_cases", "ERROR"), ("halted_cases", "HALTED")):
            if key in summary and summary[key] != counts.get(status, 0):
                warnings.warn(f"{run_dir.name}: summary.json {key}={summary[key]} but "
                              f"results.jsonl has {counts.get(status, 0)} {status}", stacklevel=2)
        runs.append({"run_id": run_dir.name, **{k: summary.get(k) for k in (
            "model_alias", "research_mode", "source_provider", "total_cases", "passed_cases",
            "failed_cases", "error_cases", "halted_cases", "avg_elapsed_ms")},
            "disabled_tools": ",".join(summary.get("disabled_tools") or []),
            "run_wall_ms": (summary.get("timing_totals_ms") or {}).get("run_wall_ms")})
    if not rows:
        raise ValueError(f"{root}: the results.jsonl files hold no test cases")
    tool_calls = pd.DataFrame(calls, columns=["run_id", "case_id", "call_index", "tool",
                                              "arguments"])
    return ResearchEval(root, _typed_cases(rows), pd.DataFrame(runs), tool_calls, session)


def _check(cases: pd.DataFrame, *cols: str) -> None:
    missing = [c for c in cols if c not in cases.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in cases; known: {', '.join(cases.columns)}")


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
    _check(cases, by, "status")
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
    _check(cases, by, "case_id", "status")
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
        Numeric columns to describe (ms, tokens, counts).
    by : str
        Profile column.

    Returns
    -------
    DataFrame
        One row per (profile, metric): ``by, metric, n, mean, std, min, q25, median, q75,
        max`` (in the metric's unit; ``std`` NaN for n < 2).

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a"], "elapsed_ms": [1.0, 3.0]})
    >>> describe_profiles(c, columns=("elapsed_ms",))[["n", "mean", "median"]].values.tolist()
    [[2.0, 2.0, 2.0]]
    """
    _check(cases, by, *columns)
    long = cases.melt(id_vars=[by], value_vars=list(columns), var_name="metric")
    long["value"] = pd.to_numeric(long["value"]).astype(float)
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
    _check(cases, by)
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
        (Cramér's V), ``method, note`` (a note if > 20 % of expected counts are < 5, or if the
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
                                    "effect_size": np.nan, "note": "not testable: fewer than 2 "
                                    "profiles or tools with calls"}])
    res = stats.chi2_contingency(table.to_numpy())
    low = float((res.expected_freq < 5).mean())
    v = float(stats.contingency.association(table.to_numpy(), method="cramer"))
    note = f"{low:.0%} of expected counts < 5: p approximate" if low > 0.2 else ""
    return pd.DataFrame([row | {"statistic": float(res.statistic), "dof": int(res.dof),
                                "p_value": float(res.pvalue), "effect_size": v, "note": note}])


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
        ``case_id, status, query, expected_type, expected, answer, error, n_tool_calls,
        source``, ordered by status then case (empty if every case passed).

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a"], "case_id": ["p", "q"],
    ...                   "status": pd.Categorical(["PASS", "FAIL"], categories=STATUS.categories)})
    >>> failures(c, "a")["case_id"].tolist()
    ['q']
    """
    _check(cases, by, "case_id", "status")
    if run_id not in set(cases[by]):
        raise ValueError(f"{by} {run_id!r} not in cases; known: "
                         f"{', '.join(map(str, cases[by].unique()))}")
    cols = [c for c in ("case_id", "status", "query", "expected_type", "expected", "answer",
                        "error", "n_tool_calls", "source") if c in cases.columns]
    out = cases.loc[(cases[by] == run_id) & (cases["status"] != "PASS"), cols]
    return out.sort_values(["status", "case_id"]).reset_index(drop=True)


def plot_latency(cases: pd.DataFrame, *, by: str = "run_id", column: str = "elapsed_ms",
                 ax: Any = None) -> Any:
    """Box plot of per-case latency in seconds per profile, cases drawn as points.

    Parameters
    ----------
    cases : DataFrame
        ``ResearchEval.cases``.
    by, column : str
        Profile column and a latency column in milliseconds.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> c = pd.DataFrame({"run_id": ["a", "a", "b"], "elapsed_ms": [1000.0, 2000.0, 500.0]})
    >>> [t.get_text() for t in plot_latency(c).get_yticklabels()]
    ['a', 'b']
    """
    from dabench_analysis.style import OKABE_ITO, axes_or_new

    _check(cases, by, column)
    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.3 + 0.15 * cases[by].nunique()))
    groups = [(str(k), g[column].dropna().to_numpy() / 1000)
              for k, g in cases.groupby(by, sort=False, observed=True)]
    ax.boxplot([v for _, v in groups], orientation="horizontal", showfliers=False,
               tick_labels=[k for k, _ in groups])
    for i, (_, v) in enumerate(groups, start=1):
        ax.plot(v, np.full(len(v), float(i)), "o", ms=3, alpha=0.5, color=OKABE_ITO[0])
    ax.invert_yaxis()
    ax.set_xlabel(f"{column.removesuffix('_ms')} per case (s)")
    return ax


def plot_pass_rate(rates: pd.DataFrame, *, by: str = "run_id", ax: Any = None) -> Any:
    """Horizontal bars of pass rate per profile with the Wilson interval.

    Parameters
    ----------
    rates : DataFrame
        Output of :func:`pass_rate`.
    by : str
        Label column.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> r = pd.DataFrame({"run_id": ["a"], "pass_rate": [0.5], "ci_low": [0.3], "ci_high": [0.7]})
    >>> len(plot_pass_rate(r).patches)
    1
    """
    from dabench_analysis.style import OKABE_ITO, axes_or_new

    ax = axes_or_new(ax, "one", aspect=min(1.2, 0.3 + 0.15 * len(rates)))
    y = np.arange(len(rates))
    err = np.vstack([rates["pass_rate"] - rates["ci_low"], rates["ci_high"] - rates["pass_rate"]])
    ax.barh(y, rates["pass_rate"], xerr=err, capsize=3, color=OKABE_ITO[0])
    ax.set_yticks(y, rates[by].astype(str))
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("pass rate (Wilson 95% CI)")
    return ax
