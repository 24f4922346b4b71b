"""Multi-agent structure: steps, failures, first failures and loops per agent, attributed to
the agent that acted and to the agent that delegated the step (``parent_step_id``: an
orchestrator's instruction, a sub-agent's call).

Seed 000 §Data Model Schema 2 (``agent``, ``parent_step_id``); Who&When (Zhang et al. 2025,
arXiv:2505.00212) attributes failures to agents; Magentic-One's orchestrator delegates to
WebSurfer, FileSurfer, Coder (Fourney et al. 2024, arXiv:2411.04468).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.trajectory._inputs import gather
from dabench_analysis.trajectory._loop_flags import loop_flags
from dabench_analysis.trajectory.step_events import error_recovery, repeat_kinds

#: The agent of a step nobody delegated.
NOT_DELEGATED = "(not delegated)"
_COUNTS = ("steps", "failures", "first_failures", "loops", "stuck", "flagged")


def _events(inp) -> pd.DataFrame:
    """One row per step: task_index, step_id, agent, delegator and the step's event flags."""
    st = inp.steps
    ev = pd.DataFrame({"task_index": st["task_index"].to_numpy(),
                       "step_id": st["step_id"].to_numpy(dtype="int64"),
                       "agent": st["agent"].astype("string").fillna("(no agent)").to_numpy()})
    if "parent_step_id" in st:
        key = pd.Series(ev["agent"].to_numpy(), index=pd.MultiIndex.from_arrays(
            [ev["task_index"], ev["step_id"]]))
        key = key[~key.index.duplicated()]
        parent = pd.to_numeric(st["parent_step_id"], errors="coerce")
        at = pd.MultiIndex.from_arrays([ev["task_index"], parent.fillna(-1).astype("int64")])
        ev["delegator"] = key.reindex(at).fillna(NOT_DELEGATED).to_numpy()
    else:
        ev["delegator"] = NOT_DELEGATED
    nan = np.full(len(ev), np.nan)
    if "success" in st:
        errs = error_recovery(st, inp.calls)
        bad = pd.MultiIndex.from_frame(errs[["task_index", "step_id"]])
        here = pd.MultiIndex.from_frame(ev[["task_index", "step_id"]])
        ev["failures"] = here.isin(bad).astype(float)
        first = errs.drop_duplicates("task_index")
        ev["first_failures"] = here.isin(pd.MultiIndex.from_frame(
            first[["task_index", "step_id"]])).astype(float)
    else:
        ev["failures"] = ev["first_failures"] = nan
    if {"tool", "action_input"} <= set(st.columns):
        kind = repeat_kinds(st, window=3)
        ev["loops"], ev["stuck"] = (kind > 0).astype(float), (kind == 1).astype(float)
    else:
        ev["loops"] = ev["stuck"] = nan
    ev["flagged"] = (loop_flags(st["observation"]).astype(float) if "observation" in st
                     else nan)
    ev["steps"] = 1.0
    return ev


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "agent"), uses=in_file(TRAJECTORY_FILE, "parent_step_id", "success", "tool",
                              "action_input", "observation"), trials="any")
def agent_attribution(run: Run | Runs) -> pd.DataFrame:
    """Per agent: the steps it took and delegated, and their failures, first failures and
    loops, attributed to the agent that acted and to the agent that delegated.

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``agent``, and when present
        ``parent_step_id`` (the delegating step), ``success``, ``tool``, ``action_input``,
        ``observation``; tool_calls.csv ``step_id``, ``tool_name``, ``success``.

    Returns
    -------
    DataFrame
        One row per agent (and run, several runs), most steps first: ``agent``, then for
        ``acted`` (the steps the agent took) and ``delegated`` (the steps other agents took
        on its instruction): ``steps_*``, ``failures_*`` (failing steps), ``first_failures_*``
        (the task's first failing step), ``loops_*`` (repeats of an action within 3 steps),
        ``stuck_*`` (repeats with the same observation), ``flagged_*`` (steps flagging
        themselves as looping). <NA> where the run lacks the column a count needs; the row
        :data:`NOT_DELEGATED` holds the steps no agent delegated.

    Notes
    -----
    A failing step is an error of :func:`~dabench_analysis.trajectory.step_events.error_recovery`
    (a failed step or tool call, once); loops by
    :func:`~dabench_analysis.trajectory.step_events.repeat_kinds`; flags by
    :func:`~dabench_analysis.trajectory._loop_flags.loop_flags`. The delegator of a step is the
    agent of its ``parent_step_id`` in the same task; a step without one counts under
    :data:`NOT_DELEGATED` in the delegated columns.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> aa = agent_attribution(da.load_run("tests/data/harness/whowhen/Hand-Crafted"))
    >>> bool(aa.loc[aa["agent"] == "Orchestrator", "steps_delegated"].item() > 0)
    True
    """
    inp = gather(run, "agent_attribution", steps=["agent"], calls=["step_id", "tool_name",
                 "success"], optional=("parent_step_id", "success", "tool", "action_input",
                                       "observation"))
    ev = _events(inp)
    ev["run_id"] = inp.tasks["run_id"].to_numpy()[ev["task_index"]]
    parts = []
    for role, key in (("acted", "agent"), ("delegated", "delegator")):
        g = ev.groupby(["run_id", key], sort=False)[list(_COUNTS)].sum(min_count=1)
        parts.append(g.rename_axis(["run_id", "agent"]).add_suffix(f"_{role}"))
    out = pd.concat(parts, axis=1).reset_index()
    for c in _COUNTS:  # a count the run can give is 0 where an agent has none
        if ev[c].notna().any():
            out[[f"{c}_acted", f"{c}_delegated"]] = out[[f"{c}_acted", f"{c}_delegated"]
                                                        ].fillna(0)
    out = out.astype({c: "Int64" for c in out.columns if c not in ("run_id", "agent")})
    out = out.sort_values(["run_id", "steps_acted"], ascending=[True, False],
                          na_position="last", kind="stable").reset_index(drop=True)
    return out if inp.several else out.drop(columns="run_id")
