"""The batched path of :func:`dabench_analysis.load.load_runs`: typed pyarrow reads of every task
file, the catalogue's checks as Arrow compute reductions on the stacked table, one ``to_pandas``
per sweep, and the stacked sweep cached as one Arrow IPC entry. A file with anything to report
goes through :func:`dabench_analysis.load.load_run`, so frames and findings are the same either way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis import schema
from dabench_analysis._atomic import atomic_write
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load.coerce import (
    _FLOAT_KINDS,
    INTEGER_KINDS,
    WIDE_CHECKS,
    missing_flags_finding,
)
from dabench_analysis.load.csv import (
    PD_TYPES,
    arrow_read,
    arrow_types,
    beyond_exact,
    read_header,
)
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.replay import replay_paths
from dabench_analysis.load.run import TASK_FILE
from dabench_analysis.load.table import column_names

_BATCH_SUFFIX = ".arrow"


_META = b"dabench.batch"


@dataclass
class Checked:
    """One task file that passed the file-level checks: its typed table and the findings of a
    clean file.

    ``table`` holds the file's columns in file order (catalogue names) with ``run_id`` filled
    as :func:`~dabench_analysis.load.load_run` fills it; enums are still text and counts
    float64 until :func:`stack` checks and converts them; no ``replay_path`` (:func:`replays`).
    """

    run_dir: Path
    run_id: str
    table: pa.Table
    findings: list[Finding]


def _enum(arr: pa.ChunkedArray, spec: schema.Column) -> pa.ChunkedArray | None:
    """Text -> dictionary over the catalogue's levels, in their order (None if a value is not
    one of them: the pandas path coerces case variants with a warning)."""
    levels = pa.array([str(c) for c in spec.dtype.categories], pa.string())
    dtype = pa.dictionary(pa.int32(), pa.string(), ordered=bool(spec.dtype.ordered))
    codes = pc.index_in(arr, value_set=levels)
    if codes.null_count != arr.null_count:
        return None
    return pa.chunked_array([pa.DictionaryArray.from_arrays(c, levels, ordered=dtype.ordered)
                             for c in codes.chunks], type=dtype)


_UNSAFE_ID = r"^\.{0,2}$|[/\\\x00]"  # '', '.', '..', or a separator or NUL anywhere


def _extremes_pass(arr: pa.ChunkedArray, kind: str) -> bool:
    """The catalogue's value checks (:data:`~dabench_analysis.load.coerce.WIDE_CHECKS`, the pandera
    row check of the pandas path) on a column's smallest and largest value. Each check passes
    an interval (finite, [0, 1], >= 0), so the extremes pass exactly when every value does;
    NaN is skipped by ``min_max`` as the checks let it pass."""
    mm = pc.min_max(arr)
    low, high = mm["min"].as_py(), mm["max"].as_py()
    if low is None:
        return True
    ends = np.array([low, high], dtype="float64")
    return all(test(ends).all() for kinds, test, *_ in WIDE_CHECKS.values() if kind in kinds)


def _checked(arr: pa.ChunkedArray, spec: schema.Column) -> pa.ChunkedArray | None:
    """The column as the loader types it, or None if the pandas path would report a value."""
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
        if arr is None:
            return None
    elif spec.name == "task_id" and pc.any(pc.match_substring_regex(arr, _UNSAFE_ID)).as_py():
        return None  # the pandas path warns that such ids name no replay folder
    if (kind in INTEGER_KINDS or kind in _FLOAT_KINDS) and not _extremes_pass(arr, kind):
        return None
    if spec.required and spec.name != "run_id" and (
            arr.null_count or (kind in _FLOAT_KINDS and pc.any(pc.is_nan(arr)).as_py())):
        return None  # NaN is missing in pandas: the pandas path reports a required value
    return arr


def read_checked(run_dir: Path, columns: Sequence[str] | None) -> Checked | None:
    """Read ``run_dir/task_metrics.csv`` and run the checks that concern the file as a whole;
    None when it needs the pandas path. Column values are checked by :func:`stack`.

    Parameters
    ----------
    run_dir : Path
        A run directory (already known to exist).
    columns : sequence of str, optional
        As :func:`~dabench_analysis.load.load_run`'s ``columns``.

    Returns
    -------
    Checked or None
        None for a missing or legacy task file, an unreadable header, a missing required
        column, a value that does not parse, a row with the wrong number of fields, a missing
        or duplicated task id, or a file without data rows. The table's enum columns
        are still text and counts float64 (:func:`stack` converts them).
    """
    path = run_dir / TASK_FILE
    catalogue = schema.TASK_COLUMNS
    findings: list[Finding] = []
    try:
        header = read_header(path)
        canon = column_names(header, catalogue, schema.ALIASES, TASK_FILE, findings)
    except RunLoadError:
        return None
    if any(f.severity == "error" for f in findings):
        return None
    wanted = None if columns is None else \
        set(columns) | {c for c, s in catalogue.items() if s.required}
    include = [h for h in header if wanted is None or canon[h] in wanted]
    specs = {h: catalogue[canon[h]] for h in include if canon[h] in catalogue}
    types = arrow_types(specs, include)
    types |= {h: pa.string() for h in include if h in specs and specs[h].kind == "enum"}
    try:
        table, bad = arrow_read(path, types, include, specs=specs, use_threads=False)
    except (pa.ArrowException, OSError, RunLoadError):
        return None
    if bad or table.num_rows == 0:
        return None
    names = [canon[h] for h in table.column_names]
    if "replay_path" in names:  # the loader's own column: load_run replaces it, with a note
        return None
    table = table.rename_columns(names)
    ids = table.column("task_id")
    if ids.null_count or pc.count_distinct(ids).as_py() != table.num_rows:
        return None
    folder_id = run_dir.resolve().name
    if "run_id" in names:
        given = pc.unique(table.column("run_id").drop_null())
        run_id = str(given[0]) if len(given) == 1 else folder_id
        table = table.set_column(names.index("run_id"), "run_id",
                                 pc.fill_null(table.column("run_id"), run_id))
    else:
        run_id = folder_id
        table = table.add_column(0, "run_id", pa.array([run_id] * table.num_rows, pa.string()))
    flags = [c for c in names if c in catalogue and catalogue[c].kind == "flag"]
    findings += [missing_flags_finding(TASK_FILE, c, n, table.num_rows)
                 for c in flags if (n := table.column(c).null_count)]
    return Checked(run_dir, run_id, table, findings)


def stack(members: Sequence[Checked]) -> tuple[pa.Table | None, list[Checked], list[Checked]]:
    """Stack tables of one schema and check and convert every catalogue column once, over all
    of them (counts to int64, enums onto the seed's levels).

    Returns ``(table, passed, failed)``: the converted stacked table of the members that passed
    (one chunk; None if none did) and the members whose values need the pandas path.
    """
    try:
        table = pa.concat_tables([c.table for c in members])
    except pa.ArrowInvalid:  # types differ after all: the pandas path for each
        return None, [], list(members)
    columns, failing = [], []
    for name, arr in zip(table.column_names, table.columns, strict=True):
        spec = schema.TASK_COLUMNS.get(name)
        out = arr if spec is None else _checked(arr, spec)
        if out is None:
            failing.append((name, spec))
        columns.append(out)
    if not failing:
        return pa.Table.from_arrays(columns, names=table.column_names).combine_chunks(), \
            list(members), []
    bad = {id(c) for c in members
           if any(_checked(c.table.column(n), spec) is None for n, spec in failing)}
    if not bad:  # cannot happen (the checks are aggregates); never loop
        return None, [], list(members)
    passed = [c for c in members if id(c) not in bad]
    failed = [c for c in members if id(c) in bad]
    return (stack(passed)[0] if passed else None), passed, failed


def replays(checked: Checked, folders: list[str] | None = None) -> pa.ChunkedArray:
    """``replay_path`` of each task of one run (one directory listing, never cached:
    :func:`~dabench_analysis.load.replay.replay_paths`; ``folders`` if listed already)."""
    return replay_paths(checked.run_dir, checked.table.column("task_id"), folders)


def to_frame(table: pa.Table) -> pd.DataFrame:
    """A stacked, converted table -> frame with the catalogue dtypes (RangeIndex)."""
    df = table.to_pandas(types_mapper=PD_TYPES.get)  # copies: writable, unlike split_blocks
    fix = {}
    for col in df.columns:
        spec = schema.TASK_COLUMNS.get(col)
        if spec is not None and spec.kind == "enum" and df[col].dtype != spec.dtype:
            fix[col] = df[col].astype(spec.dtype)
    return df.assign(**fix) if fix else df


def cacheable() -> bool:
    """Whether a batch entry may be used: the cache directory is inside no run directory
    (:func:`~dabench_analysis.load.cache.inside_a_run`: no folder on its path holds a task file)."""
    try:
        return parse_cache.inside_a_run(parse_cache.cache_dir()) is None
    except (OSError, RuntimeError):
        return False


def _stamps(files: Sequence[Path]) -> list[list] | None:
    """Per task file: its path, the real path of its run (run ids of runs without a run_id
    column come from it), size, mtime in ns and content digest."""
    try:
        out = []
        for f in files:
            st = f.stat()
            out.append([str(f), os.path.realpath(f.parent), st.st_size, st.st_mtime_ns,
                        parse_cache.file_digest(f)])
        return out
    except OSError:
        return None


def _entry(files: Sequence[Path], columns: Sequence[str] | None) -> Path:
    request = {"files": [str(f) for f in files],
               "columns": None if columns is None else sorted(set(columns)),
               "toolkit": parse_cache._toolkit_fingerprint()}
    name = hashlib.blake2b(json.dumps(request).encode(), digest_size=16).hexdigest()
    return parse_cache.cache_dir() / parse_cache._LAYOUT / name[:2] / f"{name}{_BATCH_SUFFIX}"


@dataclass
class Batch:
    """The checked part of a sweep: the stacked table and its runs, and which runs were not."""

    table: pa.Table | None  # converted, one chunk, the runs of ``checked`` in order
    checked: list[Checked]
    slow: list[int]  # positions (in the directory list) of runs that need the pandas path


def lookup(run_dirs: Sequence[Path], columns: Sequence[str] | None) -> tuple[Batch | None,
                                                                               list | None]:
    """The cached batch of these run directories if every task file is unchanged.

    Returns ``(batch or None, stamps)``; the stamps (None if a task file cannot be stat'ed or
    read, e.g. a legacy run) are taken before any parsing, for :func:`store`.
    """
    files = [Path(d).absolute() / TASK_FILE for d in run_dirs]
    stamps = _stamps(files)
    if stamps is None:
        return None, None
    try:
        entry = _entry(files, columns)
        with pa.memory_map(str(entry)) as source:
            reader = pa.ipc.open_file(source)
            meta = json.loads(reader.schema.metadata[_META])
            if meta["stamps"] != stamps:
                return None, stamps
            table = reader.read_all().replace_schema_metadata(None)
        checked, start = [], 0
        for run in meta["runs"]:
            found = [Finding(**{**f, "rows": tuple(f["rows"])}) for f in run["findings"]]
            checked.append(Checked(Path(run_dirs[run["position"]]), run["run_id"],
                                   table.slice(start, run["rows"]), found))
            start += run["rows"]
        if start != table.num_rows:
            return None, stamps
    except (OSError, KeyError, ValueError, TypeError, IndexError, pa.ArrowException):
        return None, stamps  # unreadable, foreign or older entry: a miss
    return Batch(table if checked else None, checked, meta["slow"]), stamps


def store(run_dirs: Sequence[Path], columns: Sequence[str] | None, batch: Batch,
          stamps: list | None) -> None:
    """Write the batch as one Arrow IPC file, atomically. Skipped when a task file changed
    while it was parsed or cannot be stamped; a cache that cannot be written is skipped
    silently (the per-file cache of trajectories warns about it)."""
    files = [Path(d).absolute() / TASK_FILE for d in run_dirs]
    if stamps is None or _stamps(files) != stamps:
        return
    position = {Path(d): i for i, d in enumerate(run_dirs)}
    meta = {"stamps": stamps, "slow": batch.slow,
            "runs": [{"position": position[c.run_dir], "run_id": c.run_id,
                      "rows": c.table.num_rows,
                      "findings": [dataclasses.asdict(f) for f in c.findings]}
                     for c in batch.checked]}
    table = batch.table if batch.table is not None else pa.table({})
    table = table.replace_schema_metadata({_META: json.dumps(meta).encode()})
    try:
        entry = _entry(files, columns)
        with atomic_write(entry, mode="wb", fsync=False) as fh, \
                pa.ipc.new_file(fh, table.schema) as writer:
            writer.write_table(table)
    except (OSError, pa.ArrowException):
        return
