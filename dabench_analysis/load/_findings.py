"""What loading reports: :class:`Finding` (severity, file, row, column, check, message) and
:class:`RunLoadError`, the error that names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_ROWS_LISTED = 5


class RunLoadError(ValueError):
    """A run (or one of its files) could not be loaded; ``findings`` lists every problem and
    ``message`` is the text without them (to re-raise with the run's folder in front), unless
    ``listed`` is False: then ``message`` already lists them (under each run of a sweep)."""

    def __init__(self, message: str, findings: Sequence[Finding] = (), *, listed: bool = True):
        self.message, self.findings = message, list(findings)
        lines = [message] + ([f"  - {f}" for f in self.findings] if listed else [])
        super().__init__("\n".join(lines))


#: Longest finding message kept: longer ones (a quoted multi-megabyte text cell) are cut, with
#: their length said.
MAX_MESSAGE = 500


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
        if len(self.message) > MAX_MESSAGE:  # a finding quotes data: never a whole 5 MB cell
            cut = self.message[:MAX_MESSAGE - 40]
            object.__setattr__(self, "message", f"{cut}… ({len(self.message):,} characters)")

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{self.severity}: {where}: {self.message} [{self.check}]"


def report_rows(findings: list, rows, values, file: str, col: str | None, check: str,
                what: str, severity: str = "error") -> None:
    """Append one finding for ``rows`` (1-based data rows) whose values are ``values``.

    The message is ``"<what>: row 3 ('2'), row 5 ('maybe') and 4 more"`` (the first
    :data:`MAX_ROWS_LISTED` rows with their values as written); ``row`` is set when there is
    exactly one. Nothing is appended for no rows.

    Examples
    --------
    >>> out = []
    >>> report_rows(out, [3, 5], ["2", "maybe"], "task_metrics.csv", "execution_success",
    ...             "flag_value", "not a 0/1 flag; set to missing")
    >>> print(out[0])
    error: task_metrics.csv, column 'execution_success': not a 0/1 flag; set to missing: row 3 ('2'), row 5 ('maybe') [flag_value]
    """
    rows = tuple(int(r) for r in rows)
    if not rows:
        return
    shown_vals = list(values[:MAX_ROWS_LISTED])
    shown = ", ".join(f"row {r} ({v!r})" for r, v in zip(rows, shown_vals, strict=False))
    more = f" and {len(rows) - MAX_ROWS_LISTED} more" if len(rows) > MAX_ROWS_LISTED else ""
    findings.append(Finding(severity, file, rows[0] if len(rows) == 1 else None, col, check,
                            f"{what}: {shown}{more}", rows))


#: Checks whose rows a task file loses (each row of such a finding is left out): malformed
#: lines of the CSV reader and rows without a key; a repeated key loses all rows but the first.
DROPPING_CHECKS = ("column_count", "trailing_delimiter", "missing_key")


def dropped_rows(findings: Sequence[Finding]) -> int:
    """Rows of a task file its findings say were left out (:data:`DROPPING_CHECKS`, and every
    row of a repeated ``task_id`` but its first), for the warning of a non-strict load.

    Examples
    --------
    >>> dropped_rows([Finding("error", "f.json", None, "trial", "missing_key", "no trial",
    ...                       (3, 4)),
    ...               Finding("error", "f.json", None, "task_id", "duplicate_task_id", "",
    ...                       (1, 5, 6))])
    4
    """
    n = sum(len(f.rows) for f in findings if f.check in DROPPING_CHECKS)
    return n + sum(len(f.rows) - 1 for f in findings if f.check == "duplicate_task_id")


def report(findings: list, mask, values, file: str, col: str | None, check: str, what: str,
           severity: str = "error") -> None:
    """:func:`report_rows` for the rows of ``values`` (a Series indexed by the 0-based data row)
    where ``mask`` is true."""
    import numpy as np

    flags = np.asarray(mask.to_numpy(dtype=bool, na_value=False) if hasattr(mask, "to_numpy")
                       else mask, dtype=bool)
    report_rows(findings, values.index[flags].to_numpy() + 1, values[flags].tolist(), file, col,
                check, what, severity)
