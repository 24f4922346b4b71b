"""Input handling shared by the statistics: a Run, a Runs or a frame taken as a frame
(:func:`as_frame`), several runs never pooled silently (:func:`check_runs`), flags and scores
coerced with clear errors, the level of an interval checked, two runs paired on their task key,
and :class:`StatisticsWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import pandas as pd

from dabench_analysis.load.rules import parse_flags
from dabench_analysis.load.run import Run
from dabench_analysis.load.sweep import Runs
from dabench_analysis.schema import (
    check_threshold,  # noqa: F401  (re-exported: the one check)
    require_columns,
)


class StatisticsWarning(UserWarning):
    """Degenerate or incomplete input: rows dropped, a test not defined, an interval of width 0."""


class PooledRunsWarning(StatisticsWarning):
    """A frame holding several runs (``run_id``) was summarised as one sample."""


#: What a function taking tasks (or steps, tool calls) accepts: see :func:`as_frame`.
TasksLike = pd.DataFrame | Run | Runs


_FRAMES = ("tasks", "trajectory", "tool_calls")


def as_frame(obj, which: str = "tasks", *, name: str | None = None, runs: bool = True,
             others: bool = False):
    """The ``which`` frame of a :class:`~dabench_analysis.load.Run` or
    :class:`~dabench_analysis.load.Runs`; a DataFrame as it is.

    Every public function of ``stats`` and ``tables`` that takes a frame of tasks, trajectory
    steps or tool calls calls this first, so it accepts ``run``, ``runs`` and ``run.tasks``
    alike.

    Parameters
    ----------
    obj : DataFrame, Run or Runs
        A frame is returned unchanged (not copied); a Run gives ``run.<which>``; a Runs gives
        ``runs.<which>`` (every run stacked, told apart by ``run_id``).
    which : {"tasks", "trajectory", "tool_calls"}
        Which frame of a run the function reads.
    name : str, optional
        The argument's name in error messages (default ``which``).
    runs : bool
        False for arguments that are one run (one side of a paired comparison): a Runs with
        several runs is refused; a Runs of one run gives that run's frame.
    others : bool
        True for arguments that also take arrays, Series or None: anything that is not a Run
        or Runs is returned unchanged (the function checks it).

    Returns
    -------
    DataFrame (or ``obj`` itself with ``others=True``)

    Raises
    ------
    TypeError
        ``obj`` is neither a DataFrame, a Run nor a Runs (and ``others`` is False).
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
            raise ValueError(f"{name} is a Runs of {len(ids)} runs ({_names(ids)}); pass one "
                             f"run, e.g. runs[{ids[0]!r}]" if ids else
                             f"{name} is a Runs holding no run")
        return getattr(obj, which)
    if others:
        return obj
    raise TypeError(f"{name} must be a pandas DataFrame, a Run or a Runs, got "
                    f"{type(obj).__name__}")


def _names(ids: Sequence[str], k: int = 5) -> str:
    return ", ".join(map(str, ids[:k])) + (f", … ({len(ids)} in all)" if len(ids) > k else "")


_CHECKED: ContextVar[bool] = ContextVar("dabench_runs_checked", default=False)


@contextmanager
def runs_checked() -> Iterator[None]:
    """Within this block :func:`check_runs` is silent: a public function that has checked its
    input calls other public functions without a second warning."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def run_ids(frame) -> list[str]:
    """The distinct non-missing ``run_id`` values of ``frame``, in order of appearance ([] when
    it has no ``run_id`` column)."""
    if not isinstance(frame, pd.DataFrame) or "run_id" not in frame:
        return []
    return [str(v) for v in pd.unique(frame["run_id"].dropna())]


def check_runs(frame, what: str, *, by: str | Sequence[str] | None = None,
               takes_by: bool = True, stacklevel: int = 3) -> None:
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
    stacklevel : int
        As :func:`warnings.warn`; 3 points at the caller of the public function.

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
    pooled = f"{what}: the input holds {len(ids)} runs ({_names(ids)}), pooled into one result"
    if takes_by:
        hint = repr(["run_id", *by_cols]) if by_cols else "'run_id'"
        how = f"pass by={hint} for one row per run"
    else:
        how = (f"for one result per run call it on each run (for run in runs: {what}(run)) or "
               f"on one run's rows, e.g. tasks[tasks['run_id'] == {ids[0]!r}]")
    warnings.warn(f"{pooled}; {how}", PooledRunsWarning, stacklevel=stacklevel)


def warn(notes: Sequence[str], stacklevel: int = 3) -> None:
    """Emit one :class:`StatisticsWarning` joining ``notes`` (nothing if empty)."""
    notes = [n for n in notes if n]
    if notes:
        warnings.warn("; ".join(notes), StatisticsWarning, stacklevel=stacklevel)


def as_bool(values, name: str = "values") -> pd.Series:
    """Coerce a flag to pandas ``boolean`` (True/False/<NA>).

    Accepts bool, ``boolean``, 0/1 numbers (NaN -> <NA>) and the package's flag spellings
    (:func:`dabench_analysis.load.rules.parse_flags`: true/false, 1/0, yes/no, t/f, pass/fail).
    Anything else raises ValueError naming the column and the offending values.
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(s.dtype, pd.BooleanDtype):
        return s
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("boolean")
    if pd.api.types.is_numeric_dtype(s.dtype):
        x = s.astype("float64")
        bad = x.notna() & ~x.isin([0.0, 1.0])
        if bad.any():
            raise ValueError(f"flag {name!r} has values other than 0/1: "
                             f"{sorted(set(x[bad].tolist()))[:5]}")
        return x.map(lambda v: pd.NA if np.isnan(v) else bool(v)).astype("boolean")

    flags, _, bad = parse_flags(s.astype(object).map(
        lambda v: v if not isinstance(v, bool | np.bool_) else str(bool(v))))
    if bad.any():
        raise ValueError(f"flag {name!r} has a value that is not a boolean: {s[bad].iloc[0]!r}")
    return flags


def as_float(values, name: str = "values") -> pd.Series:
    """Coerce a score to float64 with NaN for missing (flags become 1.0/0.0)."""
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_bool_dtype(s.dtype):
        s = s.astype("boolean")
    elif not pd.api.types.is_numeric_dtype(s.dtype):
        try:
            s = as_bool(s, name)
        except ValueError:
            try:
                s = pd.to_numeric(s, errors="raise")
            except (TypeError, ValueError):
                raise ValueError(f"column {name!r} is not numeric (dtype {s.dtype})") from None
    return pd.Series(s.to_numpy(dtype="float64", na_value=np.nan), index=s.index, name=s.name)


def check_ci(ci: float) -> None:
    if not (isinstance(ci, float | int) and 0 < ci < 1):
        raise ValueError(f"ci must be a confidence level in (0, 1), got {ci!r}")


def unique_key(frame: pd.DataFrame, on: str, name: str) -> None:
    """Raise ValueError when ``frame[on]`` repeats a value (one side of a pairing must be one
    run; a frame holding several runs is named as such)."""
    dup = frame[on][frame[on].duplicated()]
    if len(dup) and len(ids := run_ids(frame)) > 1:
        raise ValueError(f"{name} holds {len(ids)} runs ({_names(ids)}); a paired comparison "
                         f"takes one run per side, e.g. tasks[tasks['run_id'] == {ids[0]!r}]")
    if len(dup):
        raise ValueError(f"{on!r} is not unique in {name}: {dup.iloc[0]!r} repeats "
                         f"({len(dup)} duplicate rows)")


def pair_runs(baseline, proposed, metric: str, on: str, convert: Callable):
    """Align two runs on ``on``; return (frame with baseline/proposed, counts, notes)."""
    notes = []
    if isinstance(baseline, pd.DataFrame) or isinstance(proposed, pd.DataFrame):
        for name, fr in (("baseline", baseline), ("proposed", proposed)):
            require_columns(fr, [on, metric], name)
            unique_key(fr, on, name)
        b = pd.Series(convert(baseline[metric], metric).to_numpy(), index=baseline[on].to_numpy())
        p = pd.Series(convert(proposed[metric], metric).to_numpy(), index=proposed[on].to_numpy())
    elif isinstance(baseline, pd.Series) and isinstance(proposed, pd.Series):
        b, p = convert(baseline, "baseline"), convert(proposed, "proposed")
        for name, ser in (("baseline", b), ("proposed", p)):
            if ser.index.has_duplicates:
                raise ValueError(f"the index of {name} is not unique; pairing two Series needs "
                                 "one entry per task")
    else:
        b, p = convert(baseline, "baseline"), convert(proposed, "proposed")
        if len(b) != len(p):
            raise ValueError(f"paired samples differ in length: {len(b)} vs {len(p)}; pass task "
                             f"frames with an {on!r} column to pair by task")
        b.index = p.index = pd.RangeIndex(len(b))
    common = b.index.intersection(p.index, sort=False)
    n_unpaired = int(len(b.index.difference(common)) + len(p.index.difference(common)))
    pairs = pd.DataFrame({"baseline": b.loc[common], "proposed": p.loc[common]})
    incomplete = pairs.isna().any(axis=1)
    counts = {"n_pairs": int((~incomplete).sum()), "n_unpaired": n_unpaired,
              "n_dropped_na": int(incomplete.sum())}
    if n_unpaired:
        notes.append(f"{n_unpaired} tasks present in only one run were not paired")
    if incomplete.any():
        notes.append(f"{int(incomplete.sum())} pairs dropped: {metric} missing in either run")
    return pairs[~incomplete], counts, notes
