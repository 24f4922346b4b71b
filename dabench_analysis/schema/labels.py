"""Human labels and units of columns, for tables a reader sees (HTML, .tex, .md): catalogue
columns carry their unit; result-frame columns (statistics, paper tables, sweeps) are listed here.
"""

from __future__ import annotations

from dabench_analysis.schema.columns import ALIASES, TASK_COLUMNS

__all__ = ["LABELS", "UNITS", "label"]


#: Labels of result-frame columns (statistics, paper tables), read by :func:`label`.
LABELS: dict[str, str] = {
    "n": "n", "n_pairs": "Pairs", "n_tasks": "Tasks", "n_calls": "Calls", "count": "Count",
    "mean": "Mean", "std": "SD", "sem": "SE", "median": "Median", "share": "Share",
    "proportion": "Proportion", "ci_low": "CI low", "ci_high": "CI high", "p_value": "p",
    "p_adjusted": "Adjusted p", "statistic": "Statistic", "effect_size": "Effect size",
    "magnitude": "Magnitude", "method": "Method", "note": "Note", "mean_diff": "Difference",
    "mean_baseline": "Baseline", "mean_proposed": "Proposed", "cohens_d_z": "Cohen's d_z",
    "execution_success_rate": "Execution success", "answer_accuracy": "Answer accuracy",
    "mean_final_score": "Final score", "mean_runtime_s": "Runtime", "mean_tokens": "Tokens",
    "mean_time_s": "Time", "total_time_s": "Total time", "mean_latency_s": "Latency",
    # sweeps (tables.sweep)
    "n_shared": "Shared tasks", "n_own": "Own tasks", "n_boot": "Bootstrap draws", "ci": "Level",
    "mean_score": "Final score", "mean_runtime": "Runtime", "rank_low": "Rank (low)",
    "rank_high": "Rank (high)", "tied": "Tied", "p_wilcoxon": "p (Wilcoxon)",
    "p_mcnemar": "p (McNemar)", "p_holm": "p (Wilcoxon, Holm)", "p_bh": "p (Wilcoxon, BH)",
    "p_mcnemar_holm": "p (McNemar, Holm)", "p_mcnemar_bh": "p (McNemar, BH)",
    "solve_rate": "Solve rate", "solved_by": "Solved by", "n_runs": "Runs", "n_solved": "Solved",
    "rank": "Rank", "threshold": "Threshold", "boot_seed": "Bootstrap seed",
    "wilcoxon_method": "Wilcoxon method", "mcnemar_method": "McNemar method",
    "n_correct_shared": "Shared tasks (correctness)", "n_pass_fail": "Pass→fail",
    "n_fail_pass": "Fail→pass", "n_both_pass": "Both pass", "n_both_fail": "Both fail",
    "n_flips": "Flips", "outcome_variance": "Outcome variance"}
#: Units of result-frame columns, appended by :func:`label` (catalogue columns carry theirs).
UNITS: dict[str, str] = dict.fromkeys(("mean_runtime_s", "mean_time_s", "total_time_s",
                                       "mean_latency_s", "median_latency_s", "p90_latency_s"), "s")


def label(name: str) -> str:
    """Human-readable label with unit, e.g. ``"Execution time (s)"`` (:data:`LABELS`, units).

    Examples
    --------
    >>> label("execution_time"), label("final_score"), label("mean_runtime_s"), label("p_value")
    ('Execution time (s)', 'Final score', 'Runtime (s)', 'p')
    """
    text = LABELS.get(name) or name.removesuffix(f"_{UNITS.get(name)}").replace("_", " ")
    text = text if name in LABELS else text.capitalize()
    if name in UNITS:
        return f"{text} ({UNITS[name]})"
    col = TASK_COLUMNS.get(ALIASES.get(name, name))
    if col is not None and col.unit in ("s", "tokens"):
        text += f" ({col.unit})"
    return text
