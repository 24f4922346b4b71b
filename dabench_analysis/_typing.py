"""Typing of raw CSV text into catalogue dtypes, and the catalogue's value checks (pandera).

Private to :mod:`dabench_analysis.load`. Two steps, each reporting what it rejects by file, row
(1-based data row, the header not counted) and column:

1. *Parsing* (:func:`type_column`): text -> dtype. A flag that is not 0/1/true/false, a number
   that does not parse, an enum value outside the seed's levels, a count that is not a whole
   number. Vectorised: each column is converted once.
2. *Domain* (:func:`check_domain`): one pandera :class:`~pandera.api.pandas.container.DataFrameSchema`
   per catalogue, built from the column kinds: dtype, finite, scores in [0, 1], counts/seconds
   >= 0, required values present, unique keys. Failing values are set to missing; the pandera
   failure cases become :class:`Finding` objects.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaErrors

from dabench_analysis.schema import ENUMS, Column

#: Text accepted as a true/false flag without comment (seed 000 writes 0/1; pandas/pyarrow write
#: True/False).
FLAG_TRUE = ("1", "true", "True", "TRUE")
FLAG_FALSE = ("0", "false", "False", "FALSE")
#: Accepted with a warning finding: unambiguous but not what eval-v2 writes.
FLAG_COERCED = {"1.0": True, "0.0": False, "yes": True, "no": False, "Yes": True, "No": False,
                "YES": True, "NO": False, "t": True, "f": False, "T": True, "F": False}
#: Text read as a missing value.
NULL_VALUES = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "none", "<NA>")
#: Legacy failure_stage names (seed 000 §Failure Attribution example writes "execution").
LEGACY_STAGES = {"exploration": "UNDERSTAND", "understanding": "UNDERSTAND", "planning": "PLAN",
                 "execution": "EXECUTE", "verification": "VERIFY", "aggregation": "AGGREGATE"}
MAX_ROWS_LISTED = 5
#: Largest count accepted from text (float64 holds every integer up to 2**53 exactly).
MAX_COUNT = 2 ** 53
_INTEGER_KINDS = ("count", "tokens", "bytes")
_FLOAT_KINDS = ("score", "float", "seconds")


class RunLoadError(ValueError):
    """A run (or one of its files) could not be loaded; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()):
        self.findings = list(findings)
        lines = [message] + [f"  - {f}" for f in self.findings]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Finding:
    """One thing found wrong (or coerced) in a run's files.

    Attributes
    ----------
    severity : {"error", "warning", "info"}
    file : str
        File name relative to the run directory, e.g. ``task_metrics.csv``.
    row : int or None
        1-based data row (header not counted) when the finding concerns exactly one row, else
        None (file- or column-level findings, or several rows: see ``rows``).
    column : str or None
    check : str
        Short machine name of the check, e.g. ``flag_value``.
    message : str
    rows : tuple of int
        Every 1-based data row concerned (empty for file- or column-level findings).
    """

    severity: str
    file: str
    row: int | None
    column: str | None
    check: str
    message: str
    rows: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.row is not None and not self.rows:
            object.__setattr__(self, "rows", (int(self.row),))

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{self.severity}: {where}: {self.message} [{self.check}]"


def report(findings: list, mask: pd.Series, values: pd.Series, file: str, col: str | None,
           check: str, what: str, severity: str = "error") -> None:
    """Append one finding for the rows where ``mask`` is true (index = 0-based data row)."""
    mask = pd.Series(mask, index=values.index).fillna(False).astype(bool)
    if not mask.any():
        return
    rows = tuple(int(i) + 1 for i in values.index[mask.to_numpy()])
    shown_vals = values[mask].iloc[:MAX_ROWS_LISTED].astype(object).tolist()
    shown = ", ".join(f"row {r} ({v!r})" for r, v in zip(rows, shown_vals, strict=False))
    more = f" and {len(rows) - MAX_ROWS_LISTED} more" if len(rows) > MAX_ROWS_LISTED else ""
    findings.append(Finding(severity, file, rows[0] if len(rows) == 1 else None, col, check,
                            f"{what}: {shown}{more}", rows))


def _missing(text: pd.Series) -> pd.Series:
    return text.isna() | text.isin(NULL_VALUES).fillna(False)


def type_flag(raw: pd.Series, file: str, col: str, findings: list) -> pd.Series:
    """Text -> pandas ``boolean``; 2, 'maybe' and the like are errors (set to <NA>)."""
    text = raw.astype("string").str.strip()
    out = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    out[text.isin(FLAG_TRUE).fillna(False)] = True
    out[text.isin(FLAG_FALSE).fillna(False)] = False
    coerced = text.isin(list(FLAG_COERCED)).fillna(False)
    if coerced.any():
        out[coerced] = text[coerced].map(FLAG_COERCED).astype("boolean")
        report(findings, coerced, raw, file, col, "flag_coerced",
               "flag written as 1.0/0.0 or yes/no, read as true/false", "warning")
    bad = ~_missing(text) & out.isna()
    report(findings, bad, raw, file, col, "flag_value", "not a 0/1 flag; set to missing")
    return out


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
    if spec.kind not in _INTEGER_KINDS:
        return num
    arr = num.to_numpy()
    with np.errstate(invalid="ignore"):
        frac = ~np.isnan(arr) & (~np.isfinite(arr) | (np.abs(arr) > MAX_COUNT)
                                 | (arr != np.floor(np.nan_to_num(arr))))
    frac = pd.Series(frac, index=raw.index)
    report(findings, frac, raw, file, spec.name, "integer",
           f"not a whole number up to 2**53; set to missing")
    return num.mask(frac).round().astype("Int64")


def type_enum(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Text -> categorical in catalogue order; case variants and legacy names are coerced."""
    levels = ENUMS[spec.name]
    text = raw.astype("string").str.strip()
    missing = _missing(text)
    text = text.mask(missing)
    lookup = {lvl.lower(): lvl for lvl in levels}
    if spec.name == "failure_stage":
        lookup |= LEGACY_STAGES
    exact = text.isin(levels).fillna(False)
    fixed = text.str.lower().map(lookup)
    coerced = ~exact & fixed.notna()
    report(findings, coerced, raw, file, spec.name, "enum_coerced",
           f"read case-insensitively as one of {', '.join(levels)}", "warning")
    unknown = ~missing & fixed.isna()
    report(findings, unknown, raw, file, spec.name, "enum_value",
           f"not one of {', '.join(levels)}; set to missing")
    return fixed.astype(spec.dtype)


def type_column(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Dispatch on the catalogue kind of ``spec``."""
    if spec.kind == "flag":
        return type_flag(raw, file, spec.name, findings)
    if spec.kind == "enum":
        return type_enum(raw, spec, file, findings)
    if spec.kind in ("id", "text", "timestamp"):
        text = raw.astype("string")
        return text.mask(text.isin(NULL_VALUES).fillna(False))
    return type_number(raw, spec, file, findings)


# --- domain checks (pandera) ---------------------------------------------------------------

def _finite(s: pd.Series) -> pd.Series:
    return pd.Series(np.isfinite(s.to_numpy(dtype="float64", na_value=0.0)), index=s.index)


#: pandera check name -> (finding check, message)
_CHECK_TEXT = {
    "finite": ("finite", "infinite value"),
    "unit_interval": ("range", "outside [0, 1]"),
    "non_negative": ("range", "negative"),
    "not_nullable": ("required_value", "missing value in a required column"),
}


def _checks(spec: Column) -> list[pa.Check]:
    checks = []
    if spec.kind in _FLOAT_KINDS:
        checks.append(pa.Check(_finite, name="finite"))
    if spec.kind == "score":
        checks.append(pa.Check(lambda s: ~_finite(s) | ((s >= 0) & (s <= 1)),
                               name="unit_interval"))
    elif spec.kind in ("seconds", *_INTEGER_KINDS):
        checks.append(pa.Check(lambda s: ~_finite(s) | (s >= 0), name="non_negative"))
    return checks


@functools.lru_cache(maxsize=64)
def domain_schema(specs: tuple[Column, ...], keys: tuple[str, ...] = ()) -> pa.DataFrameSchema:
    """The pandera schema of a set of catalogue columns (cached).

    Required columns (except ``run_id``, which the loader fills from the folder name) may not
    hold missing values; ``keys`` must be unique together.
    """
    cols = {s.name: pa.Column(s.dtype, checks=_checks(s), required=False,
                              nullable=not (s.required and s.name != "run_id")) for s in specs}
    return pa.DataFrameSchema(cols, unique=list(keys) or None, report_duplicates="all",
                              strict=False, name="eval-v2 catalogue")


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
        elif check in _CHECK_TEXT:
            name, what = _CHECK_TEXT[check]
            mask = pd.Series(df.index.isin(grp["index"].dropna()), index=df.index)
            if check == "unit_interval" and df[col][mask].between(1, 100).all():
                what += " (percentages? scores are on a [0, 1] scale)"
            if name == "required_value":  # a value rejected while parsing is reported once
                mask &= ~df.index.isin([r - 1 for r in rejected.get(col, ())])
            report(findings, mask, df[col], file, col, name,
                   what if name == "required_value" else what + "; set to missing")
            if name != "required_value":
                df[col] = df[col].mask(mask)
    if keys and cases["check"].astype(str).str.contains("uniqueness").any():
        findings.extend(_duplicates(df, keys, file, key_severity, key_note))
    return df


def _missing_flags(df: pd.DataFrame, specs: Sequence[Column], file: str,
                   findings: list) -> None:
    """Info finding per flag column with missing values (pitfall P06: never a silent pass/fail)."""
    flags = [s.name for s in specs if s.kind == "flag"]
    if not flags or df.empty:
        return
    counts = df[flags].isna().sum()
    for col, n in counts[counts > 0].items():
        findings.append(Finding("info", file, None, col, "missing_values",
                                f"{n} of {len(df)} values missing (read as <NA>: counted neither "
                                "as true nor as false)"))
