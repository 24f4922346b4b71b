"""Category labels that fit (pitfall P16): long names shortened and wrapped, figure heights that
grow with the number of categories, and tick labels that shrink on an Axes the caller gave.

Private to :mod:`dabench_analysis.figures`; not part of its namespace.
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Sequence

from matplotlib.axes import Axes

from dabench_analysis._caller import outside_level

#: Longest label kept whole; longer ones lose their middle to an ellipsis.
MAX_CHARS = 40
#: Characters per line of a wrapped label (two lines at most): names up to this long stay whole
#: on one line ("research-gf-no-web-search" is never broken).
LINE_CHARS = 32
#: The least share of the figure's width its data Axes keeps when labels are long.
DATA_SHARE = 0.4
#: Widest figure a long-label figure grows to (inches; the two-column width).
MAX_WIDTH = 7.0
#: A common prefix or suffix of run names shorter than this is kept in the labels.
MIN_AFFIX = 6
_SEPARATORS = " _-./:"
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
    'mcp__filesystem__xxx…xxxx_read_\\ntext_file'
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
                      UserWarning, stacklevel=outside_level())
        fontsize = MIN_PT
    ax.tick_params(axis=axis, labelsize=fontsize)
    return float(fontsize)


def _affix(names: Sequence[str], *, suffix: bool = False) -> str:
    """The longest prefix (suffix) all names share, cut just after (before) a separator and
    leaving every name something of its own."""
    texts = [t[::-1] for t in names] if suffix else list(names)
    if len(texts) < 2:
        return ""
    first, n = texts[0], 0
    while n < min(map(len, texts)) and all(t[n] == first[n] for t in texts):
        n += 1
    cut = max((i + 1 for i in range(n) if first[i] in _SEPARATORS), default=0)
    cut = cut if all(len(t) > cut for t in texts) else 0
    out = first[:cut]
    return out[::-1] if suffix else out


def run_labels(names: Sequence[object], *, max_chars: int = MAX_CHARS) -> tuple[list[str], str]:
    """One-line labels for many runs, and a note saying what was left out of them.

    Parameters
    ----------
    names : sequence
        Run names (``run_id``), up to any length.
    max_chars : int
        Longest label; a longer remainder loses its middle to "…".

    Returns
    -------
    (list of str, str)
        The labels, in order, each unique, and the note (``""`` when nothing was left out):
        ``"run names without “<prefix>…”"``, naming the common prefix and suffix (of at least
        :data:`MIN_AFFIX` characters, cut at a separator ``space _ - . / :``) that every name
        shares.

    Examples
    --------
    >>> run_labels(["sweep-2026-03-gpt-x-react-seed1", "sweep-2026-03-claude-aat-seed1"])
    (['gpt-x-react', 'claude-aat'], 'run names without “sweep-2026-03-…” and “…-seed1”')
    >>> run_labels(["a", "b"])
    (['a', 'b'], '')
    """
    texts = [" ".join(str(n).split()) for n in names]
    head = _affix(texts)
    head = head if len(head) >= MIN_AFFIX else ""
    tail = _affix([t[len(head):] for t in texts], suffix=True)
    tail = tail if len(tail) >= MIN_AFFIX else ""
    core = [t[len(head):len(t) - len(tail)] for t in texts]
    labels = [shorten(c, max_chars=max_chars, line_chars=max_chars) for c in core]
    if len(set(labels)) < len(labels):  # the middle told them apart: number them
        labels = [f"{i + 1}. {lab}" for i, lab in enumerate(labels)]
    parts = [f"“{shorten(head, line_chars=MAX_CHARS)}…”" if head else "",
             f"“…{shorten(tail, line_chars=MAX_CHARS)}”" if tail else ""]
    note = " and ".join(p for p in parts if p)
    return labels, f"run names without {note}" if note else ""


def grow_to_fit(ax: Axes, *, share: float = DATA_SHARE, max_width: float = MAX_WIDTH) -> float:
    """Widen the figure of ``ax`` (one the toolkit made) until its data Axes holds at least
    ``share`` of the figure's width, up to ``max_width`` inches; return the share reached.

    Long tick labels take the width from the data under constrained layout (pitfall P16); the
    figure grows instead, and above ``max_width`` the y tick labels shrink (not below
    :data:`MIN_PT`).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(3.5, 2), layout="constrained")
    >>> _ = ax.set_yticks([0, 1], ["x" * 60, "y" * 60])
    >>> grow_to_fit(ax) >= 0.4, bool(fig.get_figwidth() > 3.5)
    (True, True)
    >>> plt.close(fig)
    """
    fig = ax.figure
    for _ in range(10):
        frac = _data_share(ax)
        if frac >= share:
            return float(frac)
        width = fig.get_figwidth()
        if width < max_width - 1e-6:
            fig.set_figwidth(min(max_width, width * (1 - frac) / (1 - share) + 0.05))
            continue
        size = min(t.get_fontsize() for t in ax.get_yticklabels()) if ax.get_yticklabels() \
            else TICK_PT
        if size <= MIN_PT:
            return float(frac)
        ax.tick_params(axis="y", labelsize=max(MIN_PT, size - 0.5))
    return _data_share(ax)


def _data_share(ax: Axes) -> float:
    """The share of the figure's width the Axes has once laid out; 0 when constrained layout
    gave up (the decorations alone are wider than the figure)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax.figure.draw_without_rendering()
    if any("constrained_layout not applied" in str(w.message) for w in caught):
        return 0.0
    return float(ax.get_position().width)


def fit_title(ax: Axes, lines: Sequence[str], *, fontsize: float = 9.0) -> None:
    """Set a title of at most two lines that fits the figure's width (its font shrinks to
    6.5 pt, then each line is shortened), never wrapped by the renderer.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 2))
    >>> fit_title(ax, ["a title", "a second line", "a third"])
    >>> ax.get_title().count("\\n")
    1
    >>> plt.close(fig)
    """
    lines = [" ".join(str(t).split()) for t in lines if str(t).strip()]
    if len(lines) > 2:
        lines = [lines[0], "; ".join(lines[1:])]
    fig = ax.figure
    width = fig.get_figwidth() * 72  # points
    size = fontsize
    while True:
        longest = max((len(t) for t in lines), default=0) * size * 0.55  # avg glyph width
        if longest <= width * 0.98 or size <= 6.5:
            break
        size -= 0.5
    chars = max(12, int(width * 0.98 / (size * 0.55)))
    lines = [t if len(t) <= chars else t[:chars - 1] + "…" for t in lines]
    ax.set_title("\n".join(lines), fontsize=size)


def center_on_figure(ax: Axes) -> None:
    """Centre the title and the x label of ``ax`` on its figure (not on the Axes), so that text
    wider than the data Axes (which long tick labels push to the right) stays inside the
    figure; a title line longer than the figure is wide is shortened with "…", an x label
    line wrapped at spaces.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(3, 2))
    >>> fig.subplots_adjust(left=0.6)
    >>> _ = ax.set_title("title"); center_on_figure(ax)
    >>> round(float(ax.transAxes.transform((ax.title.get_position()[0], 0))[0] / fig.bbox.width), 2)
    0.5
    >>> plt.close(fig)
    """
    fig = ax.figure
    _data_share(ax)
    box = ax.get_position()
    x = (0.5 - box.x0) / box.width
    width_pt = fig.get_figwidth() * 72 * 0.98
    for text in (ax.title, ax.xaxis.label):
        lines = text.get_text().split("\n")
        chars = max(12, int(width_pt / (text.get_fontsize() * 0.55)))
        if text is ax.title:  # two lines at most: shortened
            lines = [t if len(t) <= chars else t[:chars - 1] + "…" for t in lines]
        else:  # the x label may take more lines: wrapped at spaces
            lines = [w for t in lines for w in (textwrap.wrap(t, chars) or [""])]
        text.set_text("\n".join(lines))
    ax.title.set_x(x)
    ax.xaxis.label.set_x(x)
