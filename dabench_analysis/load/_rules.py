# Over 400 lines (under 500): every rule that turns cell text into a value and every check on
# the values, so that what the loader accepts can be read in one place.
"""The catalogue's value rules, evaluated once per column over every file of a sweep.

:func:`convert` takes the files of one kind stacked into one Arrow table (:class:`Stack`, as
:mod:`dabench_analysis.load._csv` read them) and gives the typed table and each file's findings:

1. *Missing values* (:func:`dabench_analysis.schema.rules.missing_spellings`): in text and
   identifier columns (and columns the catalogue does not know) only an empty cell is missing;
   ``NA``, ``None``, ``null`` are kept as written. In number, flag, enum and timestamp columns
   the spellings of :data:`~dabench_analysis.schema.NULL_VALUES` are missing.
2. *Typing*: flags to bool (:data:`~dabench_analysis.schema.FLAG_TRUE` / ``FLAG_FALSE``;
   ``FLAG_COERCED`` spellings with a warning), enums onto the seed's levels (case variants and
   legacy stage names with a warning), numbers from text (a file read as text), whole numbers
   checked and cast to int64.
3. *Domain* (:data:`~dabench_analysis.schema.rules.RULES`): finite numbers, scores in [0, 1],
   counts and times >= 0; required values; in a task file, a value in every key column and
   keys unique within each file (:mod:`dabench_analysis.load._keys`).

A value that fails is set to missing. The fast path of every step is one kernel on the whole
column (an index lookup, a min/max); only a column that fails is looked at value by value, and
only its failing values are described (file, row, column, value as written, check).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis.load._findings import Finding
from dabench_analysis.load._header import TEXT
from dabench_analysis.load._keys import repeated_keys
from dabench_analysis.load._stack import Out, Stack
from dabench_analysis.schema import ENUMS, FLAG_TRUE, NULL_VALUES
from dabench_analysis.schema._files import FileKind
from dabench_analysis.schema._outcome import errored
from dabench_analysis.schema.columns import FLAG_COERCED, FLAG_FALSE
from dabench_analysis.schema.rules import (
    FLOAT_KINDS,
    INTEGER_KINDS,
    LEGACY_STAGES,
    MAX_COUNT,
    OUTCOME_FLAG_COLUMNS,
    RULES,
    missing_spellings,
)

_NULLS = pa.array(NULL_VALUES, TEXT)
_PLAIN_FLAGS = pa.array([*FLAG_TRUE, *FLAG_FALSE], TEXT)
_PLAIN_VALUES = pa.array([True] * len(FLAG_TRUE) + [False] * len(FLAG_FALSE))
_ALL_FLAGS = {**{v.lower(): True for v in FLAG_TRUE}, **{v.lower(): False for v in FLAG_FALSE},
              **FLAG_COERCED}
_FLAG_KEYS = pa.array(list(_ALL_FLAGS), TEXT)
_FLAG_VALUES = pa.array(list(_ALL_FLAGS.values()))
_COERCED_KEYS = pa.array(list(FLAG_COERCED), TEXT)
_DIGIT_FLAGS = pa.array(["0", "1", "0.0", "1.0"], TEXT)
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$"


def convert(stack: Stack, kind: FileKind, text_of: Callable | None = None, *, threads: int = 1
            ) -> tuple[pa.Table, list[list[Finding]], np.ndarray]:
    """Type and check every column of ``stack`` (see the module notes).

    Parameters
    ----------
    stack : Stack
        Files of ``kind``: numbers ``float64`` or text (a file read as text), everything else
        text as written.
    kind : FileKind
        Which catalogue the columns belong to.
    text_of : callable, optional
        ``text_of(file, column)``: that column of that file (its position in the stack) as
        written, for the one case where a parsed number cannot show it: a whole number of
        2**53 or more, which float64 rounds.
    threads : int
        Columns typed at once. Their findings come out in column order, as with one thread.

    Returns
    -------
    table : pyarrow.Table
        The same columns typed: flags bool, whole numbers int64, enums dictionaries over the
        catalogue's levels (in order), other numbers float64, text large_string; rejected
        values null.
    findings : list of list of Finding
        Per file, in column order.
    drop : numpy.ndarray of bool
        Rows a file cannot keep: in a task file no value in a key column (``missing_key``) or
        a later repeat of a key; in a side file a later row equal in every column to an earlier one with its key.
    """
    out, table = Out(stack, text_of), stack.table
    columns = list(zip(table.column_names, table.columns, strict=True))

    def typed_column(item: tuple[str, pa.ChunkedArray]) -> tuple[pa.ChunkedArray, Out]:
        mine = out.apart()  # each column's findings on their own, joined in column order
        return _column(item[0], item[1], kind.catalogue.get(item[0]), mine), mine

    if threads > 1 and len(columns) > 1:  # pyarrow's kernels run outside the GIL
        with ThreadPoolExecutor(threads, thread_name_prefix="load_rules") as pool:
            done = list(pool.map(typed_column, columns))
    else:
        done = [typed_column(c) for c in columns]
    for _, mine in done:
        out.join(mine)
    typed = pa.Table.from_arrays([a for a, _ in done], names=table.column_names)
    del done
    keys = kind.keys if kind.is_tasks else ()  # a missing key: keys.py's missing_key
    failed = errored(typed.select([c for c in ("error", "status") if c in typed.column_names])
                     .to_pandas()).to_numpy(bool) if kind.is_tasks else None
    for name in kind.required:
        if name in typed.column_names and name != "run_id" and name not in keys:
            _required(typed, name, out, failed)
    drop = repeated_keys(typed, kind, out)
    _missing_flags(typed, kind, out)
    what = "0 task rows" if kind.is_tasks else "0 rows"
    for f in np.flatnonzero(np.diff(stack.starts) == 0):
        out.findings[f].append(Finding("warning", stack.names[f], None, None, "no_rows",
                                       f"{what}: the file has a header but no data rows"))
    return typed, out.findings, drop


def _column(name: str, arr: pa.ChunkedArray, spec, out: Out) -> pa.ChunkedArray:
    kind = None if spec is None else spec.kind
    if kind == "flag":
        return _flag(name, _nulled(arr, kind), out)
    if kind == "enum":
        return _enum(name, _nulled(arr, kind), spec, out)
    if kind in FLOAT_KINDS or kind in INTEGER_KINDS:
        shown = None  # what a finding quotes: the text as written, when the file was text
        arr = decimal_float64(arr)
        if name in OUTCOME_FLAG_COLUMNS and _is_text(arr):
            arr = _outcome_flags(name, arr, out)
        if _is_text(arr):
            shown, arr = arr, _number(name, arr, out)
        nan = pc.is_nan(arr)
        if pc.any(nan).as_py():  # "NAN", "-nan": no number (pandas would call them missing)
            arr = pc.if_else(nan, pa.scalar(None, arr.type), arr)
        if kind in INTEGER_KINDS:
            arr = _integer(name, arr, out, shown)
        return _domain(name, arr, kind, out, shown)
    return _nulled(arr, kind)


def decimal_float64(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A float32 or float16 column as float64 by each value's shortest decimal repr, what the
    user wrote (0.7 stored as float32 is 0.699999988 in binary and is read as 0.7, so that it
    passes a threshold of 0.7), never by binary widening; any other column unchanged.

    Parameters
    ----------
    arr : pyarrow.ChunkedArray
        A column of any type (a Parquet file's float32 scores).

    Returns
    -------
    pyarrow.ChunkedArray
        ``float64`` for a narrower float column (nulls, NaN and infinities kept), else ``arr``.

    Notes
    -----
    The shortest decimal that reads back as the same float32 (Arrow's cast to text; numpy's
    ``format_float_positional(unique=True)`` for float16), as ``repr`` is for float64.

    Examples
    --------
    >>> decimal_float64(pa.chunked_array([pa.array([0.7, None], pa.float32())])).to_pylist()
    [0.7, None]
    >>> pa.array([0.7], pa.float32()).cast(pa.float64()).to_pylist()  # binary widening
    [0.699999988079071]
    """
    if not pa.types.is_floating(arr.type) or arr.type == pa.float64():
        return arr
    if arr.type == pa.float32():  # Arrow prints a float32 by its shortest repr
        return pc.cast(pc.cast(arr, TEXT), pa.float64())
    return pa.chunked_array([pa.array(  # float16: numpy's shortest repr of each value
        [None if v is None else float(np.format_float_positional(np.float16(v), unique=True))
         for v in arr.to_pylist()], pa.float64())], type=pa.float64())


def _is_text(arr: pa.ChunkedArray) -> bool:  # a file read as text
    return pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)

def _outcome_flags(name: str, arr: pa.ChunkedArray, out: Out) -> pa.ChunkedArray:
    """An outcome column whose every value is a flag (true/false, pass/fail, yes/no, 0/1) as
    1.0 / 0.0 (:data:`~dabench_analysis.schema.rules.OUTCOME_FLAG_COLUMNS`), else unchanged."""
    text = pc.utf8_trim_whitespace(_nulled(arr, "flag"))
    flags, _, bad = _flag_values(text)
    if (bad is not None and pc.any(bad).as_py()) or flags.null_count == len(flags):
        return arr
    words = pc.invert(pc.fill_null(pc.is_in(text, value_set=_DIGIT_FLAGS), True))
    out.rows(words, arr, name, "outcome_flag", "outcome written as a flag (true/false, "
             "pass/fail, yes/no): read as 1.0 / 0.0", "info")
    return pc.cast(pc.cast(flags, pa.int8()), pa.float64())


def _nulled(arr: pa.ChunkedArray, kind: str | None) -> pa.ChunkedArray:
    """``arr`` with the missing spellings of ``kind`` made null (text is not copied)."""
    spellings = missing_spellings(kind)
    if spellings == ("",):
        if not _has_empty(arr):
            return arr
        return _null_where(arr, pc.equal(pc.binary_length(arr), 0))
    hit = pc.is_in(arr, value_set=_NULLS)
    return _null_where(arr, hit) if pc.any(hit).as_py() else arr


def _has_empty(arr: pa.ChunkedArray) -> bool:
    """Whether a text column holds an empty (or null) cell: one pass over its offsets (the
    lengths), without touching the text."""
    if arr.null_count:
        return True
    shortest = pc.min(pc.binary_length(arr)).as_py()
    return shortest is not None and shortest == 0


def _null_where(arr: pa.ChunkedArray, hit) -> pa.ChunkedArray:
    """``arr`` with nulls where ``hit`` is true: a new validity bitmap over the same offsets
    and bytes for plain text chunks (``if_else`` for others)."""
    keep = pc.and_not_kleene(pc.is_valid(arr), hit).to_numpy(zero_copy_only=False)
    chunks, start = [], 0
    for a in arr.chunks:
        mine, start = keep[start:start + len(a)], start + len(a)
        if a.offset or not pa.types.is_large_string(a.type):
            chunks.append(pc.if_else(pa.array(~mine), pa.scalar(None, a.type), a))
        else:
            bitmap = pa.py_buffer(np.packbits(mine, bitorder="little"))
            chunks.append(pa.Array.from_buffers(a.type, len(a), [bitmap, *a.buffers()[1:]]))
    return pa.chunked_array(chunks, type=arr.type)


def _stripped(arr: pa.ChunkedArray) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """Text without surrounding blanks, and whether each cell is missing once stripped."""
    text = pc.utf8_trim_whitespace(arr)
    return text, pc.or_kleene(pc.is_null(text), pc.is_in(text, value_set=_NULLS))


def _flag_values(arr: pa.ChunkedArray) -> tuple[pa.ChunkedArray, object, object]:
    """Flag text (missing spellings already null) -> ``(bool, coerced, bad)``; the masks are
    None when every value is spelled as eval-v2, pandas or pyarrow write flags."""
    codes = pc.index_in(arr, value_set=_PLAIN_FLAGS)
    if codes.null_count == arr.null_count:
        return pc.take(_PLAIN_VALUES, codes), None, None
    text, missing = _stripped(arr)
    low = pc.utf8_lower(text)
    flags = pc.take(_FLAG_VALUES, pc.index_in(low, value_set=_FLAG_KEYS))
    coerced = pc.is_in(low, value_set=_COERCED_KEYS)
    bad = pc.and_(pc.invert(missing), pc.is_null(flags))
    return pc.if_else(missing, pa.scalar(None, pa.bool_()), flags), coerced, bad


def _flag(name: str, arr: pa.ChunkedArray, out: Out) -> pa.ChunkedArray:
    flags, coerced, bad = _flag_values(arr)
    if coerced is not None:
        out.rows(coerced, arr, name, "flag_coerced", "flag written as 1.0/0.0, yes/no, t/f "
                 "or pass/fail, read as true/false", "warning")
        out.rows(bad, arr, name, "flag_value", "not a 0/1 flag; set to missing")
    return flags


def _enum(name: str, arr: pa.ChunkedArray, spec, out: Out) -> pa.ChunkedArray:
    levels = pa.array(list(ENUMS[name]), TEXT)
    codes = pc.index_in(arr, value_set=levels)
    if codes.null_count != arr.null_count:
        text, missing = _stripped(arr)
        exact = pc.index_in(text, value_set=levels)
        lookup = {lvl.lower(): i for i, lvl in enumerate(ENUMS[name])}
        if name == "failure_stage":
            lookup |= {k: ENUMS[name].index(v) for k, v in LEGACY_STAGES.items()}
        found = pc.take(pa.array(list(lookup.values()), pa.int32()),
                        pc.index_in(pc.utf8_lower(text), value_set=pa.array(list(lookup), TEXT)))
        coerced = pc.and_(pc.is_null(exact), pc.is_valid(found))
        bad = pc.and_(pc.invert(missing), pc.is_null(found))
        what = ", ".join(ENUMS[name])
        out.rows(coerced, arr, name, "enum_coerced", f"read case-insensitively as one of {what}",
                 "warning")
        out.rows(bad, arr, name, "enum_value", f"not one of {what}; set to missing")
        codes = pc.if_else(missing, pa.scalar(None, pa.int32()), found)
    ordered = bool(spec.dtype.ordered)
    return pa.chunked_array([pa.DictionaryArray.from_arrays(c.cast(pa.int32()), levels,
                                                            ordered=ordered)
                             for c in codes.chunks],
                            type=pa.dictionary(pa.int32(), TEXT, ordered=ordered))


def _number(name: str, arr: pa.ChunkedArray, out: Out) -> pa.ChunkedArray:
    """Text (a file read as text) -> float64; a cell that is no number is an error."""
    text, missing = _stripped(arr)
    text = pc.if_else(missing, pa.scalar(None, TEXT), text)
    try:
        return pc.cast(text, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    ok = pc.match_substring_regex(text, _NUMBER, ignore_case=True)
    bad = pc.and_(pc.is_valid(text), pc.invert(pc.fill_null(ok, False)))
    values = [str(v) for v in arr.filter(bad).to_pylist()]
    hint = (" (decimal comma? eval-v2 writes '.' as decimal separator)"
            if any(_is(v, r"-?\d+,\d+") for v in values) else
            " (percent sign? scores are on a [0, 1] scale)"
            if any(_is(v, r"-?[\d.]+\s*%") for v in values) else "")
    out.rows(bad, arr, name, "number_value", f"not a number{hint}; set to missing")
    return pc.cast(pc.if_else(bad, pa.scalar(None, TEXT), text), pa.float64())


def _is(text: str, pattern: str) -> bool:
    return re.fullmatch(pattern, text.strip()) is not None


def _integer(name: str, arr: pa.ChunkedArray, out: Out,
             shown: pa.ChunkedArray | None = None) -> pa.ChunkedArray:
    """float64 -> int64; a fraction, an infinity or a value of 2**53 or more is an error."""
    mm = pc.min_max(arr)
    low, high = mm["min"].as_py(), mm["max"].as_py()
    if low is None:
        return pc.cast(arr, pa.int64())
    if max(abs(low), abs(high)) < MAX_COUNT:
        try:
            return pc.cast(arr, pa.int64())  # safe cast: a fraction raises
        except pa.ArrowInvalid:
            pass
    f = arr.to_numpy(zero_copy_only=False).astype("float64")
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(f) & (~np.isfinite(f) | (np.abs(f) >= MAX_COUNT) | (f != np.floor(f)))
    text = shown if shown is not None else \
        out.written(name, arr, bad & (np.abs(np.nan_to_num(f)) >= MAX_COUNT))
    out.rows(bad, text, name,
             "integer", "not a whole number below 2**53; set to missing")
    return pc.cast(pc.if_else(pa.array(bad), pa.scalar(None, pa.float64()), arr), pa.int64())


def _domain(name: str, arr: pa.ChunkedArray, kind: str, out: Out,
            shown: pa.ChunkedArray | None = None) -> pa.ChunkedArray:
    """The catalogue's :data:`RULES` for ``kind``: each is an interval, so the column passes
    when its extremes do; else its failing values are reported and set to missing."""
    rules = [r for r in RULES if kind in r.kinds]
    mm = pc.min_max(arr)
    ends = [v for v in (mm["min"].as_py(), mm["max"].as_py()) if v is not None]
    if all(r.admits(float(v)) for r in rules for v in ends):
        return arr
    f = arr.to_numpy(zero_copy_only=False).astype("float64")
    failed = np.zeros(len(f), dtype=bool)
    for rule in rules:
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(f) & ~failed & ((f < rule.low) | (f > rule.high)
                                            | (rule.open_ends & np.isinf(f)))
        if bad.any():
            hint = " (percentages? scores are on a [0, 1] scale)" if rule.name == \
                "unit_interval" and np.all((f[bad] >= 1) & (f[bad] <= 100)) else ""
            out.rows(bad, arr if shown is None else shown, name, rule.check,
                     f"{rule.message}{hint}; set to missing")
            failed |= bad
    return pc.if_else(pa.array(failed), pa.scalar(None, arr.type), arr)


def _required(table: pa.Table, name: str, out: Out, failed=None) -> None:
    """Missing required values; an errored trial's missing value is an info finding."""
    col = table.column(name)
    if col.null_count:
        mask = np.asarray(pc.is_null(col).to_numpy(zero_copy_only=False), dtype=bool)
        mask &= out.stack.holding(name)  # a file without the column: reported on its header
        mask[out.rejected.get(name, [])] = False  # a value rejected while typing: reported once
        if failed is not None and failed.any():
            out.rows(mask & failed, col, name, "errored_trial", "missing: the trial ended in an "
                     "infrastructure error (its error or status column)", "info")
            mask &= ~failed
        out.rows(mask, col, name, "required_value", "missing value in a required column")


def _missing_flags(table: pa.Table, kind: FileKind, out: Out) -> None:
    """Info finding per file and flag column with missing values (pitfall P06: never a silent
    pass or fail)."""
    sizes = np.diff(out.stack.starts)
    files = np.repeat(np.arange(len(sizes)), sizes)
    for name in table.column_names:
        spec = kind.catalogue.get(name)
        if spec is None or spec.kind != "flag" or table.column(name).null_count == 0:
            continue
        nulls = np.asarray(pc.is_null(table.column(name)).to_numpy(zero_copy_only=False))
        counts = np.bincount(files, weights=nulls, minlength=len(sizes))
        for f, (n, total) in enumerate(zip(counts, sizes, strict=True)):
            if total and n and name in out.stack.columns[f]:
                out.findings[f].append(Finding(
                    "info", out.stack.names[f], None, name, "missing_values",
                    f"{int(n)} of {int(total)} values missing (read as <NA>: counted neither "
                    "as true nor as false)"))


def type_values(raw: pd.Series, spec, file: str, findings: list) -> pd.Series:
    """One column of text (a Series indexed by the 0-based data row) typed and checked by the
    rules of its catalogue kind, for readers of other files (judge studies): the findings name
    ``file``, the row (index + 1) and the column.

    Examples
    --------
    >>> from dabench_analysis.schema import Column
    >>> found = []
    >>> type_values(pd.Series(["3", "x", "-1"]), Column("n", "count", "", "", None, ""),
    ...             "f.csv", found).tolist(), [(f.row, f.check) for f in found]
    ([3, <NA>, <NA>], [(2, 'number_value'), (3, 'range')])
    """
    text = pa.chunked_array([pa.array(raw.astype("string").array, TEXT)], type=TEXT)
    stack = Stack(pa.table({spec.name: text}), np.array([0, len(raw)]),
                  raw.index.to_numpy(dtype=np.int64) + 1, [file], [frozenset([spec.name])])
    out = Out(stack)
    typed = _column(spec.name, text, spec, out)
    findings.extend(out.findings[0])
    types = {pa.bool_(): pd.BooleanDtype(), pa.int64(): pd.Int64Dtype(), TEXT: pd.StringDtype()}
    return pd.Series(typed.to_pandas(types_mapper=types.get).array, index=raw.index,
                     name=raw.name)


def parse_flags(values: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Flag text -> pandas ``boolean``: the package's one flag parser (loading and statistics).

    Parameters
    ----------
    values : Series
        Text (or objects turned into text); surrounding blanks are ignored, case is not.

    Returns
    -------
    tuple of Series
        ``(flags, coerced, bad)``: the ``boolean`` values (<NA> for missing and bad cells), a
        mask of cells spelled as in :data:`~dabench_analysis.schema.columns.FLAG_COERCED` (unambiguous
        but not what eval-v2 writes) and a mask of cells that are neither a flag nor missing.

    Examples
    --------
    >>> flags, coerced, bad = parse_flags(pd.Series(["1", "TRUE", "no", "", "2"]))
    >>> flags.tolist(), coerced.tolist(), bad.tolist()
    ([True, True, False, <NA>, <NA>], [False, False, True, False, False], [False, False, False, False, True])
    """
    text = pa.chunked_array([pa.array(values.astype("string").array, TEXT)])
    flags, coerced, bad = _flag_values(_nulled(text, "flag"))
    index = values.index

    def series(arr, dtype) -> pd.Series:
        if arr is None:
            return pd.Series(False, index=index)
        return pd.Series(arr.to_pandas(types_mapper={pa.bool_(): dtype}.get).array, index=index)

    return (series(flags, pd.BooleanDtype()), series(coerced, None).fillna(False).astype(bool),
            series(bad, None).fillna(False).astype(bool))
