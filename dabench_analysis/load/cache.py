# Over 400 lines (under 500): the whole life of a cache entry in one place (key, stamp, the
# dtype-exact Arrow format, read, write, info, clear), so its invariants can be read together.
"""On-disk cache of parsed eval-v2 tables (Parquet), so that loading a run twice parses it once.

:func:`cached_read` wraps the loader's parse function (``load.table.read_table``): the typed frame and
its findings are stored as one Parquet file in ``$DABENCH_CACHE_DIR`` or the user cache
directory (``platformdirs.user_cache_dir("dabench-analysis")``), never in a run directory. An
entry is served only when all it was made from is unchanged: the source file (absolute path,
size, mtime in ns, a hash of its bytes: a rewrite with the same size and mtime is a miss), the
request (catalogue column specs, columns asked for, aliases) and the toolkit (version, pandas and
pyarrow versions, a digest of the load layer's sources (:data:`_LOADER_FILES`), ``schema.py`` and this
module, so editing the loader invalidates every entry).

One entry per (path, request), ``<dir>/v1/<2 hex>/<32 hex>.parquet``: a changed source file
overwrites its entry. Entries are written to a temporary file and renamed into place
(:func:`os.replace`), so concurrent loaders (``--jobs 2``) never see half an entry; an unreadable
entry is a miss. Dtypes (ordered categoricals with unused levels, ``boolean``, ``Int64``,
``string``) and the index come back exactly, or the entry is a miss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dabench_analysis._atomic import atomic_write
from dabench_analysis.load.findings import Finding

#: Environment variable that overrides the cache directory.
ENV_VAR = "DABENCH_CACHE_DIR"


_LAYOUT = "v1"


_META = b"dabench.cache"


#: Sources whose change invalidates every entry: the load layer and the catalogue beneath it.
_LOADER_FILES = ("run.py", "sweep.py", "table.py", "csv.py", "coerce.py", "findings.py", "replay.py",
                 "fast.py", "cache.py", "../schema/columns.py")


_INDEX_COLUMN = "__dabench_index__"  # the frame's index, stored as the last column


_ARROW_TO_PANDAS = {pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype(),
                    pa.bool_(): pd.BooleanDtype(), pa.int64(): pd.Int64Dtype()}


_warned: set[str] = set()


try:
    import xxhash

    _HASH_NAME, _HASH = "xxh3_128", xxhash.xxh3_128
except ImportError:  # pragma: no cover - optional speed-up
    _HASH_NAME, _HASH = "sha256", "sha256"


def cache_dir() -> Path:
    """The cache directory: ``$DABENCH_CACHE_DIR`` if set, else the user cache directory.

    Returns
    -------
    Path
        Absolute path (not created here). On Linux the default is
        ``~/.cache/dabench-analysis`` (or ``$XDG_CACHE_HOME/dabench-analysis``).

    Examples
    --------
    >>> import os
    >>> os.environ[ENV_VAR] = "/tmp/dabench-doctest-cache"
    >>> str(cache_dir())
    '/tmp/dabench-doctest-cache'
    >>> del os.environ[ENV_VAR]
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("dabench-analysis", appauthor=False)).resolve()


#: Files that make a directory a run directory (``load.TASK_FILE``, ``load.LEGACY_TASK_FILE``).
_RUN_MARKERS = ("task_metrics.csv", "comprehensive_evaluation.csv")


def inside_a_run(root: str | os.PathLike[str]) -> Path | None:
    """The run directory that ``root`` (resolved) is in or is, if any: the nearest of it and
    its parents that holds ``task_metrics.csv`` or ``comprehensive_evaluation.csv``. The cache
    is never written there (the toolkit never writes into a run directory).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (run / "task_metrics.csv").write_text("task_id,final_score\\n")
    >>> inside_a_run(run / ".cache" / "x") == run.resolve(), inside_a_run(run.parent)
    (True, None)
    """
    here = Path(root).resolve()
    for d in (here, *here.parents):
        if any(os.path.isfile(os.path.join(d, m)) for m in _RUN_MARKERS):
            return d
    return None


def file_digest(path: str | os.PathLike[str]) -> str:
    """Digest of a file's bytes, ``"<algorithm>:<hex>"``: xxHash3-128 if the ``xxhash``
    package is installed, else SHA-256.

    Notes
    -----
    Measured on a 14 MB trajectory.csv (page cache warm, one core): xxh3_128 1.8 ms, SHA-256
    9.5 ms (OpenSSL with SHA extensions), BLAKE2b ~16 ms; reading alone 1.4 ms. The digest only
    has to tell a changed file from an unchanged one (a writer of the run file could change it
    anyway), so a non-cryptographic hash is enough.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_bytes(b"abc")
    >>> file_digest(p).split(":")[0] in ("xxh3_128", "sha256")
    True
    """
    with open(path, "rb") as fh:
        return f"{_HASH_NAME}:{hashlib.file_digest(fh, _HASH).hexdigest()}"


@functools.cache
def _toolkit_fingerprint() -> str:
    """Versions (package, pandas, pyarrow) and a digest of the loader's sources, once a process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("dabench-analysis")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        ver = "unknown"
    h = hashlib.blake2b(digest_size=16)
    here = Path(__file__).resolve().parent
    for name in _LOADER_FILES:
        with contextlib.suppress(OSError):
            h.update(name.encode() + b"\0" + (here / name).read_bytes())
    return f"{ver}+{h.hexdigest()} pandas {pd.__version__} pyarrow {pa.__version__}"


_CATALOGUES: dict[int, tuple[Mapping, str]] = {}


def _catalogue_fingerprint(catalogue: Mapping) -> str:
    """Digest of a catalogue's column specs, memoised per catalogue object (module constants)."""
    known = _CATALOGUES.get(id(catalogue))
    if known is None or known[0] is not catalogue:
        specs = repr(sorted((str(k), repr(v)) for k, v in catalogue.items()))
        known = (catalogue, hashlib.blake2b(specs.encode(), digest_size=16).hexdigest())
        if len(_CATALOGUES) > 32:
            _CATALOGUES.clear()
        _CATALOGUES[id(catalogue)] = known
    return known[1]


def _entry_path(root: Path, path: Path, catalogue: Mapping, columns: Sequence[str] | None,
                aliases: Mapping[str, str] | None) -> Path:
    """``<root>/v1/<2 hex>/<32 hex>.parquet``, named after the file and the request."""
    request = {"path": str(path), "catalogue": _catalogue_fingerprint(catalogue),
               "columns": None if columns is None else sorted(set(columns)),
               "aliases": sorted((aliases or {}).items()), "toolkit": _toolkit_fingerprint()}
    name = hashlib.blake2b(json.dumps(request).encode(), digest_size=16).hexdigest()
    return root / _LAYOUT / name[:2] / f"{name}.parquet"


def _dtype_spec(dtype) -> dict:
    if isinstance(dtype, pd.CategoricalDtype):
        return {"kind": "category", "categories": dtype.categories.tolist(),
                "ordered": bool(dtype.ordered), "categories_dtype": str(dtype.categories.dtype)}
    if isinstance(dtype, pd.StringDtype):
        return {"kind": "string", "storage": dtype.storage,
                "na": "NA" if dtype.na_value is pd.NA else "nan"}
    return {"kind": "other", "name": str(dtype), "repr": repr(dtype)}


@functools.lru_cache(maxsize=256)
def _categorical(categories: tuple, categories_dtype: str, ordered: bool) -> pd.CategoricalDtype:
    return pd.CategoricalDtype(pd.Index(list(categories), dtype=categories_dtype), ordered=ordered)


def _want(spec: dict):
    if spec["kind"] == "category":
        return _categorical(tuple(spec["categories"]), spec["categories_dtype"], spec["ordered"])
    if spec["kind"] == "string":
        return pd.StringDtype(spec["storage"], na_value=pd.NA if spec["na"] == "NA" else np.nan)
    return pd.api.types.pandas_dtype(spec["name"])


def _same(have, spec: dict) -> bool:
    if spec["kind"] == "category":
        return (isinstance(have, pd.CategoricalDtype) and have.ordered == spec["ordered"]
                and str(have.categories.dtype) == spec["categories_dtype"]
                and have.categories.tolist() == spec["categories"])
    if spec["kind"] == "string":
        return isinstance(have, pd.StringDtype) and have.storage == spec["storage"] and \
            (have.na_value is pd.NA) == (spec["na"] == "NA")
    return repr(have) == spec["repr"]


def _restore(df: pd.DataFrame, specs: list[dict]) -> pd.DataFrame | None:
    """Give each column its stored dtype (categoricals are stored as codes); None when one
    does not come back exactly."""
    cats, fix = {}, {}
    for col, have, spec in zip(df.columns, df.dtypes, specs, strict=True):
        if spec["kind"] == "category" and getattr(have, "kind", "") in "iu":
            cats[col] = pd.Categorical.from_codes(df[col].to_numpy(dtype=np.int64),
                                                  dtype=_want(spec))
        elif not _same(have, spec):
            fix[col] = _want(spec)
    if cats or fix:  # column by column: DataFrame.astype(dict) visits every column
        df = df.assign(**cats, **{c: df[c].astype(t) for c, t in fix.items()})
    ok = all(_same(df[c].dtype, spec) for c, spec in zip(df.columns, specs, strict=True)
             if c in fix)
    return df if ok else None


def _to_arrow(col: pd.Series) -> pa.Array:
    """One column to Arrow without pyarrow's pandas metadata (half the time of from_pandas)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return pa.array(col.array.codes)  # -1 = missing; the categories are in the metadata
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":
        return pa.array(col.to_numpy())
    return pa.Array.from_pandas(col.array)


def _index(labels: pa.ChunkedArray, meta: dict) -> pd.Index:
    name, spec = meta["index_name"], meta["index"]
    if meta["range"]:
        return pd.RangeIndex(*meta["range"], name=name)
    if spec["kind"] == "other" and spec["name"] == "int64" and labels.null_count == 0:
        return pd.Index(labels.to_numpy(), dtype="int64", name=name)  # the loader's row numbers
    values = _restore(pa.table({"i": labels}).to_pandas(types_mapper=_ARROW_TO_PANDAS.get),
                      [spec])
    return pd.Index(values["i"].array, name=name)


def _load(entry: Path, stamp: dict, finding_type: type):
    """The cached (frame, findings) if the entry matches ``stamp``; else None."""
    try:
        with pq.ParquetFile(entry) as pf:
            meta = json.loads((pf.schema_arrow.metadata or {}).get(_META, b"{}"))
            if meta.get("stamp") != stamp:
                return None
            table = pf.read(use_threads=False)
        labels = table.column(_INDEX_COLUMN)
        df = _restore(table.drop_columns([_INDEX_COLUMN]).to_pandas(
            types_mapper=_ARROW_TO_PANDAS.get), meta["dtypes"])
        if df is None or list(df.columns) != meta["columns"]:
            return None
        df.index = _index(labels, meta)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None  # unreadable, foreign or older entry: a miss
    findings = [finding_type(**{**d, "rows": tuple(d.get("rows", ()))})
                for d in meta["findings"]]
    return df, findings


def _store(entry: Path, df: pd.DataFrame, findings: list, stamp: dict) -> None:
    idx = df.index
    if isinstance(idx, pd.MultiIndex) or not isinstance(idx.name, (str, type(None))) or \
            not all(isinstance(c, str) and c != _INDEX_COLUMN for c in df.columns):
        return  # not a frame the loader makes: not cached
    columns = [_to_arrow(df[c]) for c in df.columns] + [_to_arrow(idx.to_series())]
    table = pa.Table.from_arrays(columns, names=[*df.columns, _INDEX_COLUMN])
    meta = {"stamp": stamp, "columns": list(df.columns), "index_name": idx.name,
            "range": [idx.start, idx.stop, idx.step] if isinstance(idx, pd.RangeIndex) else None,
            "dtypes": [_dtype_spec(t) for t in df.dtypes], "index": _dtype_spec(idx.dtype),
            "findings": [dataclasses.asdict(f) for f in findings]}
    table = table.replace_schema_metadata({_META: json.dumps(meta).encode()})
    with atomic_write(entry, mode="wb", fsync=False) as fh:
        pq.write_table(table, fh, compression="snappy", use_dictionary=False)


def batch_usable() -> bool:
    """Whether stacked-sweep entries (``load.fast``) may be used: the cache directory is inside
    no run directory (:func:`inside_a_run`)."""
    try:
        return inside_a_run(cache_dir()) is None
    except (OSError, RuntimeError):
        return False


def batch_stamps(files: Sequence[Path]) -> list[list] | None:
    """Stamp of a stacked sweep's files, each: path, real path of its run (the run id of a run
    without a run_id column is its folder's name), size, mtime in ns, digest; None if one
    cannot be read."""
    try:
        return [[str(f), os.path.realpath(f.parent), (st := f.stat()).st_size, st.st_mtime_ns,
                 file_digest(f)] for f in files]
    except OSError:
        return None


def batch_entry(files: Sequence[Path], columns: Sequence[str] | None, run_ids: list | None) -> Path:
    """``<dir>/v1/<2 hex>/<32 hex>.arrow``: the entry of a stacked sweep of ``files``."""
    request = {"files": [str(f) for f in files], "run_ids": run_ids, "toolkit": _toolkit_fingerprint(),
               "columns": None if columns is None else sorted(set(columns))}
    name = hashlib.blake2b(json.dumps(request).encode(), digest_size=16).hexdigest()
    return cache_dir() / _LAYOUT / name[:2] / f"{name}.arrow"


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=4)


def cached_read(
    read: Callable[..., tuple[pd.DataFrame, list]],
    path: str | os.PathLike[str],
    catalogue: Mapping,
    *,
    columns: Sequence[str] | None = None,
    aliases: Mapping[str, str] | None = None,
    enabled: bool = True,
) -> tuple[pd.DataFrame, list]:
    """``read(path, catalogue, columns=..., aliases=...)`` through the on-disk cache.

    Parameters
    ----------
    read : callable
        The parse function, normally :func:`dabench_analysis.load.read_table`; it must return
        ``(frame, findings)`` where each finding is a dataclass (``Finding``).
    path : path-like
        The CSV file (task_metrics.csv, trajectory.csv, tool_calls.csv, ...).
    catalogue : mapping of str to Column
        Passed to ``read``; its column specs are part of the key.
    columns, aliases : optional
        Passed to ``read``; part of the key (column order does not matter).
    enabled : bool
        False calls ``read`` directly (``load_run(..., cache=False)``).

    Returns
    -------
    frame : DataFrame
        Identical to what ``read`` returns (values, dtypes, column order, index).
    findings : list
        The findings ``read`` reported when the entry was made (new objects, equal to them).

    Raises
    ------
    Whatever ``read`` raises (a file that cannot be parsed is never cached). Cache problems
    never raise: an unwritable cache directory warns once and the frame is returned uncached;
    an unreadable entry is a miss.

    Notes
    -----
    Cost of a hit: one ``stat``, a hash of the file (:func:`file_digest`) and a Parquet read. The stamp is taken
    before parsing and the entry is written only if size and mtime are unchanged after it, so a
    file being rewritten during the parse is not cached.

    Examples
    --------
    >>> import os, tempfile, pathlib
    >>> from dabench_analysis import load, schema
    >>> os.environ[ENV_VAR] = tempfile.mkdtemp()
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "task_metrics.csv"
    >>> _ = p.write_text("task_id,difficulty,final_score\\nt1,Hard,0.25\\n")
    >>> first, found = cached_read(load.read_table, p, schema.TASK_COLUMNS)
    >>> again, found_again = cached_read(load.read_table, p, schema.TASK_COLUMNS)
    >>> again.equals(first), found_again == found, info()["entries"]
    (True, True, 1)
    >>> del os.environ[ENV_VAR]
    """
    kwargs = {"columns": columns, "aliases": aliases}
    if not enabled:
        return read(path, catalogue, **kwargs)
    path = Path(path).absolute()
    try:
        root = cache_dir()
        run = path.parent.resolve() if root.is_relative_to(path.parent.resolve()) \
            else inside_a_run(root)
        if run:
            _warn_once(f"inside:{run}", f"cache directory {root} is inside the run "
                       f"directory {run}; not caching (set ${ENV_VAR} elsewhere)")
            return read(path, catalogue, **kwargs)
        st = path.stat()
        stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "digest": file_digest(path)}
    except OSError:  # unreadable or missing: the loader says what is wrong
        return read(path, catalogue, **kwargs)
    entry = _entry_path(root, path, catalogue, columns, aliases)
    finding_type = Finding
    if entry.is_file():
        hit = _load(entry, stamp, finding_type)
        if hit is not None:
            return hit
    df, findings = read(path, catalogue, **kwargs)
    with contextlib.suppress(OSError):
        after = path.stat()
        if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
            return df, findings
    try:
        _store(entry, df, findings, stamp)
    except OSError as exc:
        _warn_once(f"write:{root}", f"cannot write to the cache directory {root} "
                   f"({exc.strerror or exc}); loading without the cache")
    except (pa.ArrowException, TypeError, ValueError):
        pass  # a frame Parquet cannot hold (object columns of mixed types) is not cached
    return df, findings


def _entries(root: Path) -> list[Path]:
    base = root / _LAYOUT
    if not base.is_dir():
        return []
    return sorted([*base.glob("*/*.parquet"), *base.glob("*/*.arrow")])


def info() -> dict:
    """Where the cache is and how much it holds.

    Returns
    -------
    dict
        ``path`` (str), ``entries`` (int: Parquet files, and Arrow files of stacked sweeps),
        ``bytes`` (int, their total size),
        ``toolkit`` (str, the version and loader digest that new entries are keyed by).

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ[ENV_VAR] = tempfile.mkdtemp()
    >>> info()["entries"], info()["bytes"]
    (0, 0)
    >>> del os.environ[ENV_VAR]
    """
    root = cache_dir()
    sizes = [f.stat().st_size for f in _entries(root) if f.is_file()]
    return {"path": str(root), "entries": len(sizes), "bytes": sum(sizes),
            "toolkit": _toolkit_fingerprint()}


def clear() -> dict:
    """Delete every cache entry (and leftover temporary files) of this toolkit.

    Only files under ``<cache dir>/v1/`` that the cache wrote (``*.parquet``, ``*.arrow``, ``.*.tmp``) are
    removed, so pointing ``$DABENCH_CACHE_DIR`` at a shared folder never deletes other files.

    Returns
    -------
    dict
        ``path`` (str), ``removed`` (int, entries deleted), ``bytes`` (int, bytes freed).

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ[ENV_VAR] = tempfile.mkdtemp()
    >>> clear()["removed"]
    0
    >>> del os.environ[ENV_VAR]
    """
    root = cache_dir()
    base = root / _LAYOUT
    removed = freed = 0
    if base.is_dir():
        for f in [*_entries(root), *base.glob("*/.*.tmp")]:
            with contextlib.suppress(OSError):
                size = f.stat().st_size
                f.unlink()
                removed += f.suffix in (".parquet", ".arrow")
                freed += size
        for d in base.iterdir():
            with contextlib.suppress(OSError):
                d.rmdir()  # only empty folders
    return {"path": str(root), "removed": removed, "bytes": freed}
