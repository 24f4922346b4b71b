"""Input handling shared by the statistics: flags and scores coerced with clear errors, the level
of an interval checked, two runs paired on their task key, and :class:`StatisticsWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from dabench_analysis.load.coerce import parse_flags
from dabench_analysis.schema import (
    check_threshold,  # noqa: F401  (re-exported: the one check)
    require_columns,
)


class StatisticsWarning(UserWarning):
    """Degenerate or incomplete input: rows dropped, a test not defined, an interval of width 0."""


def warn(notes: Sequence[str], stacklevel: int = 3) -> None:
    """Emit one :class:`StatisticsWarning` joining ``notes`` (nothing if empty)."""
    notes = [n for n in notes if n]
    if notes:
        warnings.warn("; ".join(notes), StatisticsWarning, stacklevel=stacklevel)


def as_bool(values, name: str = "values") -> pd.Series:
    """Coerce a flag to pandas ``boolean`` (True/False/<NA>).

    Accepts bool, ``boolean``, 0/1 numbers (NaN -> <NA>) and the package's flag spellings
    (:func:`dabench_analysis.load.coerce.parse_flags`: true/false, 1/0, yes/no, t/f, pass/fail).
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


def pair_runs(baseline, proposed, metric: str, on: str, convert: Callable):
    """Align two runs on ``on``; return (frame with baseline/proposed, counts, notes)."""
    notes = []
    if isinstance(baseline, pd.DataFrame) or isinstance(proposed, pd.DataFrame):
        for name, fr in (("baseline", baseline), ("proposed", proposed)):
            require_columns(fr, [on, metric], name)
            dup = fr[on][fr[on].duplicated()]
            if len(dup):
                raise ValueError(f"{on!r} is not unique in {name}: {dup.iloc[0]!r} repeats "
                                 f"({len(dup)} duplicate rows)")
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
