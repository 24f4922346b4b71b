"""Figures of issue 14: the defects a new user saw, each checked on what the figure draws.

Limits that hold every point (markers included), categories in the catalogue's fixed order with
empty ones drawn, counts, colour-bar alignment, z-order, ties, small bins, timeouts, and
non-[0, 1] metrics. Expected values are counted here from the input frames or the sample files.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from dabench_analysis import figures, schema
from dabench_analysis.load import load_run
from dabench_analysis.research_eval import figures as re_plots

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs():
    return (load_run(ROOT / "data/sample_runs/baseline_react"),
            load_run(ROOT / "data/sample_runs/proposed_aat"))


def _drawn(ax):
    ax.figure.canvas.draw()
    return ax.figure.canvas.get_renderer()


def _contrast_on_white(rgb) -> float:
    """WCAG 2.x contrast ratio with white: 1.05 / (L + 0.05), L the relative luminance
    0.2126 R + 0.7152 G + 0.0722 B of the linearised sRGB channels."""
    c = np.asarray(rgb[:3], dtype=float)
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return 1.05 / (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] + 0.05)


# --- autonomy_vs_efficiency ---------------------------------------------------------------

def test_autonomy_points_stay_in_the_scale_and_inside_the_axes(runs):
    for run in runs:
        ax = figures.autonomy_vs_efficiency(run.tasks)
        points = ax.collections[0]
        xy = np.asarray(points.get_offsets())
        kept = run.tasks[["autonomy_score", "tool_efficiency", "final_score"]].astype(float).dropna()
        assert len(xy) == len(kept)
        # jitter reflected at 0 and 1: no autonomy above 1 (the sample has many at exactly 1.0)
        assert (kept["autonomy_score"] == 1.0).sum() > 10
        assert xy[:, 0].max() <= 1.0 and xy[:, 0].min() >= 0.0
        # every marker, with its radius, inside the Axes' box (nothing clipped at 1.0)
        _drawn(ax)
        centres = ax.transData.transform(xy)
        radius = np.sqrt(points.get_sizes()[0]) / 2 * ax.figure.dpi / 72
        box = ax.get_window_extent()
        assert (centres[:, 0] - radius).min() >= box.x0 and (centres[:, 0] + radius).max() <= box.x1
        assert (centres[:, 1] - radius).min() >= box.y0 and (centres[:, 1] + radius).max() <= box.y1
        plt.close(ax.figure)


def test_autonomy_colour_map_end_is_visible_on_white():
    t = pd.DataFrame({"autonomy_score": [1.0, 0.0], "tool_efficiency": [1.0, 0.0],
                      "final_score": [1.0, 0.0]})
    points = figures.autonomy_vs_efficiency(t).collections[0]
    top = points.get_cmap()(1.0)
    # viridis' own end (#fde725) has contrast 1.26 with white; the map stops at viridis(0.85)
    assert _contrast_on_white(matplotlib.colormaps["viridis"](1.0)) == pytest.approx(1.26, abs=0.01)
    assert top == pytest.approx(matplotlib.colormaps["viridis"](0.85), abs=1 / 255)
    assert _contrast_on_white(top) >= 1.65
    # and every marker has a dark edge (contrast >= 4.5 with white)
    assert all(_contrast_on_white(c) >= 4.5 for c in points.get_edgecolors())
    assert points.get_clim() == (0.0, 1.0)


# --- correlation_matrix ----------------------------------------------------------------------

@pytest.mark.parametrize("own_axes", [False, True])
def test_correlation_colour_bar_is_exactly_as_tall_as_the_heatmap(runs, own_axes):
    ax = None
    if own_axes:  # an Axes of the caller's, in a grid
        ax = plt.subplots(1, 2, figsize=(8, 3))[1][0]
    ax = figures.correlation_matrix(runs[1].tasks, ax=ax)
    _drawn(ax)
    heat = ax.get_position(original=False)  # after the square-cell aspect is applied
    bar = ax.images[0].colorbar.ax.get_position()
    assert (bar.y0, bar.y1) == pytest.approx((heat.y0, heat.y1), abs=1e-6)
    assert bar.x0 > heat.x1  # beside it, not over it
    assert ax.images[0].colorbar.ax.get_ylabel() == "Pearson r"


# --- paired_difference -----------------------------------------------------------------------

def test_paired_band_behind_the_bars_and_ties_drawn_and_counted(runs):
    base, prop = runs
    ax = figures.paired_difference(base.tasks, prop.tasks)
    diff = (prop.tasks.set_index("task_id")["final_score"]
            - base.tasks.set_index("task_id")["final_score"]).dropna().astype(float)
    n_tied = int((diff == 0).sum())
    assert n_tied == 17  # the sample: 17 of 80 tasks have the same final_score in both runs
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    band = ax.patches[-1]
    mean = next(line for line in ax.lines if line.get_linestyle() == "--")
    assert band.get_zorder() < min(p.get_zorder() for p in bars) < mean.get_zorder()
    # one diamond per tied task, on the zero line, where the (empty) bars of the ties stand
    (ties,) = [line for line in ax.lines if line.get_marker() == "d"]
    x_tied = [i for i, p in enumerate(bars) if p.get_height() == 0]
    assert np.asarray(ties.get_xdata()).tolist() == x_tied and len(x_tied) == n_tied
    assert set(np.asarray(ties.get_ydata()).tolist()) == {0.0}
    assert f"tied (Δ = 0): {n_tied} of 80" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_paired_without_ties_has_no_tie_marker():
    b = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.2, 0.5, 0.9]})
    p = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.6, 0.4, 0.8]})
    ax = figures.paired_difference(b, p)
    assert not [line for line in ax.lines if line.get_marker() == "d"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["mean Δ = 0.067", "95% CI"]


# --- failure_distribution and difficulty_bars: fixed categories --------------------------

def test_failure_distribution_of_two_runs_line_up_with_zeros(runs):
    axes = [figures.failure_distribution(run.tasks) for run in runs]
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in axes]
    assert labels[0] == labels[1] and len(labels[0]) == len(schema.columns.FAILURE_CATEGORIES)
    assert [ax.get_yticks().tolist() for ax in axes] == [list(range(10))] * 2
    expected = []
    for run, ax in zip(runs, axes, strict=True):
        failed = run.tasks[run.tasks["final_score"].astype(float) < 0.8]
        counts = failed["failure_category"].astype("string").value_counts()
        expected.append([float(counts.get(c, 0)) for c in schema.columns.FAILURE_CATEGORIES])
        assert [p.get_width() for p in ax.patches] == expected[-1]
        assert 0.0 in expected[-1]  # an empty category is drawn (at zero), not left out
    # a category neither run has (in the sample: UNKNOWN_FAILURE) is drawn at zero in both, at
    # the same place
    both_empty = [i for i, (a, b) in enumerate(zip(*expected, strict=True)) if a == b == 0]
    assert both_empty
    for i in both_empty:
        assert axes[0].patches[i].get_width() == 0 == axes[1].patches[i].get_width()


def test_failure_distribution_by_stage_keeps_every_stage():
    t = pd.DataFrame({"final_score": [0.1, 0.2], "failure_stage": ["VERIFY", "VERIFY"]})
    ax = figures.failure_distribution(t, by="failure_stage")
    assert [x.get_text() for x in ax.get_yticklabels()] == [
        "Understand", "Plan", "Execute", "Verify", "Aggregate"]
    assert [p.get_width() for p in ax.patches] == [0, 0, 0, 2, 0]


def test_difficulty_bars_keep_empty_levels_in_place():
    t = pd.DataFrame({"difficulty": ["Extreme", "Easy", "Extreme"], "execution_success": [1] * 3,
                      "final_score": [0.9, 1.0, 0.5], "execution_time": [1.0] * 3,
                      "total_tokens": [10] * 3})
    ax = figures.difficulty_bars(t)
    assert [x.get_text() for x in ax.get_xticklabels()] == [
        "Easy\nn=1", "Medium\nn=0", "Hard\nn=0", "Extreme\nn=2"]
    acc, score = [c for c in ax.containers if isinstance(c, BarContainer)]
    # Easy at 0 and Extreme at 3: the empty levels keep their places
    assert [p.get_x() + p.get_width() / 2 for p in acc] == pytest.approx([-0.2, 2.8])
    assert [p.get_height() for p in acc] == pytest.approx([1.0, 0.5])  # >= 0.8: 1/1, 1/2
    assert ax.get_xlim() == pytest.approx((-0.6, 3.6))


# --- reliability_diagram: bins with few tasks --------------------------------------------

def test_reliability_bins_with_few_tasks_are_grey_and_counted():
    # seed buckets [0, .2) [.2, .4) [.4, .6) [.6, .8) [.8, 1]: n = 1, 6, 0, 2, 5
    conf = [0.1] + [0.3] * 6 + [0.7] * 2 + [0.9] * 5
    score = [1.0] + [0.0, 0.0, 0.0, 0.0, 1.0, 1.0] + [1.0, 0.0] + [1.0] * 4 + [0.0]
    ax = figures.reliability_diagram(pd.DataFrame({"confidence_score": conf,
                                                   "final_score": score}))
    solid, grey = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [p.get_x() + p.get_width() / 2 for p in solid] == pytest.approx([0.3, 0.9])
    assert [p.get_height() for p in solid] == pytest.approx([2 / 6, 4 / 5])
    assert [p.get_x() + p.get_width() / 2 for p in grey] == pytest.approx([0.1, 0.7])
    assert [p.get_height() for p in grey] == pytest.approx([1.0, 0.5])
    assert {p.get_facecolor()[:3] for p in grey} == {matplotlib.colors.to_rgb("0.78")}
    assert {p.get_facecolor()[:3] for p in solid} == {matplotlib.colors.to_rgb(figures.OKABE_ITO[0])}
    assert [t.get_text() for t in ax.texts] == ["n=1", "n=6", "n=0", "n=2", "n=5"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "perfect", "mean confidence", "accuracy (95% CI)", "accuracy, n < 5"]
    marks = next(line for line in ax.lines if line.get_marker() == "o")
    assert len(marks.get_xdata()) == 4  # every bin with a task has its mean confidence


# --- research-eval latency: timeouts apart --------------------------------------------------

def test_research_eval_timeouts_are_not_drawn_as_latencies():
    from dabench_analysis.research_eval._load import load_research_eval

    session = ROOT / "data/research_eval"
    ax = re_plots.plot_latency(load_research_eval(session).cases)
    profiles = [t.get_text().replace("\n", "") for t in ax.get_yticklabels()]
    points = [line for line in ax.lines if line.get_marker() == "o"]
    texts = {round(t.get_position()[1]): t.get_text() for t in ax.texts}
    for row, (profile, line) in enumerate(zip(profiles, points, strict=True), start=1):
        rows = [json.loads(s) for s in (session / profile / "artifacts/results.jsonl")
                .read_text().splitlines() if s]
        timeouts = [r for r in rows if "Timeout" in (r.get("error") or "")]
        finished = [r["elapsed_ms"] / 1000 for r in rows if r not in timeouts]
        assert sorted(np.asarray(line.get_xdata()).tolist()) == pytest.approx(sorted(finished))
        assert texts.get(row) == (f"{len(timeouts)} timed out ▶" if timeouts else None)
    # the sample: standard-gf-live has two cases that hit the 120 s limit (120.8 s, 120.7 s);
    # the note stands inside the Axes, at its right edge (never floating outside it)
    assert texts == {2: "2 timed out ▶"}
    assert all(t.get_position()[0] <= 1 and t.get_ha() == "right" for t in ax.texts)
    assert ax.get_xlim()[1] < 100  # the axis is not stretched to the limit
    assert "timeouts at the right" in ax.get_xlabel()


# --- score_distribution on a metric that is not a [0, 1] score ---------------------------

def test_score_distribution_of_seconds_bins_the_data_range(runs):
    tasks = runs[0].tasks
    secs = tasks["execution_time"].astype(float).dropna().to_numpy()
    ax = figures.score_distribution(tasks, x="execution_time")
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == len(secs) and max(heights) > 0
    edges = sorted({round(p.get_x(), 9) for p in ax.patches}
                   | {round(p.get_x() + p.get_width(), 9) for p in ax.patches})
    widths = np.diff(edges)
    assert edges[0] <= secs.min() and edges[-1] >= secs.max()
    # a round width (1, 2, 2.5, 5 x 10^k) giving about 20 bins: range / 20 rounded up
    span = secs.max() - secs.min()
    assert widths == pytest.approx(widths[0]) and span / 20 <= widths[0] <= span / 8
    assert ax.get_xlim() == pytest.approx((edges[0], edges[-1]))
    # no 0.8 success threshold on seconds; the median, labelled in seconds
    xs = [line.get_xdata()[0] for line in ax.lines]
    assert 0.8 not in xs and xs == pytest.approx([np.median(secs)])
    assert ax.texts[0].get_text() == f" median {np.median(secs):.3g} s"
    assert ax.get_xlabel() == "Execution time (s)"


def test_score_distribution_reference_lines_by_scale():
    t = pd.DataFrame({"final_score": [0.2, 0.9], "execution_time": [30.0, 90.0],
                      "total_tokens": [1000, 5000]})
    score = figures.score_distribution(t)
    assert [line.get_xdata()[0] for line in score.lines] == [0.8]  # the success threshold
    assert score.get_xlim() == (0.0, 1.0)
    secs = figures.score_distribution(t, x="execution_time", threshold=60)
    assert sorted(line.get_xdata()[0] for line in secs.lines) == [60, 60.0]  # given + median
    assert figures.score_distribution(t, x="total_tokens").texts[0].get_text() == \
        " median 3000 tokens"  # 3 significant digits, whole numbers from 100: no 3e+03
    with pytest.raises(ValueError, match="finite number in the units of 'execution_time'"):
        figures.score_distribution(t, x="execution_time", threshold=float("inf"))
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]"):
        figures.score_distribution(t, threshold=80)
    one = figures.score_distribution(pd.DataFrame({"execution_time": [42.0] * 3}),
                                     x="execution_time")  # constant: one bar, no exception
    assert [p.get_height() for p in one.patches if p.get_height() > 0] == [3]


# --- tool_latency: a pair of Axes or nothing -------------------------------------------------

def test_tool_latency_refuses_other_than_two_axes():
    calls = pd.DataFrame({"task_id": ["a"], "tool_name": ["sql"], "success": [True],
                          "latency_seconds": [1.0], "tokens": [3]})
    with pytest.raises(ValueError, match="two Axes"):
        figures.tool_latency(calls, ax=Figure().subplots(1, 3))
    none = figures.tool_latency(calls.iloc[:0])
    assert none[0].texts[0].get_text().startswith("no tool calls recorded")
