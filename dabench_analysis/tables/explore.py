"""Drill into one task: its metrics row, trajectory steps, tool calls and replay snapshot.

Nothing is re-run: everything comes from the files eval-v2 wrote (seed 000 §Debug Failed Task,
§View Trajectory).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load.run import Run
from dabench_analysis.tables.common import TasksLike, correct_mask, takes_run

#: The columns shown for a task's metrics, in reading order.
SUMMARY_COLUMNS = ("task_id", "difficulty", "task_type", "final_score", "outcome_status",
                   "execution_success", "execution_time", "total_tokens", "tool_calls",
                   "tool_failures", "replan_count", "coordinator_final_decision",
                   "failure_category", "root_cause", "failure_stage", "severity")


@dataclass
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
    replay : dict or None
        The parsed task_replay.json (None if the run has none for this task).
    """

    task_id: str
    metrics: pd.Series
    steps: pd.DataFrame
    tool_calls: pd.DataFrame
    replay: dict | None

    @property
    def summary(self) -> pd.Series:
        """The headline metrics of the task (see ``SUMMARY_COLUMNS``)."""
        return self.metrics[[c for c in SUMMARY_COLUMNS if c in self.metrics.index]]

    @property
    def attribution(self) -> pd.Series:
        """The replay's failure_attribution as a Series (empty when the task did not fail)."""
        fa = (self.replay or {}).get("failure_attribution") or {}
        return pd.Series({k: (", ".join(map(str, v)) if isinstance(v, list) else v)
                          for k, v in fa.items()}, dtype=object)


@takes_run(needs=["task_id"], pools=False)
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
        Failed means ``final_score < threshold``; default: a Run's ``success_threshold``, for
        a frame 0.8.

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


def task_detail(run: Run, task_id: str) -> TaskDetail:
    """Collect one task's metrics, trajectory, tool calls and replay from a loaded run.

    Parameters
    ----------
    run : Run
        From :func:`dabench_analysis.load_run` (``include_text=True`` keeps thoughts and
        observations in the steps).
    task_id : str

    Returns
    -------
    TaskDetail

    Raises
    ------
    KeyError
        If the run has no task ``task_id`` (the message lists a few known ids).

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> d = task_detail(load_run("data/sample_runs/baseline_react"), "task_3")
    >>> int(d.metrics["tool_calls"]) == len(d.tool_calls)
    True
    """
    rows = run.tasks[run.tasks["task_id"] == task_id]
    if rows.empty:
        known = ", ".join(run.tasks["task_id"].astype(str).head(5))
        raise KeyError(f"task {task_id!r} not in run {run.run_id!r} (e.g. {known}, …)")
    steps = run.trajectory[run.trajectory["task_id"] == task_id].sort_values("step_id")
    calls = run.tool_calls[run.tool_calls["task_id"] == task_id]
    replay = run.replays[task_id] if task_id in run.replays else None
    return TaskDetail(task_id, rows.iloc[0], steps.reset_index(drop=True),
                      calls.reset_index(drop=True), replay)
