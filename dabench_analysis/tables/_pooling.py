"""Several runs are never pooled silently: :func:`check_runs` warns (:class:`PooledRunsWarning`)
when a frame holding several runs (``run_id``) would be summarised as one sample, once per call
of a public table (:func:`runs_checked` silences the tables it calls). Used by
:func:`dabench_analysis.tables._common.takes_run`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import pandas as pd  # noqa: F401  (the doctests' ``pd``)

from dabench_analysis._caller import outside_level
from dabench_analysis.stats._inputs import StatisticsWarning, id_list, run_ids


class PooledRunsWarning(StatisticsWarning):
    """A frame holding several runs (``run_id``) was summarised as one sample."""


class PooledTrialsWarning(StatisticsWarning):
    """A frame holding several trials of a task (``trial``) was summarised with each trial as
    a row (its interval then takes trials of one task for independent samples)."""


_CHECKED: ContextVar[bool] = ContextVar("dabench_runs_checked", default=False)


@contextmanager
def runs_checked() -> Iterator[None]:
    """Within this block :func:`check_runs` is silent: a table that has checked its input calls
    other tables without a second warning."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def check_runs(frame, what: str, *, by: str | Sequence[str] | None = None,
               takes_by: bool = True) -> None:
    """Warn when ``frame`` holds several runs and they would be pooled into one result.

    Parameters
    ----------
    frame : DataFrame
        Tasks, steps or tool calls; only its ``run_id`` column is read.
    what : str
        The calling function, named in the message.
    by : str, sequence of str or None
        The caller's grouping; nothing is pooled when it includes ``run_id``.
    takes_by : bool
        Whether the caller has a ``by`` argument (the message then says ``by='run_id'``;
        otherwise it says to call the function once per run).

    Warns
    -----
    PooledRunsWarning
        Naming the runs and how to get one result per run; not inside :func:`runs_checked`.

    Examples
    --------
    >>> two = pd.DataFrame({"run_id": ["a", "a", "b"], "final_score": [1.0, 0.5, 0.0]})
    >>> check_runs(two, "main_results", by="run_id")  # one row per run: nothing pooled
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_runs(two, "main_results")
    ...     with runs_checked():
    ...         check_runs(two, "describe")  # nested in a function that has warned
    >>> [str(x.message) for x in w]  # doctest: +NORMALIZE_WHITESPACE
    ["main_results: the input holds 2 runs (a, b), pooled into one result; pass by='run_id'
      for one row per run"]
    """
    by_cols = [] if by is None else [by] if isinstance(by, str) else list(by)
    ids = run_ids(frame)
    if len(ids) < 2 or "run_id" in by_cols or _CHECKED.get():
        return
    pooled = f"{what}: the input holds {len(ids)} runs ({id_list(ids)}), pooled into one result"
    if takes_by:
        hint = repr(["run_id", *by_cols]) if by_cols else "'run_id'"
        how = f"pass by={hint} for one row per run"
    else:
        how = (f"for one result per run call it on each run (for run in runs: {what}(run)) or "
               f"on one run's rows, e.g. tasks[tasks['run_id'] == {ids[0]!r}]")
    warnings.warn(f"{pooled}; {how}", PooledRunsWarning, stacklevel=outside_level())


def check_trials(frame, what: str) -> None:
    """Warn when ``frame`` holds several trials of a task and a table would count each as a row.

    Parameters
    ----------
    frame : DataFrame
        Task rows; its ``trial``, ``task_id`` and ``run_id`` columns are read.
    what : str
        The calling function, named in the message.

    Warns
    -----
    PooledTrialsWarning
        Naming the most trials of a task and where per-task results are (not inside
        :func:`runs_checked`).

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "a"], "trial": [1, 2], "final_score": [1.0, 0.0]})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_trials(t, "difficulty_breakdown")
    >>> str(w[0].message)[:60]
    'difficulty_breakdown: the input holds up to 2 trials of a ta'
    """
    if _CHECKED.get() or "trial" not in frame or "task_id" not in frame or frame.empty:
        return
    keys = [c for c in ("run_id", "task_id") if c in frame]
    # distinct trials, not rows: a frame of steps or tool calls holds many rows per trial
    most = int(frame[[*keys, "trial"]].drop_duplicates().groupby(
        keys, observed=True, sort=False).size().max())
    if most > 1:
        warnings.warn(f"{what}: the input holds up to {most} trials of a task, each counted as "
                      "a row (an interval then treats them as independent); per-task results: "
                      "da.tables.trials.pass_k, flakiness, main_results (a task's trials "
                      "averaged)", PooledTrialsWarning, stacklevel=outside_level())
