"""Step-level debugging: where each failed task first failed (seed 000 §Data Model Schema 2:
"identify the exact failure point"), counted by stage and agent, and checked against the
replay's failure attribution (§Replay Artifacts: ``evidence_trace_step_ids``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE, require_columns
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._inputs import check_ci, warn
from dabench_analysis.trajectory._inputs import (
    POOLED,
    Inputs,
    finish,
    gather,
    per_group,
    shares,
    stratify,
    task_clusters,
    wilson,
)
from dabench_analysis.trajectory.step_events import first_failures as _first

#: Characters of an error message kept (the rest shown as "…").
MESSAGE_CHARS = 80
#: The stage of a failed task without a failing step.
NONE = "(no failing step)"
#: The stage of a failing step that records none (another harness's steps have no stage).
NO_STAGE = "(no stage)"
#: The stage of a failed task without a step in trajectory.csv.
NO_STEPS = "(no steps recorded)"


def _evidence(run: Run | Runs, tasks: pd.DataFrame) -> list:
    """``evidence_trace_step_ids`` of each task's replay (None: no replay or no list)."""
    runs = {r.run_id: r for r in ([run] if isinstance(run, Run) else list(run))}
    out = []
    for rid, tid in zip(tasks["run_id"], tasks["task_id"], strict=True):
        r = runs.get(rid)
        ids = None
        if r is not None and tid in r.replays:
            try:
                fa = r.replays[tid].get("failure_attribution") or {}
            except (RunLoadError, KeyError):  # a damaged replay: validate reports it
                fa = {}
            ev = fa.get("evidence_trace_step_ids") if isinstance(fa, dict) else None
            ids = [int(v) for v in ev if isinstance(v, int | float) and not isinstance(
                v, bool)] if isinstance(ev, list) else None
        out.append(ids)
    return out


def _short(text) -> object:
    if text is None or text is pd.NA or (isinstance(text, float) and np.isnan(text)):
        return pd.NA
    text = str(text)
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "success"), uses=("difficulty",), trials="any")
def first_failures(run: Run | Runs, *, threshold: float | None = None) -> pd.DataFrame:
    """Each failed task's first failing step (step-level debugging).

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``success`` (``stage``, ``agent``,
        ``tool`` when present), tool_calls.csv ``step_id``, ``tool_name``, ``success``,
        ``error_type``, ``error_message`` when present, and the replays.
    threshold : float, optional
        A task failed when ``final_score < threshold``; default the run's.

    Returns
    -------
    DataFrame
        One row per failed task, in task order: ``run_id`` (several runs only), ``task_id``,
        ``trial`` (another harness's repeated trials only), ``difficulty``, ``final_score``, ``step_id`` (<NA>: no failing step), ``stage``
        (:data:`NONE` when no step failed, :data:`NO_STAGE` for a failing step without one,
        :data:`NO_STEPS` for a task without steps), ``agent``, ``tool``, ``error_type``,
        ``error_message`` (of the step's first failed call, cut to 80 characters),
        ``evidence_step_ids`` (the replay's ``failure_attribution.evidence_trace_step_ids``,
        ", "-joined; <NA> without them), ``in_evidence`` (the first failing step is among
        them; <NA> without evidence or failing step).

    Raises
    ------
    ValueError
        No trajectory.csv or no ``success`` column in it.

    Notes
    -----
    A failing step is a step with ``success`` false or a step with a failed tool call
    (:func:`dabench_analysis.trajectory.step_events.first_failures`).

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657 (which step
    a failure is attributed to).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> ff = first_failures(da.load_run("data/sample_runs/proposed_aat"))
    >>> len(ff)  # the 8 tasks below 0.8
    8
    """
    inp = gather(run, "first_failures", steps=["success"], optional=("stage", "agent", "tool"),
                 threshold=threshold, calls=["step_id", "tool_name", "success"],
                 calls_optional=("error_type", "error_message"))
    first = _first(inp.steps, inp.calls).set_index("task_index")
    failed = np.flatnonzero(inp.tasks["correct"].eq(False).fillna(False).to_numpy())
    out = inp.tasks.iloc[failed][[c for c in ("run_id", "task_id", "trial", "difficulty",
                                              "final_score") if c in inp.tasks]]
    out = out.reset_index(drop=True)
    got = first.reindex(failed)
    for col in ("step_id", "stage", "agent", "tool", "error_type", "error_message"):
        out[col] = got[col].to_numpy()
    out["step_id"] = out["step_id"].astype("Int64")
    stepped = np.bincount(inp.steps["task_index"], minlength=len(inp.tasks)) > 0
    out["stage"] = (out["stage"].astype("string").fillna(NO_STAGE)
                    .where(out["step_id"].notna(), NONE)
                    .where(stepped[failed], NO_STEPS))
    out["error_message"] = out["error_message"].map(_short).astype("string")
    evidence = _evidence(run, out)
    out["evidence_step_ids"] = pd.array([", ".join(map(str, e)) if e is not None else pd.NA
                                         for e in evidence], dtype="string")
    out["in_evidence"] = pd.array([
        pd.NA if e is None or pd.isna(s) else int(s) in e
        for e, s in zip(evidence, out["step_id"], strict=True)], dtype="boolean")
    out = out.astype({c: "string" for c in ("agent", "tool", "error_type")})
    if not inp.several:
        out = out.drop(columns="run_id")
    warn(inp.notes)
    return out


def _failures_frame(table: pd.DataFrame) -> pd.DataFrame:
    require_columns(table, ["difficulty", "stage", "agent"], "first_failures")
    t = table.reset_index(drop=True).assign(task_index=lambda f: np.arange(len(f)))
    tasks = t[["difficulty"]].astype({"difficulty": "string"}).assign(
        run_id=t["run_id"] if "run_id" in t else "")
    return stratify(t.drop(columns=["run_id", "difficulty"], errors="ignore"), tasks)


class _Several:
    def __init__(self, several: bool) -> None:
        self.several, self.notes = several, []


def _inputs(table: pd.DataFrame) -> Inputs:
    """The failed traces of :func:`first_failures`' table as a table's inputs: with repeated
    trials (``trial``), each trace's task is its cluster."""
    keys = [c for c in ("run_id", "task_id", "trial") if c in table]
    tasks = table[keys].reset_index(drop=True)
    return Inputs(tasks, None, None, 1.0, "run_id" in table, [],
                  task_clusters(tasks) if "task_id" in tasks else None)


def first_failure_counts(table: pd.DataFrame, *, ci: float = 0.95) -> pd.DataFrame:
    """First failing steps counted by stage × agent.

    Parameters
    ----------
    table : DataFrame
        :func:`first_failures`'s table.
    ci : float
        Level of the Wilson intervals.

    Returns
    -------
    DataFrame
        Per ``run_id`` (when ``table`` has it) and ``difficulty``, one row per (``stage``,
        ``agent``), most frequent first: ``n`` (failed tasks first failing there),
        ``share`` (of the group's failed tasks) with ``share_ci_low``, ``share_ci_high``.
        Failed tasks without a failing step: stage :data:`NONE`, agent ""; a failing step
        without a stage counts as :data:`NO_STAGE` (never left out).

    Raises
    ------
    ValueError
        A column of ``first_failures``' table missing.

    Notes
    -----
    Shares with Wilson intervals (statsmodels ``proportion_confint(method="wilson")``).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. JASA 22, 209–212.

    Examples
    --------
    >>> t = pd.DataFrame({"difficulty": ["Easy", "Easy", "Hard"],
    ...                   "stage": ["PLAN", "PLAN", "EXECUTE"], "agent": ["P", "P", "E"]})
    >>> first_failure_counts(t).query("difficulty == 'all'")[["stage", "n", "share"]]
         stage  n     share
    0     PLAN  2  0.666667
    1  EXECUTE  1  0.333333
    """
    check_ci(ci)
    s = _failures_frame(table)
    s["agent"] = s["agent"].astype("string").fillna("")
    s["stage"] = s["stage"].astype("string").fillna(NO_STAGE)
    g = s.groupby(["run_id", "difficulty", "stage", "agent"], sort=False, observed=True,
                  dropna=False).size().rename("n")
    g = g.reset_index()
    g["total"] = g.groupby(["run_id", "difficulty"], observed=True)["n"].transform("sum")
    inp = _inputs(table)
    if inp.clusters is None:
        share = pd.DataFrame(wilson(g["n"], g["total"], ci, "share"))
    else:  # each failed trace against every cell of its group: a share of traces
        cells = ["run_id", "difficulty", "stage", "agent"]
        cross = s[["run_id", "difficulty", "task_index", "stage", "agent"]].merge(
            g[cells], on=["run_id", "difficulty"], suffixes=("_t", ""))
        cross["hit"] = (cross["stage_t"] == cross["stage"]) & (cross["agent_t"] == cross["agent"])
        share = g[cells].merge(shares(cross, cells, {"share": ("hit", None)}, inp, ci),
                               on=cells, how="left").drop(columns=cells)
    out = pd.concat([g.drop(columns="total"), share], axis=1)
    return finish(out, inp, sort=["n", "stage", "agent"], ascending=[False, True, True],
                  clustered=True)


def first_failure_agreement(table: pd.DataFrame, *, ci: float = 0.95) -> pd.DataFrame:
    """How often the first failing step is among the replay's evidence steps.

    Parameters
    ----------
    table : DataFrame
        :func:`first_failures`'s table (``in_evidence``).
    ci : float
        Level of the Wilson interval.

    Returns
    -------
    DataFrame
        Per ``run_id`` (when ``table`` has it) and ``difficulty``: ``n_failed``,
        ``n_compared`` (failed tasks with a failing step and evidence step ids),
        ``n_agree``, ``agreement`` with ``agreement_ci_low``, ``agreement_ci_high``.

    Raises
    ------
    ValueError
        A column of ``first_failures``' table missing.

    Notes
    -----
    Shares with Wilson intervals (statsmodels ``proportion_confint(method="wilson")``); on
    repeated trials (``trial``, each trial its own trace) a percentile bootstrap over tasks,
    every failed trial of a drawn task with it (Field & Welsh 2007; 2000 draws, seed 0; the
    ``note`` says so).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. JASA 22, 209–212.
    Field, C. A., Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3), 369–390.

    Examples
    --------
    >>> t = pd.DataFrame({"difficulty": ["Easy"] * 3, "stage": ["PLAN"] * 3, "agent": ["P"] * 3,
    ...                   "in_evidence": pd.array([True, False, None], dtype="boolean")})
    >>> r = first_failure_agreement(t).iloc[0]
    >>> int(r["n_compared"]), int(r["n_agree"]), float(r["agreement"])
    (2, 1, 0.5)
    """
    check_ci(ci)
    require_columns(table, ["in_evidence"], "first_failures")
    s = _failures_frame(table)

    def rows(g: pd.DataFrame) -> dict:
        ev = g["in_evidence"].astype("boolean")
        k, n = int(ev.eq(True).sum()), int(ev.notna().sum())
        w = wilson(k, n, ci, "agreement")
        return {"n_failed": len(g), "n_compared": n, "n_agree": k,
                **{c: float(np.asarray(v).ravel()[0]) for c, v in w.items()}}

    out = per_group(s, ["run_id", "difficulty"], rows) if len(s) else pd.DataFrame(
        {"run_id": [""], "difficulty": [POOLED], "n_failed": [0], "n_compared": [0],
         "n_agree": [0], "agreement": [np.nan], "agreement_ci_low": [np.nan],
         "agreement_ci_high": [np.nan]})
    inp = _inputs(table)
    if inp.clusters is not None and len(s):  # repeated trials: resample tasks
        ev = s["in_evidence"].astype("boolean")
        keys = ["run_id", "difficulty"]
        boot = shares(s.assign(agree=ev.eq(True).fillna(False), compared=ev.notna()), keys,
                      {"agreement": ("agree", "compared")}, inp, ci)
        out = out.drop(columns=["agreement_ci_low", "agreement_ci_high"]).merge(
            boot.drop(columns="agreement"), on=keys, how="left")
    return finish(out, inp, clustered=True)
