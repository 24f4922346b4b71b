"""Figures: one convention (seaborn's axes-level ``ax=``) and labels that fit (pitfall P16).

Every single-panel figure takes ``ax=`` and returns that Axes; ``tool_latency`` takes and returns
a pair. Long names (~90 characters) and many categories (60 profiles) are checked with the tick
labels' bounding boxes as the renderer lays them out: no two overlap, panels keep their width,
and the figure grows instead.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from test_inline_figures import TASKS  # the same four tasks: one fixture for both files

import dabench_analysis as da
from dabench_analysis import figures
from dabench_analysis.judge import _figures as judge_plots
from dabench_analysis.research_eval import figures as re_plots

CASES = pd.DataFrame({"run_id": ["a", "a", "b"], "elapsed_ms": [1000.0, 3000.0, 500.0]})
RATES = pd.DataFrame({"run_id": ["a", "b"], "pass_rate": [0.5, 0.8], "ci_low": [0.2, 0.5],
                      "ci_high": [0.8, 0.95]})
CONFIGS = pd.DataFrame({"configuration": ["x", "y"], "mcc": [0.2, 0.5]})

SINGLE_PANEL = {
    "score_distribution": lambda ax: figures.score_distribution(TASKS, ax=ax),
    "failure_distribution": lambda ax: figures.failure_distribution(TASKS, ax=ax),
    "difficulty_bars": lambda ax: figures.difficulty_bars(TASKS, ax=ax),
    "failure_by_stage": lambda ax: figures.failure_by_stage(TASKS, ax=ax),
    "reliability_diagram": lambda ax: figures.reliability_diagram(TASKS, ax=ax),
    "paired_difference": lambda ax: figures.paired_difference(
        TASKS, TASKS.assign(final_score=[1.0, 0.5, 0.6, 0.9]), ax=ax),
    "correlation_matrix": lambda ax: figures.correlation_matrix(TASKS, ax=ax),
    "autonomy_vs_efficiency": lambda ax: figures.autonomy_vs_efficiency(TASKS, ax=ax),
    "plot_configurations": lambda ax: judge_plots.plot_configurations(CONFIGS, ax=ax),
    "plot_latency": lambda ax: re_plots.plot_latency(CASES, ax=ax),
    "plot_pass_rate": lambda ax: re_plots.plot_pass_rate(RATES, ax=ax),
}
FUNCTIONS = {"score_distribution": figures.score_distribution,
             "failure_distribution": figures.failure_distribution,
             "difficulty_bars": figures.difficulty_bars,
             "failure_by_stage": figures.failure_by_stage,
             "reliability_diagram": figures.reliability_diagram,
             "paired_difference": figures.paired_difference,
             "correlation_matrix": figures.correlation_matrix,
             "autonomy_vs_efficiency": figures.autonomy_vs_efficiency,
             "plot_configurations": judge_plots.plot_configurations,
             "plot_latency": re_plots.plot_latency, "plot_pass_rate": re_plots.plot_pass_rate}


# --- the convention --------------------------------------------------------------------------

def test_every_figure_function_follows_the_convention():
    public = {n: getattr(figures, n) for n in figures.__all__
              if inspect.isfunction(getattr(figures, n))
              and "ax" in inspect.signature(getattr(figures, n)).parameters
              and n not in ("axes_or_new", "empty_note")}  # theme helpers, not figures
    public.update({n: getattr(da.trajectory.figures, n) for n in da.trajectory.figures.__all__})
    public["plot_configurations"] = da.judge.plot_configurations
    public.update({f"research_eval.{n}": getattr(re_plots, n)
                   for n in ("plot_latency", "plot_pass_rate")})
    assert set(FUNCTIONS) - {"plot_latency", "plot_pass_rate"} | {"tool_latency"} <= set(public)
    for name, f in public.items():
        sig = inspect.signature(f)
        assert sig.parameters["ax"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert sig.parameters["ax"].default is None, name
        returns = str(sig.return_annotation)
        assert returns == ("np.ndarray" if name == "tool_latency" else "Axes"), name
        assert "Returns\n    -------\n    " + ("ndarray of Axes" if name == "tool_latency"
                                               else "Axes") in f.__doc__, name


@pytest.mark.parametrize("name", sorted(SINGLE_PANEL))
def test_single_panel_takes_ax_and_returns_it(name):
    param = inspect.signature(FUNCTIONS[name]).parameters["ax"]
    assert param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is None
    assert "Axes" in str(inspect.signature(FUNCTIONS[name]).return_annotation)
    before = plt.get_fignums()
    ax = Figure().add_subplot()  # an Axes pyplot does not know: nothing new may appear there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # paired_difference: tasks by hand
        assert SINGLE_PANEL[name](ax) is ax
        assert plt.get_fignums() == before and (ax.patches or ax.lines or ax.collections
                                                 or ax.images)
        new = SINGLE_PANEL[name](None)
    assert isinstance(new, Axes) and plt.fignum_exists(new.figure.number)  # shown inline


def test_tool_latency_takes_and_returns_a_pair():
    calls = pd.DataFrame({"task_id": ["a", "b"], "tool_name": ["sql", "py"],
                          "success": [True, False], "latency_seconds": [1.0, 2.0],
                          "tokens": [1, 2]})
    pair = Figure().subplots(1, 2, sharey=True)
    out = figures.tool_latency(calls, ax=pair)
    assert out.shape == (2,) and out[0] is pair[0] and out[1] is pair[1]
    new = figures.tool_latency(calls)
    assert new.shape == (2,) and new[0].figure is new[1].figure


def test_table_helpers_are_not_in_the_figures_namespace():
    for name in ("correct_mask", "require_columns"):
        assert name not in figures.__all__ and not hasattr(figures, name)


# --- labels that fit ---------------------------------------------------------------------

def _tick_boxes(ax, axis="y"):
    """Window extents of the non-empty tick labels, after a full draw (layout applied)."""
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    labels = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text()]


def _assert_no_overlap(boxes):
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert not a.overlaps(b), (a, b)


def _assert_inside_figure(ax, boxes):
    fig_box = ax.figure.bbox
    assert all(b.x0 >= fig_box.x0 - 0.5 and b.x1 <= fig_box.x1 + 0.5 for b in boxes)


LONG = [f"mcp__enterprise_data_platform_connector__tool_number_{i:02d}_with_a_very_long_"
        f"descriptive_suffix" for i in range(14)]


def test_tool_names_of_ninety_characters_keep_the_panels_wide():
    assert min(map(len, LONG)) >= 88
    rng = np.random.default_rng(0)
    calls = pd.DataFrame({"task_id": [f"t{i % 7}" for i in range(140)],
                          "tool_name": np.repeat(LONG, 10),
                          "success": rng.random(140) > 0.1,
                          "latency_seconds": rng.uniform(0.1, 3, 140), "tokens": 5})
    lat, fail = figures.tool_latency(calls)
    boxes = _tick_boxes(lat)
    assert len(boxes) == 14
    _assert_no_overlap(boxes)
    _assert_inside_figure(lat, boxes)
    width = lat.figure.bbox.width
    # each panel keeps at least a quarter of the width (the names squeezed it to 10 %)
    assert lat.get_window_extent().width >= 0.25 * width
    assert fail.get_window_extent().width >= 0.25 * width
    texts = [t.get_text() for t in lat.get_yticklabels()]
    assert all(t.count("\n") <= 1 and len(t.split(" (")[0].replace("\n", "")) <= 40
               for t in texts)
    assert texts[0].startswith("mcp__enterprise_") and texts[0].endswith("suffix (10)")


def _profiles(n):
    return [f"profile-{i:02d}-model-variant-with-a-longer-name" for i in range(n)]


def _many(name, n=60):
    names = _profiles(n)
    if name == "plot_pass_rate":
        rates = pd.DataFrame({"run_id": names, "pass_rate": 0.5, "ci_low": 0.3, "ci_high": 0.7})
        return lambda ax: re_plots.plot_pass_rate(rates, ax=ax)
    if name == "plot_latency":
        cases = pd.DataFrame({"run_id": np.repeat(names, 2), "elapsed_ms": 1000.0})
        return lambda ax: re_plots.plot_latency(cases, ax=ax)
    if name == "plot_configurations":
        configs = pd.DataFrame({"configuration": names, "mcc": 0.4})
        return lambda ax: judge_plots.plot_configurations(configs, ax=ax)
    if name == "tool_latency":
        calls = pd.DataFrame({"task_id": "t", "tool_name": names, "success": True,
                              "latency_seconds": 1.0, "tokens": 1})
        return lambda ax: figures.tool_latency(
            calls, top=n, ax=None if ax is None else (ax, ax.figure.add_subplot(1, 2, 2)))[0]
    tasks = pd.DataFrame({"final_score": 0.1, "outcome_error_type": names})
    return lambda ax: figures.failure_distribution(tasks, by="outcome_error_type", ax=ax)


MANY = ["plot_pass_rate", "plot_latency", "plot_configurations", "tool_latency",
        "failure_distribution"]


@pytest.mark.parametrize("name", MANY)
def test_sixty_categories_grow_the_figure_and_never_overlap(name):
    ax = _many(name)(None)
    boxes = _tick_boxes(ax)
    assert len(boxes) == 60
    _assert_no_overlap(boxes)
    _assert_inside_figure(ax, boxes)
    # the height was capped at 4.2 in; now about 0.3 in per two-line label
    assert ax.figure.get_figheight() > 60 * 0.25
    few = _many(name, 3)(None)
    assert few.figure.get_figheight() < 4.2


@pytest.mark.parametrize("name", MANY)
def test_on_a_given_axes_labels_shrink_to_fit_or_warn(name):
    fig, ax = plt.subplots(figsize=(6, 6))
    _many(name, 20)(ax)  # 20 two-line labels in about 4.6 in: they shrink, and fit
    sizes = {t.get_fontsize() for t in ax.get_yticklabels()}
    assert max(sizes) < 7 and min(sizes) >= 4.5
    _assert_no_overlap(_tick_boxes(ax))
    fig, ax = plt.subplots(figsize=(6, 3))
    with pytest.warns(UserWarning, match="60 labels do not fit on this Axes"):
        _many(name, 60)(ax)


def test_few_short_labels_keep_the_house_size():
    fig, ax = plt.subplots(figsize=(6, 4))
    re_plots.plot_pass_rate(RATES, ax=ax)
    assert {t.get_fontsize() for t in ax.get_yticklabels()} == {7.0}


def test_heatmap_labels_do_not_overlap():
    heat = figures.correlation_matrix(TASKS)
    _assert_no_overlap(_tick_boxes(heat, "y"))
    # x labels are rotated 40°: two parallel labels are apart when the distance between their
    # baselines, spacing · sin(40°), is at least a line of text (1.2 · font size)
    heat.figure.canvas.draw()
    ticks = heat.transData.transform([(i, 0) for i in range(6)])[:, 0]
    size = max(t.get_fontsize() for t in heat.get_xticklabels()) * heat.figure.dpi / 72
    assert np.diff(ticks).min() * np.sin(np.radians(40)) >= 1.2 * size
    assert {t.get_rotation() for t in heat.get_xticklabels()} == {40.0}


def test_score_distribution_legend_in_the_catalogues_words():
    import dabench_analysis as da

    run = da.load_run(Path(__file__).resolve().parents[1] / "data/sample_runs/proposed_aat")
    ax = da.figures.score_distribution(run, hue="outcome_status")
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "Outcome status"  # not the column name
    assert [t.get_text() for t in legend.get_texts()] == ["Correct", "Partial", "Failed"]
