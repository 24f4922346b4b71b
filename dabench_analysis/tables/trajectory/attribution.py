"""Attribution you can check: how each failed task's first failing step (and its agent) agrees
with a human label of the decisive mistake, and who acted and who delegated in a multi-agent
trace.

Labels (annotations): the task columns ``mistake_step`` (the labelled step's ``step_id``, the
trajectory's own 1-based numbering), ``mistake_agent`` and optional ``mistake_category``, as the
Who&When reader fills them (:mod:`dabench_analysis.load.groupchat`), or a per-task CSV the user
passes as ``annotations=`` (columns ``task_id``, ``mistake_step``, ``mistake_agent``, optional
``mistake_category``; ``mistake_step`` in the trajectory's ``step_id`` numbering: a 0-based index
into a chat is converted by adding 1 before it is written). Who&When (Zhang et al. 2025,
arXiv:2505.00212) reports step-level and agent-level accuracy of an attribution this way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dabench_analysis.load.run import Run
from dabench_analysis.load.sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import Skipped, in_file, needs
from dabench_analysis.stats.inputs import check_ci
from dabench_analysis.tables.trajectory._inputs import wilson
from dabench_analysis.tables.trajectory.failures import first_failures

#: The measures of :func:`mistake_agreement`, in order, with what each counts.
MEASURES = (("exact step", "first failing step == labelled step"),
            ("within 1 step", "|first failing step - labelled step| <= 1"),
            ("within 3 steps", "|first failing step - labelled step| <= 3"),
            ("agent", "agent of the first failing step == labelled agent"),
            ("earlier", "first failing step before the labelled step"),
            ("later", "first failing step after the labelled step"),
            ("no failing step", "a failed task with no failing step"))


def _labels(run: Run | Runs, annotations) -> pd.DataFrame:
    """task_id (and run_id) -> mistake_step, mistake_agent from the run or ``annotations``."""
    if annotations is None:
        tasks = (pd.concat([r.tasks for r in run.runs]) if isinstance(run, Runs) else run.tasks)
        if "mistake_step" not in tasks:
            raise Skipped("needs labels: the task column `mistake_step` or annotations=",
                          missing=("mistake_step",))
        cols = [c for c in ("run_id", "task_id", "trial", "mistake_step", "mistake_agent")
                if c in tasks]
        return tasks[cols].copy()
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
    return lab[[c for c in ("task_id", "mistake_step", "mistake_agent") if c in lab]]


def labelled_failures(run: Run | Runs, *, annotations=None,
                      threshold: float | None = None) -> pd.DataFrame:
    """Each failed, labelled task: its first failing step beside its labelled mistake.

    Parameters
    ----------
    run : Run or Runs
        As :func:`~dabench_analysis.tables.trajectory.first_failures`; the labels from its task
        columns ``mistake_step``, ``mistake_agent`` unless ``annotations`` is given.
    annotations : DataFrame or path, optional
        Per-task labels: ``task_id``, ``mistake_step`` (the trajectory's ``step_id``),
        ``mistake_agent`` (optional), one row per task.
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
        No labels in the run and no ``annotations``.
    ValueError
        ``annotations`` without ``task_id`` or ``mistake_step``, or a task labelled twice.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> lf = labelled_failures(da.load_run("tests/data/harness/whowhen/Algorithm-Generated"))
    >>> lf[["task_id", "step_id", "mistake_step"]].head(1).values.tolist()
    [['3', 4, 5]]
    """
    lab = _labels(run, annotations)
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


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "success"), uses=("mistake_step", "mistake_agent", "mistake_category"), trials="any")
def mistake_agreement(run: Run | Runs, *, annotations=None, threshold: float | None = None,
                      ci: float = 0.95) -> pd.DataFrame:
    """How the first failing step and its agent agree with the labelled decisive mistake.

    Parameters
    ----------
    run, annotations, threshold
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
    Skipped, ValueError
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
    lf = labelled_failures(run, annotations=annotations, threshold=threshold)
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


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "success"), uses=("mistake_step",), trials="any")
def mistake_offsets(run: Run | Runs, *, annotations=None,
                    threshold: float | None = None) -> pd.DataFrame:
    """The distribution of (first failing step − labelled mistake step) over failed tasks.

    Parameters
    ----------
    run, annotations, threshold
        As :func:`labelled_failures`.

    Returns
    -------
    DataFrame
        One row per offset (ascending; a last row ``offset`` <NA> for tasks without a failing
        step): ``offset``, ``n_tasks``, ``share`` (of the failed labelled tasks).

    Raises
    ------
    Skipped, ValueError
        As :func:`labelled_failures`.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> mo = mistake_offsets(da.load_run("tests/data/harness/whowhen/Algorithm-Generated"))
    >>> int(mo["n_tasks"].sum())
    4
    """
    lf = labelled_failures(run, annotations=annotations, threshold=threshold)
    counts = lf["offset"].value_counts(dropna=False)
    out = pd.DataFrame({"offset": pd.array(counts.index, dtype="Int64"),
                        "n_tasks": counts.to_numpy(dtype="int64")})
    out = out.sort_values("offset", na_position="last", kind="stable").reset_index(drop=True)
    out["share"] = out["n_tasks"] / max(len(lf), 1)
    return out if len(out) else out.assign(share=np.array([], dtype=float))
