"""A run's headline numbers (what a report writes to ``summary.json``), for one run or, with
``by=``, one row per run.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import check_ci
from dabench_analysis.stats.recorded import cost_recorded
from dabench_analysis.tables._common import TasksLike, correct_mask, takes_run


@needs("task_id", "final_score", trials="any")
@takes_run(grouped=True)
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
        Success threshold on ``final_score``, in (0, 1]; default :data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`
        (0.8).
    by : str, sequence of str or None
        None (default): one dict for all rows; when they hold several runs, the runs are
        pooled with a :class:`~dabench_analysis.tables.PooledRunsWarning` naming them. A column
        name such as ``"run_id"``: a DataFrame with one row per group (sorted), the ``by``
        columns first, then one column per key of the dict.

    Returns
    -------
    dict (DataFrame with ``by``)
        ``n_tasks`` (rows), ``success_threshold`` (the threshold used), ``answer_accuracy``
        (share of scored tasks with ``final_score >= threshold``, in [0, 1]; with repeated
        trials, the mean over tasks of each task's share) with ``answer_accuracy_ci_low/high``
        and ``answer_accuracy_ci_method`` (Wilson; over tasks with repeated trials: all four
        from :func:`answer_accuracy`, the one estimate every page shows),
        ``mean_final_score`` with its logit-t interval ``mean_final_score_ci_low/high`` and
        ``mean_final_score_ci_method``, ``execution_success_rate``, ``mean_runtime_s``
        (seconds) and ``mean_tokens`` with t-intervals (``*_ci_low``, ``*_ci_high``; None
        when the column is absent, or all missing or all 0: not recorded,
        :func:`~dabench_analysis.stats.recorded.cost_recorded`), ``n_failed``, and
        ``not_recorded`` (the columns present but not recorded) when there are any; when a
        trial ended in an infrastructure error (:func:`dabench_analysis.schema.errored`), the
        labelled range right after the accuracy: ``n_errored``,
        ``answer_accuracy_errors_as_failures`` and ``answer_accuracy_errors_as_successes``,
        each with ``_ci_low`` / ``_ci_high``, and ``answer_accuracy_errors_note``
        (:func:`dabench_analysis.tables.failure_bounds`).

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


#: Bootstrap of the accuracy over tasks with repeated trials: the defaults of
#: :func:`dabench_analysis.tables.trials.pass_k`, whose pass@1 it equals.
N_BOOT, BOOT_SEED = 2000, 0
_ACCURACY = ("answer_accuracy", "answer_accuracy_ci_low", "answer_accuracy_ci_high",
             "answer_accuracy_ci_method")


@needs("final_score", trials="any")
@takes_run(trials=True)
def answer_accuracy(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD,
                    ci: float = 0.95, n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> dict:
    """A run's answer accuracy with its interval: the one estimate every page shows (report
    header, key numbers, ``summary.json``, ``index.html``, the leaderboard, notebook displays).

    Parameters
    ----------
    tasks : DataFrame or Run
        Rows with ``final_score`` ([0, 1]); ``task_id`` (and ``run_id``) when present: the rows
        of one task (one run's task) are its trials. A missing score is not a trial.
    threshold : float
        A trial is correct when ``final_score >= threshold``; default 0.8.
    ci : float
        Level of the interval.
    n_boot, seed : int
        Bootstrap resamples and seed, with repeated trials (default: those of
        :func:`dabench_analysis.tables.trials.pass_k`).

    Returns
    -------
    dict
        ``answer_accuracy`` (the mean over tasks of each task's share of correct trials,
        :func:`dabench_analysis.schema.task_success`; None without a scored row),
        ``answer_accuracy_ci_low``, ``answer_accuracy_ci_high``, ``answer_accuracy_ci_method``
        (``"Wilson"``, or ``"BCa bootstrap over tasks (trials averaged within a task)"``),
        ``n_tasks`` (tasks with a scored trial), ``n_trials`` (scored rows).

    Raises
    ------
    ValueError
        No ``final_score``; a threshold outside (0, 1] or ``ci`` outside (0, 1).

    Notes
    -----
    One trial per task: the Wilson score interval of k correct of n tasks (Wilson 1927; R
    ``prop.test(k, n, correct = FALSE)``), as Table 2 and the leaderboard. Repeated trials
    (Inspect epochs, tau-bench trials): the trials of a task are not independent, so the
    interval is over tasks, never Wilson over trials: the BCa bootstrap
    (:func:`dabench_analysis.stats.bootstrap_ci`, ``scipy.stats.bootstrap``) of the mean of
    the task means, the tasks in first appearance order; this is pass@1 with its interval in
    :func:`dabench_analysis.tables.trials.pass_k` (Yao et al. 2024), the key numbers' interval
    since repeated trials were read. All task means equal: the interval is not estimable
    (NaN, with a warning), never zero-width.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. JASA 22(158), 209–212. Efron, B., Tibshirani, R. J. (1993). An Introduction to
    the Bootstrap, ch. 14. Yao, S. et al. (2024). tau-bench. arXiv:2406.12045.

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "b", "c", "d"], "final_score": [1.0, 0.9, 0.0, 0.5]})
    >>> a = answer_accuracy(t)
    >>> a["answer_accuracy"], round(a["answer_accuracy_ci_low"], 3), a["answer_accuracy_ci_method"]
    (0.5, 0.15, 'Wilson')
    >>> t = pd.DataFrame({"task_id": list("aabbcc"), "trial": [1, 2] * 3,
    ...                   "final_score": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]})
    >>> a = answer_accuracy(t, n_boot=200)
    >>> a["answer_accuracy"], a["n_tasks"], a["n_trials"]
    (0.5, 3, 6)
    """
    check_ci(ci)
    return _accuracy(tasks, threshold, ci, n_boot, seed)


def _accuracy(tasks: pd.DataFrame, threshold: float, ci: float = 0.95, n_boot: int = N_BOOT,
              seed: int = BOOT_SEED) -> dict:
    key = tasks["task_id"].astype("string") if "task_id" in tasks else None
    if key is not None and "run_id" in tasks:
        key = tasks["run_id"].astype("string") + "\x1f" + key
    per = schema.task_success(tasks["final_score"], key, threshold)
    n_rows = int(tasks["final_score"].notna().sum())
    out = dict.fromkeys(_ACCURACY) | {"n_tasks": len(per), "n_trials": n_rows}
    if per.empty:
        return out
    if len(per) == n_rows:  # one scored trial per task: k of n
        k = int(per.sum())
        w = stats.proportion_ci(k, len(per), ci=ci).iloc[0]
        return out | {"answer_accuracy": k / len(per), "answer_accuracy_ci_low":
                      float(w["ci_low"]), "answer_accuracy_ci_high": float(w["ci_high"]),
                      "answer_accuracy_ci_method": "Wilson"}
    b = stats.bootstrap_ci(per.to_numpy(), n_resamples=n_boot, seed=seed, ci=ci).iloc[0]
    how = "BCa" if b["method"] == "bca" else str(b["method"])
    return out | {"answer_accuracy": float(per.mean()),
                  "answer_accuracy_ci_low": float(b["ci_low"]),
                  "answer_accuracy_ci_high": float(b["ci_high"]),
                  "answer_accuracy_ci_method": f"{how} bootstrap over tasks (trials averaged "
                                               "within a task)"}


def _key_numbers(tasks: pd.DataFrame, threshold: float) -> dict:
    from dabench_analysis.tables._errored import _error_range  # it uses answer_accuracy
    correct = correct_mask(tasks, threshold=threshold).dropna().astype(bool)
    acc = _accuracy(tasks, threshold)
    score = stats.describe(tasks, ["final_score"]).iloc[0]
    out = {
        "n_tasks": int(len(tasks)),
        "success_threshold": threshold,
        **{k: acc[k] for k in _ACCURACY},
        **_error_range(tasks, threshold),  # failure bounds beside the headline, when errored
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
        row = (stats.describe(tasks[[col]].astype("float64"), [col]).iloc[0] if recorded
               else {"mean": None, "ci_low": None, "ci_high": None})
        out |= {key: _num(row["mean"]), f"{key}_ci_low": _num(row["ci_low"]),
                f"{key}_ci_high": _num(row["ci_high"])}
    return out | {"n_failed": int((~correct).sum())} | (
        {"not_recorded": unrecorded} if unrecorded else {})


def _num(v) -> float | None:
    return None if v is None else float(v)
