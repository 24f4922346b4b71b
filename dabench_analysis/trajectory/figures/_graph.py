"""The directly-follows graph of a run's trajectories, drawn on matplotlib alone (no Graphviz):
nodes on one line in stage order, forward edges above it, backward edges below, loops above
their node, line width by count.
"""

from __future__ import annotations

import re

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path as MplPath

from dabench_analysis import schema
from dabench_analysis.figures._labels import shorten
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.trajectory.figures._plots import _pooled

_START, _END = "start", "end"


def _nodes(table: pd.DataFrame) -> list[str]:
    """Node order: start, then the stages in the catalogue's order when every node is a stage;
    otherwise each next node is the one most entered from the nodes placed so far; end last."""
    names = [n for n in dict.fromkeys([*table["source"], *table["target"]])
             if n not in (_START, _END)]
    if all(n in schema.STAGES for n in names):
        middle = [s for s in schema.STAGES if s in names]
    else:
        counts = table.groupby(["source", "target"])["count"].sum()
        placed, middle, rest = {_START}, [], sorted(names)
        while rest:
            inflow = {n: sum(counts.get((p, n), 0) for p in placed) for n in rest}
            best = max(rest, key=lambda n: (inflow[n], -rest.index(n)))
            middle.append(best)
            placed.add(best)
            rest.remove(best)
    return [_START, *middle, _END]


def _node_label(name: str) -> str:
    """A node's label: long CamelCase names broken at a capital near the middle."""
    if len(name) <= 12:
        return name
    cuts = [m.start() for m in re.finditer(r"(?<=[a-z])(?=[A-Z])", name)]
    if cuts:
        cut = min(cuts, key=lambda c: abs(c - len(name) / 2))
        return name[:cut] + "\n" + name[cut:]
    return shorten(name, max_chars=24, line_chars=12)


def _height(x1: float, x2: float) -> float:
    """How far an edge's curve leaves the line of nodes: 0 for the next node, up for forward
    edges, down for backward ones, up for a loop."""
    span = x2 - x1
    return 0.75 if span == 0 else 0.0 if span == 1 else 0.22 * abs(span) * np.sign(span)


def _edge_path(x1: float, x2: float, box1: tuple[float, float],
               box2: tuple[float, float]) -> tuple[MplPath, tuple[float, float]]:
    """The edge from node x1 to x2, from and to the rims of their label boxes (half width,
    half height in data units), and where its count is written."""
    h = _height(x1, x2)
    if x1 == x2:
        w, hh = box1
        verts = [(x1 - 0.4 * w, hh), (x1 - 0.35, hh + h), (x1 + 0.35, hh + h),
                 (x1 + 0.4 * w, hh)]
        return MplPath(verts, [MplPath.MOVETO, MplPath.CURVE4, MplPath.CURVE4,
                               MplPath.CURVE4]), (x1, hh + 0.75 * h)
    if h == 0:
        verts = [(x1 + box1[0], 0.0), (x2 - box2[0], 0.0)]
        return MplPath(verts, [MplPath.MOVETO, MplPath.LINETO]), ((x1 + x2) / 2, 0.07)
    side = np.sign(h)
    a, b = (x1, side * box1[1]), (x2, side * box2[1])
    control = ((x1 + x2) / 2, 2 * h - side * (box1[1] + box2[1]) / 2)
    mid = (0.25 * a[0] + 0.5 * control[0] + 0.25 * b[0],
           0.25 * a[1] + 0.5 * control[1] + 0.25 * b[1])
    return MplPath([a, control, b], [MplPath.MOVETO, MplPath.CURVE3, MplPath.CURVE3]), mid


def _boxes(ax: Axes, labels: dict) -> dict[str, tuple[float, float]]:
    """Half width and half height of each node's label box, in data units."""
    renderer = ax.figure.canvas.get_renderer()
    inverse = ax.transData.inverted()
    out = {}
    for name, text in labels.items():
        (x0, y0), (x1, y1) = inverse.transform(text.get_window_extent(renderer).get_points())
        out[name] = (0.5 * abs(x1 - x0) + 0.06, 0.5 * abs(y1 - y0) + 0.04)
    return out


def transition_graph(table: pd.DataFrame, *, min_count: int = 1,
                     ax: Axes | None = None) -> Axes:
    """The directly-follows graph of :func:`dabench_analysis.trajectory.transitions`.

    Parameters
    ----------
    table : DataFrame
        The transitions table (``source``, ``target``, ``count``; its pooled rows are drawn).
    min_count : int
        Edges seen fewer times are left out (their number is noted in the title).
    ax : Axes, optional
        Draw here; default a new two-column figure whose height follows the arcs drawn.

    Returns
    -------
    Axes
        Nodes on one line in stage order (start, the stages in the catalogue's order, other
        values, end), each a labelled box; one arrow per edge (a
        :class:`~matplotlib.patches.FancyArrowPatch`), forward edges above the line, backward
        edges below, a repeated value as a loop above its node; line width grows with the
        count, which is written on the edge. No system binary (such as Graphviz) is needed.

    Raises
    ------
    ValueError
        A missing column, or a table of several runs.

    Notes
    -----
    The layout is fixed, not optimised: every node on one line in stage order, so that
    repeated blocks (REPLAN, RETRY) read as arcs back against the guide's canonical order.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed. Springer,
    §6.2 (directly-follows graphs).

    Examples
    --------
    >>> t = pd.DataFrame({"source": ["start", "A", "A", "B"], "target": ["A", "B", "A", "end"],
    ...                   "count": [4, 4, 2, 4]})
    >>> ax = transition_graph(t)
    >>> len([p for p in ax.patches if isinstance(p, FancyArrowPatch)])
    4
    """
    require_columns(table, ["source", "target", "count"], "transitions")
    t = _pooled(table, "transition_graph")
    shown = t[t["count"] >= min_count]
    nodes = _nodes(t) if len(t) else []
    x = {n: i for i, n in enumerate(nodes)}
    heights = [_height(x[a], x[b]) for a, b in zip(shown["source"], shown["target"],
                                                    strict=True)]
    low = min([-0.3, *[h - 0.25 for h in heights if h < 0]])
    high = max([0.3, *[h + 0.35 for h in heights if h > 0]])
    ax = _axes(ax, "two", height=min(4.5, max(1.4, 0.4 + 1.6 * (high - low))))
    if t.empty:
        return _note(ax, "no transitions (no steps)")
    biggest = float(shown["count"].max()) if len(shown) else 1.0
    with mpl.rc_context(RC_PARAMS):
        ax.set_xlim(-0.6, len(nodes) - 0.4)
        ax.set_ylim(low, high)
        labels = {name: ax.text(xi, 0, _node_label(name),
                                ha="center", va="center", fontsize=6.5, zorder=4,
                                bbox={"boxstyle": "round,pad=0.3", "fc": "0.93", "ec": "0.3",
                                      "lw": 0.6}) for name, xi in x.items()}
        boxes = _boxes(ax, labels)
        for src, dst, count in zip(shown["source"], shown["target"], shown["count"],
                                   strict=True):
            path, (lx, ly) = _edge_path(x[src], x[dst], boxes[src], boxes[dst])
            forward = x[dst] >= x[src]
            ax.add_patch(FancyArrowPatch(path=path, arrowstyle="-|>", mutation_scale=8,
                                         lw=0.6 + 3.4 * count / biggest, zorder=1,
                                         color=OKABE_ITO[0] if forward else OKABE_ITO[3],
                                         alpha=0.85))
            ax.text(lx, ly, f"{int(count)}", ha="center", va="center", fontsize=6, zorder=3,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
        ax.set_axis_off()
        left_out = len(t) - len(shown)
        ax.set_title("Directly-follows graph (edge: transitions)" + (
            f"; {left_out} edges seen fewer than {min_count} times not shown" if left_out
            else ""), loc="left")
    return ax
