# Over 400 lines (under 500): the whole batched path in one place (read, check, stack, frame),
# so that what it accepts can be read against what the per-file path reports.
"""The batched path of :func:`~dabench_analysis.load.load_runs`: every file of a sweep (task
files on load, ``trajectory.csv`` / ``tool_calls.csv`` on first access) read by pyarrow, the
missing-value rule, flag and enum typing and the catalogue's value checks run as Arrow compute
kernels once on the stacked table, one ``to_pandas`` per sweep (the stacked table is cached by
:mod:`.stacked_cache`).

Findings come from the per-file path's own functions (column names and aliases; unusual flag
spellings and enum case through ``type_flag`` / ``type_enum`` on the one file and column
concerned; missing flag values), so notes and coercion warnings stay on the batched path. A file
with anything else to report (a rejected value, a duplicated key, a short row, no rows, ...) is
left to the per-file path (:func:`~dabench_analysis.load.load_run`, :attr:`Run.trajectory`);
both give the same frames and findings (``tests/test_fast_paths.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis import schema
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load.coerce import (
    _FLOAT_KINDS,
    INTEGER_KINDS,
    WIDE_CHECKS,
    arrow_missing,
    missing_flags_finding,
    missing_spellings,
    parse_enum,
    parse_flags,
    report_typing,
)
from dabench_analysis.load.csv import (
    MAX_TEXT_COLUMNS,
    PD_TYPES,
    arrow_read,
    arrow_types,
    beyond_exact,
    block_size,
    read_header,
)
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.run import TASK_FILE, TOOL_CALLS_FILE, TRAJECTORY_FILE
from dabench_analysis.load.table import _keys, column_names

#: Text as pandas holds it (large_string): to_pandas then shares the buffers, no offsets copied.
#: Read blocks of 1 MiB (pyarrow's default): one file per thread parses fastest so (bench/).
_TEXT, _BLOCK = pa.large_string(), 1 << 20


@dataclass(frozen=True, eq=False)  # one object per file kind: hashed by identity
class Kind:
    """One eval-v2 file as the batched path reads it: name, catalogue, aliases, and whether
    it is the task file (run ids, ``replay_path``, task ids that must name folders)."""

    file: str
    catalogue: Mapping[str, schema.Column]
    aliases: Mapping[str, str]
    tasks: bool = False

    @property
    def keys(self) -> tuple[str, ...]:
        """The columns whose values identify a row (as the per-file path checks them)."""
        return _keys(self.catalogue)[0]

    def specs(self, names: Sequence[str]) -> dict[str, schema.Column]:
        """Catalogue entry of each of ``names`` the catalogue knows."""
        return {n: self.catalogue[n] for n in names if n in self.catalogue}


TASKS = Kind(TASK_FILE, schema.TASK_COLUMNS, schema.ALIASES, tasks=True)
#: :class:`~dabench_analysis.load.Run` attribute -> its file.
SIDES = {"trajectory": Kind(TRAJECTORY_FILE, schema.TRAJECTORY_COLUMNS, {}),
         "tool_calls": Kind(TOOL_CALLS_FILE, schema.TOOL_CALL_COLUMNS, {})}


@dataclass
class Checked:
    """One file that passed the file-level checks: ``table``, its columns in file order
    (catalogue names, a task file's ``run_id`` filled as ``load_run`` fills it) as read (text
    not yet nulled, flags and enums text, counts float64) until :func:`stack` checks, converts
    and drops it (``rows``, ``columns`` remain) and sets ``findings``."""

    run_dir: Path
    run_id: str
    table: pa.Table | None
    head: list[Finding]  # column names: aliases, unknown columns, spaces, run_id filled
    where: dict[str, int]  # catalogue name -> position in the header
    typed: list[tuple[int, Finding]] = field(default_factory=list)  # coerced values
    unusual: int = 0  # flag columns the per-file path re-reads as text
    nulled: bool = False  # empty cells read as missing (only those)
    fixes: int = 0  # columns typed by :func:`_fix`
    findings: list[Finding] = field(default_factory=list)
    rows: int = 0
    columns: list[str] = field(default_factory=list)


def _unique_keys(table: pa.Table, keys: Sequence[str]) -> bool:
    """Whether the file's key columns (those present) hold no null and no repeated key."""
    keys = [k for k in keys if k in table.column_names]
    if not keys:
        return True
    if any(table.column(k).null_count for k in keys):
        return False
    if len(keys) == 1:
        return pc.count_distinct(table.column(keys[0])).as_py() == table.num_rows
    key = None  # one int64 per row: the keys' dictionary codes combined
    for k in keys:
        encoded = pc.dictionary_encode(table.column(k).combine_chunks())
        codes = encoded.indices.cast(pa.int64())
        key = codes if key is None else pc.add(pc.multiply(key, len(encoded.dictionary)), codes)
    return pc.count_distinct(key).as_py() == table.num_rows


def _own_run_id(table: pa.Table, run_dir: Path, kind: Kind, run_id: str | None) -> tuple:
    """The run id (task file: its one run_id value, else the folder name) and the table with
    the run_id column filled (added first when a task file has none)."""
    names = table.column_names
    if kind.tasks:
        folder_id = run_dir.resolve().name
        if "run_id" not in names:
            return folder_id, table.add_column(0, "run_id", pa.array(
                [folder_id] * table.num_rows, _TEXT))
        given = pc.unique(table.column("run_id").drop_null())
        run_id = str(given[0]) if len(given) == 1 else folder_id
    if "run_id" in names and table.column("run_id").null_count:
        table = table.set_column(names.index("run_id"), "run_id",
                                 pc.fill_null(table.column("run_id"), run_id))
    return run_id, table


@functools.lru_cache(maxsize=64)
def _plan(header: tuple[str, ...], columns: tuple[str, ...] | None, kind: Kind) -> tuple:
    """What a header of ``kind.file`` means (files of one harness version share it): catalogue
    names, the header's findings, the columns to read, their catalogue entries, Arrow types."""
    catalogue, head = kind.catalogue, []
    canon = column_names(list(header), catalogue, dict(kind.aliases), kind.file, head)
    wanted = None if columns is None else \
        set(columns) | {c for c, s in catalogue.items() if s.required}
    include = [h for h in header if wanted is None or canon[h] in wanted]
    specs = {h: catalogue[canon[h]] for h in include if canon[h] in catalogue}
    types = {h: _TEXT if t == pa.string() or (h in specs and specs[h].kind in ("enum", "flag"))
             else t for h, t in arrow_types(specs, include).items()}
    return canon, tuple(head), include, specs, types


def read_checked(run_dir: Path, columns: Sequence[str] | None, kind: Kind = TASKS,
                 run_id: str | None = None) -> Checked | None:
    """Read ``run_dir/<kind.file>`` and run the checks that concern the file as a whole; None
    when it needs the per-file path. Column values are checked by :func:`stack`.

    Parameters
    ----------
    run_dir : Path
        A run directory (already known to exist).
    columns : sequence of str, optional
        Catalogue columns to read (the required ones always); None for all.
    kind : Kind
        :data:`TASKS` or one of :data:`SIDES`.
    run_id : str, optional
        Side files: the run's id, filling their missing ``run_id``.

    Returns
    -------
    Checked or None
        None for a missing file, an unreadable header, a missing required column, a number
        that does not parse, a malformed row, a missing or repeated key, no rows, or a task
        file holding ``replay_path``.
    """
    path = run_dir / kind.file
    try:
        header = read_header(path)
        canon, head, include, specs, types = _plan(tuple(header), None if columns is None
                                                   else tuple(columns), kind)
    except RunLoadError:
        return None
    if any(f.severity == "error" for f in head):
        return None
    for empty_null in (True, False):  # the reader nulls empty cells; NA, None... in numbers?
        try:
            table, bad = arrow_read(path, types, include, specs=specs, batched=True,
                                    use_threads=False, block=block_size(path, _BLOCK),
                                    empty_null=empty_null)
            break
        except pa.ArrowInvalid as exc:
            if not empty_null or "conversion error" not in str(exc):
                return None
        except (pa.ArrowException, OSError, RunLoadError):
            return None
    if bad or table.num_rows == 0:
        return None
    if not kind.tasks:  # large files, many blocks: one chunk a column keeps kernels fast
        table = pa.table([c if c.type == _TEXT else c.combine_chunks() for c in table.columns],
                         names=table.column_names)
    names = [canon[h] for h in table.column_names]
    if kind.tasks and "replay_path" in names:  # the loader's own column: load_run replaces it
        return None
    table = table.rename_columns(names)
    ids = [c for c in (*kind.keys, "run_id") if c in names]  # checked now: nulled now
    nulled = arrow_missing(table.select(ids), kind.specs(ids))
    for name in ids:
        table = table.set_column(names.index(name), name, nulled.column(name))
    if not _unique_keys(table, kind.keys):
        return None
    run_id, table = _own_run_id(table, run_dir, kind, run_id)
    return Checked(run_dir, str(run_id), table, list(head),
                   {canon[h]: i for i, h in enumerate(header)}, nulled=empty_null)


_FLAG_TEXT = pa.array(sorted({*schema.FLAG_TRUE, *schema.FLAG_FALSE}), pa.string())
_FLAG_VALUE = pa.array([v in schema.FLAG_TRUE for v in _FLAG_TEXT.to_pylist()], pa.bool_())


def _flag(arr: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Flag text -> bool when every value is spelled as pyarrow reads flags (``FLAG_TRUE``,
    ``FLAG_FALSE``, exactly); else None (:func:`_fix`)."""
    codes = pc.index_in(arr, value_set=_FLAG_TEXT)
    return None if codes.null_count != arr.null_count else pc.take(_FLAG_VALUE, codes)


def _levels(spec: schema.Column) -> pa.Array:
    return pa.array([str(c) for c in spec.dtype.categories], pa.string())  # in their order


def _enum(arr: pa.ChunkedArray, spec: schema.Column) -> pa.ChunkedArray | None:
    """Text -> dictionary over the catalogue's levels, in their order (None if a value is not
    one of them: :func:`_fix`)."""
    levels, ordered = _levels(spec), bool(spec.dtype.ordered)
    codes = pc.index_in(arr, value_set=levels)
    if codes.null_count != arr.null_count:
        return None
    return pa.chunked_array([pa.DictionaryArray.from_arrays(c, levels, ordered=ordered)
                             for c in codes.chunks])


_UNSAFE_ID = r"^\.{0,2}$|[/\\\x00]"  # '', '.', '..', or a separator or NUL anywhere


def _extremes_pass(arr: pa.ChunkedArray, kind: str) -> bool:
    """The catalogue's value checks (``WIDE_CHECKS``, the per-file path's pandera row check) on
    a column's extremes: each passes an interval (finite, [0, 1], >= 0), so the extremes pass
    exactly when every value does (NaN, which the checks let pass, is skipped by min_max)."""
    mm = pc.min_max(arr)
    low, high = mm["min"].as_py(), mm["max"].as_py()
    if low is None:
        return True
    ends = np.array([low, high], dtype="float64")
    return all(test(ends).all() for kinds, test, *_ in WIDE_CHECKS.values() if kind in kinds)


def _checked(arr: pa.ChunkedArray, spec: schema.Column,
             tasks: bool) -> pa.ChunkedArray | None:
    """The column as the loader types it, or None if the per-file path would report or
    coerce a value."""
    kind = spec.kind
    if kind in INTEGER_KINDS:
        if beyond_exact(arr):
            return None
        try:
            arr = pc.cast(arr, pa.int64())  # safe cast: a fraction or infinity raises
        except pa.ArrowInvalid:
            return None
    elif kind == "enum":
        arr = _enum(arr, spec)
    elif kind == "flag":
        arr = _flag(arr)
    elif tasks and spec.name == "task_id" and \
            pc.any(pc.match_substring_regex(arr, _UNSAFE_ID)).as_py():
        return None  # load_run warns that such ids name no replay folder
    if arr is None:
        return None
    if (kind in INTEGER_KINDS or kind in _FLOAT_KINDS) and not _extremes_pass(arr, kind):
        return None
    if spec.required and spec.name != "run_id" and (
            arr.null_count or (kind in _FLOAT_KINDS and pc.any(pc.is_nan(arr)).as_py())):
        return None  # NaN is missing in pandas: the pandas path reports a required value
    return arr


def _fix(name: str, column: pa.ChunkedArray, members: Sequence[Checked], starts: np.ndarray,
         kind: Kind) -> dict[int, bool]:
    """Type a flag or enum column (stacked, nulled) where pyarrow does not (a flag spelled
    other than ``FLAG_TRUE`` / ``FLAG_FALSE``, an enum value other than a level) as the
    per-file path does: :func:`parse_flags` / :func:`parse_enum` once for the column (they work
    value by value), the findings per file (:func:`report_typing`). Returns, per file holding
    such values (its position in ``members``), whether it only coerced (then its findings are
    kept and its column respelled)."""
    spec = kind.catalogue[name]
    plain = _FLAG_TEXT if spec.kind == "flag" else _levels(spec)
    pos = np.flatnonzero(pc.and_(pc.is_null(pc.index_in(column, value_set=plain)),
                                 pc.is_valid(column)).to_numpy(zero_copy_only=False))
    if not len(pos):  # every value plain (the column failed on a missing required value)
        return {}
    raw = pd.Series(column.take(pa.array(pos)).to_pandas(types_mapper=PD_TYPES.get).array)
    out, coerced, bad = parse_flags(raw) if spec.kind == "flag" else parse_enum(raw, spec)
    if spec.kind == "flag":
        out = out.map({True: "true", False: "false"})
    owner, done = np.searchsorted(starts, pos, side="right") - 1, {}
    files, first = np.unique(owner, return_index=True)  # pos is sorted: each file's a run
    values = column.to_numpy(zero_copy_only=False).astype(object)
    values[pos] = out.astype(object).where(out.notna(), None).to_numpy()
    respelled = pa.array(values, _TEXT)
    bounds = [*first.tolist(), len(pos)]
    for i, a, b in zip(files.tolist(), bounds[:-1], bounds[1:], strict=True):
        m, at, found = members[i], pos[a:b] - starts[i], []
        report_typing(found, *(x.iloc[a:b].set_axis(at) for x in (raw, coerced, bad)),
                      kind.file, name, None if spec.kind == "flag" else schema.ENUMS[name])
        m.unusual += spec.kind == "flag"  # the per-file path re-reads the column as text
        fixed = pa.chunked_array([respelled.slice(starts[i], m.table.num_rows)])
        done[i] = not any(f.severity == "error" for f in found) and \
            m.unusual <= MAX_TEXT_COLUMNS and _checked(fixed, spec, kind.tasks) is not None
        if done[i]:  # (over MAX_TEXT_COLUMNS the per-file path reads the whole file as text)
            m.typed += [(m.where[name], f) for f in found]
            m.fixes += 1
            m.table = m.table.set_column(m.table.column_names.index(name), name, fixed)
    return done


def _drill(name: str, table: pa.Table, members: Sequence[Checked], starts: np.ndarray,
           kind: Kind) -> list[bool]:
    """Which files pass a column that failed on the stacked ``table`` (files from ``starts``),
    once their unusual flags and enum case are typed (:func:`_fix`)."""
    spec, column = kind.catalogue[name], table.column(name)
    typed = spec.kind in ("flag", "enum")
    fixed = _fix(name, column, members, starts, kind) if typed else {}

    def passes(i: int, m: Checked) -> bool:
        if i in fixed or name not in m.table.column_names:
            return fixed.get(i, True)
        part = column.slice(starts[i], m.table.num_rows)
        if typed:  # spelled as pyarrow reads them: only a required value may be missing
            return not (spec.required and part.null_count)
        return _checked(part, spec, kind.tasks) is not None

    return [passes(i, m) for i, m in enumerate(members)]


def _finish(members: Sequence[Checked], table: pa.Table, kind: Kind) -> None:
    """Each file's findings in the per-file path's order (column names, coerced values by
    column, missing flag values), from the stacked, converted ``table``; then its own table is
    let go."""
    starts = np.cumsum([0] + [m.table.num_rows for m in members])
    missing = {c: np.add.reduceat(pc.is_null(table.column(c)).to_numpy(zero_copy_only=False),
                                  starts[:-1])
               for c, s in kind.specs(table.column_names).items() if s.kind == "flag"}
    for i, m in enumerate(members):
        names = m.table.column_names
        m.findings = [*m.head, *(f for _, f in sorted(m.typed, key=lambda t: t[0])),
                      *(missing_flags_finding(kind.file, c, int(missing[c][i]), m.table.num_rows)
                        for c in names if c in missing and missing[c][i])]
        m.rows, m.columns, m.table = m.table.num_rows, names, None


def _convert(table: pa.Table, kind: Kind, nulled: bool) -> tuple[pa.Table, dict]:
    """Null missing text (``arrow_missing``; empty cells are null already if ``nulled``), then
    check and convert each catalogue column. Returns the nulled table and name -> converted
    column (None for a column that fails: :func:`_drill`)."""
    specs = kind.specs(table.column_names)
    rule = [n for n in table.column_names
            if not nulled or (n in specs and missing_spellings(specs[n]) != ("",))]
    done = arrow_missing(table.select(rule), specs)
    table = pa.Table.from_arrays([done.column(n) if n in rule else table.column(n)
                                  for n in table.column_names], names=table.column_names)
    return table, {n: arr if n not in specs else _checked(arr, specs[n], kind.tasks)
                   for n, arr in zip(table.column_names, table.columns, strict=True)}


def stack(members: Sequence[Checked], kind: Kind = TASKS) -> tuple[pa.Table | None,
                                                                    list[Checked], list[Checked]]:
    """Stack the files' tables (columns matched by name, null where a file lacks one), null
    missing text (``arrow_missing``), check and convert every catalogue column once (flags to
    bool, counts to int64, enums onto the seed's levels); a column that fails is checked file
    by file, and only such columns are checked again on the files that pass (a column that
    passes on every row passes on fewer). Returns ``(table, passed, failed)``: the converted
    table of the files that passed (columns in order of first appearance; None if none did),
    their findings set, and the files that need the per-file path."""
    members, failed, converted, redo = list(members), [], {}, None
    while members:
        try:
            table = pa.concat_tables([m.table if redo is None else m.table.select(
                [n for n in redo if n in m.table.column_names]) for m in members],
                promote_options="default")
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # types differ after all
            return None, [], failed + members
        table, out = _convert(table, kind, all(m.nulled for m in members))
        converted |= {n: arr for n, arr in out.items() if arr is not None}
        failing = [n for n, arr in out.items() if arr is None]
        if not failing:
            names = list(dict.fromkeys(n for m in members for n in m.table.column_names))
            table = pa.Table.from_arrays([converted[n] for n in names], names=names)
            _finish(members, table, kind)
            return (table.combine_chunks() if kind.tasks else table), members, failed
        starts = np.cumsum([0] + [m.table.num_rows for m in members])
        fixes = sum(m.fixes for m in members)
        ok = np.all([_drill(n, table, members, starts, kind) for n in failing], axis=0)
        passed = [m for m, good in zip(members, ok, strict=True) if good]
        failed += [m for m, good in zip(members, ok, strict=True) if not good]
        if len(passed) == len(members) and fixes == sum(m.fixes for m in members):
            return None, [], failed + members  # nothing changed: never loop
        if len(passed) < len(members):  # the rows of the files that pass, not copied
            spans = [(int(starts[i]), m.table.num_rows) for i, m in enumerate(members) if ok[i]]
            converted = {n: pa.chunked_array([c for s, k in spans for c in arr.slice(s, k).chunks],
                                             arr.type) for n, arr in converted.items()}
        members, redo = passed, failing
    return None, [], failed


def column_order(members: Sequence[Checked], kind: Kind) -> list[str]:
    """The columns of the stacked frame as ``load_runs`` stacks per-run frames: in order of
    first appearance, each run's own columns (``+ replay_path`` for task files)."""
    extra = ["replay_path"] if kind.tasks else []
    return list(dict.fromkeys(c for m in members for c in [*m.columns, *extra]))


def to_frame(table: pa.Table, kind: Kind = TASKS, *, destroy: bool = False) -> pd.DataFrame:
    """A stacked, converted table -> frame with the catalogue dtypes (RangeIndex). ``destroy``
    frees each Arrow column once converted (the table is unusable afterwards)."""
    df = table.to_pandas(types_mapper=PD_TYPES.get, split_blocks=destroy,
                         self_destruct=destroy)
    fix = {c: df[c].astype(s.dtype) for c, s in kind.specs(df.columns).items()
           if s.kind == "enum" and df[c].dtype != s.dtype}
    return df.assign(**fix) if fix else df


def part(frame: pd.DataFrame, start: int, member: Checked, kind: Kind) -> pd.DataFrame:
    """One run's rows and own columns of a stacked frame, indexed as the per-file path
    indexes them (task files: RangeIndex; others: the 0-based data row, int64)."""
    out = frame.iloc[start:start + member.rows]
    own = [*member.columns, *(["replay_path"] if kind.tasks else [])]
    if own != list(frame.columns):
        out = out[own]
    index = pd.RangeIndex(member.rows) if kind.tasks else \
        pd.Index(np.arange(member.rows, dtype=np.int64))
    return out.set_axis(index, axis=0)


#: Whether stacked entries may be used (the cache directory is in no run directory).
cacheable = parse_cache.batch_usable
