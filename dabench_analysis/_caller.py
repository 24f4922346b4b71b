"""Where a warning points (below every layer, like ``_atomic``): the user's line.

A warning names the line that made it, ``stacklevel`` frames up the stack. The number of the
package's own frames between a public function and the line that warns differs from path to
path (``load_run`` or ``load_runs``; a frame reached through :func:`functools.cached_property`,
such as ``run.trajectory``), so a fixed number names a line of the library on some of them.
:func:`outside_level` counts them instead.
"""

from __future__ import annotations

import sys

#: Modules whose frames are stepped over: the package's (by prefix), and by name functools'
#: (``cached_property`` runs the package's properties from a frame of its own) and contextlib's
#: (``@contextmanager`` runs the package's context managers from its ``__enter__``).
_PACKAGE = "dabench_analysis."
_WRAPPERS = frozenset({"functools", "contextlib"})


def _inside(frame) -> bool:
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and (name.startswith(_PACKAGE) or name in _WRAPPERS)


def outside_level() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller of this function name the
    first frame outside the package (the user's line), however many of the package's functions
    and decorators lie between.

    Returns
    -------
    int
        For :func:`warnings.warn` called in the same function as this
        (``warnings.warn(message, stacklevel=outside_level())``). When every frame above is
        the package's (a public function run by ``atexit`` or at the bottom of a thread),
        the outermost of them.
    """
    frame, level = sys._getframe(1).f_back, 2  # the caller's caller
    if frame is None:  # the caller is the bottom frame: its own line
        return 1
    while _inside(frame):
        if frame.f_back is None:
            return level
        frame, level = frame.f_back, level + 1
    return level
