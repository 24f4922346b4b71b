"""Input handling shared by the statistics: frames and arrays in (a ``Run`` or ``Runs`` is
refused with the frame to pass, :func:`check_frame`), flags and scores coerced with clear errors,
the level of an interval checked, two runs paired on their task key, and
:class:`StatisticsWarning`. Turning a Run into its frame and the check that several runs are not
pooled belong to the tables (:mod:`dabench_analysis.tables._common`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from dabench_analysis._caller import outside_level
from dabench_analysis.load._rules import parse_flags
from dabench_analysis.schema import (
    check_threshold,  # noqa: F401  (re-exported: the one check)
    require_columns,
)


class StatisticsWarning(UserWarning):
    """Degenerate or incomplete input: rows dropped, a test not defined, an interval of width 0."""


def _run_kind(obj) -> str | None:
    """"Run" or "Runs" for the loader's objects (told by their class, without importing the
    load layer's classes here), else None."""
    kind = type(obj).__name__
    return kind if kind in ("Run", "Runs") and type(obj).__module__.startswith(
        "dabench_analysis.load") else None

def check_frame(obj, name: str = "tasks", which: str = "tasks", *, others: bool = False):
    """``obj`` itself when it is a DataFrame; a clear TypeError for a Run, a Runs or anything else.

    The statistics take frames and arrays, as pingouin and scipy do; the tables
    (:mod:`dabench_analysis.tables`) take a Run.

    Parameters
    ----------
    obj : DataFrame (or, with ``others``, array-like, Series or None)
        The argument to check.
    name : str
        The argument's name in the message.
    which : {"tasks", "trajectory", "tool_calls"}
        The frame of a run the function reads (named in the message for a Run).
    others : bool
        True for arguments that also take arrays, Series or None: anything that is not a Run
        or Runs is returned unchanged (the function checks it).

    Returns
    -------
    DataFrame (or ``obj`` itself with ``others=True``)

    Raises
    ------
    TypeError
        ``obj`` is a Run or a Runs (the message says to pass ``run.<which>``), or (without
        ``others``) not a DataFrame.

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> run = load_run("data/sample_runs/baseline_react")
    >>> check_frame(run.tasks) is run.tasks
    True
    >>> check_frame(run)
    Traceback (most recent call last):
    ...
    TypeError: tasks is a Run; the statistics take frames: pass run.tasks (the tables in dabench_analysis.tables take a Run)
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    kind = _run_kind(obj)
    if kind == "Run":
        raise TypeError(f"{name} is a Run; the statistics take frames: pass run.{which} (the "
                        "tables in dabench_analysis.tables take a Run)")
    if kind == "Runs":
        raise TypeError(f"{name} is a Runs; the statistics take frames: pass runs.{which} "
                        f"(every run stacked, with run_id) or one run's, runs[run_id].{which}")
    if others:
        return obj
    raise TypeError(f"{name} must be a pandas DataFrame, got {type(obj).__name__}")

def id_list(ids: Sequence[str], k: int = 5) -> str:
    """The first ``k`` run ids joined with commas, and how many there are in all."""
    return ", ".join(map(str, ids[:k])) + (f", … ({len(ids)} in all)" if len(ids) > k else "")

def run_ids(frame) -> list[str]:
    """The distinct non-missing ``run_id`` values of ``frame``, in order of appearance ([] when
    it has no ``run_id`` column)."""
    if not isinstance(frame, pd.DataFrame) or "run_id" not in frame:
        return []
    return [str(v) for v in pd.unique(frame["run_id"].dropna())]

def warn(notes: Sequence[str], stacklevel: int | None = None) -> None:
    """Emit one :class:`StatisticsWarning` joining ``notes`` (nothing if empty), attributed to
    the first caller outside the package (or ``stacklevel``, as :func:`warnings.warn`)."""
    notes = [n for n in notes if n]
    if notes:
        warnings.warn("; ".join(notes), StatisticsWarning,
                      stacklevel=outside_level() if stacklevel is None else stacklevel)


def as_bool(values, name: str = "values") -> pd.Series:
    """Coerce a flag to pandas ``boolean`` (True/False/<NA>).

    Accepts bool, ``boolean``, 0/1 numbers (NaN -> <NA>) and the package's flag spellings
    (:func:`dabench_analysis.load._rules.parse_flags`: true/false, 1/0, yes/no, t/f, pass/fail).
    Anything else raises ValueError naming the column and the offending values.
    """
    s = values if isinstance(values, pd.Series) else pd.Series(check_frame(values, name,
                                                                             others=True))
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
    s = values if isinstance(values, pd.Series) else pd.Series(check_frame(values, name,
                                                                             others=True))
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
        raise ValueError(f"{name} holds {len(ids)} runs ({id_list(ids)}); a paired comparison "
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
