"""Attribution you can check: how each failed task's first failing step (and its agent) agrees
with a human label of the decisive mistake, and who acted and who delegated in a multi-agent
trace.

Labels (annotations): the task columns ``mistake_step`` (the labelled step's ``step_id``, the
trajectory's own 1-based numbering), ``mistake_agent`` and optional ``mistake_category``, as the
Who&When reader fills them (:mod:`dabench_analysis.harnesses._groupchat`), or a per-task CSV the user
adds with :func:`with_labels` (columns ``task_id``, ``mistake_step``, ``mistake_agent``, optional
``mistake_category``; ``mistake_step`` in the trajectory's ``step_id`` numbering: a 0-based index
into a chat is converted by adding 1 before it is written). Who&When (Zhang et al. 2025,
arXiv:2505.00212) reports step-level and agent-level accuracy of an attribution this way.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd

from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._inputs import check_ci
from dabench_analysis.trajectory._inputs import wilson
from dabench_analysis.trajectory.failures import first_failures

#: The label columns (task columns of the catalogue).
LABELS = ("mistake_step", "mistake_agent", "mistake_category")
#: The measures of :func:`mistake_agreement`, in order, with what each counts.
MEASURES = (("exact step", "first failing step == labelled step"),
            ("within 1 step", "|first failing step - labelled step| <= 1"),
            ("within 3 steps", "|first failing step - labelled step| <= 3"),
            ("agent", "agent of the first failing step == labelled agent"),
            ("earlier", "first failing step before the labelled step"),
            ("later", "first failing step after the labelled step"),
            ("no failing step", "a failed task with no failing step"))


def with_labels(run: Run, annotations) -> Run:
    """``run`` with its tasks' labels taken from a per-task table (the run's own labels, if
    any, replaced).

    Parameters
    ----------
    run : Run
    annotations : DataFrame or path of a CSV
        ``task_id``, ``mistake_step`` (the trajectory's ``step_id`` numbering, 1-based),
        optional ``mistake_agent``, ``mistake_category``; one row per task. A task without a
        row is unlabelled.

    Returns
    -------
    Run
        A copy whose ``tasks`` carry ``mistake_step``, ``mistake_agent``, ``mistake_category``.

    Raises
    ------
    ValueError
        No ``task_id`` or ``mistake_step`` column, a task labelled twice, or a label naming a
        task the run does not have.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> run = da.load_run("tests/data/harness/whowhen/Algorithm-Generated")
    >>> lab = pd.DataFrame({"task_id": ["3"], "mistake_step": [4]})
    >>> int(with_labels(run, lab).tasks["mistake_step"].notna().sum())
    1
    """
    lab = (pd.read_csv(annotations, dtype={"task_id": str})
           if isinstance(annotations, str | Path) else annotations.copy())
    missing = [c for c in ("task_id", "mistake_step") if c not in lab]
    if missing:
        raise ValueError(f"annotations lack the column(s) {missing}: a per-task table with "
                         "task_id, mistake_step (the step_id numbering), mistake_agent")
    lab["task_id"] = lab["task_id"].astype(str)
    if lab["task_id"].duplicated().any():
        twice = lab["task_id"][lab["task_id"].duplicated()].iloc[0]
        raise ValueError(f"annotations: task_id {twice!r} is labelled twice")
    unknown = sorted(set(lab["task_id"]) - set(run.tasks["task_id"].astype(str)))
    if unknown:
        raise ValueError(f"annotations name task(s) the run does not have: {unknown[:5]}")
    cols = [c for c in LABELS if c in lab]
    tasks = run.tasks.drop(columns=[c for c in LABELS if c in run.tasks])
    tasks = tasks.merge(lab[["task_id", *cols]], on="task_id", how="left", validate="many_to_one")
    tasks["mistake_step"] = pd.to_numeric(tasks["mistake_step"], errors="coerce").astype("Int64")
    for c in LABELS[1:]:
        tasks[c] = tasks[c].astype("string") if c in tasks else pd.array(
            [pd.NA] * len(tasks), dtype="string")
    out = copy.copy(run)  # shares the loaded steps and calls (another harness's are not on disk)
    out.tasks = tasks.set_axis(run.tasks.index)
    return out


@needs("mistake_step", files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id",
       "step_id", "success"), uses=("mistake_agent",), trials="any")
def labelled_failures(run: Run | Runs, *, threshold: float | None = None) -> pd.DataFrame:
    """Each failed, labelled task: its first failing step beside its labelled mistake.

    Parameters
    ----------
    run : Run or Runs
        As :func:`~dabench_analysis.trajectory.first_failures`, with the labels in its
        task columns ``mistake_step``, ``mistake_agent`` (the Who&When reader fills them; for
        any run, :func:`with_labels` adds them from a per-task CSV).
    threshold : float, optional
        A task failed when ``final_score < threshold``; default the run's.

    Returns
    -------
    DataFrame
        :func:`first_failures`'s rows with a labelled ``mistake_step`` plus ``mistake_step``,
        ``mistake_agent``, ``offset`` (first failing step − labelled step; <NA> without a
        failing step).

    Raises
    ------
    Skipped
        No ``mistake_step`` column in the run.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> lf = labelled_failures(da.load_run("tests/data/harness/whowhen/Algorithm-Generated"))
    >>> lf[["task_id", "step_id", "mistake_step"]].head(1).values.tolist()
    [['3', 4, 5]]
    """
    runs = run.runs if isinstance(run, Runs) else [run]
    lab = pd.concat([r.tasks.assign(run_id=r.run_id) if "run_id" not in r.tasks else r.tasks
                     for r in runs])
    lab = lab[[c for c in ("run_id", "task_id", "trial", "mistake_step", "mistake_agent")
               if c in lab]]
    ff = first_failures(run, threshold=threshold)
    keys = [k for k in ("run_id", "task_id", "trial") if k in ff and k in lab]
    lab = lab.drop_duplicates(keys)
    out = ff.merge(lab, on=keys, how="inner", validate="many_to_one")
    out["mistake_step"] = pd.to_numeric(out["mistake_step"], errors="coerce").astype("Int64")
    out = out[out["mistake_step"].notna()].reset_index(drop=True)
    if "mistake_agent" not in out:
        out["mistake_agent"] = pd.array([pd.NA] * len(out), dtype="string")
    out["offset"] = (out["step_id"] - out["mistake_step"]).astype("Int64")
    return out


@needs("mistake_step", files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id",
       "step_id", "success"), uses=("mistake_agent",), trials="any")
def mistake_agreement(run: Run | Runs, *, threshold: float | None = None,
                      ci: float = 0.95) -> pd.DataFrame:
    """How the first failing step and its agent agree with the labelled decisive mistake.

    Parameters
    ----------
    run, threshold
        As :func:`labelled_failures`.
    ci : float
        Level of the Wilson intervals.

    Returns
    -------
    DataFrame
        One row per measure of :data:`MEASURES` (``exact step``, ``within 1 step``,
        ``within 3 steps``, ``agent``, ``earlier``, ``later``, ``no failing step``):
        ``measure``, ``k``, ``n`` (failed labelled tasks; for ``agent``: those with a labelled
        agent), ``share`` with ``share_ci_low``, ``share_ci_high`` (Wilson), ``definition``.

    Raises
    ------
    Skipped
        As :func:`labelled_failures`.

    Notes
    -----
    A task without a failing step counts as disagreeing in every step measure (its first
    failure is nowhere); the agent measure compares the agent of the first failing step.
    Not :func:`first_failure_agreement`, which compares with the replay's evidence steps.
    The distribution of the offsets: :func:`mistake_offsets`.

    References
    ----------
    Zhang, S. et al. (2025). Which agent causes task failures and when? arXiv:2505.00212.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> ma = mistake_agreement(da.load_run("tests/data/harness/whowhen/Algorithm-Generated"))
    >>> ma.loc[0, "measure"], int(ma.loc[0, "k"]), int(ma.loc[0, "n"])
    ('exact step', 0, 4)
    """
    check_ci(ci)
    lf = labelled_failures(run, threshold=threshold)
    off = lf["offset"].astype("Float64")
    has = off.notna()
    agent_known = lf["mistake_agent"].notna()
    same_agent = (lf["agent"].astype("string") == lf["mistake_agent"].astype("string"))
    k = [int((off == 0).sum()), int((off.abs() <= 1).sum()), int((off.abs() <= 3).sum()),
         int((same_agent.fillna(False) & agent_known).sum()), int((off < 0).sum()),
         int((off > 0).sum()), int((~has).sum())]
    n = [len(lf)] * 3 + [int(agent_known.sum())] + [len(lf)] * 3
    out = pd.DataFrame({"measure": [m for m, _ in MEASURES], "k": k, "n": n})
    out = pd.concat([out, pd.DataFrame(wilson(out["k"], out["n"], ci, "share"))], axis=1)
    out["definition"] = [d for _, d in MEASURES]
    return out


@needs("mistake_step", files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id",
       "step_id", "success"), trials="any")
def mistake_offsets(run: Run | Runs, *, threshold: float | None = None) -> pd.DataFrame:
    """The distribution of (first failing step − labelled mistake step) over failed tasks.

    Parameters
    ----------
    run, threshold
        As :func:`labelled_failures`.

    Returns
    -------
    DataFrame
        One row per offset (ascending; a last row ``offset`` <NA> for tasks without a failing
        step): ``offset``, ``n_tasks``, ``share`` (of the failed labelled tasks).

    Raises
    ------
    Skipped
        As :func:`labelled_failures`.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> mo = mistake_offsets(da.load_run("tests/data/harness/whowhen/Algorithm-Generated"))
    >>> int(mo["n_tasks"].sum())
    4
    """
    lf = labelled_failures(run, threshold=threshold)
    counts = lf["offset"].value_counts(dropna=False)
    out = pd.DataFrame({"offset": pd.array(counts.index, dtype="Int64"),
                        "n_tasks": counts.to_numpy(dtype="int64")})
    out = out.sort_values("offset", na_position="last", kind="stable").reset_index(drop=True)
    out["share"] = out["n_tasks"] / max(len(lf), 1)
    return out if len(out) else out.assign(share=np.array([], dtype=float))
