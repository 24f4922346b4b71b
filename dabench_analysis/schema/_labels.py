"""Human labels and units of columns, for tables a reader sees (HTML, .tex, .md): catalogue
columns carry their unit; result-frame columns (statistics, paper tables, sweeps) are listed here.
"""

from __future__ import annotations

import re
from typing import Any

from dabench_analysis.schema.columns import (
    ALIASES,
    ENUMS,
    FAILURE_CATEGORIES,
    STAGES,
    TASK_COLUMNS,
)

__all__ = ["LABELS", "UNITS", "VALUE_LABELS", "label", "value_label"]


#: Labels of result-frame columns (statistics, paper tables), read by :func:`label`.
LABELS: dict[str, str] = {
    "n": "n", "n_pairs": "Pairs", "n_tasks": "Tasks", "n_calls": "Calls", "count": "Count",
    "mean": "Mean", "std": "SD", "sem": "SE", "median": "Median", "share": "Share",
    "proportion": "Proportion", "ci_low": "CI low", "ci_high": "CI high", "p_value": "p",
    "p_adjusted": "Adjusted p", "statistic": "Statistic", "effect_size": "Effect size",
    "magnitude": "Magnitude", "method": "Method", "note": "Note", "mean_diff": "Difference",
    "mean_baseline": "Baseline", "mean_proposed": "Proposed", "cohens_d_z": "Cohen's d_z",
    "execution_success_rate": "Execution success", "answer_accuracy": "Answer accuracy",
    "n_errored": "Errored trials",
    "answer_accuracy_errors_as_failures": "Answer accuracy, errored trials as failures",
    "answer_accuracy_errors_as_successes": "Answer accuracy, errored trials as successes",
    "answer_accuracy_errors_note": "Failure bounds",
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
    "n_correct_shared": "Shared tasks (correctness)", "n_pass_fail": "Solved by run a only",
    "n_fail_pass": "Solved by run b only", "n_both_pass": "Both pass", "n_both_fail": "Both fail",
    "n_flips": "Flips", "outcome_variance": "Outcome variance",
    # the key numbers of the reports' summary.json (report.show of a dict)
    "run_id": "Run ID", "success_threshold": "Success threshold",
    "skipped": "Skipped sections", "reduced": "Sections without some optional inputs",
    "skipped_lines": "Skipped sections, grouped",
    "mean_final_score_ci_method": "Final score interval", "n_failed": "Failed tasks",
    "health_score": "Harness health (0–10)", "health_status": "Harness health status",
    "health_not_assessed": "Health components not assessed", "run_quality_status": "Run quality",
    "validation_errors": "Validation errors", "baseline": "Baseline", "proposed": "Proposed",
    "mean_diff_final_score": "Mean difference in final score (proposed − baseline)",
    "p_value_final_score": "p (Wilcoxon, final score)",
    "p_adjusted_final_score": "Adjusted p (Wilcoxon, final score)",
    "cohens_d_z_final_score": "Cohen's d_z (final score)", "mcnemar_p_value": "p (McNemar)",
    "n_improved": "Improved tasks", "n_regressed": "Regressed tasks", "run_ids": "Run IDs",
    "not_in_sweep": "Folders not in the sweep", "n_shared_tasks": "Shared tasks",
    "n_own_tasks": "Own tasks per run", "leader": "First on the leaderboard",
    "n_tied": "Runs tied with another", "n_pairs_holm_05": "Pairs with Holm-adjusted p < 0.05",
    "n_tasks_solved_by_none": "Tasks no run solves",
    "n_tasks_solved_by_all": "Tasks every run solves", "flip_pair": "Pair whose flips are listed",
    "n_configs": "Configurations", "n_cases": "Cases", "n_comparable": "Cases with a verdict",
    "n_human_pass": "Cases the annotators pass", "pass_threshold": "Pass threshold (0–9)",
    "reference": "Reference configuration", "ac2_factoid": "Gwet's AC2, factoids",
    "ac2_all": "Gwet's AC2, all dimensions", "mcc": "MCC", "precision": "Precision",
    "recall": "Recall", "f1": "F1", "tokens_mean": "Tokens (mean)",
    "mcc_rel_change": "MCC, relative change against the reference",
    "tokens_rel_change": "Tokens, relative change against the reference",
    "tokens_mean_rel_change": "Tokens, relative change against the reference",
    "precision_rel_change": "Precision, relative change against the reference",
    "recall_rel_change": "Recall, relative change against the reference",
    "f1_rel_change": "F1, relative change against the reference",
    "worked_case": "Worked case", "pass_rate": "Pass rate", "pass_rate_ci": "Pass rate interval",
    "median_elapsed_s": "Median time per case (s)", "tool_mix_p_value": "p (tool mix)",
    "n_failures": "Failures", "mcnemar": "McNemar's test", "profile": "Profile",
    "profile_a": "Profile a", "profile_b": "Profile b", "a_only": "A only", "b_only": "B only",
    "case": "Case", "configuration": "Configuration",
    # McNemar's concordant pairs (stats.mcnemar; b and c are labelled by its section)
    "n_both_correct": "Solved by both", "n_both_wrong": "Solved by neither",
    # tie groups (tables.sweep.tie_groups), planning (tables.planning), frontier replicates
    "tie_group": "Tie group", "group_leader": "Group leader",
    "p_vs_leader_holm": "p vs group leader (McNemar, Holm)",
    "n_boot_no_solve": "Resamples without a solve", "trials_per_task": "Trials per task",
    "var_between": "Variance between tasks", "var_within": "Variance within tasks",
    "sd_per_task": "SD per task", "detectable_diff": "Detectable difference",
    "power_now": "Power now", "plan_trials": "Planned trials per task",
    "tasks_needed": "Tasks needed", "trials_needed": "Trials per task needed",
    # repeated trials and the cost-accuracy frontier (tables.trials, tables.sweep.frontier)
    "pass_at_k": "pass@k", "pass_hat_k": "pass^k", "k": "k", "unit": "Unit",
    "n_trials": "Trials (fewest)", "n_flaky": "Flaky tasks", "flaky_share": "Share flaky",
    "n_always": "Solved on every trial", "n_never": "Solved on no trial",
    "n_single": "Tasks with one trial", "n_rows": "Rows", "n_duplicates": "Repeated rows",
    "n_only_here": "Tasks of this run only", "trials_min": "Trials (fewest)",
    "trials_max": "Trials (most)", "n_uneven": "Tasks with fewer trials",
    "accuracy": "Accuracy", "cost": "Cost column", "mean_cost": "Mean cost per task",
    "cost_per_solved": "Cost per solved task", "on_frontier": "On the frontier",
    "p_frontier": "Share of resamples on the frontier", "n_failed_trials": "Failed trials",
    "trials_per_task_max": "Trials per task (most)"}
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


def _sentence(name: str) -> str:
    """``DATA_UNDERSTANDING`` / ``wrong_schema`` as ``Data understanding`` / ``Wrong schema``."""
    text = name.replace("_", " ").strip().lower()
    return text[:1].upper() + text[1:]


#: Labels of category values a reader sees (tables, figures, the results paragraph), by the
#: column that holds them; the ``.csv`` files keep the values as written.
VALUE_LABELS: dict[str, dict[str, str]] = {
    "failure_category": {c: _sentence(c.removesuffix("_FAILURE")) for c in FAILURE_CATEGORIES},
    "failure_stage": {s: _sentence(s) for s in ("UNDERSTAND", "PLAN", "EXECUTE", "VERIFY",
                                                 "AGGREGATE")},
    "stage": {**{s: _sentence(s) for s in STAGES}, "overhead": "Overhead (unaccounted)",
              "wall_clock": "Wall clock"},
    "calibration_bucket": {"very_low": "Very low [0, 0.2)", "low": "Low [0.2, 0.4)",
                           "medium": "Medium [0.4, 0.6)", "high": "High [0.6, 0.8)",
                           "very_high": "Very high [0.8, 1]"},
    "measure": {  # the verification timeline and the health table
        "approved_correct": "Approved and correct", "approved_incorrect": "Approved, incorrect",
        "not_approved_correct": "Not approved, correct",
        "not_approved_incorrect": "Not approved and incorrect", "approval_rate": "Approval rate",
        "accuracy": "Accuracy", "correct_among_approved": "Correct among approved",
        "approved_among_correct": "Approved among correct",
        "correct_among_not_approved": "Correct among not approved",
        "approved_among_incorrect": "Approved among incorrect",
        "agreement": "Agreement (approval = correctness)", "reconciliation": "Reconciliation",
        "validity": "Validity", "attribution": "Attribution",
        "time_accounting": "Time accounting", "tool_reliability": "Tool reliability",
        "weighted_score": "Weighted score", "time_gaps": "Cause: time gaps",
        "tool_failures": "Cause: tool failures", "missing_attribution": "Cause: missing attribution",
        "score": "Score", "answer_accuracy": "Answer accuracy",
        "execution_success_rate": "Execution success"},
    "assessment": {"harness_health": "Harness health", "run_quality": "Run quality"},
    "coefficient": {"percent_agreement": "Percent agreement",
                    "brennan_prediger": "Brennan–Prediger", "gwet_ac1": "Gwet's AC1",
                    "gwet_ac2": "Gwet's AC2", "fleiss_kappa": "Fleiss' kappa",
                    "conger_kappa": "Conger's kappa", "cohens_kappa": "Cohen's kappa",
                    "krippendorff_alpha": "Krippendorff's alpha"},
    "intervention": {"replan": "Replan", "retry": "Retry"},
    "specialist": {"schema": "Schema agent", "domain": "Domain agent",
                   "document": "Document agent"},
    "change": {"improved": "Improved", "regressed": "Regressed", "unchanged": "Unchanged",
               "unknown": "Unknown"},
    "flip": {"fixed": "Solved by proposed only", "broken": "Solved by baseline only"},
    "solved_by": {"none": "No run", "some": "Some runs", "all": "Every run"},
    "comparison": {"verification_triggered": "Verification", "replanning": "Replanning"},
    "status": {"PASS": "Pass", "FAIL": "Fail", "ERROR": "Error", "HALTED": "Halted"},
    "metric": {"elapsed_s": "Time per case (s)", "run_turn_s": "Agent turn (s)",
               "case_total_s": "Case total (s)", "total_tokens": "Total tokens"},
    # the frontier's cost column (its name as a value) and the unit of a trials table
    "cost": {"cost": "Cost (USD)", "total_tokens": "Total tokens (tokens)",
             "execution_time": "Execution time (s)"},
    "unit": {"run": "Run", "configuration": "Configuration"},
}
#: Columns whose values are catalogue enums or buckets written in code style: labelled by
#: sentence case when :data:`VALUE_LABELS` does not list the value.
_SENTENCE_COLUMNS = frozenset({*ENUMS, "outcome_error_type", "bucket"})
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def value_label(column: str, value: Any) -> Any:
    """The label a reader sees for a category value of ``column``; other values unchanged.

    Parameters
    ----------
    column : str
        The column holding the value (``failure_category``, ``measure``, ``coefficient``, ...).
    value : object
        The value as the data or a result frame holds it.

    Returns
    -------
    object
        The catalogue's label (:data:`VALUE_LABELS`), else for catalogue enums the value in
        sentence case; anything else (run and task ids, tool names, free text, numbers) as is.

    Examples
    --------
    >>> value_label("failure_category", "DATA_UNDERSTANDING_FAILURE")
    'Data understanding'
    >>> value_label("coefficient", "gwet_ac1"), value_label("outcome_error_type", "low_recall")
    ("Gwet's AC1", 'Low recall')
    >>> value_label("run_id", "proposed_aat"), value_label("bucket", "very_high")
    ('proposed_aat', 'Very high [0.8, 1]')
    """
    if not isinstance(value, str):
        return value
    labels = VALUE_LABELS.get("calibration_bucket" if column == "bucket" else column, {})
    if value in labels:
        return labels[value]
    if column in _SENTENCE_COLUMNS and _IDENTIFIER.match(value):
        return _sentence(value)
    return value
