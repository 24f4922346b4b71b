"""The house style: Okabe–Ito palette, one- and two-column widths, rc parameters applied only
inside the figures it makes, and the "nothing to show" note.

Global state: a figure function changes none of it (pyplot's interactive mode, rcParams, the
current figure). The house rcParams are applied with :func:`matplotlib.rc_context` around the
drawing only, and no pyplot call is made inside such a context: the first pyplot figure of a
Jupyter kernel loads the inline backend, which turns interactive mode on, and an
``rc_context`` left afterwards would turn it off again (plots stop showing).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis.stats._inputs import check_ci


def _note(ax: Axes, text: str) -> Axes:
    return empty_note(ax, text)


def _err(mean, low, high) -> np.ndarray:
    mean, low, high = (np.asarray(v, dtype=float) for v in (mean, low, high))
    return np.vstack([np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)])


def count_axis(axis) -> None:
    """Whole-number ticks on an axis of counts (never a tick at 0.5 tasks)."""
    axis.set_major_locator(mpl.ticker.MaxNLocator(integer=True, min_n_ticks=1))


def rate_limit(highs) -> float:
    """Where an axis of shares (rates in [0, 1]) ends: at 1 when any value or interval end
    passes 0.5, else at the first multiple of 0.1 above the largest one (at least 0.1), so
    that shares of 0.33 are not drawn in the bottom third of an axis running to 1.

    Examples
    --------
    >>> rate_limit([0.2, 0.33]), rate_limit([0.7]), rate_limit([0.0]), rate_limit([0.3])
    (0.4, 1.0, 0.1, 0.4)
    """
    values = np.asarray(highs, dtype=float)
    top = float(np.nanmax(values)) if values.size and np.isfinite(values).any() else 1.0
    if top > 0.5:
        return 1.0
    return float(max(0.1, (np.floor(top * 10 + 1e-9) + 1) / 10))


def _ci_label(ci: float) -> str:
    """The interval's name at level ``ci``: "95% CI" for 0.95, "90% CI", "99.9% CI"."""
    check_ci(ci)
    return f"{ci * 100:g}% CI"


#: Okabe & Ito (2008), "Color Universal Design", the colour-blind-safe qualitative palette.
OKABE_ITO: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                              "#56B4E9", "#F0E442", "#000000")


ONE_COLUMN: float = 3.5  # inches


TWO_COLUMN: float = 7.0  # inches


RC_PARAMS: dict[str, object] = {
    "axes.prop_cycle": mpl.cycler(color=OKABE_ITO),
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    "image.cmap": "viridis",
}


#: viridis without its last 15 % (the light yellow end, contrast 1.3:1 on white; at 0.85 the end
#: is 1.7:1, and markers drawn with it get a dark edge): the sequential map for [0, 1] scores.
SEQUENTIAL = mpl.colors.ListedColormap(mpl.colormaps["viridis"](np.linspace(0.0, 0.85, 256)),
                                       name="viridis_0_85")


def apply_style() -> None:
    """Set the toolkit's matplotlib rcParams globally (palette, font sizes, embedding).

    Returns
    -------
    None

    Examples
    --------
    >>> apply_style()
    >>> mpl.rcParams["pdf.fonttype"]
    42
    """
    mpl.rcParams.update(RC_PARAMS)


def new_figure(width: str | float = "one", *, aspect: float = 0.75, height: float | None = None,
               **kwargs) -> Figure:
    """Create a pyplot Figure at a paper width with constrained layout (no clipped labels).

    Parameters
    ----------
    width : {"one", "two"} or float
        One column (3.5 in), two columns (7 in), or a width in inches.
    aspect : float
        Height / width.
    height : float, optional
        Height in inches; overrides ``aspect`` (figures whose height grows with their number
        of categories).
    **kwargs
        Passed to :func:`matplotlib.pyplot.figure`.

    Returns
    -------
    Figure
        Registered with pyplot (so a notebook shows it) and made the current figure, like
        :func:`matplotlib.pyplot.figure`.

    Raises
    ------
    ValueError
        For an unknown width name or a non-positive size.

    Notes
    -----
    The figure is created outside any ``rc_context`` (see the module's note); the house dpi is
    passed explicitly.

    Examples
    --------
    >>> fig = new_figure("two", aspect=0.5)
    >>> tuple(float(v) for v in fig.get_size_inches())
    (7.0, 3.5)
    >>> plt.close(fig)
    """
    sizes = {"one": ONE_COLUMN, "two": TWO_COLUMN}
    if isinstance(width, str):
        if width not in sizes:
            raise ValueError(f"width must be 'one', 'two' or inches, got {width!r}")
        width = sizes[width]
    height = width * aspect if height is None else height
    if width <= 0 or aspect <= 0 or height <= 0:
        raise ValueError("figure width, height and aspect must be positive")
    kwargs.setdefault("dpi", RC_PARAMS["figure.dpi"])
    return plt.figure(figsize=(width, height), layout="constrained", **kwargs)


@contextlib.contextmanager
def _current_figure_kept() -> Iterator[None]:
    """Leave pyplot's current figure as it was (if there was one) when the block ends."""
    before = plt.gcf() if plt.get_fignums() else None
    try:
        yield
    finally:
        if before is not None and plt.fignum_exists(before.number):
            plt.figure(before)


def axes_or_new(ax: Axes | None = None, width: str | float = "one", *, aspect: float = 0.75,
                height: float | None = None) -> Axes:
    """``ax`` itself, or the Axes of a new figure at a paper width (see :func:`new_figure`).

    The new figure is registered with pyplot (a notebook shows it once, at the end of the
    cell) but does not become the current figure if there was one.

    Parameters
    ----------
    ax : Axes, optional
        Returned unchanged when given.
    width, aspect, height
        As :func:`new_figure`.

    Returns
    -------
    Axes
        Made under the house rcParams (spines, colour cycle), which are not left set.

    Examples
    --------
    >>> ax = axes_or_new(None, "two", aspect=0.5)
    >>> axes_or_new(ax) is ax
    True
    >>> plt.close(ax.figure)
    """
    if ax is not None:
        return ax
    return new_panels(1, width, aspect=aspect, height=height)[0]


def new_panels(ncols: int, width: str | float = "two", *, aspect: float = 0.45,
               height: float | None = None, sharey: bool = True) -> np.ndarray:
    """The Axes of a new figure with ``ncols`` panels side by side (see :func:`axes_or_new`).

    Parameters
    ----------
    ncols : int
        Number of panels.
    width, aspect, height
        As :func:`new_figure`.
    sharey : bool
        Panels share the y axis.

    Returns
    -------
    ndarray of Axes
        Shape ``(ncols,)``.

    Examples
    --------
    >>> axes = new_panels(2)
    >>> axes.shape, axes[0].figure is axes[1].figure
    ((2,), True)
    >>> plt.close(axes[0].figure)
    """
    with _current_figure_kept():
        fig = new_figure(width, aspect=aspect, height=height)
        with mpl.rc_context(RC_PARAMS):
            axes = fig.subplots(1, ncols, sharey=sharey, squeeze=False)[0]
    return axes


def empty_note(ax: Axes, text: str) -> Axes:
    """Write a centred note such as "no failed tasks" on an otherwise empty Axes.

    Returns
    -------
    Axes
        ``ax``, ticks removed.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> empty_note(ax, "nothing here").texts[0].get_text()
    'nothing here'
    >>> plt.close(fig)
    """
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.35")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax
