"""Category labels that fit (pitfall P16): long names shortened and wrapped, figure heights that
grow with the number of categories, and tick labels that shrink on an Axes the caller gave.

Private to :mod:`dabench_analysis.figures`; not part of its namespace.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from matplotlib.axes import Axes

#: Longest label kept whole; longer ones lose their middle to an ellipsis.
MAX_CHARS = 40
#: Characters per line of a wrapped label (two lines at most).
LINE_CHARS = 24
#: Tick-label size of the house style (points) and the smallest it is shrunk to.
TICK_PT, MIN_PT = 7.0, 4.5
#: Line height / font size, and the gap between two categories' labels (points).
_LEADING, _GAP_PT = 1.25, 3.0


def shorten(text: object, *, max_chars: int = MAX_CHARS, line_chars: int = LINE_CHARS) -> str:
    """A label of at most ``max_chars`` characters on at most two lines.

    Parameters
    ----------
    text : object
        The category's name (converted with ``str``).
    max_chars : int
        Longer names keep their first and last characters around a "…" (tool names share
        prefixes such as ``mcp__server__`` and differ at the end).
    line_chars : int
        A longer label is broken once, into two lines at most this long: after a space if one
        is in reach, else after one of ``_ . / - :``, else anywhere.

    Returns
    -------
    str

    Examples
    --------
    >>> shorten("sql")
    'sql'
    >>> shorten("mcp__filesystem__" + "x" * 60 + "_read_text_file")
    'mcp__filesystem__\\nxxx…xxxx_read_text_file'
    """
    text = " ".join(str(text).split())
    if len(text) > max_chars:
        tail = (max_chars - 1) // 2
        text = text[:max_chars - 1 - tail] + "…" + text[-tail:]
    if len(text) <= line_chars:
        return text
    return _two_lines(text, line_chars)


def _two_lines(text: str, line_chars: int) -> str:
    """Break once so both lines are at most ``line_chars`` long (if the text allows): after the
    last space in reach, else after the last ``_ . / - :``, else at ``line_chars``."""
    lo, hi = max(1, len(text) - line_chars), min(line_chars, len(text) - 1)
    for separators in (" ", "_./-:"):
        cuts = [i + 1 for i in range(lo - 1, hi) if text[i] in separators]
        if cuts:
            cut = cuts[-1]
            break
    else:
        cut = hi
    return text[:cut].rstrip() + "\n" + text[cut:].lstrip()


def _lines(labels: Sequence[str]) -> int:
    return max((str(t).count("\n") + 1 for t in labels), default=1)


def row_inches(labels: Sequence[str], *, fontsize: float = TICK_PT) -> float:
    """Height one category needs (inches) so that neighbouring labels do not touch.

    Notes
    -----
    ``(lines · 1.25 · fontsize + 3 pt) / 72``, ``lines`` the most lines of any label.

    Examples
    --------
    >>> round(row_inches(["a", "b"]), 4)
    0.1632
    """
    return (_lines(labels) * _LEADING * fontsize + _GAP_PT) / 72


def height_for(labels: Sequence[str], *, overhead: float = 1.0, minimum: float = 1.6) -> float:
    """Figure height (inches) for one row per label plus ``overhead`` for title and x axis.

    Examples
    --------
    >>> height_for(["a"] * 3)
    1.6
    >>> round(height_for(["a"] * 60), 2)
    10.79
    """
    return max(minimum, overhead + len(labels) * row_inches(labels))


def fit_ticklabels(ax: Axes, labels: Sequence[str], *, axis: str = "y") -> float:
    """Shrink the ``axis`` tick labels of ``ax`` until one row per label fits; return the size.

    Used when the caller gave the Axes (a new figure is made tall enough instead). Below
    4.5 pt the labels would be unreadable: they are left at 4.5 pt and a ``UserWarning`` says
    that the Axes is too small.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(4, 4))
    >>> fit_ticklabels(ax, ["a"] * 10)
    7.0
    >>> plt.close(fig)
    """
    if not labels:
        return TICK_PT
    box = ax.get_position()
    size = box.height * ax.figure.get_figheight() if axis == "y" else box.width * ax.figure.get_figwidth()
    per_row_pt = size * 72 / len(labels)
    fontsize = min(TICK_PT, (per_row_pt - _GAP_PT) / (_lines(labels) * _LEADING))
    if fontsize < MIN_PT:
        warnings.warn(f"{len(labels)} labels do not fit on this Axes ({size:.1f} in); pass a "
                      f"taller Axes or ax=None for a figure that grows with them",
                      UserWarning, stacklevel=3)
        fontsize = MIN_PT
    ax.tick_params(axis=axis, labelsize=fontsize)
    return float(fontsize)
