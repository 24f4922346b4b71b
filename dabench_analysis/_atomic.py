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
        parse again, passes False.

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
            if fsync:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
