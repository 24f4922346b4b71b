"""Drill into one task: its metrics row, trajectory steps, tool calls and replay snapshot; and
the list of a run's tasks to pick one from (:func:`task_list`, :func:`filter_tasks`: what the
explorer, :func:`dabench_analysis.explore`, shows and filters).

Nothing is re-run: everything comes from the files eval-v2 wrote (seed 000 §Debug Failed Task,
§View Trajectory).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._replay import Replay
from dabench_analysis.load._run import Run
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate
from dabench_analysis.tables._common import TasksLike, correct_mask, takes_run
from dabench_analysis.tables.comparison import task_changes

#: A task's outcome in :func:`task_list`, in this order.
OUTCOMES = ("correct", "partial", "failed", "no score")

#: The columns shown for a task's metrics, in reading order.
SUMMARY_COLUMNS = ("task_id", "difficulty", "task_type", "final_score", "outcome_status",
                   "execution_success", "execution_time", "total_tokens", "tool_calls",
                   "tool_failures", "replan_count", "coordinator_final_decision",
                   "failure_category", "root_cause", "failure_stage", "severity")


@dataclass(repr=False)
class TaskDetail:
    """Everything recorded about one task.

    Attributes
    ----------
    task_id : str
    metrics : Series
        The task's task_metrics.csv row (all columns).
    steps : DataFrame
        Its trajectory.csv rows, by step_id.
    tool_calls : DataFrame
        Its tool_calls.csv rows.
    replay : Replay or None
        The parsed task_replay.json (None if the run has none for this task).
    run_id : str
        The run the task belongs to.
    success_threshold : float
        The analysis' success threshold (correct: ``final_score >= success_threshold``).
    """

    task_id: str
    metrics: pd.Series
    steps: pd.DataFrame
    tool_calls: pd.DataFrame
    replay: Replay | None
    run_id: str = ""
    success_threshold: float = schema.SUCCESS_THRESHOLD

    @property
    def summary(self) -> pd.Series:
        """The headline metrics of the task (see ``SUMMARY_COLUMNS``), named by its task_id."""
        return self.metrics[[c for c in SUMMARY_COLUMNS if c in self.metrics.index]].rename(
            self.task_id)

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES`, as in :func:`task_list`."""
        row = self.metrics.to_frame().T.infer_objects()
        return str(_outcome(row, self.success_threshold).iloc[0])

    @property
    def first_failing_step(self) -> int | None:
        """The step_id of the task's first step with ``success`` false (seed 000 §View
        Trajectory: ``task_traj[~task_traj['success']]``); None when no step failed."""
        found = _first_failing(self.steps)
        return int(found.iloc[0]) if len(found) else None

    @property
    def evidence_steps(self) -> list[int]:
        """The step ids the replay's failure attribution names (``evidence_trace_step_ids``)."""
        ids = ((self.replay or {}).get("failure_attribution") or {}).get(
            "evidence_trace_step_ids") or []
        return [int(i) for i in ids if isinstance(i, int | float) and not isinstance(i, bool)]

    def __repr__(self) -> str:
        score = pd.to_numeric(pd.Series([self.metrics.get("final_score")]), errors="coerce")[0]
        first = self.first_failing_step
        fa = (self.replay or {}).get("failure_attribution") or {}
        parts = [self.outcome, f"final_score {format_estimate(score)}" if pd.notna(score) else "no score",
                 f"{len(self.steps)} steps" + (f" (first failing: {first})" if first else ""),
                 f"{len(self.tool_calls)} tool calls",
                 "no replay" if self.replay is None else
                 f"failure {fa.get('failure_category')}" if fa else "no failure attribution"]
        return f"<TaskDetail {self.run_id + ' ' if self.run_id else ''}{self.task_id}: " \
               f"{', '.join(parts)}>"

    @property
    def attribution(self) -> pd.Series:
        """The replay's failure_attribution as a Series (empty when the task did not fail)."""
        fa = (self.replay or {}).get("failure_attribution") or {}
        return pd.Series({k: (", ".join(map(str, v)) if isinstance(v, list) else v)
                          for k, v in fa.items()}, dtype=object)


@needs("task_id", trials="any")
@takes_run(pools=False)
def pick_task(tasks: TasksLike, *, which: str = "first_failed",
              threshold: float = schema.SUCCESS_THRESHOLD) -> str:
    """Choose a task to look at.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        ``run.tasks`` (a Run or Runs gives its ``tasks``; for several runs the task_id alone
        does not say which run's task it is).
    which : {"first_failed", "worst", "first"}
        The first task with final_score < threshold, the lowest-scoring task, or the first row.
    threshold : float
        Failed means ``final_score < threshold``; default 0.8.

    Returns
    -------
    str
        A task_id (the first row when no task failed).

    Raises
    ------
    ValueError
        For an empty frame or an unknown ``which``.

    Examples
    --------
    >>> pick_task(pd.DataFrame({"task_id": ["a", "b"], "final_score": [0.9, 0.2]}))
    'b'
    """
    if tasks.empty:
        raise ValueError("no tasks to pick from")
    if which == "first":
        return str(tasks["task_id"].iloc[0])
    if which == "worst":
        return str(tasks.loc[tasks["final_score"].astype("float64").idxmin(), "task_id"])
    if which != "first_failed":
        raise ValueError(f"which must be first_failed, worst or first, got {which!r}")
    failed = tasks[(~correct_mask(tasks, threshold=threshold)).fillna(False).to_numpy()]
    return str((failed if len(failed) else tasks)["task_id"].iloc[0])


def task_detail(run: Run, task_id: str, *,
                threshold: float = schema.SUCCESS_THRESHOLD) -> TaskDetail:
    """Collect one task's metrics, trajectory, tool calls and replay from a loaded run.

    Parameters
    ----------
    run : Run
        From :func:`dabench_analysis.load_run` (``include_text=True`` keeps thoughts and
        observations in the steps).
    task_id : str
    threshold : float
        Success threshold in (0, 1] of the task's outcome; default 0.8
        (:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`).

    Returns
    -------
    TaskDetail

    Raises
    ------
    KeyError
        If the run has no task ``task_id`` (the message lists a few known ids).
    ValueError
        A threshold outside (0, 1].

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> d = task_detail(load_run("data/sample_runs/baseline_react"), "task_3")
    >>> int(d.metrics["tool_calls"]) == len(d.tool_calls)
    True
    """
    threshold = schema.check_threshold(threshold)
    rows = run.tasks[run.tasks["task_id"] == task_id]
    if rows.empty:
        known = ", ".join(run.tasks["task_id"].astype(str).head(5))
        raise KeyError(f"task {task_id!r} not in run {run.run_id!r} (e.g. {known}, …)")
    steps = run.trajectory[run.trajectory["task_id"] == task_id].sort_values("step_id")
    calls = run.tool_calls[run.tool_calls["task_id"] == task_id]
    replay = run.replays[task_id] if task_id in run.replays else None
    return TaskDetail(task_id, rows.iloc[0], steps.reset_index(drop=True),
                      calls.reset_index(drop=True), replay, run_id=run.run_id,
                      success_threshold=threshold)


def _outcome(tasks: pd.DataFrame, threshold: float) -> pd.Series:
    """:data:`OUTCOMES` per task: correct at ``threshold`` (:func:`schema.correct`), else partial
    where eval-v2's ``outcome_status`` says so, else failed; no score where it is missing."""
    ok = schema.correct(tasks["final_score"] if "final_score" in tasks else
                        pd.Series(np.nan, index=tasks.index), threshold)
    partial = (tasks["outcome_status"].astype("string").eq("partial").fillna(False)
               if "outcome_status" in tasks else pd.Series(False, index=tasks.index))
    out = np.select([ok.isna().to_numpy(), ok.fillna(False).to_numpy(dtype=bool),
                     partial.to_numpy(dtype=bool)], ["no score", "correct", "partial"], "failed")
    return pd.Series(pd.Categorical(out, categories=OUTCOMES), index=tasks.index)


def _first_failing(steps: pd.DataFrame) -> pd.Series:
    """task_id -> step_id of its first step with ``success`` false (none: not listed)."""
    if not {"task_id", "step_id", "success"} <= set(steps.columns) or steps.empty:
        return pd.Series([], dtype="Int64")
    failed = steps[steps["success"].astype("boolean").eq(False).fillna(False).to_numpy()]
    return failed.groupby("task_id", sort=False)["step_id"].min().astype("Int64")


def _steps(run: Run) -> tuple[pd.Series, pd.Series]:
    """Steps per task and the first failing step, from trajectory.csv (without the file: the
    ``trajectory_length`` column, and no failing step)."""
    ids = run.tasks["task_id"].astype("string")
    if schema.TRAJECTORY_FILE not in run.files_present:
        length = run.tasks["trajectory_length"] if "trajectory_length" in run.tasks else pd.NA
        return pd.Series(length, index=run.tasks.index, dtype="Int64"), \
            pd.Series(pd.NA, index=run.tasks.index, dtype="Int64")
    traj = run.trajectory
    counts = traj.groupby(traj["task_id"].astype("string"), sort=False).size()
    first = _first_failing(traj)
    return (pd.Series(ids.map(counts).fillna(0).to_numpy(), index=run.tasks.index,
                      dtype="Int64"),
            pd.Series(ids.map(first).to_numpy(), index=run.tasks.index, dtype="Int64"))


def task_list(run: Run, *, baseline: Run | None = None,
              threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """One row per task to choose from: outcome, score, steps, runtime and failure.

    Parameters
    ----------
    run : Run
        A loaded run (its tasks and, when the run has it, trajectory.csv).
    baseline : Run, optional
        Pair the run with a baseline on the tasks both hold (the others are left out), with
        :func:`dabench_analysis.tables.comparison.task_changes`.
    threshold : float
        Success threshold in (0, 1]; default 0.8
        (:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`).

    Returns
    -------
    DataFrame
        In the run's task order: ``task_id``; ``difficulty``, ``task_type`` when the run has
        them; ``outcome`` (categorical, :data:`OUTCOMES`: correct when ``final_score >=
        threshold``, else partial where eval-v2's ``outcome_status`` is partial,
        else failed; no score without a ``final_score``); ``final_score`` ([0, 1]); ``steps``
        (trajectory.csv rows of the task; without the file the ``trajectory_length`` column);
        ``first_failing_step`` (step_id of its first step with ``success`` false, <NA> when
        none); ``execution_time`` (seconds), ``failure_category``, ``root_cause`` when present.
        With ``baseline``: ``baseline_score``, ``diff`` (run minus baseline), ``change``
        (improved / regressed / unchanged / unknown) and ``flip`` (fixed / broken / "").

    Raises
    ------
    ValueError
        Without ``task_id`` or ``final_score``; with a baseline, the errors of
        :func:`~dabench_analysis.tables.comparison.task_changes` (a task key that repeats); a
        threshold outside (0, 1].

    Notes
    -----
    Correctness is :func:`dabench_analysis.schema.correct` at ``threshold``; the first
    failing step follows seed 000 §View Trajectory (the steps whose ``success`` is false).

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> listing = task_list(load_run("data/sample_runs/baseline_react"))
    >>> listing.loc[listing["task_id"] == "task_24", ["outcome", "steps", "first_failing_step"]]
       outcome  steps  first_failing_step
    23  failed     19                   9
    """
    schema.require_columns(run.tasks, ["task_id", "final_score"], f"run {run.run_id!r}")
    threshold = schema.check_threshold(threshold)
    tasks = run.tasks
    out = pd.DataFrame({"task_id": tasks["task_id"].astype("string")}, index=tasks.index)
    for col in ("difficulty", "task_type"):
        if col in tasks:
            out[col] = tasks[col]
    out["outcome"] = _outcome(tasks, threshold)
    out["final_score"] = tasks["final_score"].astype("float64")
    out["steps"], out["first_failing_step"] = _steps(run)
    for col in ("execution_time", "failure_category", "root_cause"):
        if col in tasks:
            out[col] = tasks[col]
    if baseline is None:
        return out
    changes = task_changes(baseline, run, threshold=threshold).rename(columns={"baseline": "baseline_score"})
    paired = out.merge(changes[["task_id", "baseline_score", "diff", "change", "flip"]],
                       on="task_id", how="inner", validate="one_to_one")
    return paired.set_axis(out.index[out["task_id"].isin(paired["task_id"]).to_numpy()])


def filter_tasks(
    listing: pd.DataFrame,
    *,
    outcome: str | Sequence[str] | None = None,
    difficulty: str | Sequence[str] | None = None,
    failure_category: str | Sequence[str] | None = None,
    change: str | Sequence[str] | None = None,
    text: str = "",
    sort_by: str | None = None,
    descending: bool = False,
) -> pd.DataFrame:
    """The rows of a :func:`task_list` that pass every filter given, sorted.

    Parameters
    ----------
    listing : DataFrame
        From :func:`task_list`.
    outcome, difficulty, failure_category, change : str or sequence of str, optional
        Keep rows whose column holds one of these values (None or empty: no filter).
    text : str
        Keep rows where any column's text contains it (case-insensitive; "" keeps all).
    sort_by : str, optional
        A column of ``listing`` (``final_score``, ``steps``, ``execution_time``, ``diff``);
        None keeps the run's order. Missing values go last; ties keep the run's order.
    descending : bool
        Largest first.

    Returns
    -------
    DataFrame
        The kept rows, index unchanged.

    Raises
    ------
    ValueError
        A filter or ``sort_by`` naming a column the listing does not have.

    Examples
    --------
    >>> listing = pd.DataFrame({"task_id": ["a", "b", "c"], "outcome": ["failed", "correct",
    ...                         "failed"], "final_score": [0.5, 0.9, 0.1],
    ...                         "root_cause": ["KeyError: 'x'", None, "timeout"]})
    >>> filter_tasks(listing, outcome="failed", sort_by="final_score")["task_id"].tolist()
    ['c', 'a']
    >>> filter_tasks(listing, text="KEYERROR")["task_id"].tolist()
    ['a']
    """
    keep = pd.Series(True, index=listing.index)
    filters = {"outcome": outcome, "difficulty": difficulty, "failure_category": failure_category,
               "change": change}
    wanted = {k: [v] if isinstance(v, str) else list(v) for k, v in filters.items() if v}
    schema.require_columns(listing, [*wanted, *([sort_by] if sort_by else [])], "the task list")
    for col, values in wanted.items():
        keep &= listing[col].astype("string").isin([str(v) for v in values]).fillna(False)
    if text.strip():
        needle = text.strip().lower()
        hits = [listing[c].astype("string").str.lower().str.contains(needle, regex=False)
                for c in listing.columns]
        keep &= pd.concat(hits, axis=1).fillna(False).any(axis=1)
    kept = listing[keep.to_numpy(dtype=bool)]
    if sort_by is None:
        return kept
    return kept.sort_values(sort_by, ascending=not descending, kind="stable", na_position="last")
