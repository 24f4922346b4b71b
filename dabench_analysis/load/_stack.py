"""Files of one kind stacked for the value rules (:mod:`._rules`): :class:`Stack`, and
:class:`Out`, which collects each file's findings and the rejected positions per column."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis.load._findings import report_rows
from dabench_analysis.load._header import TEXT


@dataclass
class Stack:
    """The files of one kind, stacked: ``table`` (frame names), ``starts`` (first row of each
    file, and the total last), ``rows`` (1-based data row in its file of each row), ``names``
    (each file's name in findings) and ``columns`` (each file's own columns: the stack holds
    nulls where a file lacks one)."""

    table: pa.Table
    starts: np.ndarray
    rows: np.ndarray
    names: list[str]
    columns: list[frozenset[str]]

    def files(self, positions: np.ndarray) -> np.ndarray:
        """The file of each stacked row position."""
        return np.searchsorted(self.starts, positions, side="right") - 1

    def holding(self, column: str) -> np.ndarray:
        """Per stacked row, whether its file has ``column``."""
        have = np.array([column in c for c in self.columns], dtype=bool)
        return np.repeat(have, np.diff(self.starts))


class Out:
    """Each file's findings as :func:`convert` makes them, and the stacked positions whose
    value was rejected, per column."""

    def __init__(self, stack: Stack, text_of: Callable | None = None, *, sparse: bool = False):
        self.stack, self.text_of = stack, text_of
        self.findings = defaultdict(list) if sparse else [[] for _ in stack.names]
        self.rejected: dict[str, np.ndarray] = {}

    def apart(self) -> Out:
        """A collector for one column's findings, to :meth:`join` later: its ``findings`` only
        for the files that have one."""
        return Out(self.stack, self.text_of, sparse=True)

    def join(self, other: Out) -> None:
        """Add the findings and rejected positions of an :meth:`apart` collector."""
        for f, found in other.findings.items():
            self.findings[f].extend(found)
        self.rejected.update(other.rejected)

    def written(self, col: str, arr: pa.ChunkedArray, mask: np.ndarray) -> pa.ChunkedArray:
        """``arr`` with the cells of ``mask`` as written in their files (where known)."""
        if self.text_of is None or not mask.any():
            return arr
        text = pc.cast(arr, TEXT).to_pylist()
        for f in np.unique(self.stack.files(np.flatnonzero(mask))):
            a, b = self.stack.starts[f], self.stack.starts[f + 1]
            text[a:b] = self.text_of(int(f), col).to_pylist()
        return pa.chunked_array([pa.array(text, TEXT)])

    def rows(self, mask, values, col: str, check: str, what: str, severity: str = "error"):
        """One finding per file for the stacked rows where ``mask`` is true; ``values``: the
        column as the message quotes it."""
        pos = np.flatnonzero(_numpy_mask(mask))
        if not len(pos):
            return
        if severity == "error":
            self.rejected[col] = np.union1d(self.rejected.get(col, pos[:0]), pos)
        files = self.stack.files(pos)
        bounds = np.flatnonzero(np.diff(files)) + 1
        for part in np.split(pos, bounds):
            f = int(self.stack.files(part[:1])[0])
            shown = values.take(pa.array(part[:5])).to_pylist()
            report_rows(self.findings[f], self.stack.rows[part], shown, self.stack.names[f],
                        col, check, what, severity)


def _numpy_mask(mask) -> np.ndarray:
    if isinstance(mask, np.ndarray):
        return mask.astype(bool, copy=False)
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)
