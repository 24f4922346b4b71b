"""The trajectory sections of the reports, as data: the "Trajectories" part of the run report,
the trajectory comparison of two runs and the per-run trajectory table of a sweep.

Each entry holds the fields of a :class:`~dabench_analysis.schema.sections.Section` (which
builds them into :data:`~dabench_analysis.schema.SECTIONS`): the files and file columns it
needs (absent: the section is skipped with its note) and its parts (the function of
:mod:`dabench_analysis.tables.trajectory` or :mod:`dabench_analysis.figures` it calls, what it
writes and the columns it shows), and the task_metrics columns it ``uses`` when present (absent:
it runs without them, and says so; ``difficulty`` for every one: pooled only without it). The tables take the Run itself (input ``run``) and read
the columns they need; the replays and tool_calls.csv are read when present (the evidence
agreement of ``first_failures``, the calls' errors and latencies).
"""

from __future__ import annotations

from dabench_analysis.schema.columns import TOOL_CALL_COLUMNS, TRAJECTORY_COLUMNS
from dabench_analysis.schema.files import TOOL_CALLS_FILE, TRAJECTORY_FILE
from dabench_analysis.schema.parts import Part


def _traj(*columns: str) -> tuple[str, ...]:
    """``"trajectory.csv:<column>"`` for catalogue columns (an unknown one fails at import)."""
    unknown = [c for c in columns if c not in TRAJECTORY_COLUMNS]
    if unknown:
        raise ValueError(f"not in the {TRAJECTORY_FILE} catalogue: {unknown}")
    return tuple(f"{TRAJECTORY_FILE}:{c}" for c in ("task_id", "step_id", *columns))


def _calls(*columns: str) -> tuple[str, ...]:
    unknown = [c for c in columns if c not in TOOL_CALL_COLUMNS]
    if unknown:
        raise ValueError(f"not in the {TOOL_CALLS_FILE} catalogue: {unknown}")
    return tuple(f"{TOOL_CALLS_FILE}:{c}" for c in ("task_id", *columns))


def _t(compute: str, name: str, **kw) -> Part:
    return Part(f"tables.trajectory.{compute}", f"tables/{name}", inputs=("run",), **kw)


_RUN = ("run",)
_PAIR = ("baseline_run", "proposed_run")
_SHARE = ("share", "share_ci_low", "share_ci_high")
_TRAJ = (TRAJECTORY_FILE,)

#: The sections, in report order (run report, then the comparison, then the sweep).
TRAJECTORY_SECTIONS: tuple[dict, ...] = (
    {"name": "trajectory_variants", "title": "Trajectory variants and conformance",
     "report": "run", "files": _TRAJ, "file_needs": _traj("stage"), "uses": ("execution_time",),
     "parts": (
         _t("variants", "trajectory_variants", columns=(
             "difficulty", "reading", "n_tasks", *_SHARE, "accuracy", "accuracy_ci_low",
             "accuracy_ci_high", "mean_final_score", "mean_steps", "mean_runtime_s",
             "p_value", "p_adjusted"), max_rows=40),
         Part("figures.trajectory_variants", "trajectory_variants",
              inputs=("trajectory_variants",)),
         _t("conformance", "trajectory_conformance", columns=(
             "difficulty", "n_tasks", "n_conform", "conform_share", "conform_share_ci_low",
             "conform_share_ci_high", "n_skipped", "n_replan", "n_retry", "n_out_of_order",
             "accuracy_conform", "accuracy_conform_ci_low", "accuracy_conform_ci_high",
             "accuracy_deviate", "accuracy_deviate_ci_low", "accuracy_deviate_ci_high",
             "diff", "ci_low", "ci_high", "p_value"),
            caption="Conformance to UNDERSTAND→PLAN→EXECUTE→VERIFY→SUMMARIZE"))},
    {"name": "trajectory_transitions", "title": "Transitions between stages (directly-follows)",
     "report": "run", "files": _TRAJ, "file_needs": _traj("stage"), "parts": (
         _t("transitions", "trajectory_transitions", columns=(
             "difficulty", "source", "target", "count", "exit_share", "n_tasks", "accuracy",
             "accuracy_ci_low", "accuracy_ci_high", "median_source_s"), max_rows=40),
         Part("figures.transition_graph", "transition_graph",
              inputs=("trajectory_transitions",)))},
    {"name": "trajectory_loops", "title": "Loops and unexplained re-entries", "report": "run",
     "files": _TRAJ, "file_needs": _traj("tool", "action_input"),
     "uses": ("replan_count", "execution_attempts"), "parts": (
         _t("loops", "trajectory_loops", columns=(
             "difficulty", "n_tasks", "n_loop_steps", "n_with_loop", "loop_share",
             "loop_share_ci_low", "loop_share_ci_high", "n_reentry", "accuracy_loop",
             "accuracy_loop_ci_low", "accuracy_loop_ci_high", "accuracy_no_loop",
             "accuracy_no_loop_ci_low", "accuracy_no_loop_ci_high", "diff", "ci_low",
             "ci_high", "p_value", "p_adjusted")),
         _t("loop_tasks", "trajectory_loop_tasks", show="none"))},
    {"name": "trajectory_recovery", "title": "Recovery after errors", "report": "run",
     "files": _TRAJ, "file_needs": _traj("success"), "parts": (
         _t("recovery", "trajectory_recovery", columns=(
             "difficulty", "level", "group", "n_errors", "n_recovered", "recovery_rate",
             "recovery_rate_ci_low", "recovery_rate_ci_high", "n_tasks", "accuracy",
             "accuracy_ci_low", "accuracy_ci_high", "accuracy_recovered",
             "accuracy_recovered_ci_low", "accuracy_recovered_ci_high",
             "accuracy_unrecovered", "accuracy_unrecovered_ci_low",
             "accuracy_unrecovered_ci_high"), max_rows=40),)},
    {"name": "first_failures", "title": "First failure point of each failed task",
     "report": "run", "files": _TRAJ, "file_needs": _traj("success"), "parts": (
         _t("first_failures", "first_failures", max_rows=40),
         Part("tables.trajectory.first_failure_counts", "tables/first_failure_counts",
              inputs=("first_failures",), caption="First failing step by stage and agent"),
         Part("tables.trajectory.first_failure_agreement", "tables/first_failure_agreement",
              inputs=("first_failures",),
              caption="First failing step among the replay's evidence steps"))},
    {"name": "step_latency", "title": "Step latency", "report": "run", "files": _TRAJ,
     "file_needs": _traj("stage", "tool", "duration_seconds"), "parts": (
         _t("step_latency", "step_latency", columns=(
             "difficulty", "stage", "n", "p50_s", "p50_s_ci_low", "p50_s_ci_high", "p90_s",
             "p99_s", "share_of_time", "tokens_sum", "tokens_p50")),
         Part("figures.step_latency", "step_latency", inputs=("step_latency",)),
         _t("step_latency", "step_latency_tools", args=(("by", "tool"),),
            caption="Step latency by tool", columns=(
                "difficulty", "tool", "n", "p50_s", "p90_s", "p99_s", "share_of_time",
                "n_calls", "call_p50_s", "call_p90_s"), max_rows=40))},
    {"name": "solve_curve", "title": "Tasks solved within k steps", "report": "run",
     "files": _TRAJ, "file_needs": _traj(), "parts": (
         _t("solve_curve", "solve_curve", show="none"),
         Part("figures.solve_curve", "solve_curve", inputs=("solve_curve",)))},
    {"name": "tool_fit", "title": "Which tools work best for what", "report": "run",
     "files": (TOOL_CALLS_FILE,), "file_needs": _calls("tool_name", "success"),
     "uses": ("task_type",), "parts": (
         _t("tool_fit", "tool_fit", columns=(
             "group_by", "group", "tool", "n_using", "accuracy_using", "accuracy_using_ci_low",
             "accuracy_using_ci_high", "failure_rate", "failure_rate_ci_low",
             "failure_rate_ci_high", "n_not_using", "accuracy_not_using",
             "accuracy_not_using_ci_low", "accuracy_not_using_ci_high", "diff", "ci_low",
             "ci_high", "p_value", "p_adjusted", "small"), max_rows=40),)},
    {"name": "trajectory_comparison", "title": "Trajectories of the two runs, paired by task",
     "report": "compare", "files": _TRAJ,
     "file_needs": _traj("stage", "tool", "action_input", "success"), "parts": (
         Part("tables.trajectory.compare", "tables/trajectory_comparison", inputs=_PAIR),
         Part("tables.trajectory.variant_changes", "tables/trajectory_variant_changes",
              inputs=_PAIR, caption="Variants whose share changed most"))},
    {"name": "trajectory_per_run", "title": "Trajectories of every run", "report": "sweep",
     "files": _TRAJ, "parts": (
         Part("tables.trajectory.per_run", "tables/trajectory_per_run", inputs=("runs",),
              max_rows=60),)},
)

# Every trajectory table is also given per difficulty where the run has that column (issue 23);
# without it, pooled only: the sections run, noting that difficulty is absent. A run report's
# tables take repeated trials (another harness's): each trial its own trace, the intervals
# clustered by task (tables.trajectory._inputs.shares), a note saying so.
TRAJECTORY_SECTIONS = tuple({**s, "uses": ("difficulty", *s.get("uses", ()))}
                            | ({"trials": "any"} if s["report"] == "run" else {})
                            for s in TRAJECTORY_SECTIONS)
