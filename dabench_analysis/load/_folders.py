"""Which folders are runs (:func:`candidates`: a list, a glob or a parent folder), whether one
can be read (:func:`check_dir`), and how many threads read them with what progress bar
(:func:`mapper`)."""

from __future__ import annotations

import errno
import glob
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.schema._files import NOT_EVALUATED_HINT, TASK_FILES

#: Most threads used by ``parallel=True``.
MAX_THREADS = 8
#: What the harness must do before a run can be analysed (one wording everywhere).
NOT_EVALUATED = f"not evaluated: {NOT_EVALUATED_HINT}"


def check_dir(path: Path) -> Path:
    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RunLoadError(f"run directory {path} is a symlink loop") from None
        if isinstance(exc, PermissionError):
            raise RunLoadError(f"run directory {path} is not readable: {exc.strerror}") from None
        raise RunLoadError(f"run directory {path} does not exist") from None
    if not os.path.isdir(path):
        raise RunLoadError(f"run directory {path} is a file, not a directory "
                           f"(size {st.st_size} bytes)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise RunLoadError(f"run directory {path} is not readable (permission denied)")
    return path


def task_file(path: Path) -> str | None:
    """The name of the task file a run folder holds (``task_metrics.csv``, else the legacy
    name), or None. A name that is there but is not a readable file (a link to nothing, a
    folder) counts: reading it then fails with an error naming it, instead of the legacy file
    or "not evaluated" being taken in its place."""
    return next((f for f in TASK_FILES if os.path.lexists(path / f)), None)


def _evaluated(path: Path) -> bool:
    return task_file(path) is not None


def _harness_dir(path: Path, fmt: str | None) -> bool:
    """Whether ``path`` is a folder of another harness's files (a folder format of
    :func:`~dabench_analysis.load._readers.folder_formats`, given or detected)."""
    from dabench_analysis.load._formats import harness_folder
    from dabench_analysis.load._readers import folder_formats

    if not path.is_dir() or _evaluated(path):
        return False
    return fmt in folder_formats() if fmt is not None else harness_folder(path) is not None


def _harness_file(path: Path, fmt: str | None, *, tables: bool = True) -> bool:
    """Whether ``path`` is a file of another harness (``fmt`` given, or detected; a parent
    folder's files count only when their content says so: no per-task tables)."""
    from dabench_analysis.load._formats import detect_format

    if fmt is not None:
        return fmt != "eval-v2"
    found = detect_format(path)
    return found not in (None, "eval-v2") and (tables or found != "table")


def candidates(paths, fmt: str | None = None) -> tuple[list[Path], list[tuple[str, str]]]:
    """Run directories and files of other harnesses named by ``paths`` (list, glob or parent
    folder: its run folders and the Inspect logs and tau-bench files in it), with what was
    skipped; ``fmt`` is the format of the files (None: detected).

    Raises
    ------
    ValueError
        An empty string or a glob that matches nothing.
    TypeError
        Something that is neither a path, a pattern nor an iterable of paths.
    RunLoadError
        One folder that does not exist or is a file.
    """
    skipped: list[tuple[str, str]] = []
    if isinstance(paths, (str, os.PathLike)):
        text = os.path.expanduser(os.fspath(paths))
        if not text.strip():
            raise ValueError("paths is an empty string; give a run folder, a folder of runs, "
                             "a glob or a list")
        if glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise ValueError(f"no path matches the pattern {text!r}")
            items = [Path(m).parent if Path(m).name in TASK_FILES else Path(m) for m in matches]
        else:
            root = Path(text)
            if not root.is_dir():
                raise RunLoadError(f"{root} does not exist" if not root.exists()
                                   else f"{root} is a file, not a run directory or a folder of runs")
            if _evaluated(root) or _harness_dir(root, fmt):
                return [root], skipped
            own = _cache_layout()  # $DABENCH_CACHE_DIR may be the sweep folder itself
            items = sorted(p for p in root.iterdir() if not p.name.startswith(".") and (
                (p.is_dir() and not (own and identity(p) == own))
                or (p.is_file() and _harness_file(p, fmt, tables=False))))
    else:
        try:
            items = [Path(p) for p in paths]
        except TypeError:
            raise TypeError(f"paths must be a path, a glob pattern or a list of paths, got "
                            f"{paths!r}") from None
    dirs, seen = [], set()
    for p in items:
        key = identity(p)  # None (unreadable) is never taken for a path seen before
        if (p.is_file() and _harness_file(p, fmt) or _harness_dir(p, fmt)) and (
                key is None or key not in seen):
            seen.add(key)
            dirs.append(p)
        elif not p.is_dir():
            skipped.append((str(p), "does not exist" if not p.exists() else "not a directory"))
        elif not _evaluated(p):
            skipped.append((str(p), NOT_EVALUATED))
        elif key is not None and key in seen:
            skipped.append((str(p), "listed twice"))
        else:
            seen.add(key)
            dirs.append(p)
    return dirs, skipped


def identity(path: Path) -> tuple[int, int] | None:
    """What tells two paths to one folder or file apart, whatever the links on the way: its
    device and inode (one ``stat``, where resolving the path would look at each of its parts);
    None when it cannot be read.

    Examples
    --------
    >>> identity(Path("data/sample_runs")) == identity(Path("data/../data/sample_runs"))
    True
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _cache_layout() -> tuple[int, int] | None:
    try:
        return identity(parse_cache.layout_dir())
    except (OSError, RuntimeError):
        return None


def mapper(parallel: bool | int, progress: bool | None, n: int) -> Callable:
    """``map(fn, items, label=...)`` in threads (``parallel``: True, False or a number) with a
    progress bar on stderr (``progress``; default: in a terminal, not in a notebook, for more
    than one item ``n``).

    Raises
    ------
    ValueError
        ``parallel`` < 1.
    """
    return partial(_map, workers=_workers(parallel, n), show=_show_progress(progress, n))


def shows_progress(mapper: Callable) -> bool:
    """Whether a :func:`mapper` shows a progress bar."""
    return bool(getattr(mapper, "keywords", {}).get("show"))


def workers(mapper: Callable) -> int:
    """The threads of a :func:`mapper` (1 for ``map``)."""
    return int(getattr(mapper, "keywords", {}).get("workers", 1))


def _workers(parallel: bool | int, n: int) -> int:
    if isinstance(parallel, bool):
        return min(MAX_THREADS, os.cpu_count() or 1, n) if parallel else 1
    if parallel < 1:
        raise ValueError(f"parallel must be True, False or a number of threads >= 1, "
                         f"got {parallel}")
    return max(1, min(int(parallel), n))


def _in_notebook() -> bool:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def _show_progress(progress: bool | None, n: int) -> bool:
    if progress is not None:
        return bool(progress)
    return n > 1 and sys.stderr.isatty() and not _in_notebook()


def _map(fn: Callable, items, *, workers: int, show: bool, label: str = "files") -> list:
    """``[fn(x) for x in items]`` in ``workers`` threads, with a rich progress bar if ``show``."""
    items = list(items)
    if not show and (workers <= 1 or len(items) <= 1):
        return [fn(x) for x in items]
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), disable=not show, transient=False) as bar:
        task = bar.add_task(label, total=len(items))

        def one(x):
            try:
                return fn(x)
            finally:
                bar.advance(task)

        if workers <= 1 or len(items) <= 1:
            return [one(x) for x in items]
        with ThreadPoolExecutor(workers, thread_name_prefix="load_runs") as pool:
            return list(pool.map(one, items))
