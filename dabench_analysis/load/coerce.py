# Over 400 lines (under 500): every rule that turns cell text into a value (missing spellings,
# flags, numbers, enums) and the checks on the typed values, shared by the per-file and batched paths.
"""Typing of raw CSV text into catalogue dtypes, and the catalogue's value checks (pandera).

Private to :mod:`dabench_analysis.load`. Two steps, each reporting what it rejects by file, row
(1-based data row, the header not counted) and column:

1. *Parsing* (:func:`type_column`): text -> dtype. A flag that is not 0/1/true/false, a number
   that does not parse, an enum value outside the seed's levels, a count that is not a whole
   number. Vectorised: each column is converted once.
2. *Domain* (:func:`check_domain`): one pandera ``DataFrameSchema`` per set of catalogue
   columns (:func:`domain_schema`): required columns with their dtype and no missing value,
   unique keys, and one row check per kind over all its columns (finite numbers, scores in
   [0, 1], counts and seconds >= 0). Failing values are set to missing; the pandera failure
   cases become :class:`Finding` objects naming file, row and column.

Missing values (:func:`missing_spellings`): in free-text and identifier columns (catalogue kinds
``text`` and ``id``, and columns the catalogue does not know, kept as text) only an empty cell
(``,,`` or ``,"",``) is missing; ``NA``, ``None``, ``null``, ``n/a``, ``NaN``... are kept as
written, byte for byte (a failure reason "None" is a reason). In every other column (numbers,
flags, enums, timestamps) the spellings of :data:`~dabench_analysis.schema.NULL_VALUES` are
missing, as documented there.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow
import pyarrow.compute as pc

from dabench_analysis.load.findings import Finding, report
from dabench_analysis.schema import ENUMS, FLAG_COERCED, FLAG_FALSE, FLAG_TRUE, NULL_VALUES, Column

if TYPE_CHECKING:  # pandera is imported only to describe values that fail (check_domain)
    import pandera.pandas as pa

_TRUE = frozenset(v.lower() for v in FLAG_TRUE)
_FALSE = frozenset(v.lower() for v in FLAG_FALSE)

#: Legacy failure_stage names (seed 000 §Failure Attribution example writes "execution").
LEGACY_STAGES = {"exploration": "UNDERSTAND", "understanding": "UNDERSTAND", "planning": "PLAN",
                 "execution": "EXECUTE", "verification": "VERIFY", "aggregation": "AGGREGATE"}


#: Counts must be below this: float64 holds every integer below 2**53 exactly; from 2**53 on,
#: text such as 9007199254740993 is rounded when parsed, so such values are rejected.
MAX_COUNT = 2 ** 53


INTEGER_KINDS = ("count", "tokens", "bytes")


_FLOAT_KINDS = ("score", "float", "seconds")


#: Kinds whose cells are kept as written: only an empty cell is missing.
VERBATIM_KINDS = ("id", "text")


def missing_spellings(spec: Column | None) -> tuple[str, ...]:
    """The cell texts read as missing in a column.

    Parameters
    ----------
    spec : Column or None
        The column's catalogue entry; None for a column the catalogue does not know.

    Returns
    -------
    tuple of str
        ``("",)`` for kinds ``text`` and ``id`` and unknown columns (only an empty cell is
        missing), else :data:`~dabench_analysis.schema.NULL_VALUES` (compared exactly; flag,
        number and enum parsing also ignore surrounding blanks).

    Examples
    --------
    >>> from dabench_analysis import schema
    >>> missing_spellings(schema.column("failure_reason")), missing_spellings(None)
    (('',), ('',))
    >>> "None" in missing_spellings(schema.column("final_score"))
    True
    """
    return ("",) if spec is None or spec.kind in VERBATIM_KINDS else NULL_VALUES


def arrow_missing(table: pyarrow.Table, specs: Mapping[str, Column]) -> pyarrow.Table:
    """Null the missing cells of a table's text columns, per :func:`missing_spellings`.

    Parameters
    ----------
    table : pyarrow.Table
        Read with ``strings_can_be_null=False``: every text cell (``string``, ``binary`` or
        dictionary of ``string``) as written, ``""`` for an empty one.
    specs : mapping of str to Column
        Column name -> catalogue entry; columns not in it follow the rule of text.

    Returns
    -------
    pyarrow.Table
        The same columns and types; other columns (numbers, flags) untouched.

    Examples
    --------
    >>> from dabench_analysis import schema
    >>> t = pyarrow.table({"root_cause": ["None", ""], "final_score": ["None", "0.5"]})
    >>> arrow_missing(t, {"final_score": schema.column("final_score")}).to_pydict()
    {'root_cause': ['None', None], 'final_score': [None, '0.5']}
    """
    arrays = list(table.columns)
    for i, (name, arr) in enumerate(zip(table.column_names, arrays, strict=True)):
        kind = arr.type.value_type if pyarrow.types.is_dictionary(arr.type) else arr.type
        if kind not in _TEXT_TYPES:
            continue  # numbers and flags: pyarrow's null_values already applied
        spellings = missing_spellings(specs.get(name))
        if spellings == ("",) and arr.type == kind:  # lengths only: the text is not read
            if pc.min(pc.binary_length(arr)).as_py() != 0:
                continue
            arrays[i] = _null_where(arr, lambda a: pc.equal(pc.binary_length(a), 0))
        else:
            binary = kind in (pyarrow.binary(), pyarrow.large_binary())
            found = pyarrow.array([s.encode() for s in spellings] if binary else spellings, kind)
            if pc.any(pc.is_in(arr, value_set=found)).as_py():
                arrays[i] = _null_where(arr, lambda a, found=found: pc.is_in(a, value_set=found))
    return pyarrow.Table.from_arrays(arrays, names=table.column_names)


_TEXT_TYPES = (pyarrow.string(), pyarrow.large_string(), pyarrow.binary(), pyarrow.large_binary())


def _null_where(arr: pyarrow.ChunkedArray, test) -> pyarrow.ChunkedArray:
    """``arr`` with nulls where ``test(arr)`` is true: for each chunk a new validity bitmap over
    the same offsets and bytes (the text is not copied); ``if_else`` for dictionary or sliced
    chunks."""
    keep = pc.and_not_kleene(pc.is_valid(arr), test(arr)).to_numpy(zero_copy_only=False)
    chunks, start = [], 0
    for a in arr.chunks:
        mine, start = keep[start:start + len(a)], start + len(a)
        chunks.append(pc.if_else(pyarrow.array(~mine), pyarrow.scalar(None, a.type), a)
                      if a.offset or a.type not in _TEXT_TYPES
                      else pyarrow.Array.from_buffers(a.type, len(a), [pyarrow.py_buffer(
                          np.packbits(mine, bitorder="little")), *a.buffers()[1:]]))
    return pyarrow.chunked_array(chunks, type=arr.type)


def _missing(text: pd.Series) -> pd.Series:
    return text.isna() | text.isin(NULL_VALUES).fillna(False)


def parse_flags(values: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Flag text -> pandas ``boolean``: the package's one flag parser (loading and statistics).

    Parameters
    ----------
    values : Series
        Text (or objects turned into text); surrounding blanks are ignored, case is not.

    Returns
    -------
    tuple of Series
        ``(flags, coerced, bad)``: the ``boolean`` values (<NA> for missing and bad cells), a mask
        of cells spelled as in :data:`~dabench_analysis.schema.FLAG_COERCED` (unambiguous but not
        what eval-v2 writes) and a mask of cells that are neither a flag nor missing
        (:data:`~dabench_analysis.schema.NULL_VALUES`).

    Examples
    --------
    >>> flags, coerced, bad = parse_flags(pd.Series(["1", "TRUE", "no", "", "2"]))
    >>> flags.tolist(), coerced.tolist(), bad.tolist()
    ([True, True, False, <NA>, <NA>], [False, False, True, False, False], [False, False, False, False, True])
    """
    text = values.astype("string").str.strip()
    low = text.str.lower()
    out = pd.Series(pd.NA, index=values.index, dtype="boolean")
    out[low.isin(_TRUE).fillna(False).to_numpy()] = True
    out[low.isin(_FALSE).fillna(False).to_numpy()] = False
    coerced = low.isin(list(FLAG_COERCED)).fillna(False).astype(bool)
    if coerced.any():
        out[coerced.to_numpy()] = low[coerced].map(FLAG_COERCED).astype("boolean")
    bad = (~_missing(text) & out.isna()).astype(bool)
    return out, coerced, bad


def type_flag(raw: pd.Series, file: str, col: str, findings: list) -> pd.Series:
    """Text -> pandas ``boolean``; 2, 'maybe' and the like are errors (set to <NA>)."""
    out, coerced, bad = parse_flags(raw)
    report_typing(findings, raw, coerced, bad, file, col)
    return out


def report_typing(findings: list, raw: pd.Series, coerced: pd.Series, bad: pd.Series, file: str,
                  col: str, levels: Sequence[str] | None = None) -> None:
    """The findings of :func:`type_flag` (``levels`` None) or :func:`type_enum` for the masks
    of :func:`parse_flags` / :func:`parse_enum` (rows from ``raw``'s index): coerced values
    (warning), then values that are neither (error)."""
    if levels is None:
        coerce = "flag written as 1.0/0.0, yes/no, t/f or pass/fail, read as true/false"
        what = ("flag_coerced", coerce), ("flag_value", "not a 0/1 flag; set to missing")
    else:
        what = (("enum_coerced", f"read case-insensitively as one of {', '.join(levels)}"),
                ("enum_value", f"not one of {', '.join(levels)}; set to missing"))
    report(findings, coerced, raw, file, col, *what[0], "warning")
    report(findings, bad, raw, file, col, *what[1])


def type_number(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Text -> float64 / Int64. Ranges are checked later by :func:`check_domain`."""
    text = raw.astype("string").str.strip()
    missing = _missing(text)
    num = pd.to_numeric(text.mask(missing), errors="coerce").astype("float64")
    bad = ~missing & num.isna()
    if bad.any():
        comma = text.str.fullmatch(r"-?\d+,\d+").fillna(False) & bad
        pct = text.str.fullmatch(r"-?[\d.]+\s*%").fillna(False) & bad
        hint = (" (decimal comma? eval-v2 writes '.' as decimal separator)" if comma.any() else
                " (percent sign? scores are on a [0, 1] scale)" if pct.any() else "")
        report(findings, bad, raw, file, spec.name, "number_value",
               f"not a number{hint}; set to missing")
    return num if spec.kind not in INTEGER_KINDS else to_integer(num, spec, file, findings,
                                                                 shown=raw)


def to_integer(num: pd.Series, spec: Column, file: str, findings: list,
               shown: pd.Series | None = None) -> pd.Series:
    """float64 -> Int64; values that are not whole numbers below 2**53 are errors (missing)."""
    arr = num.to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(arr) & (~np.isfinite(arr) | (np.abs(arr) >= MAX_COUNT)
                                | (arr != np.floor(arr)))
    if bad.any():
        report(findings, bad, num if shown is None else shown, file, spec.name, "integer",
               "not a whole number below 2**53; set to missing")
        arr = np.where(bad, np.nan, arr)
    return pd.Series(pd.array(arr, dtype="Int64"), index=num.index)


def type_enum(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Text -> categorical in catalogue order; case variants and legacy names are coerced."""
    levels = ENUMS[spec.name]
    if raw.isna().all() or (raw.isin(levels) | raw.isna()).all():  # as eval-v2 writes them
        return pd.Series(pd.Categorical(raw.astype(object).where(raw.notna(), None),
                                        dtype=spec.dtype), index=raw.index)
    fixed, coerced, unknown = parse_enum(raw, spec)
    report_typing(findings, raw, coerced, unknown, file, spec.name, levels)
    return fixed.astype(spec.dtype)


def parse_enum(raw: pd.Series, spec: Column) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Enum text -> ``(level or NaN, coerced, unknown)``, value by value: surrounding blanks,
    case variants and legacy stage names are read as the level (coerced unless only blanks
    differ); a value that is none of them and not missing is unknown."""
    levels = ENUMS[spec.name]
    text = raw.astype("string").str.strip()
    missing = _missing(text)
    text = text.mask(missing)
    lookup = {lvl.lower(): lvl for lvl in levels}
    if spec.name == "failure_stage":
        lookup |= LEGACY_STAGES
    exact = text.isin(levels).fillna(False)
    fixed = text.str.lower().map(lookup)
    return fixed, ~exact & fixed.notna(), ~missing & fixed.isna()


def type_column(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Dispatch on the catalogue kind of ``spec``."""
    if spec.kind == "flag":
        return type_flag(raw, file, spec.name, findings)
    if spec.kind == "enum":
        return type_enum(raw, spec, file, findings)
    if spec.kind in ("id", "text", "timestamp"):
        text = raw.astype("string")
        return text.mask(text.isin(missing_spellings(spec)).fillna(False))
    return type_number(raw, spec, file, findings)


def _floats(sub: pd.DataFrame) -> np.ndarray:
    if sub.shape[1] == 0:
        return np.empty((len(sub), 0))
    return np.column_stack([sub[c].to_numpy(dtype="float64", na_value=np.nan)
                            for c in sub.columns])


def _ok_finite(f: np.ndarray) -> np.ndarray:
    return ~np.isinf(f)


def _ok_unit(f: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(f) | ((f >= 0) & (f <= 1))


def _ok_non_negative(f: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(f) | (f >= 0)


#: check name -> (kinds it applies to, test on a float array (True = valid), finding check,
#: message). Missing values pass; an infinite value fails ``finite`` only.
WIDE_CHECKS = {
    "finite": (_FLOAT_KINDS, _ok_finite, "finite", "infinite value"),
    "unit_interval": (("score",), _ok_unit, "range", "outside [0, 1]"),
    "non_negative": (("seconds", *INTEGER_KINDS), _ok_non_negative, "range", "negative"),
}


def _values_ok(df: pd.DataFrame, specs: tuple[Column, ...]) -> np.ndarray:
    """Per row, whether every numeric column of ``specs`` passes :data:`WIDE_CHECKS` (one
    pass over one float matrix, not a check per column)."""
    ok = np.ones(len(df), dtype=bool)
    cols = [s.name for s in specs]
    if cols:
        f = _floats(df[cols])
        for kinds, test, *_ in WIDE_CHECKS.values():
            idx = [i for i, s in enumerate(specs) if s.kind in kinds]
            if idx:
                ok &= test(f[:, idx]).all(axis=1)
    return ok


def _values_check(specs: tuple[Column, ...]) -> pa.Check:
    """One pandera row check of every numeric column against :data:`WIDE_CHECKS`
    (:func:`_values_ok`); :func:`_wide_findings` then names the failing columns of the failing
    rows."""
    import pandera.pandas as pa

    return pa.Check(lambda df: pd.Series(_values_ok(df, specs), index=df.index),
                    name="catalogue_values")


def _not_null(specs: Iterable[Column]) -> list[Column]:
    """The columns that must hold a value: required ones, except ``run_id`` (the loader fills
    it from the folder name)."""
    return [s for s in specs if s.required and s.name != "run_id"]


def _numeric(specs: Iterable[Column]) -> tuple[Column, ...]:
    return tuple(s for s in specs if s.kind in (*_FLOAT_KINDS, *INTEGER_KINDS))


def _domain_passes(df: pd.DataFrame, specs: tuple[Column, ...], keys: tuple[str, ...]) -> bool:
    """Whether :func:`domain_schema` would report nothing on ``df``, checked without pandera
    (as strict or stricter: the same columns, of exactly their dtype with no missing value, no
    repeated key, every numeric value passing :data:`WIDE_CHECKS`)."""
    if any(df[s.name].dtype != s.dtype or df[s.name].isna().any() for s in _not_null(specs)):
        return False
    if keys and df.duplicated(list(keys)).any():
        return False
    return bool(_values_ok(df, _numeric(specs)).all())


@functools.lru_cache(maxsize=64)
def domain_schema(specs: tuple[Column, ...], keys: tuple[str, ...] = ()) -> pa.DataFrameSchema:
    """The pandera schema of a set of catalogue columns (cached).

    Required columns (except ``run_id``, which the loader fills from the folder name) are
    declared with their dtype and may not hold missing values; ``keys`` must be unique
    together; one row check applies :data:`WIDE_CHECKS` to every numeric column.
    """
    import pandera.pandas as pa

    cols = {s.name: pa.Column(s.dtype, nullable=False, required=False) for s in _not_null(specs)}
    return pa.DataFrameSchema(cols, checks=[_values_check(_numeric(specs))], unique=list(keys) or None,
                              report_duplicates="all", strict=False, name="eval-v2 catalogue")


def _duplicates(df: pd.DataFrame, keys: Sequence[str], file: str, severity: str,
                note: str) -> list[Finding]:
    dup = df.duplicated(list(keys), keep=False) & df[list(keys)].notna().all(axis=1)
    if not dup.any():
        return []
    out = []
    key_vals = [df.loc[dup, k] for k in keys]
    check = "duplicate_task_id" if list(keys) == ["task_id"] else "duplicate_key"
    for key, rows in (df.index[dup].to_series(index=df.index[dup]) + 1).groupby(key_vals):
        key = key if isinstance(key, tuple) else (key,)
        what = ", ".join(f"{k} {v!r}" for k, v in zip(keys, key, strict=True))
        rs = tuple(int(r) for r in rows)
        out.append(Finding(severity, file, rs[1], keys[-1], check,
                           f"{what} appears in rows {', '.join(map(str, rs))}{note}", rs))
    return out


def check_domain(df: pd.DataFrame, specs: Iterable[Column], file: str, findings: list, *,
                 keys: Sequence[str] = (), key_severity: str = "error",
                 key_note: str = "") -> pd.DataFrame:
    """Validate typed columns with the catalogue's pandera schema; failing values -> missing.

    Appends findings (dtype, finite, range, required_value: error; duplicate keys:
    ``key_severity``; missing flag values: info) and returns ``df`` with the rejected values set
    to missing. The index of ``df`` is the 0-based data row.
    """
    present = tuple(s for s in specs if s.name in df.columns)
    keys = tuple(k for k in keys if k in df.columns)
    try:
        clean = _domain_passes(df, present, keys)
    except (TypeError, ValueError):  # a column pandera rejects by dtype: it describes that
        clean = False
    if clean:  # pandera only describes what fails
        _missing_flags(df, present, file, findings)
        return df
    from pandera.errors import SchemaErrors

    try:
        domain_schema(present, keys).validate(df, lazy=True, inplace=True)
        cases = None
    except SchemaErrors as exc:
        cases = exc.failure_cases
    _missing_flags(df, present, file, findings)
    if cases is None:
        return df
    rejected: dict[str, set[int]] = {}
    for f in findings:
        if f.severity == "error" and f.file == file and f.column:
            rejected.setdefault(f.column, set()).update(f.rows)
    for (col, check), grp in cases.groupby(["column", "check"], sort=False, dropna=False):
        if str(check).startswith("dtype"):
            findings.append(Finding("error", file, None, col, "dtype",
                                    f"dtype {grp['failure_case'].iloc[0]}, expected {check}"))
        elif check == "not_nullable":  # a value rejected while parsing is reported once
            mask = pd.Series(df.index.isin(grp["index"].dropna()), index=df.index)
            mask &= ~df.index.isin([r - 1 for r in rejected.get(col, ())])
            report(findings, mask, df[col], file, col, "required_value",
                   "missing value in a required column")
    failing = cases.loc[cases["check"] == "catalogue_values", "index"].dropna().unique()
    if len(failing):
        for check in WIDE_CHECKS:
            _wide_findings(df, present, check, failing, file, findings)
    if keys and cases["check"].astype(str).str.contains("uniqueness").any():
        findings.extend(_duplicates(df, keys, file, key_severity, key_note))
    return df


def _wide_findings(df: pd.DataFrame, specs: Sequence[Column], check: str, index, file: str,
                   findings: list) -> None:
    """Per-column findings for the failing rows of a wide check; those values -> missing."""
    kinds, test, name, what = WIDE_CHECKS[check]
    cols = [s.name for s in specs if s.kind in kinds]
    sub = df.loc[index, cols]
    bad = pd.DataFrame(~test(_floats(sub)), index=sub.index, columns=cols)
    for col in cols:
        if bad[col].any():
            mask = pd.Series(df.index.isin(sub.index[bad[col].to_numpy()]), index=df.index)
            text = what
            if check == "unit_interval" and df.loc[mask, col].between(1, 100).all():
                text += " (percentages? scores are on a [0, 1] scale)"
            report(findings, mask, df[col], file, col, name, text + "; set to missing")
            df[col] = df[col].mask(mask)


def _missing_flags(df: pd.DataFrame, specs: Sequence[Column], file: str,
                   findings: list) -> None:
    """Info finding per flag column with missing values (pitfall P06: never a silent pass/fail)."""
    flags = [s.name for s in specs if s.kind == "flag"]
    if not flags or df.empty:
        return
    counts = df[flags].isna().sum()
    for col, n in counts[counts > 0].items():
        findings.append(missing_flags_finding(file, col, n, len(df)))


def missing_flags_finding(file: str, col: str, n: int, total: int) -> Finding:
    """The info finding for ``n`` missing values of a flag column (pitfall P06)."""
    return Finding("info", file, None, col, "missing_values",
                   f"{n} of {total} values missing (read as <NA>: counted neither as true nor "
                   "as false)")
