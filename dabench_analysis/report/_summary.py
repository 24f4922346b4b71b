"""Every report's ``summary.json``, written by one builder (:func:`write_summary`): the report's
key numbers, the fields every report has (:data:`SUMMARY_FIELDS`) and the manifest.

:func:`summary` gives the key numbers of a run, comparison or sweep report from its
:class:`~dabench_analysis.report.Context`; the judge-study and research-eval notebooks
pass theirs to :func:`write_summary` directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from dabench_analysis import export, tables
from dabench_analysis.report._context import Context
from dabench_analysis.report._jobs import KINDS
from dabench_analysis.report._kernel import OWN_REPORT_ENV, end_without_collecting
from dabench_analysis.report._provenance import manifest
from dabench_analysis.report._sections import Sections
from dabench_analysis.report._show import show
from dabench_analysis.tables._pooling import runs_checked

#: Version of the ``summary.json`` layout written by the report notebooks.
SUMMARY_SCHEMA_VERSION = 1
#: Fields every report's ``summary.json`` has (beyond its own key numbers, see docs/guide/reports.md).
SUMMARY_FIELDS: dict[str, str] = {
    "schema_version": f"layout version of this file ({SUMMARY_SCHEMA_VERSION})",
    "report": "run, compare, sweep, judge or research_eval",
    "success_threshold": "the analysis' success threshold: final_score >= it is a correct answer "
                         "(run, compare, sweep; null for judge and research_eval, whose pass "
                         "rules are their own: the judge's pass_threshold, the harness' status)",
    "skipped": "sections not computed: [{section, title, missing: [column or file, ...]}]",
    "reduced": "sections computed without some optional columns: [{section, title, absent}]",
    "skipped_lines": "skipped and reduced sections grouped by reason, as the report shows them "
                     "(Markdown lines)",
    "manifest": "provenance: every input file read (path, sha256, bytes), toolkit version and git "
                "revision, library versions, notebook parameters, random seeds, time (UTC)",
}
#: Keys of a summary that :func:`summary` does not display (long lists).
_NOT_SHOWN = ("manifest", "leaderboard", "skipped_lines")


def write_summary(report: str, numbers: Mapping[str, Any], *, out: str | os.PathLike[str],
                  manifest: Mapping[str, Any], sections: Sections | None = None,
                  success_threshold: float | None = None) -> dict:
    """Write a report's ``summary.json`` (atomically) and return it.

    Parameters
    ----------
    report : {"run", "compare", "sweep", "judge", "research_eval"}
        The report.
    numbers : mapping
        Its key numbers (names must not be those of :data:`SUMMARY_FIELDS`).
    out : path-like
        The report folder; the file is ``out/summary.json``.
    manifest : mapping
        :func:`dabench_analysis.report.manifest` of the report.
    sections : Sections, optional
        Skipped and reduced sections (none without it).
    success_threshold : float, optional
        The threshold of a correct answer, for the reports that use one.

    Returns
    -------
    dict
        ``numbers`` with ``schema_version``, ``report``, ``success_threshold``, ``skipped``,
        ``reduced``, ``skipped_lines`` and ``manifest``.

    Raises
    ------
    ValueError
        An unknown report, or a key number named like a common field.

    Examples
    --------
    >>> import tempfile
    >>> s = write_summary("judge", {"n_cases": 55}, out=tempfile.mkdtemp(), manifest={})
    >>> sorted(s)
    ['manifest', 'n_cases', 'reduced', 'report', 'schema_version', 'skipped', 'skipped_lines', 'success_threshold']
    """
    if report not in KINDS:
        raise ValueError(f"unknown report {report!r}; known: run, compare, sweep, judge, "
                         "research_eval")
    clash = sorted(set(numbers) & set(SUMMARY_FIELDS))
    if clash:
        raise ValueError(f"key numbers {clash} would overwrite fields every summary has")
    common = sections.summary() if sections is not None else {
        "report": report, "skipped": [], "reduced": [], "skipped_lines": []}
    summary = {**numbers, "schema_version": SUMMARY_SCHEMA_VERSION, **common,
               "report": report, "success_threshold": success_threshold,
               "manifest": dict(manifest)}
    export.write_json(summary, os.path.join(out, "summary.json"))
    return summary


def _trial_numbers(ctx: Context, numbers: dict) -> dict:
    """A run with repeated trials: tasks counted once, the mean score over tasks (each task's
    mean over its trials) with Table 1's interval over tasks; the accuracy is already over
    tasks (:func:`dabench_analysis.tables.answer_accuracy`, equal to pass@1)."""
    run = ctx.value("run")
    failed = numbers.pop("n_failed", None)  # counted over rows: trials, not tasks
    numbers = {**numbers, "n_tasks": int(run.tasks["task_id"].nunique()),
               "n_rows": int(len(run.tasks)), "trials_per_task_max": run.trials,
               **({} if failed is None else {"n_failed_trials": failed})}
    one = ctx.results.get("pass_k")
    if one is not None and len(one):
        numbers |= {"pass_hat_k": {int(k): float(v) for k, v in one[["k", "pass_hat_k"]].values}}
    main = ctx.results.get("main_results")
    if main is not None and (main["metric"] == "final_score").any():
        fs = main.set_index("metric").loc["final_score"]
        numbers |= {"mean_final_score": float(fs["mean"]),
                    "mean_final_score_ci_low": float(fs["ci_low"]),
                    "mean_final_score_ci_high": float(fs["ci_high"]),
                    "mean_final_score_ci_method": str(fs["method"])}
    return numbers


def _run_numbers(ctx: Context) -> dict:
    run, validation = ctx.value("run"), ctx.value("validation")
    with runs_checked():  # repeated trials: the per-task numbers replace these below
        numbers = tables.key_numbers(run.tasks, threshold=ctx.threshold)
    numbers.pop("success_threshold")  # stated once, as the field every summary has
    if run.trials > 1:
        numbers = _trial_numbers(ctx, numbers)
    return {"run_id": run.run_id, "format": run.format, **numbers,
            "health_score": validation.health.harness_score,
            "health_status": validation.health.harness_status,
            "health_not_assessed": list(validation.health.not_assessed),
            "run_quality_status": validation.health.run_quality_status,
            "validation_errors": int((validation.findings["severity"] == "error").sum())}


def _compare_numbers(ctx: Context) -> dict:
    names = {"baseline": ctx.value("baseline_run").run_id,
             "proposed": ctx.value("proposed_run").run_id}
    if "paired_comparison" not in ctx.results:  # skipped: repeated trials, never averaged
        return names
    fs = ctx.value("paired_comparison").set_index("metric").loc["final_score"]
    changes = ctx.value("task_changes")["change"]
    return {**names, "n_pairs": int(fs["n_pairs"]),
            "mean_diff_final_score": float(fs["mean_diff"]),
            "p_value_final_score": float(fs["p_value"]),
            "p_adjusted_final_score": float(fs["p_adjusted"]),
            "cohens_d_z_final_score": float(fs["cohens_d_z"]),
            "mcnemar_p_value": float(ctx.value("mcnemar")["p_value"].iloc[0]),
            "n_improved": int((changes == "improved").sum()),
            "n_regressed": int((changes == "regressed").sum())}


def _sweep_numbers(ctx: Context) -> dict:
    runs, counts = ctx.value("runs"), ctx.value("task_counts")
    out = {"n_runs": len(runs), "run_ids": runs.run_ids,
           "not_in_sweep": runs.skipped["path"].tolist(),
           "n_shared_tasks": int(counts["n_shared"].iloc[0]),
           "n_own_tasks": dict(zip(counts["run_id"], counts["n_own"].tolist(), strict=True))}
    front = ctx.results.get("frontier")
    if front is not None:
        out["on_frontier"] = front.loc[front["on_frontier"], "run_id"].tolist()
    if "leaderboard" not in ctx.results:  # skipped: repeated trials, never averaged
        return out
    board, pairs, items = ctx.value("leaderboard"), ctx.value("pairwise"), ctx.value("items")
    return {**out, "leader": board["run_id"].iloc[0], "n_tied": int(board["tied"].sum()),
            "leaderboard": board[["run_id", "rank", "rank_low", "rank_high", "tied",
                                  "mean_score", "answer_accuracy"]],
            "n_pairs": len(pairs), "n_pairs_holm_05": int((pairs["p_holm"] < 0.05).sum()),
            "n_tasks_solved_by_none": int((items["solved_by"] == "none").sum()),
            "n_tasks_solved_by_all": int((items["solved_by"] == "all").sum())}


_NUMBERS = {"run": _run_numbers, "compare": _compare_numbers, "sweep": _sweep_numbers}


def summary(ctx: Context, **numbers: Any) -> dict:
    """Write the ``summary.json`` of a run, comparison or sweep report, and show its key numbers.

    Parameters
    ----------
    ctx : Context
        The report's context, after its sections ran (the comparison's numbers come from
        ``paired_comparison``, ``mcnemar`` and ``task_changes``; the sweep's from
        ``task_counts``, ``leaderboard``, ``pairwise`` and ``items``).
    **numbers
        Further key numbers the notebook computed itself (the sweep's flips).

    Returns
    -------
    dict
        The summary (:func:`write_summary`): for a run, its ``run_id``, the numbers of
        :func:`dabench_analysis.tables.key_numbers`, ``health_score``, ``health_status``,
        ``health_not_assessed`` (components not assessed), ``run_quality_status``,
        ``validation_errors``; for a comparison, the final_score test (``n_pairs``,
        ``mean_diff_final_score``, ``p_value_final_score``, ``p_adjusted_final_score``,
        ``cohens_d_z_final_score``), ``mcnemar_p_value``, ``n_improved``, ``n_regressed``; for a
        sweep, the runs, shared tasks, leader, ties, pairs and items.

    Raises
    ------
    KeyError
        When a section the numbers come from was not computed.
    """
    try:  # while the figure writer saves the last figures
        found = {**_NUMBERS[ctx.report](ctx), **numbers}
        provenance = manifest(inputs=ctx.read, parameters=ctx.parameters, seeds=ctx.seeds)
    except Exception as exc:
        try:  # the figures are still saved and shown; the numbers' error is the one raised
            ctx.wait_for_figures()
        except Exception as failed:  # noqa: BLE001 - named in the note, not lost
            exc.add_note(f"Also, a figure was not saved: {type(failed).__name__}: {failed}")
        raise
    ctx.wait_for_figures()  # every figure saved and shown, or the first failure raised
    out = write_summary(ctx.report, found, out=ctx.out, sections=ctx.sections,
                        success_threshold=ctx.threshold, manifest=provenance)
    show({k: v for k, v in out.items() if k not in _NOT_SHOWN})
    if os.environ.get(OWN_REPORT_ENV) == "1":  # the kernel of a toolkit's report: done writing
        end_without_collecting()
    return out
