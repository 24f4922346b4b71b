"""Step-level debugging of a run: loops (the same action repeated), unexplained re-entries of
PLAN and EXECUTE, recovery after errors, and each failed task's first failing step.

Seed 000 §Data Model Schema 2 and 3 ("step-level debugging: identify the exact failure
point"; tool_calls.csv error_type / error_message) and §Replay Artifacts
(``failure_attribution.evidence_trace_step_ids``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._differences import TWO_PROPORTIONS, compare_proportions
from dabench_analysis.stats._inputs import check_ci
from dabench_analysis.tables._actors import own_actions, with_note
from dabench_analysis.trajectory import steps as sq
from dabench_analysis.trajectory._inputs import (
    Inputs,
    difference,
    finish,
    gather,
    holm,
    shares,
    stratify,
)
from dabench_analysis.trajectory._loop_flags import loop_flags
from dabench_analysis.trajectory.step_events import error_recovery, repeat_kinds, repeated_actions


def _reentries(inp: Inputs) -> pd.DataFrame:
    """PLAN and EXECUTE blocks per task, against 1 + replan_count and execution_attempts."""
    n, t = len(inp.tasks), inp.tasks
    out = pd.DataFrame(index=pd.RangeIndex(n))
    if "stage" not in inp.steps:
        for col in ("plan_blocks", "plan_reentries", "execute_blocks", "execute_reentries"):
            out[col] = pd.array([pd.NA] * n, dtype="Int64")
        return out
    b = sq.blocks(inp.steps, by="stage")
    for stage, col, allowed in (("PLAN", "plan", "replan_count"),
                                ("EXECUTE", "execute", "execution_attempts")):
        count = np.bincount(b["task_index"][b["value"] == stage], minlength=n)
        out[f"{col}_blocks"] = count
        if allowed in t:
            limit = t[allowed].astype("Float64") + (1 if allowed == "replan_count" else 0)
            out[f"{col}_reentries"] = (count - limit).clip(lower=0).astype("Int64")
        else:
            out[f"{col}_reentries"] = pd.array([pd.NA] * n, dtype="Int64")
    return out


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id"),
       uses=("difficulty", "replan_count", "execution_attempts",
             *in_file(TRAJECTORY_FILE, "tool", "action_input", "observation")), trials="any")
def loop_tasks(run: Run | Runs, *, window: int = 3,
               threshold: float | None = None) -> pd.DataFrame:
    """Per task: its loops (an action issued again within ``window`` steps) and unexplained
    re-entries of PLAN and EXECUTE.

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``tool``, ``action_input`` (a free-text
        column read for this table only) and ``stage`` when present; task_metrics
        ``replan_count`` and ``execution_attempts`` when present.
    window : int
        A step repeats an action when one of the ``window`` steps before it in its task has
        the same ``tool`` and ``action_input`` (:func:`~dabench_analysis.trajectory.step_events.
        repeated_actions`).
    threshold : float, optional
        Success threshold; default the run's.

    Returns
    -------
    DataFrame
        One row per task (and trial: another harness's repeated trials, each its own trace):
        ``run_id`` (several runs only), ``task_id``, ``trial`` (when the run has it),
        ``difficulty``, ``n_steps``, ``n_loops`` (steps that repeat an action exactly; this
        and the next two <NA> without ``tool`` and ``action_input``),
        ``n_stuck`` (near-identical input, same observation: stuck), ``n_retry`` (same input,
        a different observation: a retry after change; :func:`~dabench_analysis.stats.
        step_events.repeat_kinds`; both 0 without ``observation``), ``n_flagged`` (steps
        whose text says the agent itself is looping: Magentic-One's ledger,
        :func:`~dabench_analysis.trajectory._loop_flags.loop_flags`; <NA> without ``observation``),
        ``plan_blocks``,
        ``plan_reentries`` (PLAN blocks beyond 1 + ``replan_count``), ``execute_blocks``,
        ``execute_reentries`` (EXECUTE blocks beyond ``execution_attempts``), ``correct``.
        Re-entries are <NA> where the column they are checked against (or ``stage``) is
        absent.

    Raises
    ------
    ValueError
        No trajectory.csv, or it lacks ``tool`` or ``action_input``; ``window`` < 1.

    Notes
    -----
    Loops by :func:`dabench_analysis.trajectory.step_events.repeated_actions`; PLAN and EXECUTE
    blocks by :func:`dabench_analysis.trajectory.steps.blocks` (``by="stage"``).

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> lt = loop_tasks(da.load_run("data/sample_runs/baseline_react"))
    >>> int(lt["plan_reentries"].sum()), int(lt["execute_reentries"].sum())  # consistent data
    (0, 0)
    """
    inp = gather(run, "loop_tasks", steps=[], threshold=threshold,
                 task_columns=["replan_count", "execution_attempts"],
                 optional=("stage", "observation", "tool", "action_input"))
    return _loop_tasks(inp, window)


def _loop_tasks(inp: Inputs, window: int, kinds: bool = True) -> pd.DataFrame:
    """:func:`loop_tasks`' rows; ``kinds`` False: n_stuck and n_retry NA (not computed, for a
    caller that reads only n_loops)."""
    n = len(inp.tasks)
    t = inp.steps["task_index"].to_numpy()
    out = inp.tasks[[c for c in ("run_id", "task_id", "trial", "difficulty")
                     if c in inp.tasks]].copy()
    out["n_steps"] = np.bincount(t, minlength=n)
    if {"tool", "action_input"} <= set(inp.steps.columns):
        hit = repeated_actions(inp.steps, window=window)
        out["n_loops"] = np.bincount(t[hit], minlength=n)
        if kinds:
            kind = repeat_kinds(inp.steps, window=window)
            out["n_stuck"] = np.bincount(t[kind == 1], minlength=n)
            out["n_retry"] = np.bincount(t[kind == 2], minlength=n)
    else:  # no actions recorded: repeats unknown (the agent's own flags may still be read)
        out["n_loops"] = pd.array([pd.NA] * n, dtype="Int64")
    for col in ("n_stuck", "n_retry"):
        if col not in out:
            out[col] = pd.array([pd.NA] * n, dtype="Int64")
    if "observation" in inp.steps:
        out["n_flagged"] = np.bincount(t[loop_flags(inp.steps["observation"])], minlength=n)
    else:
        out["n_flagged"] = pd.array([pd.NA] * n, dtype="Int64")
    out = pd.concat([out, _reentries(inp)], axis=1)
    out["correct"] = inp.tasks["correct"].to_numpy()
    return out if inp.several else out.drop(columns="run_id", errors="ignore")


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id", "tool",
       "action_input"), uses=("difficulty", "replan_count", "execution_attempts",), trials="any")
def loops(run: Run | Runs, *, window: int = 3, threshold: float | None = None,
          ci: float = 0.95) -> pd.DataFrame:
    """Loops and unexplained re-entries, and the accuracy of tasks with and without a loop.

    Parameters
    ----------
    run, window, threshold
        As :func:`loop_tasks`.
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty``: ``n_tasks`` (tasks with
        steps), ``n_loop_steps``, ``mean_loops`` (per task), ``n_with_loop``, ``loop_share``
        with ``loop_share_ci_low``, ``loop_share_ci_high`` (Wilson), ``n_stuck_steps``,
        ``n_retry_steps`` (repeats stuck / retried after change, :func:`loop_tasks`),
        ``n_with_stuck`` (tasks with a stuck repeat), ``n_flagged_steps``, ``n_with_flag``
        (steps and tasks the agent itself flags as looping), ``n_reentry`` (tasks with
        an unexplained PLAN or EXECUTE re-entry), ``accuracy_loop``, ``accuracy_no_loop``
        (Wilson intervals), ``diff`` (loop − no loop) with ``ci_low``, ``ci_high`` (Newcombe
        hybrid score), ``p_value`` (Fisher's exact test), ``p_adjusted`` (Holm over the
        difficulty levels of a run; the pooled row is one test of its own), ``method``.

    Raises
    ------
    ValueError
        As :func:`loop_tasks`.

    Notes
    -----
    Repeated identical steps are a leading failure mode of multi-agent systems (Cemri et al.
    2025). A re-entry the task's own counts explain (a replan, a retry) is not unexplained.

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> lp = loops(da.load_run("data/sample_runs/baseline_react"))
    >>> lp.loc[0, "difficulty"], int(lp.loc[0, "n_tasks"])
    ('all', 80)
    """
    check_ci(ci)
    inp = gather(run, "loops", steps=["tool", "action_input"], threshold=threshold,
                 task_columns=["replan_count", "execution_attempts"],
                 optional=("stage", "observation"))
    lt = _loop_tasks(inp, window).assign(task_index=np.arange(len(inp.tasks)))
    lt = lt[lt["n_steps"] > 0]
    s = stratify(lt.drop(columns=["run_id", "difficulty"], errors="ignore"), inp.tasks)
    ok, scored = s["correct"].fillna(False).astype(bool), s["correct"].notna()
    loop = s["n_loops"].gt(0)
    re = (s["plan_reentries"].fillna(0) + s["execute_reentries"].fillna(0)).gt(0)
    s = s.assign(loop=loop, re=re, stuck=s["n_stuck"].gt(0), flag=s["n_flagged"].gt(0).fillna(False), k1=ok & loop, n1=scored & loop, k2=ok & ~loop,
                 n2=scored & ~loop)
    g = s.groupby(["run_id", "difficulty"], sort=False, observed=True).agg(
        n_tasks=("task_index", "size"), n_loop_steps=("n_loops", "sum"),
        mean_loops=("n_loops", "mean"), n_with_loop=("loop", "sum"), n_reentry=("re", "sum"),
        n_stuck_steps=("n_stuck", "sum"), n_retry_steps=("n_retry", "sum"),
        n_with_stuck=("stuck", "sum"), n_flagged_steps=("n_flagged", "sum"),
        n_with_flag=("flag", "sum"),
        k1=("k1", "sum"), n1=("n1", "sum"), k2=("k2", "sum"), n2=("n2", "sum")).reset_index()
    d = difference(s, ["run_id", "difficulty"], ("k1", "n1"), ("k2", "n2"), inp, ci,
                   compare_proportions(g["k1"], g["n1"], g["k2"], g["n2"], ci=ci))
    sh = shares(s, ["run_id", "difficulty"], {"loop_share": ("loop", None),
                "accuracy_loop": ("k1", "n1"), "accuracy_no_loop": ("k2", "n2")}, inp, ci)
    out = pd.concat([g[["run_id", "difficulty", "n_tasks", "n_loop_steps", "mean_loops",
                        "n_with_loop"]], sh.filter(like="loop_share"),
                     g[["n_stuck_steps", "n_retry_steps", "n_with_stuck", "n_flagged_steps",
                        "n_with_flag", "n_reentry"]],
                     sh.filter(like="accuracy_"),
                     d[["diff", "ci_low", "ci_high", "p_value"]]], axis=1)
    strata = (out["difficulty"] != "all").to_numpy()
    out["p_adjusted"] = out["p_value"]
    out.loc[strata, "p_adjusted"] = holm(out[strata], ["run_id"])
    out["method"] = f"window {window}; Wilson; {TWO_PROPORTIONS}; Holm over difficulties"
    return finish(out, inp, clustered=True)


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "success"), uses=("difficulty",), trials="any")
def recovery(run: Run | Runs, *, threshold: float | None = None, ci: float = 0.95,
             actor: str | None = "agent") -> pd.DataFrame:
    """Recovery after errors: for every failed step or tool call, whether a later step of the
    task succeeded with the same tool (same stage for an error without a tool), by tool and
    by stage, and the accuracy of the tasks; tasks without an error as the reference.

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``success`` (``tool`` and ``stage``
        when present) and tool_calls.csv ``task_id``, ``step_id``, ``tool_name``, ``success``
        when the run has it.
    threshold : float, optional
        Success threshold; default the run's.
    ci : float
        Level of the Wilson intervals.
    actor : str or None
        Errors of this actor's steps and calls only when the run names several (``actor``;
        a note says how many were left out): :func:`~dabench_analysis.tables._actors.
        own_actions`.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty``, rows of ``level`` "all" (every
        error), "tool" (one per tool), "stage" (one per stage) and "reference" (tasks with
        steps and no error), each with ``group``, ``n_errors``, ``n_recovered``,
        ``recovery_rate`` with ``recovery_rate_ci_low``, ``recovery_rate_ci_high``,
        ``n_tasks`` (tasks with such an error; reference: without any), ``accuracy`` of those
        tasks, ``accuracy_recovered`` (tasks whose every such error was recovered),
        ``accuracy_unrecovered`` (tasks with one left unrecovered), each with its interval,
        and ``method``.

    Raises
    ------
    ValueError
        No trajectory.csv, or no ``success`` column in it.

    Notes
    -----
    The rule is :func:`dabench_analysis.trajectory.step_events.error_recovery`'s. The recovery
    rate counts errors, which cluster within tasks, so its Wilson interval is narrower than
    a task-level one; the accuracies count tasks.

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> r = recovery(da.load_run("data/sample_runs/baseline_react"))
    >>> r.loc[0, ["difficulty", "level"]].tolist()
    ['all', 'all']
    """
    check_ci(ci)
    inp = gather(run, "recovery", steps=["success"], calls=["step_id", "tool_name", "success"],
                 threshold=threshold, optional=("tool", "stage", "actor"),
                 calls_optional=("actor",))
    (steps, n1), (calls, n2) = own_actions(inp.steps, actor, "step"), own_actions(inp.calls, actor)
    err = error_recovery(steps, calls)
    parts = [err.assign(level="all", group="all errors"),
             err[err["tool"].notna()].assign(level="tool", group=lambda f: f["tool"]),
             err[err["stage"].notna()].assign(level="stage", group=lambda f: f["stage"])]
    long = stratify(pd.concat(parts, ignore_index=True), inp.tasks)
    ok = inp.tasks["correct"]
    keys = ["run_id", "difficulty", "level", "group"]
    task = long.groupby([*keys, "task_index"], sort=False, observed=True)["recovered"].all()
    task = task.reset_index()
    e = long.groupby(keys, sort=False, observed=True)["recovered"].agg(n_errors="size",
                                                                         n_recovered="sum")
    rows = _task_rows(task, keys, ok, ci, inp).join(e, on=keys)
    with_steps = np.bincount(inp.steps["task_index"], minlength=len(ok)) > 0
    clean = pd.DataFrame({"task_index": np.flatnonzero(with_steps & ~np.isin(
        np.arange(len(ok)), err["task_index"]))})
    ref = stratify(clean, inp.tasks).assign(level="reference", group="no error",
                                             recovered=np.nan)
    rows = pd.concat([rows, _task_rows(ref, keys, ok, ci, inp).assign(n_errors=0,
                                                                       n_recovered=0)],
                     ignore_index=True)
    rate = shares(long.assign(recovered=long["recovered"].astype(bool)), keys,
                  {"recovery_rate": ("recovered", None)}, inp, ci)
    out = rows.merge(rate, on=keys, how="left")
    out["method"] = "Wilson (recovery rate over errors, accuracies over tasks)"
    out["_l"] = out["level"].map({"all": 0, "tool": 1, "stage": 2, "reference": 3})
    cols = ["run_id", "difficulty", "level", "group", "n_errors", "n_recovered",
            "recovery_rate", "recovery_rate_ci_low", "recovery_rate_ci_high", "n_tasks",
            *[c for c in out if c.startswith("accuracy")], "method", "_l"]
    out = finish(out[cols], inp, sort=["_l", "group"], clustered=True).drop(columns="_l")
    return with_note(out, "; ".join(n for n in (n1, n2) if n))


def _task_rows(task: pd.DataFrame, keys: list[str], ok: pd.Series, ci: float,
               inp: Inputs) -> pd.DataFrame:
    """Per group of ``keys``: tasks, their accuracy, and the accuracy of those whose every error
    was recovered and of the others (``recovered`` NaN: the reference, no split)."""
    t = task["task_index"].to_numpy()
    good = ok.fillna(False).to_numpy(dtype=bool)[t]
    scored = ok.notna().to_numpy()[t]
    rec = task["recovered"].to_numpy(dtype=float)
    split = ~np.isnan(rec)
    flags = pd.DataFrame({k: task[k].to_numpy() for k in keys} | {
        "k": good & scored, "n": scored, "k1": good & scored & (rec == 1),
        "n1": scored & (rec == 1), "k2": good & scored & split & (rec == 0),
        "n2": scored & split & (rec == 0), "n_tasks": 1, "task_index": t})
    g = flags.groupby(keys, sort=False, observed=True)["n_tasks"].sum().reset_index()
    sh = shares(flags, keys, {"accuracy": ("k", "n"), "accuracy_recovered": ("k1", "n1"),
                              "accuracy_unrecovered": ("k2", "n2")}, inp, ci)
    return pd.concat([g, sh.drop(columns=keys)], axis=1)
