"""Figures of a sweep (many runs): the leaderboard as a forest plot, the pairwise comparisons as
a heatmap of adjusted p-values, and per-task solve rates against labelled difficulty.

Each draws on ``ax=`` or on a new figure whose height grows with the number of runs (labels stay
readable with 50+ runs, pitfall P16); none changes global matplotlib state.
"""

from __future__ import annotations

import textwrap

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema
from dabench_analysis.figures._labels import (
    center_on_figure,
    fit_ticklabels,
    fit_title,
    grow_to_fit,
    height_for,
    run_labels,
)
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _ci_label, empty_note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.numbers import format_rank

#: Colour scale of the heatmap: |log10 p| is clipped here (p = 0.001).
P_FLOOR_LOG = 3.0
#: Runs shown in the heatmap's columns when there are more than ``max_runs``.
TOP_RUNS = 10
#: Above this many columns (or with names longer than 14 characters) the heatmap's columns are
#: numbered as its rows ("1. name"), so that no column label overlaps another.
NAMED_COLUMNS = 8
#: What a p column of :func:`tables.sweep.pairwise` holds, for the heatmap's title and colour
#: bar (other columns: :func:`schema.label`).
P_LABELS = {"p_holm": "Holm-adjusted Wilcoxon p", "p_bh": "BH-adjusted Wilcoxon p",
            "p_wilcoxon": "Wilcoxon p (unadjusted)", "p_mcnemar": "McNemar p (unadjusted)",
            "p_mcnemar_holm": "Holm-adjusted McNemar p", "p_mcnemar_bh": "BH-adjusted McNemar p"}


def _forest_order(board: pd.DataFrame) -> pd.DataFrame:
    if "rank" in board:
        return board.sort_values(["rank", "run_id"], kind="stable")
    return board.sort_values("mean_score", ascending=False, kind="stable")


def leaderboard_forest(board: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Forest plot of a leaderboard: each run's mean score and interval, best at the top; a run
    whose rank interval overlaps another run's (tied) is drawn hollow.

    Parameters
    ----------
    board : DataFrame
        :func:`dabench_analysis.tables.sweep.leaderboard`: ``run_id``, ``mean_score``,
        ``mean_score_ci_low``, ``mean_score_ci_high``; used when present: ``rank``,
        ``rank_low``, ``rank_high``, ``tied``, ``metric``, ``n_shared``, ``ci``.
    ax : Axes, optional
        Draw here (tick labels shrink to fit); default a new one-column figure as tall as the
        runs need, widened (up to the two-column width) so that the data keep at least 40 %
        of its width whatever the length of the run names.

    Returns
    -------
    Axes
        One point with a horizontal interval per run, y tick labels "run  (rank a–b)" (the
        bootstrap rank interval); filled: the rank interval overlaps no other run's (the run
        is separable from every other), hollow: it overlaps another's (tied). The x label
        says so, and names the common prefix or suffix left out of long run names
        (:func:`run_labels`). The title has at most two lines.

    Raises
    ------
    ValueError
        Missing columns.

    Notes
    -----
    "Tied" is about the rank intervals printed in the labels, not the score intervals drawn:
    two runs whose score intervals overlap can still have separate rank intervals, because
    the ranks come from resampling the same tasks for every run (paired), which cancels the
    variation between tasks that the unpaired score intervals carry.

    Examples
    --------
    >>> b = pd.DataFrame({"run_id": ["a", "b"], "mean_score": [0.8, 0.5],
    ...                   "mean_score_ci_low": [0.7, 0.4], "mean_score_ci_high": [0.9, 0.6],
    ...                   "rank": [1.0, 2.0], "rank_low": [1.0, 2.0], "rank_high": [1.0, 2.0],
    ...                   "tied": [False, False]})
    >>> [t.get_text() for t in leaderboard_forest(b).get_yticklabels()]
    ['a  (rank 1)', 'b  (rank 2)']
    """
    require_columns(board, ["run_id", "mean_score", "mean_score_ci_low", "mean_score_ci_high"],
                    what="board")
    b = _forest_order(board).reset_index(drop=True)
    names, note = run_labels(b["run_id"])
    labels = [_rank_label(name, row) for name, (_, row) in zip(names, b.iterrows(), strict=True)]
    given = ax is not None
    ax = _axes(ax, "one", height=height_for(labels, overhead=1.4))
    if b.empty:
        return empty_note(ax, "no runs")
    y = np.arange(len(b))
    tied = b["tied"].fillna(False).astype(bool).to_numpy() if "tied" in b \
        else np.zeros(len(b), bool)
    m = b["mean_score"].to_numpy(float)
    err = np.vstack([np.clip(m - b["mean_score_ci_low"].to_numpy(float), 0, None),
                     np.clip(b["mean_score_ci_high"].to_numpy(float) - m, 0, None)])
    with mpl.rc_context(RC_PARAMS):
        ax.errorbar(m, y, xerr=err, fmt="none", ecolor="0.3", elinewidth=1.0, capsize=1.5,
                    capthick=0.8)
        for mask, face in ((~tied, OKABE_ITO[0]), (tied, "white")):
            if mask.any():
                ax.scatter(m[mask], y[mask], s=16, facecolors=face, edgecolors=OKABE_ITO[0],
                           linewidths=0.9, zorder=3)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(b) - 0.5, -0.5)
        metric = str(b["metric"].iloc[0]) if "metric" in b else "mean_score"
        level = _ci_label(float(b["ci"].iloc[0])) if "ci" in b else "interval"
        mark = ("● rank interval overlaps no other run's\n○ tied: rank interval overlaps "
                "another's" if "rank_low" in b else "")
        ax.set_xlabel("\n".join(t for t in (f"Mean {schema.label(metric).lower()} ({level})",
                                             mark, note) if t))
        n = f" on {int(b['n_shared'].iloc[0])} shared tasks" if "n_shared" in b else ""
        fit_title(ax, [f"{len(b)} runs{n}"] + (["ranks: bootstrap interval over tasks, in "
                                                 "brackets"] if mark else []))
        if given:
            fit_ticklabels(ax, labels)
        else:
            grow_to_fit(ax)
            center_on_figure(ax)
    return ax


def _rank_label(name: str, row: pd.Series) -> str:
    if "rank_low" not in row or pd.isna(row["rank_low"]):
        return name
    lo, hi = float(row["rank_low"]), float(row["rank_high"])
    return (f"{name}  (rank {format_rank(lo)})" if lo == hi else
            f"{name}  (rank {format_rank(lo)}–{format_rank(hi)})")


def _runs_in_order(pairs: pd.DataFrame) -> list[str]:
    return list(pd.unique(pd.concat([pairs["run_a"], pairs["run_b"]]).astype(str)))


def _signed_log_p(pairs: pd.DataFrame, rows: list[str], cols: list[str], p: str) -> np.ndarray:
    """M[i, j] = sign(mean_i − mean_j) · min(−log10 p, 3); NaN on the diagonal and for NaN p."""
    ri, ci = {r: i for i, r in enumerate(rows)}, {c: j for j, c in enumerate(cols)}
    mat = np.full((len(rows), len(cols)), np.nan)
    pv = pairs[p].to_numpy(float)
    with np.errstate(divide="ignore"):
        size = np.minimum(-np.log10(np.clip(pv, 1e-300, 1.0)), P_FLOOR_LOG)
    sign = np.sign(pairs["mean_diff"].to_numpy(float))
    for a, b, v in zip(pairs["run_a"].astype(str), pairs["run_b"].astype(str), size * sign,
                       strict=True):
        if a in ri and b in ci:
            mat[ri[a], ci[b]] = v
        if b in ri and a in ci:
            mat[ri[b], ci[a]] = -v if v == v else v
    return mat


def pairwise_heatmap(pairs: pd.DataFrame, *, ax: Axes | None = None, max_runs: int = 30,
                     p: str = "p_holm", alpha: float = 0.05) -> Axes:
    """Heatmap of adjusted p-values of all pairs, coloured by the direction of the difference.

    Parameters
    ----------
    pairs : DataFrame
        :func:`dabench_analysis.tables.sweep.pairwise`: ``run_a``, ``run_b``, ``mean_diff``
        (a − b) and the column ``p``; runs are shown in the order they appear (pairwise orders
        them by mean score, best first).
    ax : Axes, optional
        Draw here; default a new figure sized to the runs.
    max_runs : int
        Up to this many runs: the full k × k matrix. Above: every run (rows) against the first
        10 runs (columns), i.e. the pairs involving the top 10.
    p : str
        Adjusted p column: ``"p_holm"`` (default), ``"p_bh"``, ``"p_mcnemar_holm"``, ...
    alpha : float
        Cells with p < alpha get a dot.

    Returns
    -------
    Axes
        An image whose cell (row i, column j) is sign(mean_i − mean_j) · min(−log10 p, 3)
        (blue: the row run is better; red: worse; white: p near 1; grey: the diagonal or an
        untestable pair), a colour bar in p labelled with what ``p`` holds
        (:data:`P_LABELS`: "Holm-adjusted Wilcoxon p"), a title of two lines naming it and
        the colours, and black dots where p < ``alpha``. Run names lose their common prefix
        and suffix (:func:`run_labels`, said in the x label); above :data:`NAMED_COLUMNS`
        columns, or with long names, rows read "1. name" and columns "1", "2", ... A new
        figure is widened so that the matrix keeps at least 40 % of its width.

    Raises
    ------
    ValueError
        Missing columns, ``max_runs < 2``, ``alpha`` outside (0, 1).

    Examples
    --------
    >>> pr = pd.DataFrame({"run_a": ["a"], "run_b": ["b"], "mean_diff": [0.2], "p_holm": [0.01]})
    >>> ax = pairwise_heatmap(pr)
    >>> ax.images[0].get_array().filled(np.nan).round(3).tolist()
    [[nan, 2.0], [-2.0, nan]]
    >>> [t.get_text() for t in ax.get_xticklabels()], ax.get_title().count("\\n")
    (['a', 'b'], 1)
    """
    require_columns(pairs, ["run_a", "run_b", "mean_diff", p], what="pairs")
    if max_runs < 2:
        raise ValueError(f"max_runs must be at least 2, got {max_runs}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    runs = _runs_in_order(pairs)
    cols = runs if len(runs) <= max_runs else runs[:TOP_RUNS]
    rows = runs
    names, note = run_labels(rows)
    numbered = len(cols) > NAMED_COLUMNS or max((len(n) for n in names), default=0) > 14
    rlab = [f"{i + 1}. {n}" for i, n in enumerate(names)] if numbered else names
    clab = [str(i + 1) for i in range(len(cols))] if numbered else names[:len(cols)]
    given = ax is not None
    ax = _axes(ax, "one", height=max(2.6, height_for(rlab, overhead=1.9)))
    if not runs:
        return empty_note(ax, "no pairs")
    mat = _signed_log_p(pairs, rows, cols, p)
    cmap = mpl.colormaps["RdBu"].with_extremes(bad="0.85")
    with mpl.rc_context(RC_PARAMS):
        im = ax.imshow(np.ma.masked_invalid(mat), cmap=cmap, vmin=-P_FLOOR_LOG,
                       vmax=P_FLOOR_LOG, aspect="auto", interpolation="nearest")
        sig = np.abs(np.nan_to_num(mat)) > -np.log10(alpha)
        yy, xx = np.nonzero(sig)
        ax.scatter(xx, yy, s=4, c="black", marker="o", linewidths=0)
        ax.set_xticks(np.arange(len(cols)), clab, rotation=0 if numbered else 90)
        ax.set_yticks(np.arange(len(rows)), rlab)
        ax.tick_params(length=0)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
        part = f"{len(runs)} runs" if cols is rows else \
            f"pairs with the top {len(cols)} of {len(runs)} runs"
        name = P_LABELS.get(p) or schema.label(p)
        fit_title(ax, [f"{name}, {part}",
                       f"blue: row run better; red: column run better; dot: p < {alpha:g}"])
        ax.set_xlabel("\n".join(t for t in ("columns: the runs numbered as the rows"
                                             if numbered else "", note) if t))
        ticks = [-3, -2, -np.log10(alpha), 0, np.log10(alpha), 2, 3]
        bar = ax.figure.colorbar(im, ax=ax, shrink=min(1.0, 6 / max(len(rows), 1) + 0.3),
                                 ticks=ticks)
        bar.ax.set_yticklabels([f"{10 ** -abs(t):.2g}" if t else "1" for t in ticks])
        bar.set_label(textwrap.fill(name, 14), fontsize=6)  # short lines: never taller than the bar
        bar.ax.tick_params(labelsize=6)
        if given:
            fit_ticklabels(ax, rlab)
            fit_ticklabels(ax, clab, axis="x")
        else:
            grow_to_fit(ax)
            fit_ticklabels(ax, clab, axis="x")
            center_on_figure(ax)
    return ax


def item_difficulty(items: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Per-task solve rate across runs (observed difficulty) against the labelled difficulty.

    Parameters
    ----------
    items : DataFrame
        :func:`dabench_analysis.tables.sweep.items`: ``task_id``, ``difficulty``,
        ``solve_rate`` ([0, 1]), ``solved_by``; tasks without a score in any run are left out,
        tasks without a label are shown as "unlabelled".
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        One point per task (spread sideways by a seeded jitter; green: every run solves it,
        blue: some, vermillion: none; the legend in that order), a thin grey line behind
        the points at each level's mean solve rate, tick
        labels "Level\\nn=…" in the order Easy < Medium < Hard < Extreme (absent levels left out).

    Raises
    ------
    ValueError
        Missing columns.

    Examples
    --------
    >>> it = pd.DataFrame({"task_id": ["t1", "t2"], "difficulty": ["Easy", "Hard"],
    ...                    "solve_rate": [1.0, 0.25], "solved_by": ["all", "some"]})
    >>> [t.get_text() for t in item_difficulty(it).get_xticklabels()]
    ['Easy\\nn=1', 'Hard\\nn=1']
    """
    require_columns(items, ["task_id", "difficulty", "solve_rate", "solved_by"], what="items")
    ax = _axes(ax, "one", aspect=0.75)
    it = items[items["solve_rate"].notna()]
    if it.empty:
        return empty_note(ax, "no task has a score")
    level = it["difficulty"].astype("string").fillna("unlabelled").to_numpy()
    order = [lv for lv in [*schema.DIFFICULTY_ORDER, "unlabelled"] if (level == lv).any()]
    pos = {lv: i for i, lv in enumerate(order)}
    x = np.array([pos[lv] for lv in level], dtype=float)
    x += np.random.default_rng(0).uniform(-0.28, 0.28, size=x.size)
    y = it["solve_rate"].to_numpy(float)
    colours = {"all": OKABE_ITO[2], "some": OKABE_ITO[0], "none": OKABE_ITO[3]}  # legend order
    words = {"all": "every run", "some": "some runs", "none": "no run"}
    with mpl.rc_context(RC_PARAMS):
        for lv, i in pos.items():  # behind the points, thin: it never hides one
            ax.hlines(y[level == lv].mean(), i - 0.4, i + 0.4, color="0.25", linewidth=0.8,
                      zorder=1, label="level mean" if i == 0 else None)
        for kind, colour in colours.items():
            mask = (it["solved_by"] == kind).to_numpy()
            if mask.any():
                ax.scatter(x[mask], y[mask], s=9, color=colour, alpha=0.8, linewidths=0,
                           zorder=2, label=f"solved by {words[kind]} ({int(mask.sum())})")
        ax.set_xticks(range(len(order)), [f"{lv}\nn={int((level == lv).sum())}" for lv in order])
        ax.set_xlim(-0.6, len(order) - 0.4)
        ax.set_ylim(-0.04, 1.04)
        ax.set_xlabel("Labelled difficulty")
        ax.set_ylabel("Share of runs solving the task")
        handles, names = ax.get_legend_handles_labels()
        order = sorted(range(len(names)), key=lambda i: (names[i] == "level mean", i))
        rows = (len(order) + 1) // 2  # read row by row: every, some / none, mean
        order = [order[i] for i in [*range(0, len(order), 2), *range(1, len(order), 2)]] \
            if rows > 1 else order
        ax.legend([handles[i] for i in order], [names[i] for i in order], loc="lower center",
                  bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=6,
                  handletextpad=0.2, columnspacing=0.8)
    return ax
