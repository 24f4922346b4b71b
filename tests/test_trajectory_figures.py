"""The trajectory figures, tested by what they draw (artists, labels, extents) from small
tables written here."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import FancyArrowPatch, Rectangle

from dabench_analysis.trajectory import figures

U, P, E, V, S = "UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "SUMMARIZE"
EDGES = pd.DataFrame({
    "difficulty": ["all"] * 7 + ["Easy"],
    "source": ["start", U, P, E, V, E, S, "start"],
    "target": [U, P, E, V, E, S, "end", U],
    "count": [10, 10, 10, 12, 2, 10, 10, 4]})


def _arrows(ax):
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch)]


def test_transition_graph_draws_one_arrow_per_pooled_edge():
    ax = figures.transition_graph(EDGES)
    arrows = _arrows(ax)
    assert len(arrows) == 7  # the Easy row is not drawn
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t in ("start", U, P, E, V, S, "end")] == [
        "start", U, P, E, V, S, "end"]  # nodes in stage order, left to right
    xs = [t.get_position()[0] for t in ax.texts if t.get_text() in ("start", U, P, E)]
    assert xs == [0, 1, 2, 3]
    assert sorted(t for t in texts if t.isdigit()) == sorted(["10"] * 5 + ["12", "2"])
    widths = [a.get_linewidth() for a in arrows]
    assert widths[3] == max(widths) and widths[4] == min(widths)  # E→V 12, V→E 2
    back = arrows[4].get_path().vertices  # V→E goes back: below the line of nodes
    assert back[:, 1].max() < 0 and not ax.axison


def test_transition_graph_self_loop_and_small_edges():
    t = pd.DataFrame({"source": ["start", E, E], "target": [E, E, "end"], "count": [3, 5, 1]})
    ax = figures.transition_graph(t, min_count=2)
    counts = {t.get_text(): t.get_position() for t in ax.texts if t.get_text().isdigit()}
    assert len(_arrows(ax)) == 2 and set(counts) == {"3", "5"}
    assert counts["5"][0] == 1 and counts["5"][1] > 0.5  # the loop: above its node (x = 1)
    assert "1 edges seen fewer than 2 times not shown" in ax.get_title(loc="left")


def test_transition_graph_refuses_several_runs():
    with pytest.raises(ValueError, match="2 runs"):
        figures.transition_graph(EDGES.assign(run_id=["a"] * 4 + ["b"] * 4))


VARIANTS = pd.DataFrame({
    "difficulty": ["all", "all", "all", "Easy"],
    "reading": ["→".join((U, P, E, V, S)), "→".join((U, P, E, V, "RETRY", V, S)),
                "other (3 variants)", "→".join((U, P, E, V, S))],
    "n_tasks": [6, 3, 3, 2], "share": [0.5, 0.25, 0.25, 1.0],
    "share_ci_low": [0.25, 0.09, 0.09, 0.34], "share_ci_high": [0.75, 0.53, 0.53, 1.0],
    "accuracy": [1.0, 0.0, np.nan, 1.0]})


def test_trajectory_variants_bars_labels_and_highlight():
    ax = figures.trajectory_variants(VARIANTS)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert [b.get_width() for b in bars] == [0.5, 0.25, 0.25]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "U→P→E→V→S", "U→P→E→V→RT→V→S", "other (3 variants)"]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()  # the canonical pattern
    notes = [t.get_text() for t in ax.texts]
    assert notes == ["acc. 1.000, n = 6", "acc. 0.000, n = 3", "acc. n/a, n = 3"]  # the number rule
    assert "95% CI" in ax.get_xlabel()


def test_variant_labels_break_between_steps_only():
    """Tool and command sequences are broken after a "→" (at most 32 characters a line, 40 in
    all), never inside a name: "read_file→edit_file→run_tests→submit" is 36 characters."""
    readings = ["read_file→edit_file→run_tests→submit",
                "find→grep→sed→python→pytest→sed→python→pytest→git→submit", "ls→cat→submit"]
    table = pd.DataFrame({"reading": readings, "n_tasks": [3, 2, 1],
                          "share": [0.5, 0.33, 0.17], "share_ci_low": [0.2, 0.1, 0.03],
                          "share_ci_high": [0.8, 0.7, 0.56], "accuracy": [1.0, 0.5, 0.0]})
    labels = [t.get_text() for t in figures.trajectory_variants(table).get_yticklabels()]
    assert labels == ["read_file→edit_file→run_tests→\nsubmit",
                      "find→grep→sed→python→…→pytest→\ngit→submit", "ls→cat→submit"]
    names = {n for r in readings for n in r.split("→")} | {"…"}
    for label in labels:  # every piece between arrows and breaks is a whole name
        assert {p for line in label.split("\n") for p in line.split("→") if p} <= names
        assert max(map(len, label.split("\n"))) <= 32 and len(label) <= 41


CURVE = pd.DataFrame({"difficulty": ["all"] * 3 + ["Hard"] * 3, "steps": [1, 2, 3] * 2,
                      "share": [0.0, 0.5, 0.75, 0.0, 0.0, 0.5],
                      "ci_low": [0.0, 0.2, 0.4, 0.0, 0.0, 0.1],
                      "ci_high": [0.3, 0.8, 0.9, 0.5, 0.5, 0.9]})


def test_solve_curve_one_step_line_per_difficulty():
    ax = figures.solve_curve(CURVE)
    assert [line.get_label() for line in ax.lines] == ["all", "Hard"]
    assert ax.lines[1].get_ydata().tolist() == [0.0, 0.0, 0.5]
    assert ax.lines[0].get_drawstyle() == "steps-post"
    assert ax.get_ylim() == (0.0, 1.0) and ax.get_xlabel() == "Steps"
    assert len(ax.collections) == 1  # the pooled band only
    seconds = figures.solve_curve(CURVE.rename(columns={"steps": "seconds"}))
    assert seconds.get_xlabel() == "Seconds"


def test_step_latency_median_bars_and_p90_markers():
    t = pd.DataFrame({"difficulty": ["all", "all", "Easy"], "stage": [E, P, E],
                      "n": [9, 4, 3], "p50_s": [1.0, 2.0, 1.5], "p50_s_ci_low": [0.5, np.nan,
                                                                                   1.0],
                      "p50_s_ci_high": [1.5, np.nan, 2.0], "p90_s": [2.5, 4.0, 3.0]})
    ax = figures.step_latency(t)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert [b.get_width() for b in bars] == [1.0, 2.0]
    assert [x.get_text() for x in ax.get_yticklabels()] == [f"{E} (9)", f"{P} (4)"]
    assert ax.lines[-1].get_xdata().tolist() == [2.5, 4.0]
    assert ax.get_title(loc="left") == "Step latency by stage"


def test_empty_tables_say_so():
    empty = EDGES.iloc[:0]
    assert figures.transition_graph(empty).texts[0].get_text().startswith("no transitions")
    plt.close("all")
