"""Figures of trajectories: the most frequent variants, the share of tasks solved within k
steps, and step latencies (the directly-follows graph: :func:`~dabench_analysis.trajectory.figures.transition_graph`). Each takes the
table of :mod:`dabench_analysis.trajectory` and draws its pooled rows (difficulty
"all"), except :func:`solve_curve`, which draws one line per difficulty.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema
from dabench_analysis.figures._labels import (
    LINE_CHARS,
    MAX_CHARS,
    fit_ticklabels,
    height_for,
    shorten,
)
from dabench_analysis.figures._theme import (
    OKABE_ITO,
    RC_PARAMS,
    TWO_COLUMN,
    _ci_label,
    _err,
    _note,
)
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.numbers import format_estimate

#: Short names of the stages in variant labels (REPLAN and RETRY: the repeated blocks).
ABBREVIATIONS = {"UNDERSTAND": "U", "PLAN": "P", "REPLAN": "RP", "EXECUTE": "E",
                 "RETRY": "RT", "VERIFY": "V", "SUMMARIZE": "S"}


def _pooled(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """The rows of one run with difficulty "all" (a table of several runs is refused)."""
    if "run_id" in table and table["run_id"].nunique() > 1:
        raise ValueError(f"{what}: the table holds {table['run_id'].nunique()} runs; pass one "
                         "run's rows, e.g. table[table['run_id'] == 'r1']")
    if "difficulty" in table:
        table = table[table["difficulty"].astype("string") == "all"]
    return table


def _variant_label(reading: str) -> str:
    """A variant's tick label: stage patterns abbreviated; others at most :data:`MAX_CHARS`
    long (whole steps in the middle left out, "…" in their place) on at most two lines, broken
    only after a "→" or at a space, never inside a step's name."""
    parts = str(reading).split("→")
    if all(p in ABBREVIATIONS for p in parts):
        return "→".join(ABBREVIATIONS[p] for p in parts)
    steps = " ".join(str(reading).split()).split("→")
    if len(steps) < 2:
        return shorten(steps[0])  # one name: a space, else its own separators

    def join(h: int, k: int) -> str:
        return "→".join(steps if h + k >= len(steps) else [*steps[:h], "…", *steps[-k:]])

    head = tail = len(steps)  # every step, else the first and last few around "…"
    if len(join(head, tail)) > MAX_CHARS:
        head = tail = 1
        while head + tail < len(steps) - 1:
            h, k = (head + 1, tail) if head <= tail else (head, tail + 1)
            if len(join(h, k)) > MAX_CHARS:
                break
            head, tail = h, k
    text = join(head, tail)
    if len(text) <= LINE_CHARS:
        return text
    cuts = [i + 1 for i, ch in enumerate(text) if ch in "→ " and 0 < i + 1 < len(text)]
    fit = [c for c in cuts if c <= LINE_CHARS] or cuts[:1]
    return text if not fit else text[:fit[-1]].rstrip() + "\n" + text[fit[-1]:].lstrip()


def trajectory_variants(table: pd.DataFrame, *, top: int = 10, ci: float = 0.95,
                        ax: Axes | None = None) -> Axes:
    """The most frequent variants: share of tasks (Wilson CI), with each variant's accuracy.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.trajectory.variants` (``reading``, ``n_tasks``,
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
        x-axis label, only where a variant is a stage pattern); the canonical pattern in the
        first palette colour, the others in grey; "acc. 0.850, n = 52" beside each bar (the
        package's number rule).

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
            acc_text = "acc. n/a" if pd.isna(acc) else f"acc. {format_estimate(acc)}"
            ax.text(min(float(hi) + 0.01, 0.99), yi, f"{acc_text}, n = {int(n)}",
                    va="center", fontsize=6)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(t) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        staged = any(all(p in ABBREVIATIONS for p in str(r).split("→")) for r in t["reading"])
        key = ("\nU understand, P plan, RP replan, E execute, RT retry, V verify, S summarize"
               if staged else "")
        ax.set_xlabel(f"Share of tasks ({_ci_label(ci)}){key}")
        ax.set_title("Most frequent variants", loc="left")
        if given:
            fit_ticklabels(ax, labels)
    return ax


def solve_curve(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """The share of tasks solved within k steps (or t seconds), one step line per difficulty.

    Parameters
    ----------
    table : DataFrame
        :func:`dabench_analysis.trajectory.solve_curve` (``steps`` or ``seconds``,
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
        :func:`dabench_analysis.trajectory.step_latency` (its grouping column, ``n``,
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
        ax.set_title(f"Step latency by {group}", loc="left", pad=14)  # the legend below it
        ax.legend(frameon=False, fontsize=6, loc="lower left", bbox_to_anchor=(0.0, 1.0),
                  ncol=2, borderaxespad=0.2)
        if given:
            fit_ticklabels(ax, labels)
    return ax
