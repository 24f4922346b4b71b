"""The house style: Okabe–Ito palette, one- and two-column widths, rc parameters applied only
inside the figures it makes, and the "nothing to show" note.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis.stats.inputs import check_ci


def _note(ax: Axes, text: str) -> Figure:
    return empty_note(ax, text).figure


def _err(mean, low, high) -> np.ndarray:
    mean, low, high = (np.asarray(v, dtype=float) for v in (mean, low, high))
    return np.vstack([np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)])


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


def new_figure(width: str | float = "one", *, aspect: float = 0.75, **kwargs) -> Figure:
    """Create a Figure at a paper width with constrained layout (no clipped labels).

    Parameters
    ----------
    width : {"one", "two"} or float
        One column (3.5 in), two columns (7 in), or a width in inches.
    aspect : float
        Height / width.
    **kwargs
        Passed to :func:`matplotlib.pyplot.figure`.

    Returns
    -------
    Figure

    Raises
    ------
    ValueError
        For an unknown width name or a non-positive size.

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
    if width <= 0 or aspect <= 0:
        raise ValueError("figure width and aspect must be positive")
    with mpl.rc_context(RC_PARAMS):
        return plt.figure(figsize=(width, width * aspect), layout="constrained", **kwargs)


def axes_or_new(ax=None, width: str | float = "one", *, aspect: float = 0.75):
    """``ax`` itself, or the Axes of a new figure at a paper width (see :func:`new_figure`).

    Examples
    --------
    >>> ax = axes_or_new(None, "two", aspect=0.5)
    >>> axes_or_new(ax) is ax
    True
    >>> plt.close(ax.figure)
    """
    return ax if ax is not None else new_figure(width, aspect=aspect).add_subplot()


def empty_note(ax, text: str):
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
