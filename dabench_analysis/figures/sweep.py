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
from dabench_analysis.figures._labels import fit_ticklabels, height_for, shorten
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _ci_label, empty_note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns

#: Colour scale of the heatmap: |log10 p| is clipped here (p = 0.001).
P_FLOOR_LOG = 3.0
#: Runs shown in the heatmap's columns when there are more than ``max_runs``.
TOP_RUNS = 10
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
    """Forest plot of a leaderboard: each run's mean score and interval, best at the top, runs
    whose rank interval overlaps another run's drawn hollow.

    Parameters
    ----------
    board : DataFrame
        :func:`dabench_analysis.tables.sweep.leaderboard`: ``run_id``, ``mean_score``,
        ``mean_score_ci_low``, ``mean_score_ci_high``; used when present: ``rank``,
        ``rank_low``, ``rank_high``, ``tied``, ``metric``, ``n_shared``, ``ci``.
    ax : Axes, optional
        Draw here (tick labels shrink to fit); default a new one-column figure as tall as the
        runs need.

    Returns
    -------
    Axes
        One point with a horizontal interval per run (filled: rank interval separate from
        every other run's; hollow: tied), y tick labels "run  (rank a–b)".

    Raises
    ------
    ValueError
        Missing columns.

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
    labels = [_run_label(r) for _, r in b.iterrows()]
    given = ax is not None
    ax = _axes(ax, "one", height=height_for(labels))
    if b.empty:
        return empty_note(ax, "no runs")
    y = np.arange(len(b))
    tied = b["tied"].fillna(False).astype(bool).to_numpy() if "tied" in b \
        else np.zeros(len(b), bool)
    m = b["mean_score"].to_numpy(float)
    err = np.vstack([np.clip(m - b["mean_score_ci_low"].to_numpy(float), 0, None),
                     np.clip(b["mean_score_ci_high"].to_numpy(float) - m, 0, None)])
    with mpl.rc_context(RC_PARAMS):
        ax.errorbar(m, y, xerr=err, fmt="none", ecolor="0.35", elinewidth=0.8, capsize=0)
        for mask, face, name in ((~tied, OKABE_ITO[0], "rank interval apart from all others"),
                                 (tied, "white", "tied: rank interval overlaps another run's")):
            if mask.any():
                ax.scatter(m[mask], y[mask], s=16, facecolors=face, edgecolors=OKABE_ITO[0],
                           linewidths=0.9, zorder=3, label=name)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(b) - 0.5, -0.5)
        metric = str(b["metric"].iloc[0]) if "metric" in b else "mean_score"
        level = _ci_label(float(b["ci"].iloc[0])) if "ci" in b else "interval"
        ax.set_xlabel(f"Mean {schema.label(metric).lower()} ({level})")
        n = f" on {int(b['n_shared'].iloc[0])} shared tasks" if "n_shared" in b else ""
        ax.set_title(f"{len(b)} runs{n}")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0 + 0.3 / ax.figure.get_figheight()),
                  ncol=1, frameon=False, fontsize=6)
        if given:
            fit_ticklabels(ax, labels)
    return ax


def _run_label(row: pd.Series) -> str:
    name = shorten(row["run_id"], line_chars=60)
    if "rank_low" not in row or pd.isna(row["rank_low"]):
        return name
    lo, hi = float(row["rank_low"]), float(row["rank_high"])
    return f"{name}  (rank {lo:g})" if lo == hi else f"{name}  (rank {lo:g}–{hi:g})"


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
        (:data:`P_LABELS`: "Holm-adjusted Wilcoxon p"), a title naming it and the colours,
        and black dots where p < ``alpha``.

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
    """
    require_columns(pairs, ["run_a", "run_b", "mean_diff", p], what="pairs")
    if max_runs < 2:
        raise ValueError(f"max_runs must be at least 2, got {max_runs}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    runs = _runs_in_order(pairs)
    cols = runs if len(runs) <= max_runs else runs[:TOP_RUNS]
    rows = runs
    rlab, clab = [shorten(r) for r in rows], [shorten(c) for c in cols]
    given = ax is not None
    width = min(7.0, max(3.5, 1.6 + 0.16 * len(cols)))
    ax = _axes(ax, width, height=max(2.4, height_for(rlab, overhead=1.6)))
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
        ax.set_xticks(np.arange(len(cols)), clab, rotation=90)
        ax.set_yticks(np.arange(len(rows)), rlab)
        ax.tick_params(length=0)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
        part = f"{len(runs)} runs" if cols is rows else \
            f"pairs involving the top {len(cols)} of {len(runs)} runs"
        name = P_LABELS.get(p) or schema.label(p)
        lines = [f"Pairwise comparisons: {name}", f"{part}; dots: p < {alpha:g}",
                 "blue: row better; red: column better"]
        chars = max(36, int(ax.figure.get_figwidth() * 10.5))  # the title stays in the figure
        ax.set_title("\n".join(textwrap.fill(line, chars, break_on_hyphens=False)
                                for line in lines))
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
            ax.tick_params(axis="x", labelsize=min(7.0, max(4.5, 260 / max(len(cols), 1) / 2)))
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
        One point per task (spread sideways by a seeded jitter; vermillion: no run solves it,
        green: every run does, blue: some), a black bar at each level's mean solve rate, tick
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
    colours = {"none": OKABE_ITO[3], "all": OKABE_ITO[2], "some": OKABE_ITO[0]}
    with mpl.rc_context(RC_PARAMS):
        for kind, colour in colours.items():
            mask = (it["solved_by"] == kind).to_numpy()
            if mask.any():
                ax.scatter(x[mask], y[mask], s=9, color=colour, alpha=0.75, linewidths=0,
                           label=f"solved by {kind} ({int(mask.sum())})")
        for lv, i in pos.items():
            ax.hlines(y[level == lv].mean(), i - 0.38, i + 0.38, color="black", linewidth=1.4)
        ax.set_xticks(range(len(order)), [f"{lv}\nn={int((level == lv).sum())}" for lv in order])
        ax.set_xlim(-0.6, len(order) - 0.4)
        ax.set_ylim(-0.04, 1.04)
        ax.set_xlabel("Labelled difficulty")
        ax.set_ylabel("Share of runs solving the task")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False,
                  fontsize=6, handletextpad=0.2, columnspacing=0.8)
    return ax
