"""Shared by the tables: correctness as ``final_score >= threshold``, the check that a run has
rows to report, and one table per group (``by=``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.stats.inputs import TasksLike, as_frame, check_threshold, runs_checked, warn


def require_rows(tasks: TasksLike, *, what: str = "tasks") -> None:
    """Raise a clear error when there is nothing to analyse (e.g. a header-only file).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        Any frame of task rows (a Run or Runs: its ``tasks``).
    what : str
        How the input is named in the message.

    Raises
    ------
    ValueError
        If ``tasks`` has no rows.

    Examples
    --------
    >>> require_rows(pd.DataFrame({"task_id": []}), what="run r1")
    Traceback (most recent call last):
    ...
    ValueError: run r1 has no task rows: nothing to report
    """
    if len(as_frame(tasks)) == 0:
        raise ValueError(f"{what} has no task rows: nothing to report")


def correct_mask(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.Series:
    """Answer correctness per task: ``final_score >= threshold`` (missing scores stay <NA>).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        With a ``final_score`` column in [0, 1] (a Run or Runs: its ``tasks``; one value per
        row, so several runs are not pooled).
    threshold : float
        In (0, 1]; seed 000 uses 0.8 (§Breakdown by Difficulty).

    Returns
    -------
    Series of pandas ``boolean``

    Raises
    ------
    ValueError
        Without a ``final_score`` column, or for a ``threshold`` outside (0, 1] (80 is refused
        with "did you mean 0.8?").

    Notes
    -----
    The one place the tables turn a score into correctness; the threshold is checked by
    :func:`dabench_analysis.stats.check_threshold`.

    Examples
    --------
    >>> correct_mask(pd.DataFrame({"final_score": [0.9, 0.5, None]})).tolist()
    [True, False, <NA>]
    """
    tasks = as_frame(tasks)
    require_columns(tasks, ["final_score"])
    threshold = check_threshold(threshold)
    score = tasks["final_score"].astype("Float64")
    return (score >= threshold).astype("boolean")


def by_group(tasks: pd.DataFrame, by: str | Sequence[str],
             table: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    """``table`` of each group of ``by``, stacked, the ``by`` columns first.

    Parameters
    ----------
    tasks : DataFrame
        Rows to split (e.g. ``runs.tasks``).
    by : str or sequence of str
        Grouping columns (``"run_id"``: one table per run). Groups in sorted order; only groups
        with rows.
    table : callable
        Frame -> frame, called once per group (without a pooling warning: the caller has
        checked its input).

    Returns
    -------
    DataFrame
        The ``by`` columns (their dtypes kept), then ``table``'s columns; a fresh RangeIndex.

    Raises
    ------
    ValueError
        A ``by`` column is missing, or no row has a value in every ``by`` column.

    Notes
    -----
    Rows with a missing ``by`` value are left out with a
    :class:`~dabench_analysis.stats.StatisticsWarning` saying how many.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["b", "a", "b"], "x": [1.0, 2.0, 3.0]})
    >>> by_group(t, "run_id", lambda sub: pd.DataFrame({"n": [len(sub)]}))
      run_id  n
    0      a  1
    1      b  2
    """
    cols = [by] if isinstance(by, str) else list(by)
    require_columns(tasks, cols)
    missing = tasks[cols].isna().any(axis=1)
    if missing.any():
        warn([f"{int(missing.sum())} rows left out: missing value in {', '.join(cols)}"])
    kept = tasks[~missing.to_numpy()]
    if kept.empty:
        raise ValueError(f"no rows with a value in {', '.join(cols)}: nothing to group")
    parts = []
    with runs_checked():
        for key, sub in kept.groupby(cols, sort=True, observed=True):
            out = table(sub).reset_index(drop=True)
            for i, (col, value) in enumerate(zip(cols, key, strict=True)):
                out.insert(i, col, pd.array([value] * len(out), dtype=tasks[col].dtype))
            parts.append(out)
    return pd.concat(parts, ignore_index=True)
