"""Rich displays and one calling convention (issue 27, items 1 and 3): a short text ``repr`` and
an HTML display for a Run, a Runs, a task's detail and a replay (registered with IPython's
formatters); ``da.show``'s long text on one line with the whole text a click away; every figure
drawing from a run's rows takes the Run as well as the frame; ``dir(da)`` is the public API."""

from __future__ import annotations

import csv
import html
import json
import math
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis import figures, load_run, load_runs
from dabench_analysis.report import _display as display
from dabench_analysis.report import table_html
from dabench_analysis.tables.explore import task_detail

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "sample_runs"
Z975 = 1.959963984540054  # R: qnorm(0.975)


def _scores(run: str) -> list[float]:
    with (RUNS / run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        return [float(r["final_score"]) for r in csv.DictReader(fh)]


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927; R: prop.test(k, n, correct = FALSE)$conf.int)."""
    p, z2 = k / n, Z975 ** 2
    mid, half = (p + z2 / (2 * n)) / (1 + z2 / n), Z975 * math.sqrt(p * (1 - p) / n + z2 / (
        4 * n * n)) / (1 + z2 / n)
    return mid - half, mid + half


def test_dir_lists_the_public_api_only():
    assert dir(da) == sorted(da.__all__)
    assert all(hasattr(da, name) for name in da.__all__)
    assert {"show", "explore", "load_run", "Run"} <= set(dir(da))
    assert da.show is da.report.show and da.explore is da.report.explore


def test_run_repr_and_html():
    run = load_run(RUNS / "proposed_aat")
    scores = _scores("proposed_aat")
    k, n = sum(s >= 0.8 for s in scores), len(scores)  # 72 of 80
    assert repr(run).startswith(f"<Run 'proposed_aat': {n} tasks, answer accuracy "
                                f"{k / n:.3f} (final_score >= 0.8)")  # 0.900: the number rule
    assert repr(run).endswith(f"; {len(run.findings)} finding>")  # one info finding
    page = display.run_html(run)
    lo, hi = _wilson(k, n)  # 0.8149, 0.9485
    assert f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]" in page  # a proportion, 3 decimals
    assert "final_score ≥ 0.8" in page and "<div>80</div>" in page
    assert "Files absent</div><div>none</div>" in page
    assert "1 (0 error, 0 warning, 1 info)" in page


def test_files_absent_are_named(tmp_path):
    run_dir = tmp_path / "r"
    shutil.copytree(RUNS / "baseline_react", run_dir)
    (run_dir / "tool_calls.csv").unlink()
    shutil.rmtree(run_dir / "task_5")
    run = load_run(run_dir)
    assert run.files_absent == ["tool_calls.csv", "task_replay.json for 1 of 80 tasks"]
    assert "Files absent</div><div>tool_calls.csv, task_replay.json for 1 of 80 tasks</div>" in \
        display.run_html(run)


def test_runs_display_has_a_row_per_run():
    runs = load_runs(RUNS)
    page = display.runs_html(runs)
    k = sum(s >= 0.8 for s in _scores("proposed_aat"))
    lo, hi = _wilson(k, 80)
    assert f"{k / 80:.3f} [{lo:.3f}, {hi:.3f}]" in page  # 0.900 [0.815, 0.948]
    table, skipped = page.split("Not in the sweep (1)")  # pending_run: not evaluated
    assert table.count("<tr><td") == 2 and "pending_run" in skipped
    assert repr(runs).startswith("<Runs: 2 runs (baseline_react, proposed_aat), 160 tasks")


def test_replay_repr_and_html():
    raw = json.loads((RUNS / "baseline_react/task_24/task_replay.json").read_text())
    replay = load_run(RUNS / "baseline_react").replay("task_24")
    assert replay == raw and isinstance(replay, dict)
    assert repr(replay) == (f"<Replay task_24: {raw['outcome_status']}, final_score "
                            f"{raw['evaluation_result']['final_score']:.3f}, "  # the number rule
                            f"{len(raw['tool_calls'])} tool calls, failure "
                            f"{raw['failure_attribution']['failure_category']}>")
    page = display.replay_html(replay)
    cause = html.escape(raw["failure_attribution"]["root_cause"])  # as written in the file
    assert "Failure attribution" in page and cause in page
    assert page.count("<details>") == 1  # the whole JSON, a click away
    assert "The whole task_replay.json" in page


def test_task_detail_repr_and_html_highlight_the_first_failing_step():
    run = load_run(RUNS / "baseline_react", include_text=True)
    with (RUNS / "baseline_react/trajectory.csv").open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["task_id"] == "task_47"]
    failed = sorted(int(r["step_id"]) for r in rows if r["success"] == "0")
    replay = json.loads((RUNS / "baseline_react/task_47/task_replay.json").read_text())
    evidence = set(replay["failure_attribution"]["evidence_trace_step_ids"])
    detail = task_detail(run, "task_47")
    assert detail.first_failing_step == failed[0] and set(detail.evidence_steps) == evidence
    # final_score by the number rule: 0.000
    assert repr(detail) == (f"<TaskDetail baseline_react task_47: failed, final_score 0.000, "
                            f"{len(rows)} steps (first failing: {failed[0]}), "
                            f"{len(detail.tool_calls)} tool calls, failure "
                            f"{replay['failure_attribution']['failure_category']}>")
    page = display.task_html(detail)
    marked = re.findall(r'<tr class="(dabench-[a-z-]+)"[^>]*><td[^>]*>(\d+)</td>', page)
    kinds = {c: {int(s) for k, s in marked if k == c} for c, _ in marked}
    assert [int(s) for c, s in marked if c == "dabench-first-failure"] == [failed[0]]
    assert kinds["dabench-evidence"] == evidence - {failed[0]}
    assert kinds.get("dabench-failed", set()) == set(failed) - evidence - {failed[0]}
    thought = max((r["thought"] for r in rows), key=len)
    assert f'title="{html.escape(thought)}"' in page  # the whole text: a tooltip, a <details>
    assert 'min-width:200px' in page


def test_show_keeps_long_text_on_one_line_with_the_whole_text_a_click_away():
    text = "word " * 60
    page = table_html(pd.DataFrame({"step": [1, 2], "observation": [text.strip(), "short"]}))
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    assert cells[1].startswith('<details class="dabench-long"><summary title="' + text.strip())
    assert "white-space:nowrap;overflow:hidden;text-overflow:ellipsis" in cells[1]
    assert cells[3] == "short"
    assert re.search(r'<th style="text-align:left;min-width:200px[^"]*">Observation</th>', page)


def test_displays_are_registered_with_ipython():
    from IPython.core.formatters import HTMLFormatter

    html = HTMLFormatter()
    shell = SimpleNamespace(display_formatter=SimpleNamespace(formatters={"text/html": html}))
    assert display.register(shell)
    run = load_run(RUNS / "baseline_react")
    assert html(run) == display.run_html(run)
    assert html(run.replay("task_3")) == display.replay_html(run.replay("task_3"))
    assert html(task_detail(run, "task_3")).startswith("<style>")
    assert html(pd.DataFrame({"a": [1]})) is not None  # frames keep pandas' own display
    assert display.register() is False  # plain Python: nothing to register with


# --- figures take a Run as the tables do ------------------------------------------------------
#: Figures that draw from a run's rows: name -> call (the data first).
FROM_RUN = {
    "difficulty_bars": lambda x: figures.difficulty_bars(x),
    "failure_by_stage": lambda x: figures.failure_by_stage(x),
    "failure_distribution": lambda x: figures.failure_distribution(x),
    "score_distribution": lambda x: figures.score_distribution(x),
    "reliability_diagram": lambda x: figures.reliability_diagram(x),
    "correlation_matrix": lambda x: figures.correlation_matrix(x),
    "autonomy_vs_efficiency": lambda x: figures.autonomy_vs_efficiency(x),
    "tool_latency": lambda x: figures.tool_latency(x),
}
#: Everything else in figures.__all__, with the reason it takes no Run.
NOT_FROM_RUN = {
    "paired_difference": "two runs: checked below",
    **dict.fromkeys(["leaderboard_forest", "pairwise_heatmap", "item_difficulty"],
                    "draws a finished table"),
    "score_bins": "bin edges, not a figure",
    "sweep": "a module (its figures above)",
    **dict.fromkeys(["pass_k_curve", "frontier", "reliability_profile", "risk_coverage_curve"],
                    "draws a finished table"),
    "trials": "a module (its figures above)",
    **dict.fromkeys(["OKABE_ITO", "apply_style", "new_figure"], "the theme"),
}


def _drawn(axes) -> list:
    """What an Axes (or a pair) draws: bar geometry, line and point data, texts, tick labels."""
    out = []
    for ax in np.atleast_1d(axes):
        out += [("patch", np.round(p.get_extents().bounds, 6).tolist()) for p in ax.patches]
        out += [("line", np.round(ln.get_xydata(), 9).tolist()) for ln in ax.lines]
        out += [("points", np.round(c.get_offsets(), 9).tolist()) for c in ax.collections]
        out += [("text", t.get_text()) for t in ax.texts]
        out += [("ticks", [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()])]
    return out


def test_every_figure_from_a_run_is_listed():
    assert set(figures.__all__) == set(FROM_RUN) | set(NOT_FROM_RUN)


@pytest.mark.parametrize("name", sorted(FROM_RUN))
def test_a_figure_draws_the_same_from_a_run_and_its_frame(name):
    run = load_run(RUNS / "baseline_react")
    frame = run.tool_calls if name == "tool_latency" else run.tasks
    try:
        assert _drawn(FROM_RUN[name](run)) == _drawn(FROM_RUN[name](frame))
    finally:
        plt.close("all")


def test_score_distribution_of_a_run_counts_every_task():
    ax = figures.score_distribution(load_run(RUNS / "baseline_react"))
    heights = sum(p.get_height() for p in ax.patches)
    plt.close("all")
    assert heights == len(_scores("baseline_react"))


def test_paired_difference_takes_two_runs():
    base, prop = load_run(RUNS / "baseline_react"), load_run(RUNS / "proposed_aat")
    try:
        assert _drawn(figures.paired_difference(base, prop)) == \
            _drawn(figures.paired_difference(base.tasks, prop.tasks))
    finally:
        plt.close("all")
