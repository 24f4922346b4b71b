"""Typing of raw CSV text into catalogue dtypes, with findings for every value it rejects.

Private to :mod:`dabench_analysis.load`. The conversions are vectorised: each column is parsed
once, and the rows whose text could not be converted are reported by row number (1-based data
row, the header not counted) and column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

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


@dataclass(frozen=True)
class Finding:
    """One thing found wrong (or coerced) in a run's files.

    Attributes
    ----------
    severity : {"error", "warning", "info"}
    file : str
        File name relative to the run directory, e.g. ``task_metrics.csv``.
    row : int or None
        1-based data row (header not counted), None for file- or column-level findings.
    column : str or None
    check : str
        Short machine name of the check, e.g. ``flag_value``.
    message : str
    """

    severity: str
    file: str
    row: int | None
    column: str | None
    check: str
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{self.severity}: {where}: {self.message} [{self.check}]"


def _rows_text(mask: pd.Series, values: pd.Series) -> tuple[int | None, str]:
    idx = np.flatnonzero(mask.to_numpy())
    shown = ", ".join(f"row {i + 1} ({values.iloc[i]!r})" for i in idx[:MAX_ROWS_LISTED])
    more = f" and {len(idx) - MAX_ROWS_LISTED} more" if len(idx) > MAX_ROWS_LISTED else ""
    return int(idx[0]) + 1, shown + more


def _report(findings, mask, raw, file, col, check, what, severity="error") -> None:
    if not mask.any():
        return
    first, rows = _rows_text(mask, raw)
    row = first if mask.sum() == 1 else None
    findings.append(Finding(severity, file, row, col, check, f"{what}: {rows}"))


def type_flag(raw: pd.Series, file: str, col: str, findings: list) -> pd.Series:
    """Text -> pandas ``boolean``; 2, 'maybe' and the like are errors (set to <NA>)."""
    text = raw.astype("string").str.strip()
    out = pd.Series(pd.NA, index=raw.index, dtype="boolean")
    out[text.isin(FLAG_TRUE).fillna(False)] = True
    out[text.isin(FLAG_FALSE).fillna(False)] = False
    coerced = text.isin(list(FLAG_COERCED)).fillna(False)
    if coerced.any():
        out[coerced] = text[coerced].map(FLAG_COERCED).astype("boolean")
        _report(findings, coerced, raw, file, col, "flag_coerced",
                "flag written as 1.0/0.0 or yes/no, read as true/false", "warning")
    bad = ~text.isna() & ~text.isin(NULL_VALUES).fillna(False) & out.isna()
    _report(findings, bad, raw, file, col, "flag_value", "not a 0/1 flag")
    return out


def type_number(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Text -> float64 / Int64 with range checks from the catalogue kind."""
    text = raw.astype("string").str.strip()
    missing = text.isna() | text.isin(NULL_VALUES).fillna(False)
    num = pd.to_numeric(text.mask(missing), errors="coerce")
    bad = ~missing & num.isna()
    if bad.any():
        comma = text.str.fullmatch(r"-?\d+,\d+").fillna(False) & bad
        hint = " (decimal comma? eval-v2 writes '.' as decimal separator)" if comma.any() else ""
        _report(findings, bad, raw, file, spec.name, "number_value", "not a number" + hint)
    return check_number(num.astype("float64"), spec, file, findings)


def check_number(num: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Range checks on parsed numbers (float64); values that fail become missing."""
    num = num.astype("float64")
    inf = pd.Series(np.isinf(num.fillna(0).to_numpy()), index=num.index)
    _report(findings, inf, num, file, spec.name, "finite", "infinite value")
    num = num.mask(inf)
    if spec.kind == "score":
        out = ((num < 0) | (num > 1)).fillna(False)
        hint = ""
        if out.any() and num.max() <= 100 and num.min() >= 0:
            hint = " (percentages? scores are on a [0, 1] scale)"
        _report(findings, out, num, file, spec.name, "range", "outside [0, 1]" + hint)
        num = num.mask(out)
    elif spec.kind in ("count", "tokens", "bytes", "seconds"):
        neg = (num < 0).fillna(False)
        _report(findings, neg, num, file, spec.name, "range", "negative")
        num = num.mask(neg)
    if spec.kind in ("count", "tokens", "bytes"):
        frac = (num.notna() & (num != np.floor(num.fillna(0)))).fillna(False)
        _report(findings, frac, num, file, spec.name, "integer", "not a whole number")
        num = num.mask(frac)
        return num.round().astype("Int64")
    return num


def type_enum(raw: pd.Series, spec: Column, file: str, findings: list) -> pd.Series:
    """Text -> categorical in catalogue order; case variants and legacy names are coerced."""
    levels = ENUMS[spec.name]
    text = raw.astype("string").str.strip()
    missing = text.isna() | text.isin(NULL_VALUES).fillna(False)
    text = text.mask(missing)
    lookup = {lvl.lower(): lvl for lvl in levels}
    if spec.name == "failure_stage":
        lookup |= LEGACY_STAGES
    exact = text.isin(levels).fillna(False)
    fixed = text.str.lower().map(lookup)
    coerced = ~exact & fixed.notna()
    _report(findings, coerced, raw, file, spec.name, "enum_coerced",
            f"read case-insensitively as one of {', '.join(levels)}", "warning")
    unknown = ~missing & fixed.isna()
    _report(findings, unknown, raw, file, spec.name, "enum_value",
            f"not one of {', '.join(levels)}")
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
