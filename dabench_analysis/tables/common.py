"""Shared by the tables: correctness as ``final_score >= threshold`` and the check that a run has
rows to report.
"""

from __future__ import annotations

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.stats.inputs import check_threshold


def require_rows(tasks: pd.DataFrame, *, what: str = "tasks") -> None:
    """Raise a clear error when there is nothing to analyse (e.g. a header-only file).

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
    if len(tasks) == 0:
        raise ValueError(f"{what} has no task rows: nothing to report")


def correct_mask(tasks: pd.DataFrame, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.Series:
    """Answer correctness per task: ``final_score >= threshold`` (missing scores stay <NA>).

    Parameters
    ----------
    tasks : DataFrame
        With a ``final_score`` column in [0, 1].
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
    require_columns(tasks, ["final_score"])
    threshold = check_threshold(threshold)
    score = tasks["final_score"].astype("Float64")
    return (score >= threshold).astype("boolean")
