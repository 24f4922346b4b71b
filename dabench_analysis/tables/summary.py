"""A run's headline numbers (what a report writes to ``summary.json``), for one run or, with
``by=``, one row per run.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.stats.recorded import cost_recorded
from dabench_analysis.tables.common import TasksLike, correct_mask, takes_run


@takes_run(needs=["task_id", "final_score"], grouped=True)
def key_numbers(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD,
                by: str | Sequence[str] | None = None) -> dict | pd.DataFrame:
    """The run's headline numbers, as written to a report's ``summary.json``.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``task_id`` and ``final_score`` ([0, 1]); ``execution_success``,
        ``execution_time`` (s) and ``total_tokens`` are optional (absent: their numbers are
        None). A Run or Runs gives its ``tasks``.
    threshold : float
        Success threshold on ``final_score``, in (0, 1]; default: a Run's
        ``success_threshold``, for a frame :data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`
        (0.8).
    by : str, sequence of str or None
        None (default): one dict for all rows; when they hold several runs, the runs are
        pooled with a :class:`~dabench_analysis.tables.PooledRunsWarning` naming them. A column
        name such as ``"run_id"``: a DataFrame with one row per group (sorted), the ``by``
        columns first, then one column per key of the dict.

    Returns
    -------
    dict (DataFrame with ``by``)
        ``n_tasks``, ``success_threshold`` (the threshold used), ``answer_accuracy`` (share of
        scored tasks with ``final_score >= threshold``, in [0, 1]) with Wilson
        ``answer_accuracy_ci_low/high``,
        ``mean_final_score`` with its logit-t interval ``mean_final_score_ci_low/high`` and
        ``mean_final_score_ci_method``, ``execution_success_rate``, ``mean_runtime_s``
        (seconds) and ``mean_tokens`` with t-intervals (``*_ci_low``, ``*_ci_high``; None
        when the column is absent, or all missing or all 0: not recorded,
        :func:`~dabench_analysis.stats.recorded.cost_recorded`), ``n_failed``, and
        ``not_recorded`` (the columns present but not recorded) when there are any.

    Raises
    ------
    ValueError
        A missing column or a ``threshold`` outside (0, 1].

    Notes
    -----
    Intervals as in :func:`dabench_analysis.tables.difficulty_breakdown`: Wilson for the
    accuracy k/n, (p̂ + z²/2n ± z·sqrt(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n) with
    z = Φ⁻¹((1 + 0.95)/2); logit t for the mean score; t for seconds and tokens.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. Journal of the American Statistical Association 22(158), 209–212.

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "b"], "final_score": [1.0, 0.0],
    ...                   "execution_success": [True, True], "execution_time": [1.0, 3.0],
    ...                   "total_tokens": [10, 30]})
    >>> key_numbers(t)["answer_accuracy"], key_numbers(t)["n_failed"]
    (0.5, 1)
    >>> two = pd.concat([t.assign(run_id="r1"), t.assign(run_id="r2", final_score=1.0)])
    >>> key_numbers(two, by="run_id")[["run_id", "n_tasks", "answer_accuracy"]]
      run_id  n_tasks  answer_accuracy
    0     r1        2              0.5
    1     r2        2              1.0
    """
    return _key_numbers(tasks, threshold)


def _key_numbers(tasks: pd.DataFrame, threshold: float) -> dict:
    correct = correct_mask(tasks, threshold=threshold).dropna().astype(bool)
    acc = stats.proportion_ci(int(correct.sum()), len(correct)) if len(correct) else None
    score = stats.describe(tasks, ["final_score"]).iloc[0]
    out = {
        "n_tasks": int(len(tasks)),
        "success_threshold": threshold,
        "answer_accuracy": float(correct.mean()) if len(correct) else None,
        "answer_accuracy_ci_low": float(acc["ci_low"].iloc[0]) if acc is not None else None,
        "answer_accuracy_ci_high": float(acc["ci_high"].iloc[0]) if acc is not None else None,
        "mean_final_score": float(score["mean"]),
        "mean_final_score_ci_low": float(score["ci_low"]),
        "mean_final_score_ci_high": float(score["ci_high"]),
        "mean_final_score_ci_method": score["method"],
        "execution_success_rate": None,
    }
    if "execution_success" in tasks:
        ex = tasks["execution_success"].astype("boolean").dropna().astype(bool)
        out["execution_success_rate"] = float(ex.mean()) if len(ex) else None
    unrecorded = []
    for col, key in (("execution_time", "mean_runtime_s"), ("total_tokens", "mean_tokens")):
        recorded = bool(cost_recorded(tasks, col, by=None).iloc[0])
        unrecorded += [col] if col in tasks and not recorded else []
        row = (stats.describe(tasks.astype({col: "float64"}), [col]).iloc[0] if recorded
               else {"mean": None, "ci_low": None, "ci_high": None})
        out |= {key: _num(row["mean"]), f"{key}_ci_low": _num(row["ci_low"]),
                f"{key}_ci_high": _num(row["ci_high"])}
    return out | {"n_failed": int((~correct).sum())} | (
        {"not_recorded": unrecorded} if unrecorded else {})


def _num(v) -> float | None:
    return None if v is None else float(v)
