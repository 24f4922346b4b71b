"""The one entry of every public table: :func:`takes_run` turns a Run or Runs into its frame,
checks the table's ``threshold`` argument (an explicit parameter of the analysis, default 0.8; a
Run carries none), checks the columns its arguments name, keeps several runs from being pooled
silently (:class:`PooledRunsWarning`) and splits ``by=`` into one table per group. The columns a
table always needs are declared with :func:`dabench_analysis.schema.needs` (missing: a typed
:class:`~dabench_analysis.schema.needs.Skipped`). Also correctness (:func:`correct_mask`) and the
check that a run has rows.

The statistics below (:mod:`dabench_analysis.stats`) take frames and arrays only; this module is
where a Run becomes a frame, once per call of a public table.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import check_threshold, require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import id_list, warn
from dabench_analysis.tables._pooling import check_runs, check_trials, runs_checked

#: What a table taking tasks (or steps, tool calls) accepts: see :func:`as_frame`.
TasksLike = pd.DataFrame | Run | Runs

_FRAMES = ("tasks", "trajectory", "tool_calls")


def as_frame(obj, which: str = "tasks", *, name: str | None = None,
             runs: bool = True) -> pd.DataFrame:
    """The ``which`` frame of a :class:`~dabench_analysis.load.Run` or
    :class:`~dabench_analysis.load.Runs`; a DataFrame as it is.

    Parameters
    ----------
    obj : DataFrame, Run or Runs
        A frame is returned unchanged (not copied); a Run gives ``run.<which>``; a Runs gives
        ``runs.<which>`` (every run stacked, told apart by ``run_id``).
    which : {"tasks", "trajectory", "tool_calls"}
        Which frame of a run the table reads.
    name : str, optional
        The argument's name in error messages (default ``which``).
    runs : bool
        False for arguments that are one run (one side of a paired comparison): a Runs with
        several runs is refused; a Runs of one run gives that run's frame.

    Returns
    -------
    DataFrame

    Raises
    ------
    TypeError
        ``obj`` is neither a DataFrame, a Run nor a Runs.
    ValueError
        An unknown ``which``, or a Runs of several runs where ``runs`` is False.

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> run = load_run("data/sample_runs/baseline_react")
    >>> as_frame(run) is run.tasks, as_frame(run.tasks) is run.tasks
    (True, True)
    >>> as_frame([0.5, 1.0])
    Traceback (most recent call last):
    ...
    TypeError: tasks must be a pandas DataFrame, a Run or a Runs, got list
    """
    if which not in _FRAMES:
        raise ValueError(f"which must be one of {', '.join(_FRAMES)}; got {which!r}")
    name = name or which
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, Run):
        return getattr(obj, which)
    if isinstance(obj, Runs):
        if not runs and len(obj) != 1:
            ids = obj.run_ids
            raise ValueError(f"{name} is a Runs of {len(ids)} runs ({id_list(ids)}); pass one "
                             f"run, e.g. runs[{ids[0]!r}]" if ids else
                             f"{name} is a Runs holding no run")
        return getattr(obj, which)
    raise TypeError(f"{name} must be a pandas DataFrame, a Run or a Runs, got "
                    f"{type(obj).__name__}")


def _listed(value) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _one_table(result) -> pd.DataFrame:
    """A table's result as a frame (a dict of key numbers: one row)."""
    return pd.DataFrame([result]) if isinstance(result, dict) else result


def _check_threshold_argument(values: dict, default) -> None:
    """``values["threshold"]`` checked (the caller's, else the function's default) when it is
    a success threshold (a numeric default); a Run carries no threshold."""
    if isinstance(default, float | int) and not isinstance(default, bool):
        values["threshold"] = check_threshold(values.get("threshold", default))


def takes_run(*, frame: str = "tasks", named: Sequence[str] = (),
              pools: bool = True, paired: bool = False, grouped: bool = False,
              grouping: str | None = "by", trials: bool = False) -> Callable:
    """Decorator: the one entry of a public table (a Run, a Runs or a frame in; frames inside).

    Parameters
    ----------
    frame : {"tasks", "trajectory", "tool_calls"}
        The frame of a Run the table reads (its first argument; the first two with ``paired``).
    named : sequence of str
        Arguments whose values name columns to check (``"metric"``, ``"metrics"``, ``"by"``;
        None or absent values skipped), by :func:`dabench_analysis.schema.require_columns`.
        The columns a table always reads are not listed here: they are its
        :func:`dabench_analysis.schema.needs` declaration, checked before this decorator runs.
    pools : bool
        The table summarises its rows: a frame of several runs without ``by='run_id'`` gives
        one :class:`PooledRunsWarning` (none from tables it calls). False for row-wise tables
        and sweeps (several runs by design).
    paired : bool
        Two arguments, each one run (baseline, proposed): a Runs of several runs is refused.
    grouped : bool
        With ``by`` not None, the table is computed per group of ``by`` (:func:`by_group`) and
        stacked, the ``by`` columns first (a dict result becomes one row per group).
    grouping : str or None
        The argument holding the grouping columns (default ``by``; None when a ``by``
        argument means something else, e.g. a figure's category column).
    trials : bool
        The table handles repeated trials of a task itself (Table 1 averages them); otherwise a
        summarising table (``pools``) given several trials of a task warns
        (:class:`~dabench_analysis.tables._pooling.PooledTrialsWarning`).

    Returns
    -------
    callable
        The decorator. The decorated table has the same signature and docstring. Its
        ``threshold`` argument, when it has one, is the caller's or its default
        (:data:`dabench_analysis.schema.SUCCESS_THRESHOLD`, 0.8) whatever the input (a Run
        carries no threshold), checked by :func:`dabench_analysis.schema.check_threshold` (a
        threshold whose default is not a number is the function's to check).

    Raises
    ------
    TypeError
        (at call) An input that is neither a DataFrame, a Run nor a Runs.
    ValueError
        (at call) A missing column named by an argument, a threshold outside (0, 1], a Runs
        of several runs on one side of a paired table.

    Notes
    -----
    Options: 9 before the threshold became an explicit parameter (issue 34, item 4), 7 now:
    ``threshold_if`` (which passed a Run's threshold to a figure) and ``needs`` (which
    repeated the :func:`~dabench_analysis.schema.needs` declaration) are gone.

    Examples
    --------
    >>> @takes_run()
    ... def accuracy(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD) -> float:
    ...     return float(schema.correct(tasks["final_score"], threshold).mean())
    >>> from dabench_analysis import load_run
    >>> run = load_run("data/sample_runs/baseline_react")
    >>> accuracy(run, threshold=0.5) == accuracy(run.tasks, threshold=0.5), accuracy(run)
    (True, 0.7625)
    """
    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        data = list(sig.parameters)[:2 if paired else 1]
        has_threshold = "threshold" in sig.parameters
        has_by = grouping is not None and grouping in sig.parameters

        @functools.wraps(fn)
        def table(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            values = bound.arguments
            raw = [values[d] for d in data]
            if has_threshold:
                _check_threshold_argument(values, sig.parameters["threshold"].default)
            frames = [as_frame(x, frame, name=d if paired else frame, runs=not paired)
                      for d, x in zip(data, raw, strict=True)]
            columns = [*(c for n in named for c in _listed(
                values.get(n, sig.parameters[n].default)))]
            for d, fr in zip(data, frames, strict=True):
                require_columns(fr, columns, d if paired else frame)
                values[d] = fr
            by = values.get(grouping) if has_by else None
            if pools and not paired:
                check_runs(frames[0], fn.__name__, by=by, takes_by=has_by)
                if not trials:
                    check_trials(frames[0], fn.__name__)
            with runs_checked():
                if grouped and by is not None:
                    rest = {k: v for k, v in values.items() if k not in (data[0], grouping)}
                    return by_group(frames[0], by, lambda sub: _one_table(fn(sub, **rest)))
                return fn(*bound.args, **bound.kwargs)

        return table

    return decorate


@takes_run(pools=False)
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
    if len(tasks) == 0:
        raise ValueError(f"{what} has no task rows: nothing to report")


@needs("final_score", trials="any")
@takes_run(pools=False)
def correct_mask(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.Series:
    """Answer correctness per task: ``final_score >= threshold`` (missing scores stay <NA>).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        With a ``final_score`` column in [0, 1] (a Run or Runs gives its ``tasks``; one value
        per row, so several runs are not pooled).
    threshold : float
        In (0, 1]; default :data:`~dabench_analysis.schema.SUCCESS_THRESHOLD` (0.8, seed 000 §Breakdown by
        Difficulty).

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
    :func:`dabench_analysis.schema.correct` of the ``final_score`` column: the one outcome
    rule, here with the threshold of the Run.

    Examples
    --------
    >>> correct_mask(pd.DataFrame({"final_score": [0.9, 0.5, None]})).tolist()
    [True, False, <NA>]
    """
    return schema.correct(tasks["final_score"], threshold)


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
