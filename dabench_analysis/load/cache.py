# Over 400 lines (<= 500): the cache's trust rules, its entries' format and their upkeep, one module
"""On-disk cache of parsed eval-v2 files, so that loading a run twice parses it once.

One entry per file and request: the file's converted Arrow table (after the catalogue's rules),
its data-row numbers and its findings, as an Arrow IPC file in ``$DABENCH_CACHE_DIR`` or the
user cache directory (``platformdirs.user_cache_dir("dabench-analysis")``), never in a run
directory. An entry is served only when it can be trusted:

- its own bytes carry a checksum (xxHash3-128 when ``xxhash`` is installed, else SHA-256) in a
  trailer: a truncated entry, or one with a flipped byte anywhere, is a miss;
- it names the request (absolute path, file kind, columns asked for, a fingerprint of the
  toolkit: its version, pandas and pyarrow versions and a digest of the load layer's sources and
  the catalogue): an entry of another file, another request or another toolkit is a miss;
- it records the input's stamp when it was read (:func:`file_stamp`: size, modification and
  change times in nanoseconds, inode, device), the digest of the bytes parsed and the time of
  the read. An input whose stamp is unchanged is served without being read again, unless it was
  *racily clean* (git's rule, ``Documentation/technical/racy-git.txt``): modified or changed
  within :data:`RACY_NS` (2 s, the coarsest timestamp granularity of common file systems)
  before the read, when a later write in the same timestamp tick could leave the stamp as it
  was. A stamp change or a racily clean entry falls back to reading and hashing the input:
  the same digest is served (and the entry restamped), another is a miss.

A miss is re-read and the entry rewritten. Entries are written to a temporary file and renamed
into place, so concurrent loaders never see half an entry. A cache directory inside a run
directory, or one that cannot be written, is not used (with one warning).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from dabench_analysis._atomic import atomic_write
from dabench_analysis._caller import outside_level
from dabench_analysis.load._findings import Finding
from dabench_analysis.schema._files import TASK_FILES

#: Environment variable that overrides the cache directory.
ENV_VAR = "DABENCH_CACHE_DIR"
_LAYOUT = "v2"
_OLD_LAYOUTS = ("v1",)  # removed by clear()
_META = b"dabench.cache"
_MAGIC = b"DABENCH2"
_ROWS = "__dabench_row__"  # data-row numbers, stored only when some rows were dropped
#: Sources whose change invalidates every entry: the load layer and the catalogue beneath it.
_SOURCES = ("_csv.py", "_rules.py", "_findings.py", "_pipeline.py", "cache.py",
            "../schema/columns.py", "../schema/rules.py", "../schema/_files.py")
_warned: set[str] = set()
#: Racily clean margin (ns): an input modified or changed this close to (or after) the time it
#: was read is read and hashed again on every lookup, whatever its stamp.
RACY_NS = 2_000_000_000

try:
    import xxhash

    _HASH_NAME, _HASH = "xxh3_128", xxhash.xxh3_128
except ImportError:  # pragma: no cover - optional speed-up
    _HASH_NAME, _HASH = "sha256", hashlib.sha256


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


def layout_dir() -> Path:
    """The folder of the cache's entries, ``<cache dir>/v2`` (a sweep folder that is also the
    cache directory does not take it for a run)."""
    return cache_dir() / _LAYOUT


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
        if any(os.path.isfile(os.path.join(d, m)) for m in TASK_FILES):
            return d
    return None


def digest(data: bytes | memoryview) -> str:
    """Digest of some bytes, ``"<algorithm>:<hex>"`` (xxHash3-128, or SHA-256 without the
    ``xxhash`` package): how the loader stamps the bytes it parsed.

    Examples
    --------
    >>> digest(b"abc").split(":")[0] in ("xxh3_128", "sha256")
    True
    """
    return f"{_HASH_NAME}:{_HASH(data).hexdigest()}"


def stamp(path: str | os.PathLike[str], data: bytes | memoryview) -> dict:
    """What a reader records of a file it parsed: ``path``, ``size`` and :func:`digest` of the
    bytes (a report's manifest checks the file still holds them).

    Examples
    --------
    >>> stamp("x.json", b"{}")["size"]
    2
    """
    return {"path": os.fspath(path), "size": len(data), "digest": digest(data)}


def hasher():
    """A new streaming hasher of :func:`digest`'s algorithm (``update``, then
    :func:`hexdigest_of`)."""
    return _HASH()


def hexdigest_of(h) -> str:
    """``"<algorithm>:<hex>"`` of a :func:`hasher` fed with a file's bytes (= :func:`digest`)."""
    return f"{_HASH_NAME}:{h.hexdigest()}"


def file_digest(path: str | os.PathLike[str]) -> str:
    """:func:`digest` of a file's bytes, read in chunks.

    Notes
    -----
    Measured on a 14 MB trajectory.csv (page cache warm, one core): xxh3_128 1.8 ms, SHA-256
    9.5 ms; reading alone 1.4 ms. The digest only has to tell a changed file from an unchanged
    one, so a non-cryptographic hash is enough (the manifest's SHA-256 is separate).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_bytes(b"abc")
    >>> file_digest(p) == digest(b"abc")
    True
    """
    with open(path, "rb") as fh:
        return f"{_HASH_NAME}:{hashlib.file_digest(fh, _HASH).hexdigest()}"


def file_stamp(st: os.stat_result) -> dict:
    """The stamp of a file from its ``os.stat`` / ``os.fstat``: ``size`` (bytes),
    ``mtime_ns`` and ``ctime_ns`` (ns since the epoch), ``inode``, ``device``. A write, a
    rename over the file or an ``os.utime`` that restores the modification time all change it
    (the change time cannot be set back).

    Examples
    --------
    >>> import tempfile
    >>> p = tempfile.mkdtemp() + "/a.csv"
    >>> _ = open(p, "w").write("abc")
    >>> sorted(file_stamp(os.stat(p))), file_stamp(os.stat(p))["size"]
    (['ctime_ns', 'device', 'inode', 'mtime_ns', 'size'], 3)
    """
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
            "inode": st.st_ino, "device": st.st_dev}


def racily_clean(stamp: Mapping, read_ns: int) -> bool:
    """Whether a file of ``stamp`` (:func:`file_stamp`) read at ``read_ns`` (``time.time_ns()``
    taken before its stamp) may have been written again without its stamp changing: its
    modification or change time is within :data:`RACY_NS` of the read, or after it.

    Notes
    -----
    git's "racily clean" rule (git's ``Documentation/technical/racy-git.txt``): file system
    timestamps have a granularity (1 ns to 2 s) and the kernel's clock for them is coarser than
    ``time.time_ns``, so a write just after a read can keep the modification time read.

    Examples
    --------
    >>> st = {"mtime_ns": 10_000_000_000, "ctime_ns": 10_000_000_000}
    >>> racily_clean(st, 11_000_000_000), racily_clean(st, 13_000_000_000)
    (True, False)
    """
    return max(stamp["mtime_ns"], stamp["ctime_ns"]) >= read_ns - RACY_NS


@functools.cache
def toolkit_fingerprint() -> str:
    """Versions (package, pandas, pyarrow) and a digest of the loader's sources, once a process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("dabench-analysis")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        ver = "unknown"
    return f"{ver}+{_sources_digest(_SOURCES)} pandas {pd.__version__} pyarrow {pa.__version__}"


def _sources_digest(names: tuple[str, ...]) -> str:
    """BLAKE2b (16 bytes, hex) of the named source files of ``load/`` (name and bytes each;
    a missing file is passed over): an entry written by other code is never served."""
    h = hashlib.blake2b(digest_size=16)
    here = Path(__file__).resolve().parent
    for name in names:
        with contextlib.suppress(OSError):
            h.update(name.encode() + b"\0" + (here / name).read_bytes())
    return h.hexdigest()


def usable() -> Path | None:
    """The cache directory if it may be used (it is in no run directory), else None (with one
    warning)."""
    try:
        root = cache_dir()
        run = inside_a_run(root)
    except (OSError, RuntimeError):
        return None
    if run is not None:
        _warn_once(f"inside:{run}", f"cache directory {root} is inside the run directory "
                   f"{run}; not caching (set ${ENV_VAR} elsewhere)")
        return None
    return root


def _entry(root: Path, request: Mapping) -> Path:
    key = hashlib.blake2b(json.dumps(request, sort_keys=True).encode(), digest_size=16)
    name = key.hexdigest()
    return root / _LAYOUT / name[:2] / f"{name}.arrow"


@dataclasses.dataclass
class Cached:
    """What an entry holds: the converted table, data-row numbers and findings; ``digest`` of
    the input's bytes it was made from, and ``trusted``: the input's stamp is the one recorded
    and was not racily clean (served without reading the input)."""

    table: pa.Table
    rows: np.ndarray
    findings: list[Finding]
    digest: str | None = None
    trusted: bool = False


def lookup(root: Path, request: Mapping, stamp: Mapping) -> Cached | None:
    """The entry for ``request`` if its checksum holds, with whether the input may be trusted
    unread.

    Parameters
    ----------
    root : Path
        The cache directory (:func:`usable`).
    request : mapping
        JSON-able: file path, kind, columns, toolkit fingerprint (the entry's name and part of
        its content).
    stamp : mapping
        The input's :func:`file_stamp` now (taken before any read).

    Returns
    -------
    Cached or None
        None for a missing, truncated, damaged or foreign entry. Otherwise the entry, its
        ``digest`` and ``trusted``: True when ``stamp`` equals the recorded stamp and the
        entry's input was not racily clean (:func:`racily_clean`) at its read. An untrusted
        entry may be served only after the input's bytes are hashed to its ``digest``.
    """
    found = read_entry(root, request)
    if found is None:
        return None
    table, meta = found
    try:
        was = meta["stamp"]
        same = all(was.get(k) == v for k, v in stamp.items()) and bool(stamp)
        trusted = same and not racily_clean(was, int(meta["read_ns"]))
        findings = [Finding(**{**f, "rows": tuple(f["rows"])}) for f in meta["findings"]]
        entry_digest = str(was["digest"])
    except (KeyError, TypeError, ValueError):
        return None  # an entry of an older layout: a miss
    if _ROWS in table.column_names:
        rows = table.column(_ROWS).to_numpy()
        table = table.drop_columns([_ROWS])
    else:
        rows = np.arange(1, table.num_rows + 1)
    return Cached(table, rows, findings, entry_digest, trusted)


def read_entry(root: Path, request: Mapping) -> tuple[pa.Table, dict] | None:
    """An entry's table (memory-mapped) and metadata, if its trailer checksum holds and it was
    written for ``request``.

    Parameters
    ----------
    root : Path
        The cache directory (:func:`usable`).
    request : mapping
        JSON-able; names the entry (a hash of it) and must equal the one it was written for.

    Returns
    -------
    (pyarrow.Table, dict) or None
        The table without its metadata, and the metadata (JSON) :func:`write_entry` was given;
        None for a missing, unreadable, truncated, damaged (digest of the IPC bytes differs
        from the trailer's) or foreign (another request) entry. Never raises for a bad entry.
    """
    path = _entry(root, request)
    try:
        body = _verified(pa.memory_map(str(path)).read_buffer())  # mapped, not copied
        if body is None:
            return None
        reader = pa.ipc.open_file(body)
        meta = json.loads(reader.schema.metadata[_META])
        if meta.get("request") != json.loads(json.dumps(request)):
            return None
        return reader.read_all().replace_schema_metadata(None), meta
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None  # unreadable or foreign: a miss


def _verified(buf: pa.Buffer) -> pa.Buffer | None:
    """The IPC part of an entry if its trailer (digest, length, magic) matches its bytes."""
    n, tail = buf.size, len(_MAGIC) + 8
    if n < tail or buf.slice(n - len(_MAGIC)).to_pybytes() != _MAGIC:
        return None
    length = int.from_bytes(buf.slice(n - tail, 8).to_pybytes(), "little")
    width = len(digest(b"").encode())
    if length + width + tail != n:
        return None
    body = buf.slice(0, length)
    return body if buf.slice(length, width).to_pybytes() == digest(body).encode() else None


def store(root: Path, request: Mapping, stamp: Mapping, cached: Cached, *,
          read_ns: int) -> None:
    """Write an entry atomically (a cache that cannot be written warns once and is skipped).

    ``stamp`` is the input's :func:`file_stamp` taken after ``read_ns`` and before the read,
    ``cached.digest`` the digest of the bytes read."""
    table = cached.table
    if not np.array_equal(cached.rows, np.arange(1, table.num_rows + 1)):
        table = table.append_column(_ROWS, pa.array(cached.rows, pa.int64()))
    write_entry(root, request, table, {
        "stamp": {**stamp, "digest": cached.digest}, "read_ns": read_ns,
        "findings": [dataclasses.asdict(f) for f in cached.findings]})


def write_entry(root: Path, request: Mapping, table: pa.Table, meta: Mapping) -> None:
    """Write ``table`` with ``meta`` as the entry of ``request``, atomically.

    Parameters
    ----------
    root : Path
        The cache directory (:func:`usable`).
    request : mapping
        JSON-able; names the entry and is stored in it (:func:`read_entry` compares it).
    table : pyarrow.Table
        Stored as Arrow IPC, one record batch per chunk.
    meta : mapping
        JSON-able; stored in the schema's metadata with ``request``.

    Notes
    -----
    The file is the IPC bytes, then a trailer: :func:`digest` of those bytes, their length (8
    bytes, little-endian) and a magic. It is written to a temporary file and renamed into
    place; a cache that cannot be written warns once and is skipped (no error).
    """
    meta = {"request": request, **meta}
    table = table.replace_schema_metadata({_META: json.dumps(meta).encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    body = sink.getvalue()
    trailer = digest(body).encode() + body.size.to_bytes(8, "little") + _MAGIC
    try:
        with atomic_write(_entry(root, request), mode="wb", fsync=False) as fh:
            fh.write(body)
            fh.write(trailer)
    except OSError as exc:
        _warn_once(f"write:{root}", f"cannot write to the cache directory {root} "
                   f"({exc.strerror or exc}); loading without the cache")


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=outside_level())


def _entries(root: Path) -> list[Path]:
    found = []
    for layout in (_LAYOUT, *_OLD_LAYOUTS):
        base = root / layout
        if base.is_dir():
            found += [*base.glob("*/*.arrow"), *base.glob("*/*.parquet")]
    return sorted(found)


def info() -> dict:
    """Where the cache is and how much it holds.

    Returns
    -------
    dict
        ``path`` (str), ``entries`` (int), ``bytes`` (int, their total size), ``toolkit``
        (str, the version and loader digest that new entries are keyed by).

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
            "toolkit": toolkit_fingerprint()}


def clear() -> dict:
    """Delete every cache entry (and leftover temporary files) of this toolkit.

    Only files under the cache's own layout folders that the cache wrote (``*.arrow``, older
    ``*.parquet``, ``.*.tmp``) are removed, so pointing ``$DABENCH_CACHE_DIR`` at a shared
    folder never deletes other files.

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
    removed = freed = 0
    for layout in (_LAYOUT, *_OLD_LAYOUTS):
        base = root / layout
        if not base.is_dir():
            continue
        for f in [*base.glob("*/*.arrow"), *base.glob("*/*.parquet"), *base.glob("*/.*.tmp")]:
            with contextlib.suppress(OSError):
                size = f.stat().st_size
                f.unlink()
                removed += f.suffix in (".parquet", ".arrow")
                freed += size
        for d in base.iterdir():
            with contextlib.suppress(OSError):
                d.rmdir()  # only empty folders
    return {"path": str(root), "removed": removed, "bytes": freed}
