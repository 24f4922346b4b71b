"""Failure bounds: a run's answer accuracy when part of its trials ended in an infrastructure
error, three ways (errored trials as failures, as successes, left out), each with its interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema.needs import Skipped, in_report, needs
from dabench_analysis.tables._common import TasksLike, takes_run
from dabench_analysis.tables._summary import answer_accuracy

#: The three treatments of an errored trial, in the order of the table, and their labels.
TREATMENTS = {"as_failures": "errors as failures", "as_successes": "errors as successes",
              "left_out": "errors left out"}


def _treated(tasks: pd.DataFrame, failed: np.ndarray, how: str) -> pd.DataFrame:
    """The rows with every errored trial scored 0 (``as_failures``), 1 (``as_successes``), or
    dropped (``left_out``)."""
    if how == "left_out":
        return tasks[~failed]
    score = tasks["final_score"].astype("float64").to_numpy(copy=True)
    score[failed] = 0.0 if how == "as_failures" else 1.0
    return tasks.assign(final_score=score)


@needs("final_score", trials="any")
@takes_run(trials=True)
def failure_bounds(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD,
                   ci: float = 0.95, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Answer accuracy with errored trials counted as failures, as successes, and left out.

    Parameters
    ----------
    tasks : DataFrame or Run
        One run's task rows with ``final_score`` ([0, 1]), ``task_id`` (and ``trial``), and
        the error state :func:`dabench_analysis.schema.errored` reads (``error``, ``status``).
    threshold : float
        A trial is correct when ``final_score >= threshold``; default 0.8.
    ci : float
        Level of each interval.
    n_boot, seed : int
        Bootstrap settings of :func:`dabench_analysis.tables.answer_accuracy` (repeated
        trials only).

    Returns
    -------
    DataFrame
        Three rows, ``errors`` = ``as_failures``, ``as_successes``, ``left_out``, with
        ``label``, ``estimate``, ``ci_low``, ``ci_high``, ``method`` (the interval's),
        ``n_tasks``, ``n_trials`` (scored trials counted) and ``n_errored`` (errored trials in
        the run, the same in every row).

    Raises
    ------
    ValueError
        No ``final_score``; ``threshold`` or ``ci`` out of range.
    Skipped
        In a report section only, a run without an errored trial (three equal rows).

    Notes
    -----
    Each row is :func:`dabench_analysis.tables.answer_accuracy` (the one accuracy: Wilson
    with one trial per task, the BCa bootstrap over tasks with repeated trials) of the run
    with every errored trial's ``final_score`` set to 0 (failures: the lower bound), to 1
    (successes: the upper bound), or its rows dropped (the errors missing completely at
    random). Scores an errored trial did record are overwritten in the two bounds. Without an
    errored trial the three rows are equal. The bounds are the worst and best cases of the
    missing outcomes (Manski 1989): whatever the errored trials would have given, the
    accuracy lies between the first two estimates.

    References
    ----------
    Manski, C. F. (1989). Anatomy of the selection problem. Journal of Human Resources 24(3),
    343–360.

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": list("abcde"), "final_score": [1.0, 1.0, 0.0, None, 1.0],
    ...                   "error": [None, None, None, "RateLimitError", None]})
    >>> failure_bounds(t)[["errors", "estimate", "n_trials", "n_errored"]]
             errors  estimate  n_trials  n_errored
    0   as_failures      0.60         5          1
    1  as_successes      0.80         5          1
    2      left_out      0.75         4          1
    """
    failed = schema.errored(tasks).to_numpy(bool)
    if not failed.any() and in_report():
        raise Skipped("no trial ended in an infrastructure error (an `error`, a `status` of "
                      "error, a record whose `info` holds one): the three accuracies would equal "
                      "the headline one", missing=["an errored trial"])
    rows = []
    for how, label in TREATMENTS.items():
        a = answer_accuracy(_treated(tasks, failed, how), threshold=threshold, ci=ci,
                            n_boot=n_boot, seed=seed)
        rows.append({"errors": how, "label": label, "estimate": a["answer_accuracy"],
                     "ci_low": a["answer_accuracy_ci_low"],
                     "ci_high": a["answer_accuracy_ci_high"],
                     "method": a["answer_accuracy_ci_method"], "n_tasks": a["n_tasks"],
                     "n_trials": a["n_trials"], "n_errored": int(failed.sum())})
    return pd.DataFrame(rows).astype({"estimate": "float64", "ci_low": "float64",
                                      "ci_high": "float64"})


def _bounds(b: pd.DataFrame) -> dict:
    """The two bounds of a :func:`failure_bounds` table, each with its interval."""
    b = b.set_index("errors")
    out = {"n_errored": int(b["n_errored"].iloc[0])}
    for how in ("as_failures", "as_successes"):
        key = f"answer_accuracy_errors_{how}"
        out |= {key: float(b.at[how, "estimate"]), f"{key}_ci_low": float(b.at[how, "ci_low"]),
                f"{key}_ci_high": float(b.at[how, "ci_high"])}
    return out


def _error_range(tasks: pd.DataFrame, threshold: float, ci: float = 0.95) -> dict:
    """The labelled range beside a headline accuracy (key numbers): empty when no trial
    errored, else ``n_errored``, ``answer_accuracy_errors_as_failures`` and
    ``answer_accuracy_errors_as_successes`` (the bounds of :func:`failure_bounds`), each with
    ``_ci_low`` / ``_ci_high``, and ``answer_accuracy_errors_note`` saying what they are.

    >>> t = pd.DataFrame({"task_id": list("ab"), "final_score": [1.0, None], "error": [None, "x"]})
    >>> _error_range(t, 0.8)["answer_accuracy_errors_note"]
    '1 of 2 trials errored: accuracy 0.50 if they failed, 1.00 if they succeeded'
    """
    if not schema.errored(tasks).any():
        return {}
    b = failure_bounds.__wrapped__(tasks, threshold=threshold, ci=ci)
    out = _bounds(b)
    n = int(b.loc[b["errors"] == "as_failures", "n_trials"].iloc[0])
    return out | {"answer_accuracy_errors_note":
                  f"{out['n_errored']} of {n} trials errored: accuracy "
                  f"{out['answer_accuracy_errors_as_failures']:.2f} if they failed, "
                  f"{out['answer_accuracy_errors_as_successes']:.2f} if they succeeded"}


def _error_columns(tasks: pd.DataFrame, runs: list, threshold: float,
                   ci: float = 0.95) -> dict:
    """The leaderboard's failure-bound columns, one value per run of ``runs`` (each run's own
    rows of ``tasks``, ``run_id`` naming the run): empty when no trial of any run errored;
    else the keys of :func:`_error_range` but the note.

    >>> t = pd.DataFrame({"run_id": ["r", "r", "s", "s"], "task_id": list("abab"),
    ...                   "final_score": [1.0, None, 1.0, 0.0], "error": [None, "x", None, None]})
    >>> _error_columns(t, ["r", "s"], 0.8)["answer_accuracy_errors_as_successes"]
    [1.0, 0.5]
    """
    if not schema.errored(tasks).any():
        return {}
    of = tasks["run_id"].astype(str).to_numpy()
    cols: dict[str, list] = {}
    for r in runs:
        b = failure_bounds.__wrapped__(tasks[of == str(r)], threshold=threshold, ci=ci)
        for key, value in _bounds(b).items():
            cols.setdefault(key, []).append(value)
    return cols
