# Over 400 lines (<= 500): the one loading pipeline (read, digest, parse, the rules, the frame) in one place
"""The one loading pipeline: the files of one kind of many runs -> typed Arrow tables and their
findings -> one pandas frame.

:func:`read_files` is what :func:`~dabench_analysis.load.load_run` (one run) and
:func:`~dabench_analysis.load.load_runs` (a sweep) call for task files, and what
:attr:`Run.trajectory` / :attr:`Runs.trajectory` (and ``tool_calls``) call for side files:

1. each file's stamp (size, times, inode, device) is looked up in the parse cache
   (:mod:`.cache`): an entry whose stamp is unchanged, and was not racily clean, is served
   without reading the file. Otherwise the file is read once into memory (threads; into
   pyarrow's memory pool, which reuses its pages, rather than a new Python object each time)
   and its bytes digested (the same bytes that are parsed, so the manifest can check them
   later; :func:`scan`); an entry of that digest is served, else the file is parsed
   (:func:`._csv.parse`);
2. the files parsed are stacked and the catalogue's rules run once over the stack
   (:func:`._rules.convert`); each file's slice of the result is stored in the cache;
3. :func:`to_frame` turns the tables of every file into one pandas frame (one ``to_pandas``),
   of which each run gets its slice.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis.load import _csv as csv_reader
from dabench_analysis.load import _unclosed as unclosed
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._header import TEXT
from dabench_analysis.load._rules import convert
from dabench_analysis.load._stack import Stack
from dabench_analysis.schema import TASK_COLUMNS, TOOL_CALL_COLUMNS, TRAJECTORY_COLUMNS, Column
from dabench_analysis.schema._files import TASKS, TOOL_CALLS, TRAJECTORY, FileKind

#: Arrow -> pandas dtypes of the frames (enums are mapped onto the catalogue's dtype after).
PD_TYPES = {pa.bool_(): pd.BooleanDtype(), pa.int64(): pd.Int64Dtype(),
            pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}
#: Task-file columns without which nothing can be computed: checked on the header, before
#: reading a possibly huge file.
_TASK_ESSENTIAL = ("task_id", "final_score")
_HEAD = (1 << 20) + (1 << 16)  # what header_of may look at
_CHUNK = 1 << 18  # bytes scanned at a time (:func:`scan`)
_CR = ord("\r")
_KINDS = {id(TASK_COLUMNS): TASKS, id(TRAJECTORY_COLUMNS): TRAJECTORY,
          id(TOOL_CALL_COLUMNS): TOOL_CALLS}


@dataclass
class FileResult:
    """One file of one run as the pipeline read it.

    ``path`` (the file), ``table`` (converted; None when ``error``), ``rows`` (1-based data
    row of each table row),
    ``findings``, ``stamp`` (``path``, ``size``, ``mtime_ns``, ``digest`` of the bytes parsed)
    and ``error`` (the file could not be read as a whole).
    """

    path: Path
    kind: FileKind
    table: pa.Table | None = None
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    findings: list[Finding] = field(default_factory=list)
    stamp: dict | None = None
    error: RunLoadError | None = None
    fs: dict | None = field(default=None, repr=False)  # cache.file_stamp before the read
    read_ns: int = 0  # time.time_ns() before fs was taken
    _parsed: csv_reader.Parsed | None = field(default=None, repr=False)
    _restamped: parse_cache.Cached | None = field(default=None, repr=False)  # to store again

    @property
    def name(self) -> str:
        """The file's name, as findings give it."""
        return self.path.name


def read_files(files: Sequence[Path], kinds: Sequence[FileKind | None],
               columns: Sequence[str] | None = None, *, cache: bool = True,
               mapper: Callable = map, workers: int = 1,
               on_read: Callable[[list[FileResult | None]], object] | None = None
               ) -> list[FileResult | None]:
    """Read every file (the module notes say how): :func:`read_unconverted`, then
    :func:`finish`.

    Parameters
    ----------
    files : sequence of Path
        CSV files (``<run>/task_metrics.csv``, ...).
    kinds : sequence of FileKind or None
        For each file what it is (None: nothing to read; e.g. a run without the file).
    columns : sequence of str, optional
        Catalogue columns to read (the required ones always); None for all.
    cache : bool
        Use the parse cache.
    mapper : callable
        ``map``-like: how the files are read (threads, with a progress bar).
    workers : int
        Threads the rules may use (:func:`._rules.convert`): ``mapper``'s.
    on_read : callable, optional
        Called with the results once every file is read (``error`` set where a file could
        not be read as a whole), before the rules run on this thread: where a caller starts
        work of its own on another thread, beside them (the rules leave a core free).

    Returns
    -------
    list of FileResult or None
        One per file, in order; None where ``kinds`` is None.
    """
    results = read_unconverted(files, kinds, columns, cache=cache, mapper=mapper)
    if on_read is not None:
        on_read(results)
    return finish(results, columns, cache=cache, workers=workers)


def read_unconverted(files: Sequence[Path], kinds: Sequence[FileKind | None],
                     columns: Sequence[str] | None = None, *, cache: bool = True,
                     mapper: Callable = map) -> list[FileResult | None]:
    """:func:`read_files` up to the rules: each file served from the cache or read and parsed
    (its ``table`` None until :func:`finish`, but for a file served from the cache). It may
    run on other threads: the cache is written by :func:`finish`, whose warnings then name the
    caller's line."""
    cols = None if columns is None else tuple(dict.fromkeys(columns))
    root = parse_cache.usable() if cache else None
    jobs = [(f, k) for f, k in zip(files, kinds, strict=True) if k is not None]
    threads = None if len(jobs) < (os.cpu_count() or 1) else False  # else a file a thread
    done = list(mapper(lambda job: _read_one(*job, cols, root, threads), jobs))
    it = iter(done)
    return [next(it) if k is not None else None for k in kinds]


def finish(results: list[FileResult | None], columns: Sequence[str] | None = None, *,
           cache: bool = True, workers: int = 1) -> list[FileResult | None]:
    """The rules over the files :func:`read_unconverted` parsed (``columns`` and ``cache`` as
    given to it), each file's slice, and the cache entries (new ones, and those served for the
    same bytes under a new stamp); ``results``, filled in. Every cache write is here."""
    cols = None if columns is None else tuple(dict.fromkeys(columns))
    root = parse_cache.usable() if cache else None
    for r in results:  # an entry served for the same bytes under a new stamp
        if r is not None and r._restamped is not None:
            if root is not None:
                parse_cache.store(root, _request(r.path.absolute(), r.kind, cols), r.fs,
                                  r._restamped, read_ns=r.read_ns)
            r._restamped = None
    _convert([r for r in results if r is not None and r._parsed is not None], cols, root,
             workers)
    csv_reader.memory_pool().release_unused()  # what the rules freed, before the frame is built
    return results


def _request(path: Path, kind: FileKind, columns) -> dict:
    return {"path": os.fspath(path), "file": kind.file,
            "columns": None if columns is None else sorted(columns),
            "toolkit": parse_cache.toolkit_fingerprint()}


def _read_one(file: Path, kind: FileKind, columns, root: Path | None,
              threads: bool | None = None) -> FileResult:
    out = FileResult(Path(file), kind)
    path, name = out.path.absolute(), out.name
    read_ns = time.time_ns()  # before the stamp: racily clean is judged against it
    hit = None
    try:
        with open(path, "rb") as fh:  # errors as the OS words them; the header checked first
            st = os.fstat(fh.fileno())
            fs = parse_cache.file_stamp(st)
            if root is not None:
                hit = parse_cache.lookup(root, _request(path, kind, columns), fs)
                if hit is not None and hit.trusted:  # the stamp vouches for the bytes: unread
                    return _served(out, hit, path, st)
            if kind.is_tasks:  # before reading a possibly huge file
                _essential(fh.read(_HEAD), kind, name)
        with pa.OSFile(os.fspath(path), memory_pool=csv_reader.memory_pool()) as raw:
            data = memoryview(raw.read_buffer())
    except OSError as exc:
        out.error = RunLoadError(f"{name}: cannot read ({exc.strerror or exc})",
                                 [Finding("error", name, None, None, "unreadable", str(exc))])
        return out
    except RunLoadError as exc:
        out.error = exc
        return out
    digest, has_cr, odd = scan(data)
    out.stamp = {"path": os.fspath(path), "size": len(data), "mtime_ns": st.st_mtime_ns,
                 "digest": digest}
    out.fs, out.read_ns = fs, read_ns
    if hit is not None and hit.digest == digest:  # restamped, or racily clean: same bytes
        out._restamped = hit  # stored again by finish, on the caller's thread
        return _served(out, hit, path, st)
    try:
        out._parsed = csv_reader.parse(data, kind, columns, name=name, has_cr=has_cr,
                                       odd_quotes=odd, threads=threads)
    except RunLoadError as exc:
        out.error = exc
    return out


def _served(out: FileResult, hit: parse_cache.Cached, path: Path,
            st: os.stat_result) -> FileResult:
    """``out`` filled from a cache entry (its stamp with the digest the entry recorded)."""
    out.table, out.rows, out.findings = hit.table, hit.rows, hit.findings
    out.stamp = {"path": os.fspath(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                 "digest": hit.digest}
    return out


def scan(data: bytes | memoryview) -> tuple[str, bool, bool]:
    """A file's digest (:func:`.cache.digest`), whether it holds a CR byte and whether its
    quote characters add up to an odd number (:mod:`._unclosed`), in one pass over ``data``:
    each chunk is hashed and searched (numpy, outside the GIL) while it is in the processor's
    cache.

    Examples
    --------
    >>> from dabench_analysis.load.cache import digest
    >>> data = b'a,b\\r\\n1,"x""y"\\r\\n2,"open\\n'
    >>> d, cr, odd = scan(data)
    >>> d == digest(data), cr, odd
    (True, True, True)
    """
    h, quotes, cr = parse_cache.hasher(), 0, False
    arr = np.frombuffer(data, dtype=np.uint8)
    for start in range(0, len(arr), _CHUNK):
        chunk = arr[start:start + _CHUNK]
        h.update(chunk)
        quotes += unclosed.quotes(chunk)
        cr = cr or bool((chunk == _CR).any())
    return parse_cache.hexdigest_of(h), cr, quotes % 2 == 1


def _essential(data: bytes, kind: FileKind, name: str) -> None:
    """A task file without task_id or final_score is rejected on its header."""
    missing = list(_missing(tuple(csv_reader.header_of(data, name)), kind))
    if missing:
        raise RunLoadError(f"{name}: required column(s) {missing} missing from the header",
                           [Finding("error", name, None, c, "required_column", "missing")
                            for c in missing])


@functools.lru_cache(maxsize=64)
def _missing(header: tuple[str, ...], kind: FileKind) -> tuple[str, ...]:
    """The required columns a header lacks, if it lacks an essential one (a sweep's files
    share a few headers)."""
    present = {kind.aliases.get(h.strip(), h.strip()) for h in header}
    if set(_TASK_ESSENTIAL) <= present:
        return ()
    return tuple(c for c in kind.required if c not in present and c != "run_id")


def _convert(results: list[FileResult], columns, root: Path | None, workers: int = 1) -> None:
    """Stack the parsed files of each kind, run the rules once, give each file its slice."""
    by_kind: dict[int, list[FileResult]] = {}
    for r in results:  # the legacy task file shares the task file's catalogue
        by_kind.setdefault(id(r.kind.catalogue), []).append(r)
    for group in by_kind.values():
        tables = [r._parsed.table for r in group]
        keys = [t.schema.serialize().to_pybytes() for t in tables]  # names in full, types
        tables = _unified(tables, keys)
        names = _names(tables, keys)
        sizes = [t.num_rows for t in tables]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        stack = Stack(stacked(tables), starts,
                      np.concatenate([r._parsed.rows for r in group]).astype(np.int64),
                      [r.name for r in group], [own for _, own in names])
        del tables
        typed, found, drop = convert(stack, group[0].kind,
                                     lambda f, col, group=group: _text_of(group[f], col),
                                     threads=workers)
        all_rows, typed_names = stack.rows, typed.column_names
        del stack  # the text read: what the rules did not keep is freed with the files' tables
        for i, r in enumerate(group):
            part = typed.slice(starts[i], sizes[i])
            rows, gone = all_rows[starts[i]:starts[i + 1]], drop[starts[i]:starts[i + 1]]
            if gone.any():
                part, rows = part.filter(pa.array(~gone)), rows[~gone]
            r.table = part if names[i][0] == typed_names else part.select(names[i][0])
            r.rows = rows
            r.findings = [*r._parsed.findings, *found[i]]
            r._parsed = None
            if root is not None and r.fs is not None:
                parse_cache.store(root, _request(r.path.absolute(), r.kind, columns), r.fs,
                                  parse_cache.Cached(r.table, r.rows, r.findings,
                                                     r.stamp["digest"]), read_ns=r.read_ns)


def _names(tables: list[pa.Table], keys: list[bytes]
           ) -> list[tuple[list[str], frozenset[str]]]:
    """Each table's column names, as a list and a set, worked out once per schema (``keys``:
    each table's schema serialized; the files of one harness version share theirs)."""
    seen: dict[bytes, tuple[list[str], frozenset[str]]] = {}
    for t, key in zip(tables, keys, strict=True):
        if key not in seen:
            seen[key] = (t.schema.names, frozenset(t.schema.names))
    return [seen[key] for key in keys]


def _text_of(result: FileResult, column: str) -> pa.ChunkedArray:
    """One column of a file as written (read again, as text: the file must hold the bytes
    parsed)."""
    data = result.path.read_bytes()
    if parse_cache.digest(data) != result.stamp["digest"]:
        raise RunLoadError(f"{result.name}: changed while it was read; load it again")
    parsed = csv_reader.parse(data, result.kind, (column,), name=result.name, as_text=True)
    return parsed.table.column(column)


def _unified(tables: list[pa.Table], keys: list[bytes]) -> list[pa.Table]:
    """Tables whose same-named columns have one type: a column that some file read as text
    (the file was read as text) is text in all (numbers as pyarrow prints them). ``keys``:
    each table's schema serialized (its text shortens names over 100 characters)."""
    types: dict[str, set] = {}
    schemas = {key: t.schema for t, key in zip(tables, keys, strict=True)}
    for schema in schemas.values():  # files of one harness version share theirs
        for n, ty in zip(schema.names, schema.types, strict=True):
            types.setdefault(n, set()).add(ty)
    mixed = {n for n, ts in types.items() if len(ts) > 1}
    if not mixed:
        return tables
    return [t.cast(pa.schema([pa.field(f.name, TEXT) if f.name in mixed else f
                              for f in t.schema])) for t in tables]


def stacked(tables: Sequence[pa.Table]) -> pa.Table:
    """Tables of one kind as one (columns in order of first appearance, null where a file
    lacks one)."""
    return pa.concat_tables(tables, promote_options="default",
                            memory_pool=csv_reader.memory_pool()) if tables else pa.table({})


def to_frame(table: pa.Table, kind: FileKind, *, destroy: bool = False) -> pd.DataFrame:
    """A converted table -> frame with the catalogue's dtypes (RangeIndex): flags ``boolean``,
    whole numbers ``Int64``, enums the catalogue's categoricals, text ``string``. ``destroy``
    frees each Arrow column once converted (the caller holds no other reference to the table:
    the peak is then about one copy of the numbers, not two)."""
    df = table.to_pandas(types_mapper=PD_TYPES.get, split_blocks=destroy, self_destruct=destroy,
                         memory_pool=csv_reader.memory_pool())
    if destroy:  # the columns it freed go back now, not after the pool's decay
        csv_reader.memory_pool().release_unused()
    fix = {c: df[c].astype(s.dtype) for c, s in kind.catalogue.items()
           if c in df and s.kind == "enum" and df[c].dtype != s.dtype}
    return df.assign(**fix) if fix else df


def fill_run_id(table: pa.Table, run_id: str | pa.Array) -> pa.Table:
    """``run_id`` as the first column, its missing values filled with ``run_id`` (one id, or
    one per row: runs stacked)."""
    ids = pa.array([run_id] * table.num_rows, TEXT) if isinstance(run_id, str) else run_id
    if "run_id" not in table.column_names:
        return table.add_column(0, "run_id", ids)
    col = table.column("run_id")
    if col.null_count:
        table = table.set_column(table.column_names.index("run_id"), "run_id",
                                 pc.coalesce(col, ids))
    return table


def concat_frames(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack frames whose columns may differ (runs of other harness versions): a column missing
    from a frame is filled with missing values of the dtype it has elsewhere; categoricals stay
    categorical (their categories united); a fresh RangeIndex."""
    if not frames:
        return pd.DataFrame()
    dtypes: dict[str, object] = {}
    for f in frames:
        for col, dt in f.dtypes.items():
            if col in dtypes and isinstance(dt, pd.CategoricalDtype) and dt != dtypes[col]:
                old = dtypes[col]
                cats = pd.Index(old.categories).append(dt.categories).unique() \
                    if isinstance(old, pd.CategoricalDtype) else dt.categories
                dtypes[col] = pd.CategoricalDtype(cats, ordered=False)
            dtypes.setdefault(col, dt)
    cols = list(dtypes)
    aligned = []
    for f in frames:
        if list(f.columns) != cols:
            f = f.reindex(columns=cols)
        fix = {c: t for c, t in dtypes.items() if f[c].dtype != t}
        aligned.append(f.astype(fix) if fix else f)
    return pd.concat(aligned, ignore_index=True)


def read_table(path, kind: FileKind | Mapping[str, Column], *,
               columns: Sequence[str] | None = None,
               cache: bool = False) -> tuple[pd.DataFrame, list[Finding]]:
    """One CSV file through the pipeline, as a frame and its findings.

    Parameters
    ----------
    path : path-like
        The file (any name; findings name it).
    kind : FileKind or mapping of str to Column
        :data:`~dabench_analysis.schema._files.TASKS`, ``TRAJECTORY`` or ``TOOL_CALLS`` (or
        their catalogues, ``schema.TASK_COLUMNS`` ...); any other catalogue is read with no
        key and no alias.
    columns : sequence of str, optional
        Catalogue columns to read (the required ones always); None for all.
    cache : bool
        Use the parse cache.

    Returns
    -------
    frame : DataFrame
        Catalogue dtypes, unknown columns as ``string``, indexed by the 0-based data row of
        the file (gaps where rows were dropped).
    findings : list of Finding

    Raises
    ------
    RunLoadError
        When the file as a whole cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dabench_analysis.schema._files import TASKS
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "task_metrics.csv"
    >>> _ = p.write_text("task_id,difficulty,final_score,execution_success\\nt1,Easy,0.9,1\\n")
    >>> df, found = read_table(p, TASKS)
    >>> df.dtypes.astype(str).tolist()
    ['string', 'category', 'float64', 'boolean']
    >>> [f.check for f in found]  # no run_id: an optional column (the folder names the run)
    []
    """
    if not isinstance(kind, FileKind):
        kind = _KINDS.get(id(kind)) or FileKind(Path(path).name, "table", kind, (), "error")
    (res,) = read_files([Path(path)], [kind], columns, cache=cache)
    if res.error is not None:
        raise res.error
    frame = to_frame(res.table, kind)
    return frame.set_axis(pd.Index(res.rows - 1, dtype="int64"), axis=0), res.findings
