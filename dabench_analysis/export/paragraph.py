"""The results paragraph of the eval-v2 guide's Reporting Template, filled with a comparison's
numbers, and the p-value format it uses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.tables import failures
from dabench_analysis.tables.common import correct_mask


def format_p(p: float) -> str:
    """APA-style p-value text: ``p < 0.001``, ``p = 0.012``, or ``p not testable``.

    Examples
    --------
    >>> format_p(0.00004), format_p(0.0123), format_p(float("nan"))
    ('p < 0.001', 'p = 0.012', 'p not testable')
    """
    if p is None or not np.isfinite(p):
        return "p not testable"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


_CORRECTIONS = {"holm": "Holm", "bh": "Benjamini–Hochberg", "fdr_bh": "Benjamini–Hochberg",
                "by": "Benjamini–Yekutieli", "fdr_by": "Benjamini–Yekutieli",
                "bonferroni": "Bonferroni", "hochberg": "Hochberg", "hommel": "Hommel"}


def _ms(s: pd.Series) -> str:
    s = s.astype("float64").dropna()
    return f"{s.mean():.2f} ± {s.std(ddof=1):.2f}" if len(s) > 1 else "n/a"


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
    baseline, proposed : DataFrame
        Task frames (``run.tasks``) of the two runs.
    comparison : DataFrame
        :func:`stats.compare_runs` output holding rows for ``final_score`` and
        ``analyst_score`` (``p_adjusted``, ``cohens_d_z``, ``correction``).
    threshold : float
        Failure means ``final_score < threshold``.
    alpha : float
        Significance level applied to the adjusted p-value.

    Returns
    -------
    str
        Markdown a user can paste, computed on the tasks present in both runs (the number left
        out is said): means ± std, the p-value with the test and correction named,
        the paired effect size, per-difficulty means, autonomy, tool efficiency, verification,
        and the top failure categories with their shares.

    Raises
    ------
    ValueError
        If ``comparison`` lacks the final_score or analyst_score row.
    """
    rows = comparison.set_index("metric")
    missing = [m for m in ("final_score", "analyst_score") if m not in rows.index]
    if missing:
        raise ValueError(f"comparison has no row for {', '.join(missing)}")
    require_columns(baseline, ["task_id", "final_score"], what="baseline")
    require_columns(proposed, ["task_id", "final_score", "difficulty"], what="proposed")
    shared = set(baseline["task_id"]) & set(proposed["task_id"])
    n_only = len(set(baseline["task_id"]) ^ set(proposed["task_id"]))
    baseline = baseline[baseline["task_id"].isin(shared)]
    proposed = proposed[proposed["task_id"].isin(shared)]
    fs = rows.loc["final_score"]
    p_adj = float(fs["p_adjusted"])
    verdict = ("significantly outperforming" if fs["mean_diff"] > 0 else
               "significantly underperforming") if p_adj < alpha else "not significantly different from"
    levels = proposed["difficulty"].astype("string")
    counts = ", ".join(f"{lvl}: {int((levels == lvl).sum())}" for lvl in schema.DIFFICULTY_ORDER
                       if (levels == lvl).any())
    only = (f" ({n_only} task{'s' if n_only != 1 else ''} evaluated in only one of the two "
            "runs are left out)") if n_only else ""
    lines = [
        f"We evaluate our system on the DABench benchmark containing {len(proposed)} tasks of "
        f"varying difficulty ({counts}){only}. Our system achieves a mean final score of "
        f"{_ms(proposed['final_score'])} (mean ± std), {verdict} the baseline "
        f"({_ms(baseline['final_score'])}; {format_p(p_adj)}, Wilcoxon signed-rank test on "
        f"{int(fs['n_pairs'])} paired tasks, {_CORRECTIONS.get(fs['correction'], fs['correction'])}-adjusted over "
        f"{len(rows)} metrics; paired effect size d_z = {fs['cohens_d_z']:.2f}). The analyst "
        f"score, a composite metric combining autonomy (weight=0.4), tool efficiency "
        f"(weight=0.3), and verification quality (weight=0.3), reaches "
        f"{_ms(proposed['analyst_score'])}.", "",
        "Breakdown by difficulty:"]
    for lvl in schema.DIFFICULTY_ORDER:
        sub = proposed[(levels == lvl).fillna(False).to_numpy()]
        if len(sub):
            lines.append(f"- {lvl}: {_ms(sub['final_score'])} (n={len(sub)})")
    first_try = proposed["first_try_success"].astype("boolean").mean()
    ver = proposed["verification_triggered"].astype("boolean").mean()
    detected = int(proposed["verification_failures_detected"].astype("float64").sum())
    lines += ["", f"Our multi-agent architecture demonstrates {first_try:.0%} first-try success "
              f"rate and an average of {proposed['replan_count'].astype('float64').mean():.1f} "
              f"replanning operations per task. Tool efficiency reaches "
              f"{_ms(proposed['tool_efficiency'])}. Verification mechanisms trigger in {ver:.0%} "
              f"of executions and detect {detected} failures."]
    cats = failures.failure_categories(proposed, threshold=threshold)
    cats = cats[cats["count"] > 0].sort_values("count", ascending=False, kind="stable").head(3)
    n_failed = int(cats["n"].iloc[0]) if len(cats) else 0
    lines += ["", f"Failure analysis ({n_failed} tasks with final_score < {threshold}) shows the "
              "primary failure categories are:" if n_failed else
              f"No task has final_score < {threshold}."]
    lines += [f"{i}. {r.failure_category} ({r.share:.0%})"
              for i, r in enumerate(cats.itertuples(), start=1)]
    accuracy = correct_mask(proposed, threshold=threshold).mean()
    lines += ["", f"(Answer accuracy, final_score ≥ {threshold}: {accuracy:.1%}.)"]
    return "\n".join(lines)
