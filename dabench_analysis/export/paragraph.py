"""The results paragraph of the eval-v2 guide's Reporting Template, filled with a comparison's
numbers in the package's rule (:mod:`dabench_analysis.schema.numbers`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis import schema, stats
from dabench_analysis.schema import require_columns
from dabench_analysis.schema._labels import value_label
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate as _est
from dabench_analysis.schema.numbers import format_p
from dabench_analysis.tables import failures
from dabench_analysis.tables._common import correct_mask, takes_run

__all__ = ["format_p", "reporting_paragraph"]

_CORRECTIONS = {"holm": "Holm", "bh": "Benjamini–Hochberg", "fdr_bh": "Benjamini–Hochberg",
                "by": "Benjamini–Yekutieli", "fdr_by": "Benjamini–Yekutieli",
                "bonferroni": "Bonferroni", "hochberg": "Hochberg", "hommel": "Hommel"}
_FAVOURS = {1: "favours our system", -1: "favours the baseline",
            0: "finds no significant difference"}


def _ms(s: pd.Series) -> str:
    s = s.astype("float64").dropna()
    sd = 0.0 if s.nunique() == 1 else s.std(ddof=1)  # not 2e-16 of rounding noise
    return f"{_est(s.mean())} ± {_est(sd)}" if len(s) > 1 else "n/a"


def _share(flags: pd.Series) -> str:
    """A share as a proportion with its count, ``0.838 (67 of 80)``: never a percentage."""
    s = flags.astype("boolean").dropna()
    return f"{_est(s.mean())} ({int(s.sum())} of {len(s)})" if len(s) else "n/a"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _sign(x: float) -> int:
    return 0 if not np.isfinite(x) or x == 0 else (1 if x > 0 else -1)


def _ci_level(fs: pd.Series) -> float | None:
    """Level of the comparison's t-interval, read back from its columns (None if not readable)."""
    half, se, n = fs["ci_high"] - fs["mean_diff"], fs["se_diff"], fs["n_pairs"]
    if not (np.isfinite(half) and np.isfinite(se) and se > 0 and n >= 2):
        return None
    return round(float(2 * st.t.cdf(half / se, n - 1) - 1), 4)


def _wilcoxon_text(fs: pd.Series, comparison: pd.DataFrame,
                   alpha: float) -> tuple[str, str, int]:
    """The test clause, the verdict phrase and the verdict (+1, -1, 0) of the signed-rank test."""
    p = float(fs["p_value"])
    has_adj = "p_adjusted" in comparison.columns
    p_adj = float(fs["p_adjusted"]) if has_adj else p
    m = int(comparison["p_value"].notna().sum())
    if has_adj and m > 1:
        name = _CORRECTIONS.get(str(fs.get("correction")), str(fs.get("correction")))
        ps = (f"single-test {format_p(p)}, {name}-adjusted {format_p(p_adj)} over {m} "
              f"metrics, α = {alpha:g}")
    else:
        ps = f"single-test {format_p(p)}, the only metric tested (no adjustment), α = {alpha:g}"
    significant = bool(np.isfinite(p_adj) and p_adj < alpha)
    direction = _sign(fs["rank_biserial"])
    phrase = ("not significantly different from" if not significant else
              {1: "significantly outperforming", -1: "significantly underperforming",
               0: "significantly different from"}[direction])
    text = (f"Wilcoxon signed-rank test on {int(fs['n_pairs'])} paired tasks, {ps}; "
            f"rank-biserial r = {_est(fs['rank_biserial'])}, paired effect size "
            f"d_z = {_est(fs['cohens_d_z'])}")
    return text, phrase, direction if significant else 0


def _mcnemar_clause(baseline: pd.DataFrame, proposed: pd.DataFrame, threshold: float,
                    alpha: float) -> tuple[str, int | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.StatisticsWarning)
        mc = stats.mcnemar(baseline, proposed, threshold=threshold).iloc[0]
    head = f"McNemar's exact test on correctness (final_score ≥ {threshold:g}"
    if not np.isfinite(mc["p_value"]):
        return f"{head}) is not testable (no complete pairs)", None
    b, c = int(mc["b"]), int(mc["c"])
    if b + c == 0:
        return f"{head}: no task changed correctness, p set to 1.0) {_FAVOURS[0]}", 0
    verdict = _sign(c - b) if mc["p_value"] < alpha else 0
    return (f"{head}: {c} task{'s' if c != 1 else ''} became correct, {b} became incorrect; "
            f"{format_p(mc['p_value'])}) {_FAVOURS[verdict]}"), verdict


def _interval_clause(fs: pd.Series) -> tuple[str, int | None]:
    level = _ci_level(fs)
    name = (f"the {100 * level:g} % t-interval of the mean difference" if level is not None
            else "the t-interval of the mean difference")
    lo, hi = float(fs["ci_low"]), float(fs["ci_high"])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{name} is not available (fewer than 2 pairs or no variation)", None
    verdict = 1 if lo > 0 else -1 if hi < 0 else 0
    where = {1: "lies above 0", -1: "lies below 0", 0: "includes 0"}[verdict]
    return (f"{name} ({_est(fs['mean_diff'])}, from {_est(lo)} to {_est(hi)}) {where}",
            verdict)


def _agreement_sentence(wil: int, mcn: tuple[str, int | None],
                        ci: tuple[str, int | None]) -> str:
    """One sentence: the two other analyses agree with the signed-rank test, or how they differ."""
    verdicts = {v for v in (wil, mcn[1], ci[1]) if v is not None}
    if len(verdicts) <= 1:
        agree = ("both agree with the signed-rank test" if None not in (mcn[1], ci[1]) else
                 "neither contradicts the signed-rank test")
        return f"{mcn[0][0].upper()}{mcn[0][1:]}, and {ci[0]}: {agree}."
    return (f"These analyses disagree: the signed-rank test {_FAVOURS[wil]}, {mcn[0]}, and "
            f"{ci[0]}.")


def _process_lines(proposed: pd.DataFrame) -> list[str]:
    """Autonomy, tool efficiency and verification sentences from the columns present."""
    cols = proposed.columns
    autonomy = []
    if "first_try_success" in cols:
        autonomy.append(f"a first-try success rate of {_share(proposed['first_try_success'])}")
    if "replan_count" in cols:
        autonomy.append(f"an average of {_est(proposed['replan_count'].astype('float64').mean())}"
                        " replanning operations per task")
    out = [f"Our multi-agent architecture demonstrates {_join(autonomy)}."] if autonomy else []
    if "tool_efficiency" in cols:
        out.append(f"Tool efficiency reaches {_ms(proposed['tool_efficiency'])}.")
    ver = []
    if "verification_triggered" in cols:
        v = proposed["verification_triggered"].astype("boolean").dropna()
        ver.append(f"trigger in {int(v.sum())} of {len(v)} executions (a share of "
                   f"{_est(v.mean())})" if len(v) else "trigger in no recorded execution")
    if "verification_failures_detected" in cols:
        n = int(proposed["verification_failures_detected"].astype("float64").sum())
        ver.append(f"detect {n} failure{'s' if n != 1 else ''}")
    if ver:
        out.append(f"Verification mechanisms {_join(ver)}.")
    return ["", " ".join(out)] if out else []


def _failure_lines(proposed: pd.DataFrame, threshold: float) -> list[str]:
    """Top failure categories; equal shares are named together, never one picked."""
    if "failure_category" not in proposed.columns:
        return []
    cats = failures.failure_categories(proposed, threshold=threshold)
    cats = cats[cats["count"] > 0]
    if not len(cats):
        return ["", f"No task has final_score < {threshold:g}."]
    lines = ["", f"Failure analysis ({int(cats['n'].iloc[0])} tasks with final_score < "
             f"{threshold:g}) shows the primary failure categories are:"]
    named = 0
    for rank, count in enumerate(sorted(cats["count"].unique(), reverse=True), start=1):
        group = cats[cats["count"] == count]
        each = " each" if len(group) > 1 else ""
        names = [value_label("failure_category", c)
                 for c in group["failure_category"].astype(str)]
        lines.append(f"{rank}. {_join(names)} ({int(count)} of {int(group['n'].iloc[0])}, "
                     f"a share of {_est(group['share'].iloc[0])}{each})")
        named += len(group)
        if named >= 3:
            break
    return lines


@needs("task_id", "final_score", "difficulty", uses=(
    "analyst_score", "first_try_success", "replan_count", "tool_efficiency",
    "verification_triggered", "verification_failures_detected", "failure_category"), inputs=2)
@takes_run(paired=True)
def reporting_paragraph(
    baseline: pd.DataFrame,
    proposed: pd.DataFrame,
    comparison: pd.DataFrame,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    alpha: float = 0.05,
) -> str:
    """The seed's Reporting Template (Results section), filled with the computed numbers.

    Parameters
    ----------
    baseline, proposed : DataFrame or Run
        Task frames (``run.tasks``) or the Runs. Required: ``task_id`` and ``final_score`` in both,
        ``difficulty`` in ``proposed``. Used when present (their sentence is left out
        otherwise): ``analyst_score``, ``first_try_success``, ``replan_count``,
        ``tool_efficiency``, ``verification_triggered``, ``verification_failures_detected``,
        ``failure_category``.
    comparison : DataFrame
        :func:`stats.compare_runs` output with a ``final_score`` row (``p_value``,
        ``p_adjusted``, ``correction``, ``rank_biserial``, ``cohens_d_z``, ``mean_diff``,
        ``se_diff``, ``ci_low``, ``ci_high``, ``n_pairs``). A :func:`stats.paired_comparison`
        frame works too; its p is then quoted without adjustment.
    threshold : float
        Correct means ``final_score >= threshold`` (McNemar, accuracy); failed is below it.
        In (0, 1]; default 0.8.
    alpha : float
        Significance level, applied to the adjusted p-value of the signed-rank test and to
        McNemar's p.

    Returns
    -------
    str
        Markdown a user can paste, on the tasks present in both runs (the number left out is
        said): means ± std; the signed-rank test with its single-test p and its adjusted p,
        both labelled; the rank-biserial r and d_z; one sentence saying whether McNemar's test
        on correctness and the t-interval of the mean difference agree with the signed-rank
        test, or how they differ; per-difficulty means; autonomy, tool efficiency and
        verification; the top failure categories by their labels (ties named together: "Data
        understanding and Aggregation (2 of 8, a share of 0.250 each)"); answer accuracy.

    Raises
    ------
    ValueError
        If ``comparison`` lacks the final_score row, a required column is missing, the two
        runs share no task, or ``threshold`` is outside (0, 1].

    Notes
    -----
    The direction ("outperforming" / "underperforming") comes from the test whose p is quoted:
    the sign of the matched-pairs rank-biserial correlation (T+ − T−)/(T+ + T−), not of the
    mean difference, which can point the other way when a few large gains offset many small
    losses. The interval's level is read back from the comparison's columns. Numbers follow
    :mod:`dabench_analysis.schema.numbers` (3 decimals for values in [−1, 1], else 3
    significant digits; p to 3 decimals, "< 0.001"; shares as proportions with their counts,
    "0.838 (67 of 80)", never percentages).

    Examples
    --------
    >>> import warnings; from dabench_analysis import stats
    >>> b = pd.DataFrame({"task_id": list("abcdef"), "difficulty": "Easy",
    ...                   "final_score": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    >>> p = b.assign(final_score=[0.4, 0.4, 0.7, 0.5, 0.85, 0.85])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     text = reporting_paragraph(b, p, stats.compare_runs(b, p, metrics=["final_score"]))
    >>> import textwrap  # R: wilcox.test(p, b, paired = TRUE) -> V = 21, p = 0.03125
    >>> print(textwrap.fill(text[text.index("Our"):text.index(" paired effect")], 88))
    Our system achieves a mean final score of 0.617 ± 0.211 (mean ± std), significantly
    outperforming the baseline (0.350 ± 0.187; Wilcoxon signed-rank test on 6 paired tasks,
    single-test p = 0.031, the only metric tested (no adjustment), α = 0.05; rank-biserial r
    = 1.000,
    """
    rows = comparison.set_index("metric")
    if "final_score" not in rows.index:
        raise ValueError("comparison has no row for final_score")
    require_columns(proposed, ["difficulty"], what="proposed")
    shared = set(baseline["task_id"]) & set(proposed["task_id"])
    if not shared:
        raise ValueError("baseline and proposed share no task_id: nothing to compare")
    n_only = len(set(baseline["task_id"]) ^ set(proposed["task_id"]))
    baseline = baseline[baseline["task_id"].isin(shared)]
    proposed = proposed[proposed["task_id"].isin(shared)]
    fs = rows.loc["final_score"]
    test, phrase, wil = _wilcoxon_text(fs, comparison, alpha)
    levels = proposed["difficulty"].astype("string")
    counts = ", ".join(f"{lvl}: {int((levels == lvl).sum())}" for lvl in schema.DIFFICULTY_ORDER
                       if (levels == lvl).any())
    only = (f" ({n_only} task{'s' if n_only != 1 else ''} evaluated in only one of the two "
            "runs are left out)") if n_only else ""
    analyst = (" The analyst score, a composite metric combining autonomy (weight=0.4), tool "
               "efficiency (weight=0.3), and verification quality (weight=0.3), reaches "
               f"{_ms(proposed['analyst_score'])}." if "analyst_score" in proposed else "")
    agree = _agreement_sentence(wil, _mcnemar_clause(baseline, proposed, threshold, alpha),
                                _interval_clause(fs))
    lines = [
        f"We evaluate our system on the DABench benchmark containing {len(proposed)} tasks of "
        f"varying difficulty ({counts}){only}. Our system achieves a mean final score of "
        f"{_ms(proposed['final_score'])} (mean ± std), {phrase} the baseline "
        f"({_ms(baseline['final_score'])}; {test}). {agree}{analyst}", "",
        "Breakdown by difficulty:"]
    for lvl in schema.DIFFICULTY_ORDER:
        sub = proposed[(levels == lvl).fillna(False).to_numpy()]
        if len(sub):
            lines.append(f"- {lvl}: {_ms(sub['final_score'])} (n={len(sub)})")
    lines += _process_lines(proposed)
    lines += _failure_lines(proposed, threshold)
    accuracy = correct_mask(proposed, threshold=threshold)
    lines += ["", f"(Answer accuracy, final_score ≥ {threshold:g}: {_share(accuracy)}.)"]
    return "\n".join(lines)
