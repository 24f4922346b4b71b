"""Absent is not zero: whether a run recorded a cost (US dollars, tokens, seconds) at all.

A harness that does not count tokens often writes 0 for every task (35 of 40 public
Terminal-Bench runs), or leaves the column empty; averaged, that run looks free. The one rule
(:func:`cost_recorded`) decides, per run, whether its cost column holds a measurement: a column
that is absent, all missing or all zero for the run is *not recorded*. The frontier, the
leaderboard's and the key numbers' cost columns, and Table 2's cost ask it and leave such a run's
cost out with a note naming the runs (:func:`not_recorded_note`), never a mean of 0 with a
zero-width interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dabench_analysis.stats._inputs import as_float, check_frame

__all__ = ["COST_COLUMNS", "cost_recorded", "not_recorded_note"]

#: The cost columns the rule applies to: dollars, tokens, wall-clock seconds.
COST_COLUMNS = ("cost", "total_tokens", "execution_time")
#: Run names a note lists before "and N more".
_LISTED = 8


def cost_recorded(tasks: pd.DataFrame, column: str, *, by: str | None = "run_id") -> pd.Series:
    """Whether each run recorded ``column``: present with at least one value that is not 0.

    Parameters
    ----------
    tasks : DataFrame
        Task rows (several runs stacked, told apart by ``by``); ``column`` may be absent.
    column : str
        A cost column: ``cost`` (US dollars), ``total_tokens`` (tokens), ``execution_time``
        (seconds), or any numeric column where 0 for every task means "not measured".
    by : str or None
        The run column (absent, or None: the frame is one run, named ``"run"``).

    Returns
    -------
    Series of bool
        One value per run, indexed by the run's name (first appearance order, as text): True
        when the run has at least one non-missing, non-zero value of ``column``; False when
        the column is absent, or every value of the run is missing or 0.

    Raises
    ------
    TypeError
        A Run or Runs (pass ``run.tasks``).
    ValueError
        A ``column`` whose values are not numbers.

    Notes
    -----
    A run that measured its cost has some task with a positive cost (a model call costs
    tokens, a task takes time); 0 everywhere is what a harness writes when it does not count.
    One 0 among measured values stays a measurement (a task that failed before any call).

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "a", "b", "b", "c", "c"],
    ...                   "total_tokens": [0, 120, 0, 0, None, None]})
    >>> cost_recorded(t, "total_tokens").to_dict()
    {'a': True, 'b': False, 'c': False}
    >>> cost_recorded(t, "cost").to_dict()
    {'a': False, 'b': False, 'c': False}
    """
    tasks = check_frame(tasks)
    runs = (tasks[by].astype("string").fillna("<NA>") if by is not None and by in tasks
            else pd.Series("run", index=tasks.index, dtype="string"))
    order = list(dict.fromkeys(runs.tolist()))
    if column not in tasks:
        return pd.Series(False, index=pd.Index(order, dtype=object), name=column)
    values = as_float(tasks[column], column).to_numpy()
    with np.errstate(invalid="ignore"):
        measured = pd.Series(~np.isnan(values) & (values != 0), index=tasks.index)
    out = measured.groupby(runs.to_numpy(), sort=False).any()
    return out.reindex(order).astype(bool).rename(column).rename_axis(None)


def not_recorded_note(column: str, runs: Sequence[str], *, what: str = "left out") -> str:
    """The note naming the runs whose ``column`` was not recorded.

    Parameters
    ----------
    column : str
        The cost column.
    runs : sequence of str
        The runs (empty: no note).
    what : str
        What happens to them (``"left out of the frontier"``).

    Returns
    -------
    str
        ``"total_tokens not recorded (absent, all missing or all 0) for 2 runs: a, b: left
        out"``; at most 8 names, then "and N more"; "" when ``runs`` is empty.

    Examples
    --------
    >>> not_recorded_note("total_tokens", ["b", "c"], what="left out of the frontier")
    'total_tokens not recorded (absent, all missing or all 0) for 2 runs: b, c: left out of the frontier'
    """
    runs = [str(r) for r in runs]
    if not runs:
        return ""
    shown = ", ".join(runs[:_LISTED]) + (f" and {len(runs) - _LISTED} more"
                                         if len(runs) > _LISTED else "")
    n = f"{len(runs)} run{'' if len(runs) == 1 else 's'}"
    return f"{column} not recorded (absent, all missing or all 0) for {n}: {shown}: {what}"
