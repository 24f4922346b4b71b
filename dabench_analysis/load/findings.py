"""What loading reports: :class:`Finding` (severity, file, row, column, check, message) and
:class:`RunLoadError`, the error that names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_ROWS_LISTED = 5


class RunLoadError(ValueError):
    """A run (or one of its files) could not be loaded; ``findings`` lists every problem and
    ``message`` is the text without them (to re-raise with the run's folder in front)."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()):
        self.message, self.findings = message, list(findings)
        lines = [message] + [f"  - {f}" for f in self.findings]
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


def report(findings: list, mask: pd.Series, values: pd.Series, file: str, col: str | None,
           check: str, what: str, severity: str = "error") -> None:
    """Append one finding for the rows where ``mask`` is true (index = 0-based data row)."""
    flags = np.asarray(mask.to_numpy(dtype=bool, na_value=False) if isinstance(mask, pd.Series)
                       else mask, dtype=bool)
    if not flags.any():
        return
    mask = pd.Series(flags, index=values.index)
    rows = tuple(int(i) + 1 for i in values.index[mask.to_numpy()])
    shown_vals = values[mask].iloc[:MAX_ROWS_LISTED].astype(object).tolist()
    shown = ", ".join(f"row {r} ({v!r})" for r, v in zip(rows, shown_vals, strict=False))
    more = f" and {len(rows) - MAX_ROWS_LISTED} more" if len(rows) > MAX_ROWS_LISTED else ""
    findings.append(Finding(severity, file, rows[0] if len(rows) == 1 else None, col, check,
                            f"{what}: {shown}{more}", rows))
