"""Figures of trajectories: the directly-follows graph, the most frequent variants, the share
of tasks solved within k steps, and step latencies. Each takes the table of
:mod:`dabench_analysis.tables.trajectory` and draws its pooled rows (difficulty "all"), except
:func:`solve_curve`, which draws one line per difficulty.
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
from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures.theme import (
    OKABE_ITO,
    RC_PARAMS,
    TWO_COLUMN,
    _ci_label,
    _err,
    _note,
)
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns

#: Short names of the stages in variant labels (REPLAN and RETRY: the repeated blocks).
ABBREVIATIONS = {"UNDERSTAND": "U", "PLAN": "P", "REPLAN": "RP", "EXECUTE": "E",
                 "RETRY": "RT", "VERIFY": "V", "SUMMARIZE": "S"}
_START, _END = "start", "end"


def _pooled(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """The rows of one run with difficulty "all" (a table of several runs is refused)."""
    if "run_id" in table and table["run_id"].nunique() > 1:
        raise ValueError(f"{what}: the table holds {table['run_id'].nunique()} runs; pass one "
                         "run's rows, e.g. table[table['run_id'] == 'r1']")
    if "difficulty" in table:
        table = table[table["difficulty"].astype("string") == "all"]
    return table


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
    """The directly-follows graph of :func:`dabench_analysis.tables.trajectory.transitions`.

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


def _variant_label(reading: str) -> str:
    parts = str(reading).split("→")
    if all(p in ABBREVIATIONS for p in parts):
        return "→".join(ABBREVIATIONS[p] for p in parts)
    return shorten(reading)


def trajectory_variants(table: pd.DataFrame, *, top: int = 10, ci: float = 0.95,
                        ax: Axes | None = None) -> Axes:
    """The most frequent variants: share of tasks (Wilson CI), with each variant's accuracy.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.trajectory.variants` (``reading``, ``n_tasks``,
        ``share`` and its interval, ``accuracy``); its pooled rows are drawn.
    top : int
        Bars drawn (the table's order: most frequent first, the pooled rest last).
    ci : float
        The table's interval level, named in the axis label.
    ax : Axes, optional
        Draw here; default a new two-column figure whose height grows with the bars.

    Returns
    -------
    Axes
        One horizontal bar per variant, top down; stage patterns abbreviated (U understand,
        P plan, RP replan, E execute, RT retry, V verify, S summarize; the key is in the
        x-axis label); the canonical pattern in the first palette colour, the others in grey;
        "acc. 0.85, n = 52" beside each bar.

    Raises
    ------
    ValueError
        A missing column, or a table of several runs.

    Notes
    -----
    The intervals are the table's; the figure computes nothing.

    References
    ----------
    Okabe, M., Ito, K. (2008). Color Universal Design (the palette).

    Examples
    --------
    >>> t = pd.DataFrame({"reading": ["UNDERSTAND→PLAN", "PLAN"], "n_tasks": [3, 1],
    ...                   "share": [0.75, 0.25], "share_ci_low": [0.3, 0.05],
    ...                   "share_ci_high": [0.95, 0.7], "accuracy": [1.0, 0.0]})
    >>> [t.get_text() for t in trajectory_variants(t).get_yticklabels()]
    ['U→P', 'P']
    """
    require_columns(table, ["reading", "n_tasks", "share", "share_ci_low", "share_ci_high",
                            "accuracy"], "variants")
    t = _pooled(table, "trajectory_variants").head(top)
    labels = [_variant_label(r) for r in t["reading"]]
    given = ax is not None
    ax = _axes(ax, "two", height=max(0.45 * TWO_COLUMN, height_for(labels)))
    if t.empty:
        return _note(ax, "no variants (no steps)")
    canonical = "→".join(schema.STAGES)
    y = np.arange(len(t))
    colours = [OKABE_ITO[0] if r == canonical else "0.6" for r in t["reading"]]
    with mpl.rc_context(RC_PARAMS):
        ax.barh(y, t["share"], color=colours, capsize=2,
                xerr=_err(t["share"], t["share_ci_low"], t["share_ci_high"]))
        for yi, (acc, n, hi) in enumerate(zip(t["accuracy"], t["n_tasks"],
                                              t["share_ci_high"], strict=True)):
            acc_text = "acc. n/a" if pd.isna(acc) else f"acc. {acc:.2f}"
            ax.text(min(float(hi) + 0.01, 0.99), yi, f"{acc_text}, n = {int(n)}",
                    va="center", fontsize=6)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(t) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"Share of tasks ({_ci_label(ci)})\nU understand, P plan, RP replan, "
                      "E execute, RT retry, V verify, S summarize")
        ax.set_title("Most frequent variants", loc="left")
        if given:
            fit_ticklabels(ax, labels)
    return ax


def solve_curve(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """The share of tasks solved within k steps (or t seconds), one step line per difficulty.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.trajectory.solve_curve` (``steps`` or ``seconds``,
        ``share``, ``ci_low``, ``ci_high``, ``difficulty``).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        A post-step line per difficulty (pooled "all" in black with its pointwise band, the
        levels in the palette), y from 0 to 1.

    Raises
    ------
    ValueError
        A missing column, or a table of several runs.

    Notes
    -----
    The intervals are the table's; the figure computes nothing.

    References
    ----------
    Okabe, M., Ito, K. (2008). Color Universal Design (the palette).

    Examples
    --------
    >>> t = pd.DataFrame({"difficulty": ["all"] * 3, "steps": [1, 2, 3],
    ...                   "share": [0.0, 0.5, 0.75], "ci_low": [0.0, 0.2, 0.4],
    ...                   "ci_high": [0.3, 0.8, 0.9]})
    >>> ax = solve_curve(t)
    >>> ax.get_xlabel(), ax.lines[0].get_ydata().tolist()
    ('Steps', [0.0, 0.5, 0.75])
    """
    axis = "steps" if "steps" in table else "seconds"
    require_columns(table, [axis, "share", "ci_low", "ci_high"], "solve_curve")
    if "run_id" in table and table["run_id"].nunique() > 1:
        raise ValueError("solve_curve: the table holds several runs; pass one run's rows")
    ax = _axes(ax, "one", aspect=0.75)
    if table.empty:
        return _note(ax, "no tasks")
    groups = (table.groupby(table["difficulty"].astype("string"), sort=False)
              if "difficulty" in table else [("all", table)])
    with mpl.rc_context(RC_PARAMS):
        for i, (name, g) in enumerate(groups):
            pooled = name == "all"
            colour = "black" if pooled else OKABE_ITO[(schema.DIFFICULTY_ORDER.index(name)
                                                        if name in schema.DIFFICULTY_ORDER
                                                        else i) % len(OKABE_ITO)]
            ax.step(g[axis], g["share"], where="post", color=colour, lw=1.4 if pooled else 0.9,
                    label=name)
            if pooled:
                ax.fill_between(g[axis], g["ci_low"], g["ci_high"], step="post", color=colour,
                                alpha=0.15, lw=0)
        ax.set_ylim(0, 1)
        ax.set_xlabel("Steps" if axis == "steps" else "Seconds")
        ax.set_ylabel("Share of tasks solved")
        ax.legend(frameon=False, loc="upper left", fontsize=6)
    return ax


def step_latency(table: pd.DataFrame, *, ci: float = 0.95, ax: Axes | None = None) -> Axes:
    """Median step latency (distribution-free CI) and the 90th percentile, per group.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.tables.trajectory.step_latency` (its grouping column, ``n``,
        ``p50_s`` with its interval, ``p90_s``); its pooled rows are drawn.
    ci : float
        The table's interval level, named in the legend.
    ax : Axes, optional
        Draw here; default a new one-column figure whose height grows with the groups.

    Returns
    -------
    Axes
        One bar per group (the median, with its interval), most step time first, top down,
        a marker at the 90th percentile; labelled "name (n)".

    Raises
    ------
    ValueError
        A missing column, or a table of several runs.

    Notes
    -----
    The intervals are the table's; the figure computes nothing.

    References
    ----------
    Okabe, M., Ito, K. (2008). Color Universal Design (the palette).

    Examples
    --------
    >>> t = pd.DataFrame({"stage": ["PLAN", "EXECUTE"], "n": [4, 9], "p50_s": [2.0, 1.0],
    ...                   "p50_s_ci_low": [1.0, 0.5], "p50_s_ci_high": [3.0, 1.5],
    ...                   "p90_s": [4.0, 2.0]})
    >>> [t.get_text() for t in step_latency(t).get_yticklabels()]
    ['PLAN (4)', 'EXECUTE (9)']
    """
    require_columns(table, ["n", "p50_s", "p50_s_ci_low", "p50_s_ci_high", "p90_s"],
                    "step_latency")
    t = _pooled(table, "step_latency")
    skip = {"run_id", "difficulty", "n"}
    group = next(c for c in t.columns if c not in skip)
    labels = [f"{shorten(g)} ({int(n)})" for g, n in zip(t[group], t["n"], strict=True)]
    given = ax is not None
    ax = _axes(ax, "one", height=max(0.7 * TWO_COLUMN / 2, height_for(labels)))
    if t.empty:
        return _note(ax, "no step durations")
    y = np.arange(len(t))
    with mpl.rc_context(RC_PARAMS):
        ax.barh(y, t["p50_s"], color=OKABE_ITO[0], capsize=2, label=f"median ({_ci_label(ci)})",
                xerr=_err(t["p50_s"], t["p50_s_ci_low"].fillna(t["p50_s"]),
                          t["p50_s_ci_high"].fillna(t["p50_s"])))
        ax.plot(t["p90_s"], y, "D", color=OKABE_ITO[3], ms=3, label="90th percentile")
        ax.set_yticks(y, labels)
        ax.set_ylim(len(t) - 0.5, -0.5)
        ax.set_xlabel("Seconds per step")
        ax.set_title(f"Step latency by {group}", loc="left")
        ax.legend(frameon=False, fontsize=6, loc="lower right", bbox_to_anchor=(1.0, 1.0),
                  ncol=2)
        if given:
            fit_ticklabels(ax, labels)
    return ax
