"""Figures that hold at scale (issue 25, items 3, 4 and 8): a generated sweep of 40 runs with
run names of 80 characters (6 tasks each, so it stays fast), and boards of 2 and 60 runs.

Checked on what the renderer lays out: the data Axes keeps at least 40 % of the figure's width,
no two tick labels overlap, every label and title stays inside the figure, titles have at
most two lines, every interval is drawn at least a pixel wide, and the "tied" mark agrees with
the rank intervals printed in the labels.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis import figures, tables
from dabench_analysis.synthetic._evalv2 import generate_run

AGENTS = ["claude-sonnet-4-5", "gpt-5-mini", "gemini-2.5-pro", "qwen3-coder-480b",
          "llama-4-maverick", "deepseek-v3.1", "mistral-large-2", "grok-4-fast"]


def long_name(agent: str, rep: int) -> str:
    name = f"dabench-eval-v2-public-sweep-2026-03-14-{agent}-rep{rep}-react-planner-temperature"
    return (name + "-0.7-max-steps-40-tools-all")[:80]


@pytest.fixture(scope="session")
def sweep40(tmp_path_factory):
    """8 agents x 5 repetitions, 6 tasks each, names of 80 characters: the tables of a sweep."""
    root = tmp_path_factory.mktemp("sweep40")
    for a, agent in enumerate(AGENTS):
        for rep in range(5):
            generate_run(root, run_id=long_name(agent, rep), n_tasks=6, seed=100 + 5 * a + rep,
                         skill=-0.6 + 0.18 * a, replays=False, trajectories=False)
    runs = da.load_runs(root, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"runs": runs, "board": tables.sweep.leaderboard(runs, n_boot=200),
                "pairs": tables.sweep.pairwise(runs), "items": tables.sweep.items(runs)}


def _board(k: int) -> pd.DataFrame:
    """A leaderboard of k runs (long names), the best first, with rank intervals."""
    rng = np.random.default_rng(k)
    m = np.sort(rng.uniform(0.3, 0.9, k))[::-1]
    low = np.arange(1, k + 1) - rng.integers(0, 3, k)
    return pd.DataFrame({
        "run_id": [long_name(AGENTS[i % 8], i) for i in range(k)], "mean_score": m,
        "mean_score_ci_low": m - 0.08, "mean_score_ci_high": np.minimum(m + 0.08, 1),
        "rank": np.arange(1.0, k + 1), "rank_low": np.clip(low, 1, k).astype(float),
        "rank_high": np.clip(np.arange(1, k + 1) + 2, 1, k).astype(float),
        "tied": [True] * k, "metric": "final_score", "n_shared": 80, "ci": 0.95})


def _layout(ax):
    fig = ax.figure
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _assert_holds(ax, *, axis="y"):
    renderer = _layout(ax)
    fig = ax.figure
    assert ax.get_position().width >= 0.4, ax.get_position()  # the data keep 40 % of the width
    labels = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_text()]
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert not a.overlaps(b), (a, b)
    inside = fig.bbox.padded(1)
    for text in [*labels, ax.title, ax.xaxis.label]:
        if text.get_text():
            box = text.get_window_extent(renderer)
            assert inside.x0 <= box.x0 and box.x1 <= inside.x1, (text.get_text(), box)
    assert ax.get_title().count("\n") <= 1  # two lines at most


def test_forty_long_names_forest(sweep40):
    board = sweep40["board"]
    assert len(board) == 40 and board["run_id"].str.len().eq(80).all()
    ax = figures.leaderboard_forest(board)
    _assert_holds(ax)
    # every interval drawn at least a pixel wide (at the figure's 100 dpi)
    segments = ax.collections[0].get_segments()
    assert len(segments) == 40
    widths = [abs(np.diff(ax.transData.transform(s)[:, 0]))[0] for s in segments]
    assert min(widths) >= 1.0
    # the common prefix is left out of the labels and named in the x label
    assert all(not t.get_text().startswith("dabench-eval") for t in ax.get_yticklabels())
    assert "dabench-eval-v2-public-sweep-2026-03-14-" in ax.get_xlabel()


def test_tied_mark_agrees_with_the_printed_rank_intervals(sweep40):
    board = sweep40["board"]
    ax = figures.leaderboard_forest(board)
    ranks = [tuple(map(int, re.findall(r"\d+", t.get_text().rsplit("(rank", 1)[1])))
             for t in ax.get_yticklabels()]
    spans = [(r[0], r[-1]) for r in ranks]
    # tied = the printed rank interval overlaps another run's (the x label says so)
    tied = [any(lo <= h2 and l2 <= hi for j, (l2, h2) in enumerate(spans) if j != i)
            for i, (lo, hi) in enumerate(spans)]
    faces = np.concatenate([c.get_facecolors()[:, :3].mean(axis=1) > 0.99
                            for c in ax.collections[1:]])
    hollow = list(faces) if len(faces) == 40 else None
    order = board.sort_values(["rank", "run_id"], kind="stable")["tied"].tolist()
    assert order == tied
    assert hollow is None or sorted(hollow) == sorted(tied)
    assert "overlaps no other run's" in ax.get_xlabel() and "tied" in ax.get_xlabel()


def test_forty_long_names_heatmap(sweep40):
    ax = figures.pairwise_heatmap(sweep40["pairs"])
    _assert_holds(ax)
    _assert_holds(ax, axis="x")
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["1", "2", "3"]
    assert ax.get_yticklabels()[0].get_text().startswith("1. ")


def test_forty_runs_item_difficulty_legend_in_order(sweep40):
    ax = figures.item_difficulty(sweep40["items"])
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    order = [n.split(" (")[0] for n in names]
    wanted = ["solved by every run", "solved by some runs", "solved by no run", "level mean"]
    drawn = [w for w in wanted if w in order]
    # read row by row in two columns: every | some, none | mean
    assert sorted(order) == sorted(drawn)
    mean_lines = [c for c in ax.collections if c.get_zorder() == 1]
    points = [c for c in ax.collections if c.get_zorder() == 2]
    assert mean_lines and points  # the level means are drawn behind the points


@pytest.mark.parametrize("k", [2, 60])
def test_forest_holds_from_two_to_sixty_runs(k):
    _assert_holds(figures.leaderboard_forest(_board(k)))


def test_sweep_tables_name_the_direction_of_flips(sweep40):
    runs = sweep40["runs"]
    a, b = sweep40["board"]["run_id"].iloc[:2]
    flips = tables.sweep.flips(runs, a, b)
    assert set(flips["flip"]) <= {f"solved by {a} only", f"solved by {b} only"}
    md = da.export.to_markdown(tables.sweep.flip_counts(runs).head(3))
    assert "Solved by run a only" in md and "Solved by run b only" in md


def test_the_report_heatmap_keeps_the_leaderboard_order(sweep40, tmp_path):
    # the page lists the pairs sorted by p; the heatmap drawn after it must still show the
    # runs best first (the sorted rows once replaced the pairs it reads)
    from pathlib import Path

    import nbformat

    from dabench_analysis.report._context import sweep_context

    out = sweep_context(sweep40["runs"], {"threshold": 0.8, "n_boot": 200, "seed": 0},
                        out=Path(tmp_path), quiet=True)
    cells = nbformat.read(Path(__file__).parents[1] / "notebooks" / "sweep.ipynb", 4).cells
    cell = next(c.source for c in cells if c.source.startswith("with out.section('pairwise'"))
    drawn = []
    out.figure = lambda value, stem: drawn.append(value)  # the Axes the cell draws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(cell, {"da": da, "out": out, "runs": sweep40["runs"],  # noqa: S102
                    "threshold": 0.8})
    rows = [t.get_text().split(". ", 1)[1] for t in drawn[0].get_yticklabels()]
    best_first = sweep40["board"].sort_values("mean_score", ascending=False)["run_id"]
    short = [r.removeprefix("dabench-eval-v2-public-sweep-2026-03-14-") for r in best_first]
    assert rows[:5] == [s[:40] for s in short[:5]]


def test_forty_runs_frontier_numbers_its_points_with_a_key(sweep40):
    # above 8 runs the frontier's runs are marked by numbers, the key under the x label names
    # them (without the shared prefix) and fits the figure's width
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = tables.sweep.frontier(sweep40["runs"], n_boot=100)
    ax = figures.frontier(table)
    renderer = _layout(ax)
    on = table.loc[table["on_frontier"], "run_id"].tolist()
    assert [t.get_text() for t in ax.texts] == [str(i + 1) for i in range(len(on))]
    lines = ax.get_xlabel().split("\n")
    assert lines[0] == "Mean tokens per task"
    prefix = "dabench-eval-v2-public-sweep-2026-03-14-"
    for i, run in enumerate(on):  # "1: <name without the prefix> (P = 0.xyz)"
        assert re.fullmatch(rf"{i + 1}: {re.escape(run.removeprefix(prefix)[:40])}"
                            r" \(P = [01]\.\d{3}\)", lines[i + 1]), lines[i + 1]
    assert prefix in lines[-1]
    box, fig = ax.xaxis.label.get_window_extent(renderer), ax.figure
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y0 >= fig.bbox.y0
    assert ax.get_position().width >= 0.4
