"""The one outcome rule: a task is *correct* when ``final_score >= threshold``, the analysis'
success threshold (an explicit parameter of each table, figure and report; default 0.8).

Every table, summary, paragraph, comparison, sweep and the run-quality score calls
:func:`correct`; no other module compares ``final_score`` with a threshold. (The validation
rules that the eval-v2 guide itself defines with 0.8 — ``final_answer_correct``,
``outcome_status``, ``confidence_correct`` — check what the harness wrote and use
:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD` through their check, not the analysis'
threshold.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.schema.columns import SUCCESS_THRESHOLD, check_threshold


def correct(scores, threshold: float = SUCCESS_THRESHOLD) -> pd.Series:
    """Answer correctness per task: ``score >= threshold``; a missing score stays <NA>.

    Parameters
    ----------
    scores : Series or array-like of float
        ``final_score`` per task, on the [0, 1] scale (NaN or <NA> where missing).
    threshold : float
        Success threshold in (0, 1]; default :data:`SUCCESS_THRESHOLD` (0.8, seed 000
        §Breakdown by Difficulty).

    Returns
    -------
    Series of pandas ``boolean``
        Same index as ``scores`` (a RangeIndex for arrays); <NA> where the score is missing.

    Raises
    ------
    ValueError
        A threshold outside (0, 1] (:func:`check_threshold`), or scores that are not numbers.

    Examples
    --------
    >>> correct(pd.Series([0.9, 0.8, 0.5, None])).tolist()
    [True, True, False, <NA>]
    >>> correct([0.7, 0.75], threshold=0.7).tolist()
    [True, True]
    """
    t = check_threshold(threshold)
    s = scores if isinstance(scores, pd.Series) else pd.Series(scores)
    try:
        values = pd.to_numeric(s, errors="raise").astype("Float64")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"final_score must be numbers on the [0, 1] scale: {exc}") from None
    arr = values.to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore"):
        out = pd.array(arr >= t, dtype="boolean")
    out[np.isnan(arr)] = pd.NA
    return pd.Series(out, index=s.index, name=s.name)


def task_success(scores, tasks=None, threshold: float = SUCCESS_THRESHOLD) -> pd.Series:
    """Each task's share of correct answers over its scored trials: the unit every answer
    accuracy is a mean of (trials averaged within a task first).

    Parameters
    ----------
    scores : Series or array-like of float
        ``final_score`` per row ([0, 1]; missing: the row is not scored).
    tasks : Series or array-like, optional
        The task of each row (``task_id``; with several runs stacked, a run-and-task key).
        None: every row is its own task.
    threshold : float
        Success threshold (:func:`correct`).

    Returns
    -------
    Series of float
        One value per task with at least one scored row, in [0, 1], in first appearance
        order (indexed by the task); with one trial per task its values are 1.0 and 0.0.

    Raises
    ------
    ValueError
        As :func:`correct`; ``tasks`` of another length than ``scores``.

    Notes
    -----
    The run's answer accuracy is the mean of these values: with repeated trials (Inspect
    epochs, tau-bench trials) it is pass@1 averaged over tasks (Yao et al. 2024, §4), so a
    task tried four times weighs as much as one tried once; with one row per task it is the
    share of correct tasks.

    Examples
    --------
    >>> task_success([1.0, 0.0, 0.9, 0.9, None], ["a", "a", "b", "b", "c"]).to_dict()
    {'a': 0.5, 'b': 1.0}
    >>> float(task_success([1.0, 0.0, 0.9, 0.9, 0.0], ["a", "a", "b", "b", "c"]).mean())
    0.5
    """
    ok = correct(scores, threshold)
    key = pd.Series(range(len(ok)), index=ok.index) if tasks is None else (
        tasks if isinstance(tasks, pd.Series) else pd.Series(list(tasks)))
    if len(key) != len(ok):
        raise ValueError(f"tasks has {len(key)} values for {len(ok)} scores")
    flags = ok.to_numpy(dtype="float64", na_value=np.nan)
    frame = pd.DataFrame({"task": key.to_numpy(), "ok": flags})
    frame = frame[~np.isnan(flags)]
    per = frame.groupby("task", sort=False, dropna=False)["ok"].mean()  # a null key: one task
    return per.rename_axis(None).rename("success")


#: Values of a ``status`` column that mean an infrastructure error (compared case-insensitively).
ERROR_STATUSES = frozenset({"error", "errored"})


def errored(tasks: pd.DataFrame) -> pd.Series:
    """Which trials ended in an infrastructure error (not a wrong answer): the one definition
    every failure bound, key number and leaderboard uses.

    Parameters
    ----------
    tasks : DataFrame
        Task rows (one per task, or per task and trial); the columns read are ``error`` and
        ``status`` when present (neither: no row errored).

    Returns
    -------
    Series of bool
        Same index as ``tasks``; True where the trial errored.

    Notes
    -----
    Sources, per harness:

    * Inspect logs: the sample's ``error`` (its message; the reader writes it to ``error``,
      :mod:`dabench_analysis.harnesses._inspect_log`); such a sample usually has no score.
    * tau-bench: a record whose ``info`` holds ``error`` (tau-bench writes ``reward`` 0 and
      ``info = {"error": ..., "traceback": ...}`` when a task raised); the reader writes it
      to ``error`` (:mod:`dabench_analysis.harnesses._taubench`).
    * A per-task table (CSV, JSON lines, Parquet): an ``error`` column (a non-empty message,
      or a true flag: ``1``/``true``/``yes``), or a ``status`` column whose value is ``error``
      or ``errored`` (any case; PASS/FAIL/ERROR/HALTED as research-eval writes it: only
      ERROR; HALTED is a stopped agent, an answer).
    * eval-v2 ``tasks.csv`` has no error state in its catalogue (``outcome_status`` is
      correct / partial / failed: an answer's grade, not an infrastructure state); a run's
      file with an ``error`` or ``status`` column is read as a table above.

    An empty message, ``0``, ``false``, ``no`` and missing values are not errors.

    Examples
    --------
    >>> t = pd.DataFrame({"error": [None, "RateLimitError: 429", "", "0"],
    ...                   "status": ["PASS", "FAIL", "ERROR", "HALTED"]})
    >>> errored(t).tolist()
    [False, True, True, False]
    """
    out = pd.Series(False, index=tasks.index)
    if "error" in tasks:
        e = tasks["error"]
        if pd.api.types.is_bool_dtype(e) or pd.api.types.is_numeric_dtype(e):
            out |= pd.to_numeric(e, errors="coerce").fillna(0).astype(float).to_numpy() != 0
        else:
            text = e.astype("string").str.strip().str.lower()
            out |= (text.notna() & ~text.isin(["", "0", "false", "no", "none", "nan"])
                    ).fillna(False).to_numpy(bool)
    if "status" in tasks:
        s = tasks["status"].astype("string").str.strip().str.lower()
        out |= s.isin(ERROR_STATUSES).fillna(False).to_numpy(bool)
    return out
