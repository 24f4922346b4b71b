# Over 400 lines (under 500): the life of an output folder in one place (staging, the list of
# what the toolkit wrote, what stands in the way, install), whose steps must agree.
"""What the toolkit writes into an output folder, so that the folder always reflects one run of
one report: never a stale table beside a new summary, never half a report under a success name.

A report (or ``validate --out``) is first written into a private **staging folder** inside the
output folder (``.papermill-<random>/``, locked while its process lives). Nothing appears under
the folder's own names until it has finished. Then :func:`install`, under a lock on the output
folder:

1. writes the **ledger** (``.dabench-<kind>.json``: every file the toolkit wrote there) as the
   union of the previous run's files and the new ones, so that an interrupted install is
   cleaned by the next one;
2. removes the previous run's success names (``report.ipynb``, ``summary.json``,
   ``report.html``), then every other file the ledger lists that the new run does not write;
3. moves the new files in, the success names last and in that order;
4. writes the ledger of the new files alone.

A file the ledger does not list is never removed or overwritten: when one stands where a new
file would go, :func:`install` refuses before it changes anything (:class:`InTheWay`), and
:func:`in_the_way` finds such files before a report runs. A report killed while it runs (even by
``kill -9``) leaves only its staging folder; the next run into the folder removes it (its lock
went with its process) and never a staging folder whose process still runs.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from dabench_analysis._atomic import STAGE_ENV, atomic_write

try:  # POSIX; elsewhere the staging folders are removed without asking who holds them
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

#: Prefix of a staging folder (papermill's and this toolkit's temporary folders alike).
STAGE_PREFIX = ".papermill-"
#: The names a finished report is recognised by, installed last and in this order.
SUCCESS_NAMES = ("report.ipynb", "summary.json", "report.html")
#: What a failed report keeps (its notebook, page and kernel log).
FAILED_NAMES = ("report.failed.ipynb", "report.failed.html", "report.failed.kernel.log")
#: The names every report folder may hold, whatever its notebook (checked before a report runs).
FIXED_NAMES = SUCCESS_NAMES + FAILED_NAMES
#: Environment of a report's kernel: its output folder, and (:data:`STAGE_ENV`, defined by the
#: atomic writer, which leaves the flush of staged files to the runner) the staging folder that
#: stands in for it (:func:`staged`).
OUTPUT_ENV = "DABENCH_OUTPUT_DIR"
_LEDGER_VERSION = 1


def ledger_path(out_dir: str | os.PathLike[str], kind: str = "report") -> Path:
    """The ledger of ``kind`` ("report" or "validate") in ``out_dir``.

    Examples
    --------
    >>> ledger_path("figures/run_a").name
    '.dabench-report.json'
    """
    return Path(out_dir) / f".dabench-{kind}.json"


def written(out_dir: str | os.PathLike[str], kind: str = "report") -> list[str]:
    """The files (relative POSIX paths) the ledger of ``kind`` lists in ``out_dir``.

    Returns
    -------
    list of str
        In the ledger's order; a folder without a ledger (or with an unreadable one) gives
        nothing: the toolkit has written nothing there that it knows of.

    Examples
    --------
    >>> import tempfile
    >>> written(tempfile.mkdtemp())
    []
    """
    path = ledger_path(out_dir, kind)
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data.get("files") if isinstance(data, dict) else None
        if isinstance(files, list) and all(isinstance(f, str) for f in files):
            return files
    return []


class InTheWay(FileExistsError):
    """A file (or folder) the toolkit did not write stands where it would write: it is never
    overwritten or removed; ``filename`` names it."""

    def __init__(self, path: str | os.PathLike[str]):
        super().__init__(errno.EEXIST, "in the way of an output: not written by "
                         "dabench-analysis (no list of its files names it); move it away or "
                         "choose another output folder", str(path))


def _blocker(out_dir: Path, rel: str, ours: Collection[str]) -> Path | None:
    """What stands in the way of writing ``out_dir/rel``: a folder on its way that is not a
    folder, or a file there that ``ours`` (the ledger) does not list."""
    parts = Path(rel).parts
    for i in range(1, len(parts)):
        parent = out_dir.joinpath(*parts[:i])
        if os.path.lexists(parent) and not parent.is_dir():
            return parent
    path = out_dir / rel
    return path if os.path.lexists(path) and rel not in ours else None


def in_the_way(out_dir: str | os.PathLike[str], names: Sequence[str] = FIXED_NAMES, *,
               stems: Sequence[str] = (), kind: str = "report") -> list[Path]:
    """Files the toolkit did not write that stand where it would write into ``out_dir``.

    Parameters
    ----------
    out_dir : path-like
        An output folder (need not exist).
    names : sequence of str
        Relative paths the toolkit may write there (default :data:`FIXED_NAMES`).
    stems : sequence of str
        Relative paths without their extension (``tables/main_results``: any of its ``.csv``,
        ``.tex``, ``.md``), as the catalogue's sections name what they write.
    kind : {"report", "validate", "index"}
        Whose ledger says what the toolkit wrote there.

    Returns
    -------
    list of Path
        Sorted; ``out_dir`` itself when it is a file.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text("{}")
    >>> [p.name for p in in_the_way(d)]
    ['summary.json']
    >>> install(None, d)  # never removed: the toolkit did not write it
    []
    >>> (d / "summary.json").read_text()
    '{}'
    """
    out_dir = Path(out_dir)
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        return [out_dir]
    if not out_dir.is_dir():
        return []
    ours, found = set(written(out_dir, kind)), set()
    for rel in names:
        found.add(_blocker(out_dir, rel, ours))
    for stem in stems:
        parent, name = (out_dir / stem).parent, Path(stem).name
        found.add(_blocker(out_dir, stem, ours))
        with contextlib.suppress(OSError):
            for entry in parent.iterdir() if parent.is_dir() else ():
                if entry.name.rpartition(".")[0] == name:
                    found.add(_blocker(out_dir, entry.relative_to(out_dir).as_posix(), ours))
    return sorted(p for p in found if p is not None)


def _inside(out_dir: Path, rel: str) -> Path | None:
    """``out_dir / rel`` when ``rel`` is a relative path that stays inside ``out_dir``."""
    if not rel or Path(rel).is_absolute() or ".." in Path(rel).parts:
        return None
    path = out_dir / rel
    try:
        path.parent.resolve().relative_to(out_dir.resolve())
    except (OSError, ValueError):
        return None
    return path


def _lock(fd: int, *, wait: bool) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` itself (its directory descriptor), released on exit or
    when the process dies."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        _lock(fd, wait=True)
        yield
    finally:
        os.close(fd)


def clean_stale(out_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging folders in ``out_dir`` that no running process holds (reports killed
    midway) and the temporary files of an interrupted ledger write.

    Returns
    -------
    list of Path
        What was removed.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / ".papermill-abc").mkdir()
    >>> [p.name for p in clean_stale(d)]
    ['.papermill-abc']
    """
    out_dir, removed = Path(out_dir), []
    if not out_dir.is_dir():
        return removed
    for entry in sorted(out_dir.glob(f"{STAGE_PREFIX}*")):
        if entry.is_symlink() or not entry.is_dir():
            continue
        try:
            fd = os.open(entry, os.O_RDONLY)
        except OSError:
            continue
        try:
            if _lock(fd, wait=False):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
        finally:
            os.close(fd)
    for tmp in out_dir.glob(".dabench-*.json.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed.append(tmp)
    return removed


@contextlib.contextmanager
def stage(out_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """A locked staging folder in ``out_dir`` (created), removed on exit whatever happens.

    Yields
    ------
    Path
        The staging folder (``out_dir/.papermill-<random>``); write the outputs into it (or a
        sub-folder) and :func:`install` them before the block ends.

    Raises
    ------
    OSError
        ``out_dir`` cannot be created or written.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> with stage(out) as st:
    ...     _ = (st / "summary.json").write_text("{}")
    ...     install(st, out)
    ['summary.json']
    >>> sorted(p.name for p in out.iterdir())
    ['.dabench-report.json', 'summary.json']
    """
    out_dir = Path(out_dir)
    created = make_dirs(out_dir)
    try:
        clean_stale(out_dir)
        root = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out_dir))
        fd = os.open(root, os.O_RDONLY)
        try:
            _lock(fd, wait=False)
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)
            os.close(fd)
    finally:
        remove_empty(created)  # a run that wrote nothing leaves no folder behind


def make_dirs(folder: str | os.PathLike[str]) -> list[Path]:
    """Create ``folder`` and its missing parents.

    Returns
    -------
    list of Path
        The folders this call created, deepest first (for :func:`remove_empty`).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> [p.relative_to(d).as_posix() for p in make_dirs(d / "a" / "b")]
    ['a/b', 'a']
    >>> remove_empty(make_dirs(d / "c")), sorted(p.name for p in d.iterdir())
    (None, ['a'])
    """
    folder, missing = Path(folder), []
    probe = folder
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def remove_empty(created: Sequence[Path]) -> None:
    """Remove the folders of :func:`make_dirs` that are still empty, deepest first."""
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            return


def _files(src: Path) -> list[str]:
    """Files under ``src`` (relative POSIX paths), the success names last in their order."""
    found = sorted(p.relative_to(src).as_posix() for p in src.rglob("*")
                   if p.is_file() and not p.name.endswith(".tmp"))
    last = [n for n in SUCCESS_NAMES if n in found]
    return [f for f in found if f not in last] + last


def _write_ledger(out_dir: Path, kind: str, files: Sequence[str]) -> None:
    with atomic_write(ledger_path(out_dir, kind)) as fh:
        json.dump({"version": _LEDGER_VERSION, "written_by": "dabench-analysis",
                   "files": list(files)}, fh, indent=1)
        fh.write("\n")


def _remove(out_dir: Path, rel: str) -> None:
    path = _inside(out_dir, rel)
    if path is not None and (path.is_symlink() or path.is_file()):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _prune(out_dir: Path, rels: Sequence[str]) -> None:
    """Remove the folders of ``rels`` left empty (never ``out_dir`` itself)."""
    top = out_dir.resolve()
    for rel in sorted(rels, key=lambda r: -r.count("/")):
        parent = (out_dir / rel).parent
        while parent.resolve() != top and parent.resolve().is_relative_to(top):
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def install(src: str | os.PathLike[str] | None, out_dir: str | os.PathLike[str], *,
            kind: str = "report") -> list[str]:
    """Replace the files the toolkit wrote into ``out_dir`` by those under ``src``.

    Parameters
    ----------
    src : path-like or None
        A folder (usually in a :func:`stage`) whose files are moved into ``out_dir``, keeping
        their relative paths; None installs nothing (the previous files are removed).
    out_dir : path-like
        The output folder.
    kind : {"report", "validate"}
        Whose ledger: a report folder and a ``validate --out`` folder keep separate lists, so
        neither removes the other's files.

    Returns
    -------
    list of str
        The files installed (relative POSIX paths), success names last.

    Raises
    ------
    InTheWay
        A file the toolkit did not write (the ledger does not list it) stands where a new file
        would go; nothing has been changed then.
    OSError
        A file could not be moved (the ledger then still lists every file the toolkit wrote,
        old and new, for the next run to remove).

    Notes
    -----
    The order of the steps is the module's; a process killed in the middle leaves either the
    previous success names or none, never the previous ones beside new tables.
    """
    out_dir = Path(out_dir)
    new = _files(Path(src)) if src is not None and Path(src).is_dir() else []
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise InTheWay(out_dir)
    if not out_dir.is_dir():
        if not new:
            return []
        out_dir.mkdir(parents=True, exist_ok=True)
    with _folder_lock(out_dir):
        old = written(out_dir, kind)
        for rel in new:
            blocker = _blocker(out_dir, rel, old)
            if blocker is not None:
                raise InTheWay(blocker)
        if new or old:
            _write_ledger(out_dir, kind, list(dict.fromkeys([*old, *new])))
        for rel in [r for r in old if r in SUCCESS_NAMES] + [r for r in old if r not in new]:
            _remove(out_dir, rel)
        for rel in new:
            dest = out_dir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(Path(src) / rel, dest)
        _prune(out_dir, [r for r in old if r not in new])
        if new:
            _write_ledger(out_dir, kind, new)
        else:
            with contextlib.suppress(FileNotFoundError):
                ledger_path(out_dir, kind).unlink()
    if not new:
        with contextlib.suppress(OSError):
            out_dir.rmdir()  # only when nothing else is left in it
    return new


def staged(dest: Path) -> Path:
    """Where a report's notebook writes ``dest``: the staging folder when the runner set one up
    for exactly that output folder (:data:`OUTPUT_ENV`, :data:`STAGE_ENV` in the kernel's
    environment), else ``dest`` itself.

    Examples
    --------
    >>> staged(Path("figures/run_a")).as_posix()
    'figures/run_a'
    """
    out, stage_dir = os.environ.get(OUTPUT_ENV), os.environ.get(STAGE_ENV)
    if not out or not stage_dir:
        return dest
    with contextlib.suppress(OSError):
        if dest.expanduser().resolve() == Path(out).resolve():
            return Path(stage_dir)
    return dest
