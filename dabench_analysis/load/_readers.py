"""The formats of other harnesses' files, registered by the folder that reads them.

The core loader (:mod:`._formats`, :func:`dabench_analysis.load_run`) reads eval-v2 run folders
itself and every other format through this registry, so that it imports none of the readers:
:mod:`dabench_analysis.harnesses` registers its readers (Inspect logs, tau-bench, ATIF,
SWE-agent trajectories, Who&When group chats, per-task tables) when the package is imported,
each as functions that import their reader on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The format the core reads itself: a run folder.
EVAL_V2 = "eval-v2"


@dataclass(frozen=True)
class Reader:
    """One registered format (see :func:`register_format` for the fields)."""

    name: str
    read: Callable[[Path, Mapping[str, str]], list]
    sniff: Callable[[Path, bytes], bool] | None = None
    folder: Callable[[Path], bool] | None = None
    scored: Callable[[Path], bool] | None = None


_READERS: dict[str, Reader] = {}


def register_format(name: str, *, read: Callable[[Path, Mapping[str, str]], list],
                    sniff: Callable[[Path, bytes], bool] | None = None,
                    folder: Callable[[Path], bool] | None = None,
                    scored: Callable[[Path], bool] | None = None) -> None:
    """Register a format of another harness with the core loader.

    Parameters
    ----------
    name : str
        The format's name (``format=`` of :func:`dabench_analysis.load_run`, kept on the Run).
    read : callable
        ``read(path, mapping) -> list`` of :class:`~dabench_analysis.load._harness.Record`
        (one per run in the file; ``mapping`` is a per-task table's column mapping, else
        empty). It raises :class:`~dabench_analysis.load.RunLoadError` for a file it cannot read.
    sniff : callable, optional
        ``sniff(path, head) -> bool``: whether a file is of this format, from its path and its
        first 64 KiB (``head``, bytes). Formats are tried in the order they were registered.
    folder : callable, optional
        ``folder(path) -> bool``: whether a folder (one without a task file) is of this format.
    scored : callable, optional
        ``scored(path) -> bool``: a quick check that the file carries scores; when False the
        full read says why the run is not evaluated (:func:`._formats.not_evaluated`).

    Raises
    ------
    ValueError
        ``name`` is ``"eval-v2"`` (the core's own format) or empty.

    Notes
    -----
    Registering again under a name replaces the earlier reader (a module imported twice).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> "inspect" in formats()
    True
    """
    if not name or name == EVAL_V2:
        raise ValueError(f"a format of another harness needs a name other than {EVAL_V2!r}, "
                         f"got {name!r}")
    _READERS[name] = Reader(name, read, sniff, folder, scored)


def formats() -> tuple[str, ...]:
    """``"eval-v2"`` and the registered formats, in the order they are tried.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> formats()
    ('eval-v2', 'inspect', 'tau-bench', 'atif', 'table', 'swe-agent', 'groupchat')
    """
    return (EVAL_V2, *_READERS)


def folder_formats() -> tuple[str, ...]:
    """The registered formats that are read from a folder (other than an eval-v2 run folder)."""
    return tuple(n for n, r in _READERS.items() if r.folder is not None)


def reader(name: str) -> Reader:
    """The reader registered under ``name``.

    Raises
    ------
    ValueError
        No format of that name is registered (the message names those that are).
    """
    try:
        return _READERS[name]
    except KeyError:
        raise ValueError(f"no reader for format {name!r}; registered: "
                         f"{', '.join(_READERS) or 'none (import dabench_analysis)'}") from None


def sniff_file(path: Path, head: bytes) -> str | None:
    """The first registered format whose ``sniff`` accepts the file, or None."""
    return next((n for n, r in _READERS.items() if r.sniff is not None and r.sniff(path, head)),
                None)


def sniff_folder(path: Path) -> str | None:
    """The first registered folder format whose ``folder`` check accepts ``path``, or None."""
    return next((n for n, r in _READERS.items() if r.folder is not None and r.folder(path)),
                None)
