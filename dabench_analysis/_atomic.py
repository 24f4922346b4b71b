"""The package's one atomic writer: a temporary file in the destination folder, then
:func:`os.replace`, so an interrupted write never leaves half a file behind. It sits below every
layer because the parse cache (load) writes too; :mod:`dabench_analysis.export` re-exports it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Environment variable holding the staging folder of a running report (the report runner sets
#: it for the notebook's kernel, :mod:`dabench_analysis.report._outputs`). Files written under
#: that folder are not flushed to disk one by one: the runner flushes them all at once
#: (:func:`sync_all`) before it moves them into place.
STAGE_ENV = "DABENCH_OUTPUT_STAGE"


def _in_stage(dest: Path) -> bool:
    """Whether ``dest`` lies inside the staging folder named by :data:`STAGE_ENV`."""
    stage = os.environ.get(STAGE_ENV)
    if not stage:
        return False
    try:
        return dest.resolve().is_relative_to(Path(stage).resolve())
    except OSError:
        return False


def sync_all(folder: str | os.PathLike[str]) -> None:
    """Flush every file under ``folder`` to disk, one ``fsync`` after another.

    The report runner calls it once, after its kernel has written the staging folder and
    before the files are moved into place, instead of one ``fsync`` as each file is written
    (100+ per report): in a row, the first commits the file system's journal with the others'
    data, and the rest find little left to write. Only ``folder`` is flushed, not the machine
    (:func:`os.sync` would wait for every other writer's data too).

    Parameters
    ----------
    folder : path-like
        A folder of written files (subfolders included; links are not followed).

    Returns
    -------
    None

    Raises
    ------
    OSError
        A file that cannot be opened or flushed (a disk error).
    """
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, mode: str = "w",
                 fsync: bool = True) -> Iterator[Any]:
    """Open a temporary file next to ``path`` and rename it into place on success.

    Parameters
    ----------
    path : path-like
        Final destination. Missing parent folders are created.
    mode : {"w", "wb"}
        Text (UTF-8, ``\\n`` line ends) or binary mode.
    fsync : bool
        Flush the file to disk before the rename (default). The parse cache, which can always
        parse again, passes False. Inside a report's staging folder (:data:`STAGE_ENV`) the
        flush is left to the runner's one :func:`sync_all` before the files are installed;
        the temporary file and the rename stay.

    Yields
    ------
    file object
        Write to it; on normal exit it is flushed, ``fsync``-ed and renamed to ``path``.

    Raises
    ------
    ValueError
        If ``mode`` is not ``"w"`` or ``"wb"``.
    OSError
        If the folder cannot be created or written. On any exception the temporary file is
        removed and ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_write(d / "a.txt") as fh:
    ...     _ = fh.write("hello")
    >>> (d / "a.txt").read_text()
    'hello'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            if fsync and not _in_stage(dest):
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
