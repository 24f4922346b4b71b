"""Errors at the edge of the command line: every one is one line naming the path and the cause
(the ``errno`` text), with the exit codes of the docs' "Command line": 2 for an output, cache or temporary folder
that cannot be used and for bad parameters, 1 for anything else that stops a command. No
Python traceback unless ``--debug`` or ``DABENCH_DEBUG=1``.

The folders are tried before any work starts (:func:`check_folder` writes, syncs and removes a
small file, so a read-only or full file system is found at once, not after an hour of reports).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from dabench_analysis.report._outputs import make_dirs, remove_empty

#: Set to 1 (or any value but 0 and empty) to see the traceback of an error at the edge.
DEBUG_ENV = "DABENCH_DEBUG"
#: Exit codes (docs/guide/cli.md): usage or an unusable location; a failed command.
EXIT_USAGE, EXIT_FAILED = 2, 1
_MAX = 400


class EdgeError(Exception):
    """A location or a parameter the command cannot use; ``code`` is its exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


def debug_enabled(flag: bool = False) -> bool:
    """``--debug`` given, or ``DABENCH_DEBUG`` set to anything but ``""`` and ``"0"``.

    Examples
    --------
    >>> debug_enabled(True)
    True
    """
    return flag or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


def cause(exc: BaseException) -> str:
    """The cause of an error in one line: an ``OSError`` as its errno text and file
    (``Read-only file system: '/out/x'``), anything else as ``Type: message`` (whitespace
    folded, at most 400 characters).

    Examples
    --------
    >>> cause(OSError(28, "No space left on device", "/out/summary.json"))
    "No space left on device: '/out/summary.json'"
    >>> cause(ValueError("bad\\n  value"))
    'ValueError: bad value'
    """
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {str(exc.filename)!r}" if exc.filename is not None else "")
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= _MAX else text[:_MAX - 1] + "…"


def check_folder(path: str | os.PathLike[str], *, what: str) -> Path:
    """Prove ``path`` writable: a small file is written there, synced to disk and removed (and
    the folders made for it, so that a command refused later leaves no empty folder).

    Parameters
    ----------
    path : path-like
        The folder.
    what : str
        How the message names it (``"--out"``, ``"DABENCH_CACHE_DIR"``).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    EdgeError
        Exit code 2, one line: ``--out /x: cannot write there (Read-only file system)``.

    Examples
    --------
    >>> check_folder("/proc/dabench", what="--out")
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --out /proc/dabench: cannot write there \
(No such file or directory)
    """
    folder, created = Path(path), []
    try:
        created = make_dirs(folder)
        fd, probe = tempfile.mkstemp(prefix=".dabench-probe-", dir=folder)
        try:
            os.write(fd, b"dabench-analysis checks that it can write here\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(probe)
    except OSError as exc:
        raise EdgeError(f"{what} {folder}: cannot write there ({exc.strerror or exc})") \
            from None
    finally:
        remove_empty(created)  # created again when something is written there
    return folder


def check_scratch() -> None:
    """The temporary folder (kernel sockets) and Jupyter's runtime folder (kernel connection
    files) a report needs, each proved writable; the temporary folder's path short enough for a
    socket path (:data:`dabench_analysis.report._kernel.SOCKET_PATH_MAX`).

    Raises
    ------
    EdgeError
        Naming the folder and the variable that sets it (``TMPDIR``, ``JUPYTER_RUNTIME_DIR``).
    """
    try:
        tmp = tempfile.gettempdir()
    except (OSError, FileNotFoundError) as exc:  # "No usable temporary directory found in ..."
        raise EdgeError(f"temporary folder: {cause(exc)}; set TMPDIR to a writable folder") \
            from None
    check_folder(tmp, what="temporary folder (TMPDIR)")
    from dabench_analysis.report import _kernel as kernel

    longest = len(os.fsencode(os.path.join(tmp, f"{kernel.SOCKET_PREFIX}{2**22}-xxxxxxxx",
                                            "x" * kernel.SOCKET_NAME_MAX)))
    if os.name == "posix" and longest > kernel.SOCKET_PATH_MAX:
        raise EdgeError(f"temporary folder (TMPDIR) {tmp}: too long a path for the kernels' "
                        f"sockets ({longest} bytes, at most {kernel.SOCKET_PATH_MAX}); set "
                        "TMPDIR to a shorter one")
    from jupyter_core.paths import jupyter_runtime_dir

    check_folder(jupyter_runtime_dir(), what="Jupyter runtime folder (JUPYTER_RUNTIME_DIR)")


def check_cache(*, writing: bool = True, default: bool = False) -> None:
    """The parse cache's folder is usable: a folder (or a path that can become one: nothing on
    its way is a regular file), writable when ``writing``. The one check of "a usable cache
    folder" of every command. The default user cache folder is checked only with ``default``
    (the ``cache`` commands), and never for writing: reading works without it.

    Parameters
    ----------
    writing : bool
        Also prove ``$DABENCH_CACHE_DIR`` writable (:func:`check_folder`).
    default : bool
        When ``$DABENCH_CACHE_DIR`` is not set, check that no file is on the way to the user
        cache folder.

    Raises
    ------
    EdgeError
        Exit code 2, one line: ``DABENCH_CACHE_DIR=/x: not a folder``, ``... not a folder (/f
        on its way is a file)`` or ``... cannot write there (...)``.

    Examples
    --------
    >>> import tempfile
    >>> a_file = Path(tempfile.mkdtemp()) / "f"
    >>> _ = a_file.write_text("")
    >>> os.environ["DABENCH_CACHE_DIR"] = str(a_file / "sub")
    >>> check_cache(writing=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: DABENCH_CACHE_DIR=.../f/sub: not a folder (.../f \
on its way is a file); point it at a folder (or unset it for the user cache folder)
    >>> del os.environ["DABENCH_CACHE_DIR"]
    """
    from dabench_analysis.load.cache import ENV_VAR, cache_dir

    value = os.environ.get(ENV_VAR)
    if not value and not default:
        return
    path = Path(value).expanduser() if value else cache_dir()
    what = f"{ENV_VAR}={value}" if value else f"cache folder {path}"
    blocker = _file_on_the_way(path)
    if blocker is not None:
        on_the_way = "" if blocker == path else f" ({blocker} on its way is a file)"
        fix = "(or unset it for the user cache folder)" if value else \
            f"(or set {ENV_VAR} to one)"
        raise EdgeError(f"{what}: not a folder{on_the_way}; point it at a folder {fix}")
    if writing and value:
        check_folder(path, what=ENV_VAR)


def _file_on_the_way(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists, when it is not a folder (a regular
    file, a device: no folder can be made there); None when it is one."""
    for p in (path, *path.parents):
        try:
            st = p.stat()
        except OSError:  # absent (or through a file: its parent says which)
            continue
        return None if stat.S_ISDIR(st.st_mode) else p
    return None


@contextlib.contextmanager
def at_the_edge(say: Callable[[str], None], *, debug: bool = False) -> Iterator[None]:
    """Turn what escapes a command into one line (through ``say``) and its exit code.

    :class:`EdgeError`: its code (2); ``OSError``: 2 (the file system around the command:
    output, cache or temporary folder); anything else: 1. With ``debug`` (or
    ``DABENCH_DEBUG=1``) the exception propagates with its traceback.
    """
    import typer  # here: a report's kernel imports this module without the CLI

    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException):
        raise
    except Exception as exc:  # noqa: BLE001 - the edge: one line, never a traceback
        if debug_enabled(debug):
            raise
        code = exc.code if isinstance(exc, EdgeError) else \
            EXIT_USAGE if isinstance(exc, OSError) else EXIT_FAILED
        text = str(exc) if isinstance(exc, EdgeError) else cause(exc)
        hint = "" if isinstance(exc, EdgeError) else f" (--debug or {DEBUG_ENV}=1 shows where)"
        say(f"error: {text}{hint}")
        raise typer.Exit(code) from None


def cannot_write(what: str, folder: str | os.PathLike[str], exc: OSError) -> EdgeError:
    """The one line for an output folder that could not be written: the folder, and the file in
    the way (:class:`~dabench_analysis.report._outputs.InTheWay`) or the cause (errno text).

    Examples
    --------
    >>> str(cannot_write("--out", "/out", OSError(28, "No space left on device")))
    '--out /out: cannot write there (No space left on device)'
    """
    if isinstance(exc, FileExistsError) and exc.filename and "in the way" in str(exc.strerror):
        return EdgeError(f"{what} {folder}: {exc.filename} is {exc.strerror}")
    return EdgeError(f"{what} {folder}: cannot write there ({cause(exc)})")
