"""Where time and tokens go: per-stage phase timing and per-tool latency and failures.

Seed 000 §Per-Stage Metrics (``<stage>_time/calls/tokens``), §Time accounting (wall clock =
``execution_time``; component time = the tracked stage durations; the rest is unaccounted
overhead) and §tool_calls.csv (latency, failures per tool).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.schema import TOOL_CALLS_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.tables._actors import own_actions, with_note
from dabench_analysis.tables._common import TasksLike, takes_run

#: The per-stage columns of task_metrics.csv that :func:`phase_timing` reads.
_STAGE_COLUMNS = [f"{p}_{m}" for p in schema.STAGES.values() for m in ("time", "calls", "tokens")]


@needs("understanding_time", "understanding_calls", "understanding_tokens", "planning_time",
       "planning_calls", "planning_tokens", "execution_stage_time", "execution_stage_calls",
       "execution_stage_tokens", "verification_time", "verification_calls", "verification_tokens",
       "summary_time", "summary_calls", "summary_tokens", "execution_time")
@takes_run()
def phase_timing(tasks: TasksLike, *, ci: float = 0.95) -> pd.DataFrame:
    """Per-stage time, calls and tokens per task, and the unaccounted overhead.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``<prefix>_time`` (seconds), ``<prefix>_calls`` and
        ``<prefix>_tokens`` for the stages of :data:`dabench_analysis.schema.STAGES`
        (UNDERSTAND → understanding, PLAN → planning, EXECUTE → execution_stage, VERIFY →
        verification, SUMMARIZE → summary), and ``execution_time`` (wall clock, seconds).
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    ci : float
        Level of the t-interval of the mean time.

    Returns
    -------
    DataFrame
        One row per stage in pipeline order, then ``overhead`` (wall clock minus the sum of
        stage times) and ``wall_clock``: ``stage, n, mean_time_s, ci_low, ci_high,
        share_of_wall_clock, mean_calls, mean_calls_ci_low, mean_calls_ci_high, mean_tokens,
        mean_tokens_ci_low, mean_tokens_ci_high, total_time_s`` (t-intervals). Calls and tokens
        are missing for the overhead and wall-clock rows.

    Raises
    ------
    ValueError
        If a stage column or ``execution_time`` is missing.

    Examples
    --------
    >>> cols = {f"{p}_{m}": [1.0, 3.0] for p in schema.STAGES.values()
    ...         for m in ("time", "calls", "tokens")}
    >>> t = pd.DataFrame(cols | {"execution_time": [10.0, 20.0]})
    >>> phase_timing(t).set_index("stage").loc[["PLAN", "overhead"], "mean_time_s"].tolist()
    [2.0, 5.0]
    """
    wall = tasks["execution_time"].astype("float64")
    stage_times = {s: tasks[f"{p}_time"].astype("float64") for s, p in schema.STAGES.items()}
    component = sum(stage_times.values())
    series = {**stage_times, "overhead": wall - component, "wall_clock": wall}
    total_wall = wall.sum()
    rows = []
    for stage, values in series.items():
        prefix = schema.STAGES.get(stage)
        frame = pd.DataFrame({"time": values})
        if prefix:
            frame = frame.assign(calls=tasks[f"{prefix}_calls"].astype("float64"),
                                 tokens=tasks[f"{prefix}_tokens"].astype("float64"))
        # the catalogue's names, so that a note names the stage ("Summary calls: ...")
        named = {c: f"{prefix or stage}_{c}" for c in frame.columns}
        d = stats.describe(frame.rename(columns=named), list(named.values()), ci=ci)
        d = d.assign(metric=d["metric"].map({v: k for k, v in named.items()})).set_index("metric")
        nan = {"mean": np.nan, "ci_low": np.nan, "ci_high": np.nan}
        calls = d.loc["calls"] if prefix else nan
        toks = d.loc["tokens"] if prefix else nan
        rows.append({
            "stage": stage, "n": int(d.loc["time", "n"]), "mean_time_s": d.loc["time", "mean"],
            "ci_low": d.loc["time", "ci_low"], "ci_high": d.loc["time", "ci_high"],
            "share_of_wall_clock": values.sum() / total_wall if total_wall else np.nan,
            "mean_calls": calls["mean"], "mean_calls_ci_low": calls["ci_low"],
            "mean_calls_ci_high": calls["ci_high"], "mean_tokens": toks["mean"],
            "mean_tokens_ci_low": toks["ci_low"], "mean_tokens_ci_high": toks["ci_high"],
            "total_time_s": values.sum()})
    return pd.DataFrame(rows)


#: The columns of :func:`tool_usage` computed from each optional input column.
_FROM = {"latency_seconds": ("mean_latency_s", "latency_ci_low", "latency_ci_high",
                             "median_latency_s", "p90_latency_s"),
         "tokens": ("mean_tokens", "tokens_ci_low", "tokens_ci_high")}


@needs(files=(TOOL_CALLS_FILE,), file_needs=in_file(TOOL_CALLS_FILE, "task_id", "tool_name",
       "success"), uses=in_file(TOOL_CALLS_FILE, "latency_seconds", "tokens"), trials="any")
@takes_run(frame="tool_calls", trials=True)
def tool_usage(tool_calls: TasksLike, *, ci: float = 0.95,
               actor: str | None = "agent") -> pd.DataFrame:
    """Failure rate, latency and tokens per tool, from ``tool_calls.csv``.

    Parameters
    ----------
    tool_calls : DataFrame, Run or Runs
        One row per tool call (``run.tool_calls``) with ``tool_name``, ``success`` (flag),
        ``task_id`` and, when recorded, ``latency_seconds`` (seconds) and ``tokens``.
        A Run or Runs gives its ``tool_calls``; several runs are pooled, with a PooledRunsWarning.
    ci : float
        Level of the Wilson interval of the failure rate and the t-intervals of the means.
    actor : str or None
        When the calls' ``actor`` names the agent and another caller (tau2's simulated user),
        only this actor's calls (:func:`~dabench_analysis.tables._actors.own_actions`; a
        ``note`` column says how many were left out); None: every call.

    Returns
    -------
    DataFrame
        One row per tool, most-called first: ``tool_name, n_calls, n_tasks, n_failures,
        failure_rate, failure_ci_low, failure_ci_high``, then ``mean_latency_s,
        latency_ci_low, latency_ci_high, median_latency_s, p90_latency_s`` when the calls have
        ``latency_seconds`` and ``mean_tokens, tokens_ci_low, tokens_ci_high`` when they have
        ``tokens``. Calls with a missing success flag are left out of the failure rate.

    Raises
    ------
    ValueError
        If ``tool_name``, ``success`` or ``task_id`` is missing.

    Notes
    -----
    A column the harness does not record (tau-bench and Inspect logs record no latency) leaves
    its columns out of the table: absent, never zero. Rows are calls: repeated trials of a task
    add calls (``n_tasks`` counts task ids); the intervals treat calls as independent, though
    calls of one task cluster.

    Examples
    --------
    >>> calls = pd.DataFrame({"task_id": ["t1", "t1", "t2"], "tool_name": ["sql", "sql", "py"],
    ...                       "success": [True, False, True], "latency_seconds": [1.0, 3.0, 2.0],
    ...                       "tokens": [10, 10, 5]})
    >>> tool_usage(calls)[["tool_name", "n_calls", "failure_rate", "median_latency_s"]]
      tool_name  n_calls  failure_rate  median_latency_s
    0       sql        2           0.5               2.0
    1        py        1           0.0               2.0
    >>> tool_usage(calls.drop(columns=["latency_seconds", "tokens"])).columns.tolist()[-3:]
    ['failure_rate', 'failure_ci_low', 'failure_ci_high']
    """
    tool_calls, note = own_actions(tool_calls, actor)
    present = [c for c in _FROM if c in tool_calls]
    rows = []
    for tool, sub in tool_calls.groupby(tool_calls["tool_name"].astype("string"), sort=False):
        ok = sub["success"].astype("boolean").dropna().astype(bool)
        fails = int((~ok).sum())
        interval = stats.proportion_ci(fails, len(ok), ci=ci) if len(ok) else None
        row = {
            "tool_name": tool, "n_calls": len(sub), "n_tasks": sub["task_id"].nunique(),
            "n_failures": fails, "failure_rate": fails / len(ok) if len(ok) else np.nan,
            "failure_ci_low": interval["ci_low"].iloc[0] if interval is not None else np.nan,
            "failure_ci_high": interval["ci_high"].iloc[0] if interval is not None else np.nan}
        if present:
            values = sub[present].astype("float64")
            d = stats.describe(values, present, ci=ci).set_index("metric")
        if "latency_seconds" in present:
            lat, dl = values["latency_seconds"], d.loc["latency_seconds"]
            row.update(mean_latency_s=dl["mean"], latency_ci_low=dl["ci_low"],
                       latency_ci_high=dl["ci_high"], median_latency_s=lat.median(),
                       p90_latency_s=lat.quantile(0.9))
        if "tokens" in present:
            tok = d.loc["tokens"]
            row.update(mean_tokens=tok["mean"], tokens_ci_low=tok["ci_low"],
                       tokens_ci_high=tok["ci_high"])
        rows.append(row)
    out = pd.DataFrame(rows, columns=[
        "tool_name", "n_calls", "n_tasks", "n_failures", "failure_rate", "failure_ci_low",
        "failure_ci_high", *(c for p in present for c in _FROM[p])])
    return with_note(out.sort_values(["n_calls", "tool_name"], ascending=[False, True],
                                     kind="stable").reset_index(drop=True), note)
