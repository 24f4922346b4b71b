"""Failure analysis tables (seed 000 §Failure Analysis for Papers, §Failure Attribution, V2.1).

Frames in, tidy frames out. A task *failed* when it is not correct
(:func:`~dabench_analysis.tables._common.correct_mask`: ``final_score < threshold``, 0.8 as the seed's
``df[df['final_score'] < 0.8]``, or the ``threshold`` passed); shares are of failed tasks,
with Wilson intervals. A ``threshold`` outside (0, 1] raises ValueError. Every function takes a
frame, a Run or a Runs (its ``tasks``); the counting ones pool several runs with a
:class:`~dabench_analysis.tables.PooledRunsWarning`, never silently.
"""

from __future__ import annotations

import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.schema.needs import needs
from dabench_analysis.tables._common import TasksLike, correct_mask, takes_run


@needs("final_score", trials="any")
@takes_run(pools=False)
def failed_tasks(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """The tasks with ``final_score < threshold`` (tasks with a missing score are left out).

    Raises
    ------
    ValueError
        Without ``final_score``, or for a ``threshold`` outside (0, 1].

    Examples
    --------
    >>> failed_tasks(pd.DataFrame({"final_score": [0.9, 0.1, None]})).index.tolist()
    [1]
    """
    ok = correct_mask(tasks, threshold=threshold)
    return tasks[(~ok).fillna(False).to_numpy()]


@takes_run(named=("column",))
def distribution(
    tasks: TasksLike,
    column: str,
    *,
    order: tuple[str, ...] | None = None,
    top: int | None = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Counts and shares of the values of ``column``, with a Wilson interval for each share.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        Rows to count (e.g. the failed tasks). A Run or Runs gives its ``tasks``; several runs
        are pooled, with a PooledRunsWarning.
    column : str
        A categorical or text column.
    order : tuple of str, optional
        Fixed order of the values (a catalogue enum); values outside it follow by count. Levels
        of ``order`` with no rows are kept with count 0. Default: by count, descending.
    top : int, optional
        Keep the ``top`` most frequent values (after ordering by count).
    ci : float
        Level of the Wilson interval.

    Returns
    -------
    DataFrame
        ``<column>, count, share, ci_low, ci_high, n`` where ``n`` is the number of rows counted
        (missing values are counted as "(missing)").

    Raises
    ------
    ValueError
        If ``column`` is missing.

    Examples
    --------
    >>> distribution(pd.DataFrame({"c": ["a", "b", "a"]}), "c")[["c", "count", "share"]]
       c  count     share
    0  a      2  0.666667
    1  b      1  0.333333
    """
    values = tasks[column].astype("string").fillna("(missing)")
    counts = values.value_counts(sort=True)
    counts = counts.sort_index(kind="stable").sort_values(ascending=False, kind="stable")
    if order is not None:
        keys = list(order) + [k for k in counts.index if k not in order]
        counts = counts.reindex(keys, fill_value=0)
    if top is not None:
        counts = counts.sort_values(ascending=False, kind="stable").head(top)
    n = int(len(values))
    rows = []
    for key, k in counts.items():
        interval = stats.proportion_ci(int(k), n, ci=ci) if n else None
        rows.append({column: key, "count": int(k), "share": k / n if n else float("nan"),
                     "ci_low": float(interval["ci_low"].iloc[0]) if n else float("nan"),
                     "ci_high": float(interval["ci_high"].iloc[0]) if n else float("nan"),
                     "n": n})
    return pd.DataFrame(rows, columns=[column, "count", "share", "ci_low", "ci_high", "n"])


@needs("final_score", "failure_category")
@takes_run()
def failure_categories(tasks: TasksLike, *,
                       threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """MAS failure categories among failed tasks, in the seed's taxonomy order.

    Returns
    -------
    DataFrame
        ``failure_category, count, share, ci_low, ci_high, n`` (all ten categories, zero counts
        kept; a failed task without a category counts as "(missing)").

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0.1, 0.2],
    ...                   "failure_category": ["REASONING_FAILURE", "PLANNING_FAILURE"]})
    >>> failure_categories(t).query("count > 0")["failure_category"].tolist()
    ['PLANNING_FAILURE', 'REASONING_FAILURE']
    """
    return distribution(failed_tasks(tasks, threshold=threshold), "failure_category",
                        order=schema.columns.FAILURE_CATEGORIES)


@needs("final_score", "failure_stage")
@takes_run()
def failure_stages(tasks: TasksLike, *,
                   threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Failure distribution by AAT stage (UNDERSTAND, PLAN, EXECUTE, VERIFY, AGGREGATE).

    Returns
    -------
    DataFrame
        ``failure_stage, count, share, ci_low, ci_high, n`` in stage order.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0.1], "failure_stage": ["EXECUTE"]})
    >>> failure_stages(t)["count"].tolist()
    [0, 0, 1, 0, 0]
    """
    return distribution(failed_tasks(tasks, threshold=threshold), "failure_stage",
                        order=schema.columns.FAILURE_STAGES)


@needs("final_score", "outcome_error_type")
@takes_run()
def outcome_error_types(tasks: TasksLike, *,
                        threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Evaluation buckets (low_recall, wrong_schema, …) among failed tasks, by count.

    Returns
    -------
    DataFrame
        ``outcome_error_type, count, share, ci_low, ci_high, n``.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0.1, 0.2], "outcome_error_type": ["low_recall"] * 2})
    >>> outcome_error_types(t)["share"].tolist()
    [1.0]
    """
    return distribution(failed_tasks(tasks, threshold=threshold), "outcome_error_type")


@needs("outcome_status")
@takes_run()
def outcome_status(tasks: TasksLike) -> pd.DataFrame:
    """All tasks by outcome_status (correct, partial, failed; seed V2.1 item 4).

    Returns
    -------
    DataFrame
        ``outcome_status, count, share, ci_low, ci_high, n``.

    Examples
    --------
    >>> outcome_status(pd.DataFrame({"outcome_status": ["correct", "failed"]}))["count"].tolist()
    [1, 0, 1]
    """
    return distribution(tasks, "outcome_status", order=schema.columns.OUTCOME_STATUSES)


@needs("root_cause", "final_score", uses=("failure_category",))
@takes_run()
def root_causes(tasks: TasksLike, *, top: int = 10,
                threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Table 5 — the most frequent root causes among failed tasks (seed: ``.head(10)``).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        With ``final_score`` and ``root_cause``; ``failure_category`` is added when present.
    top : int
        How many root causes to keep.
    threshold : float
        Failed means ``final_score < threshold``; default 0.8.

    Returns
    -------
    DataFrame
        ``root_cause, count, share, ci_low, ci_high, n`` (+ ``failure_category``: the most
        frequent category among the tasks with that root cause).

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [0, 0, 0], "root_cause": ["a", "b", "a"]})
    >>> root_causes(t)[["root_cause", "count"]].values.tolist()
    [['a', 2], ['b', 1]]
    """
    failed = failed_tasks(tasks, threshold=threshold)
    out = distribution(failed, "root_cause", top=top)
    if "failure_category" in failed and len(out):
        cause = failed["root_cause"].astype("string").fillna("(missing)")
        cat = failed["failure_category"].astype("string").fillna("(missing)")
        modal = cat.groupby(cause).agg(lambda s: s.value_counts().index[0])
        out.insert(1, "failure_category", out["root_cause"].map(modal))
    return out.reset_index(drop=True)
