"""Sweep figures (issue 17), tested by what they draw: points, intervals, tick labels, image
cells, and labels that stay readable with many runs."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from dabench_analysis.figures.sweep import item_difficulty, leaderboard_forest, pairwise_heatmap


def _board(n: int, tied_from: int = 1) -> pd.DataFrame:
    m = np.linspace(0.9, 0.3, n)
    return pd.DataFrame({
        "run_id": [f"run_{i:03d}" for i in range(n)][::-1],  # rows arrive worst first
        "mean_score": m[::-1], "mean_score_ci_low": (m - 0.05)[::-1],
        "mean_score_ci_high": (m + 0.04)[::-1], "rank": np.arange(n, 0, -1, dtype=float),
        "rank_low": np.arange(n, 0, -1, dtype=float),
        "rank_high": [float(min(r + 1, n)) if r > 1 else 1.0 for r in range(n, 0, -1)],
        "tied": [i >= tied_from for i in range(n)][::-1], "metric": "final_score",
        "n_shared": 80, "ci": 0.9})


def _no_overlap(texts) -> bool:
    boxes = sorted((t.get_window_extent() for t in texts if t.get_text()), key=lambda b: b.y0)
    return all(a.y1 <= b.y0 + 0.5 for a, b in zip(boxes, boxes[1:], strict=False))


def test_forest_orders_by_estimate_and_marks_ties():
    ax = leaderboard_forest(_board(4))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["run_000  (rank 1)", "run_001  (rank 2–3)", "run_002  (rank 3–4)",
                      "run_003  (rank 4)"]
    # points: run_000 filled (apart), the others hollow (tied)
    filled, hollow = ax.collections[1], ax.collections[2]
    assert filled.get_offsets().tolist() == [[0.9, 0.0]]
    np.testing.assert_allclose(hollow.get_offsets(), [[0.7, 1], [0.5, 2], [0.3, 3]])
    assert tuple(hollow.get_facecolors()[0]) == (1.0, 1.0, 1.0, 1.0)
    # the intervals: one horizontal segment per run from ci_low to ci_high
    segs = ax.collections[0].get_segments()
    assert [tuple(np.round(s[:, 0], 6)) for s in segs] == [(0.85, 0.94), (0.65, 0.74),
                                                           (0.45, 0.54), (0.25, 0.34)]
    # the marks are defined where they are drawn: "tied" means the printed rank intervals overlap
    assert ax.get_xlabel() == ("Mean final score (90% CI)\n● rank interval overlaps no other "
                               "run's\n○ tied: rank interval overlaps another's")
    assert ax.get_title() == "4 runs on 80 shared tasks\nranks: bootstrap interval over tasks, " \
                             "in brackets"
    assert ax.get_ylim() == (3.5, -0.5)  # best at the top


def test_forest_grows_with_sixty_runs_and_labels_do_not_overlap():
    ax = leaderboard_forest(_board(60))
    fig = ax.figure
    assert fig.get_figheight() > 8
    fig.canvas.draw()
    assert _no_overlap(ax.get_yticklabels())
    assert len(ax.get_yticklabels()) == 60


def test_forest_on_a_given_axes_shrinks_labels_and_leaves_rcparams(recwarn):
    before = dict(mpl.rcParams)
    fig, ax = plt.subplots(figsize=(4, 6))
    out = leaderboard_forest(_board(50), ax=ax)
    assert out is ax and out.figure is fig
    assert 4.5 <= ax.get_yticklabels()[0].get_fontsize() < 7
    assert dict(mpl.rcParams) == before


def _pairs(runs: list[str], rng) -> pd.DataFrame:
    rows = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            rows.append({"run_a": a, "run_b": b, "mean_diff": float(rng.normal(0.1, 0.1)),
                         "p_holm": float(rng.uniform(0, 1)) ** 3})
    return pd.DataFrame(rows)


def test_heatmap_cells_are_signed_log_p(rng):
    pairs = pd.DataFrame({"run_a": ["a", "a", "b"], "run_b": ["b", "c", "c"],
                          "mean_diff": [0.2, -0.1, 0.05], "p_holm": [0.01, 0.5, 1e-6]})
    ax = pairwise_heatmap(pairs)
    cells = ax.images[0].get_array().filled(np.nan)
    # cell (i, j) = sign(mean_i − mean_j) · min(−log10 p, 3)
    expected = np.array([[np.nan, 2.0, np.log10(0.5)],
                         [-2.0, np.nan, 3.0],
                         [-np.log10(0.5), -3.0, np.nan]])
    np.testing.assert_allclose(cells, expected, atol=1e-12)
    dots = ax.collections[0].get_offsets()
    assert sorted(map(tuple, np.asarray(dots).tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_heatmap_above_max_runs_shows_pairs_with_the_top_ten(rng):
    runs = [f"r{i:02d}" for i in range(40)]
    ax = pairwise_heatmap(_pairs(runs, rng))
    cells = ax.images[0].get_array()
    assert cells.shape == (40, 10)
    # above 8 columns the columns are numbered as the rows ("1. r00"), so none overlaps
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(i) for i in range(1, 11)]
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["1. r00", "2. r01"]
    assert "top 10 of 40 runs" in ax.get_title() and ax.get_title().count("\n") == 1
    ax.figure.canvas.draw()
    assert _no_overlap(ax.get_yticklabels())


@pytest.mark.parametrize(("p", "name"), [("p_holm", "Holm-adjusted Wilcoxon p"),
                                         ("p_mcnemar_bh", "BH-adjusted McNemar p")])
@pytest.mark.parametrize("n_runs", [2, 8, 12])
def test_heatmap_names_its_p_and_keeps_the_colour_bar_label_inside(rng, p, name, n_runs):
    pairs = _pairs([f"run_{i}" for i in range(n_runs)], rng).rename(columns={"p_holm": p})
    ax = pairwise_heatmap(pairs, p=p)
    title = ax.get_title()  # two lines at most, the first naming p and the runs
    assert title.split("\n") == [f"{name}, {n_runs} runs",
                                  "blue: row run better; red: column run better; dot: p < 0.05"]
    assert p not in title
    bar = ax.images[0].colorbar
    assert " ".join(bar.ax.get_ylabel().split()) == name
    fig = ax.figure
    fig.canvas.draw()
    inside = fig.bbox  # the saved figure's extent: the label must not be cut off
    for text in (bar.ax.yaxis.label, ax.title):
        box = text.get_window_extent()
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1, text.get_text()
        assert inside.y0 <= box.y0 and box.y1 <= inside.y1, text.get_text()
    plt.close(fig)


def test_heatmap_refuses_bad_arguments():
    pairs = pd.DataFrame({"run_a": ["a"], "run_b": ["b"], "mean_diff": [0.1], "p_holm": [0.2]})
    with pytest.raises(ValueError, match="max_runs"):
        pairwise_heatmap(pairs, max_runs=1)
    with pytest.raises(ValueError, match="column 'p_bh' not in pairs"):
        pairwise_heatmap(pairs, p="p_bh")


def test_item_difficulty_points_levels_and_means():
    items = pd.DataFrame({
        "task_id": [f"t{i}" for i in range(7)],
        "difficulty": pd.Categorical(["Hard", "Easy", "Easy", "Hard", None, "Hard", "Easy"],
                                     ["Easy", "Medium", "Hard", "Extreme"], ordered=True),
        "solve_rate": [0.0, 1.0, 0.5, 0.25, 0.75, np.nan, 1.0],
        "solved_by": ["none", "all", "some", "some", "some", "n/a", "all"]})
    ax = item_difficulty(items)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Easy\nn=3", "Hard\nn=2",
                                                            "unlabelled\nn=1"]
    points = [c for c in ax.collections if c.get_offsets().shape[1:] == (2,) and c.get_zorder() == 2]
    sizes = {c.get_label(): len(c.get_offsets()) for c in points}
    assert sizes == {"solved by no run (1)": 1, "solved by every run (2)": 2,
                     "solved by some runs (3)": 3}
    # the legend reads row by row: every | some, none | level mean (a fixed, meaningful order)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["solved by every run (2)", "solved by no run (1)",
                      "solved by some runs (3)", "level mean"]
    lines = [c for c in ax.collections if c.get_zorder() == 1]  # behind the points
    means = [seg[0, 1] for c in lines for seg in c.get_segments()]
    assert means == pytest.approx([2.5 / 3, 0.125, 0.75])
    offsets = np.vstack([c.get_offsets() for c in points])
    assert np.all(np.abs(offsets[:, 0] - np.round(offsets[:, 0])) <= 0.28)  # jitter in its lane


def test_empty_inputs_draw_a_note():
    items = pd.DataFrame({"task_id": ["t1"], "difficulty": ["Easy"], "solve_rate": [np.nan],
                          "solved_by": ["n/a"]})
    assert item_difficulty(items).texts[0].get_text() == "no task has a score"
