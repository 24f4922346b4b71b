"""Absent is not zero (issue 33, item 3): a run whose cost or token column is absent, all missing
or all 0 did not record it. The frontier, the leaderboard, the key numbers and Table 2 leave its
cost out with a note naming it, never a run "on the frontier" at cost 0.000 [0.000, 0.000].

The sweep here has the shape of the public Terminal-Bench runs that prompted it: 40 runs, 35 of
which write total_tokens 0 for every task.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from dabench_analysis import figures, tables
from dabench_analysis.report._context import Context
from dabench_analysis.report._sections import Sections
from dabench_analysis.schema.needs import Skipped
from dabench_analysis.stats.recorded import cost_recorded

AGENTS = ["terminus-2", "claude-code", "codex-cli", "goose", "openhands", "mini-swe-agent",
          "aider", "warp"]


def _sweep(n_runs: int = 40, n_costed: int = 5, n_tasks: int = 30, seed: int = 3):
    """``n_runs`` runs of ``n_tasks`` tasks; the first ``n_costed`` count tokens (about a
    million per task), the others write 0 for every task."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_runs):
        rid = f"terminal-bench-core-0.1.1__{AGENTS[r % 8]}__model-{r:02d}"
        p, tokens = rng.uniform(0.2, 0.7), rng.uniform(2e5, 3e6)
        for i in range(n_tasks):
            rows.append({"run_id": rid, "task_id": f"t{i:02d}",
                         "final_score": float(rng.random() < p),
                         "total_tokens": int(rng.poisson(tokens)) if r < n_costed else 0,
                         "execution_time": float(rng.uniform(10, 100))})
    return pd.DataFrame(rows)


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args, **kwargs)
    return out, [str(w.message) for w in caught]


def test_the_rule_absent_all_missing_all_zero():
    t = pd.DataFrame({"run_id": list("aabbccdd"),
                      "total_tokens": [0, 5, 0, 0, None, None, 0, None]})
    # a: one measured value; b: all 0; c: all missing; d: 0 and missing
    assert cost_recorded(t, "total_tokens").to_dict() == {"a": True, "b": False, "c": False,
                                                          "d": False}
    assert not cost_recorded(t, "cost").any()  # absent
    assert cost_recorded(t.iloc[:2], "total_tokens", by=None).tolist() == [True]


def test_frontier_leaves_the_uncosted_runs_off_the_plane():
    t = _sweep()
    out, notes = _quiet(tables.sweep.frontier, t, n_boot=200)
    costed = list(pd.unique(t["run_id"]))[:5]
    # expected from the frame itself: the 5 costed runs on their 30 shared tasks
    ok = t.pivot(index="task_id", columns="run_id", values="final_score")[costed].to_numpy()
    tok = t.pivot(index="task_id", columns="run_id", values="total_tokens")[costed]
    acc, cost = ok.mean(axis=0), tok.to_numpy(float).mean(axis=0)
    on = [not any(acc[j] >= acc[i] and cost[j] <= cost[i] and (acc[j] > acc[i] or
                                                                cost[j] < cost[i])
                  for j in range(5) if j != i) for i in range(5)]
    got = out.set_index("run_id")
    assert got.loc[costed, "accuracy"].tolist() == pytest.approx(acc.tolist())
    assert got.loc[costed, "mean_cost"].tolist() == pytest.approx(cost.tolist())
    assert got.loc[costed, "on_frontier"].tolist() == on
    assert (got.loc[costed, "mean_cost_ci_high"] > got.loc[costed, "mean_cost_ci_low"]).all()
    # the 35 others: last, one row each, no number, not on the frontier, named in the note
    rest = out.iloc[5:]
    assert len(out) == 40 and set(rest["run_id"]) == set(t["run_id"]) - set(costed)
    assert rest[["accuracy", "mean_cost", "mean_cost_ci_low", "mean_cost_ci_high",
                 "p_frontier"]].isna().all().all()
    assert not rest["on_frontier"].any() and (rest["n_tasks"] == 0).all()
    assert out["accuracy"].dtype == "float64" and out["on_frontier"].dtype == bool
    note = out["note"].iloc[0]
    assert note.startswith("total_tokens not recorded (absent, all missing or all 0) for 35 "
                           "runs: terminal-bench-core-0.1.1__mini-swe-agent__model-05, ")
    assert "and 27 more: left out of the frontier" in note and notes == [note]


def test_frontier_with_one_costed_run_is_a_skip_with_the_reason(tmp_path: Path):
    t = _sweep(n_runs=6, n_costed=1).drop(columns="execution_time")  # no other cost
    with pytest.raises(Skipped, match=r"only terminal-bench-core-0.1.1__terminus-2__"
                                          r"model-00 has one \(total_tokens not recorded"):
        tables.sweep.frontier(t, n_boot=50)
    # in a report: the section is skipped as for an absent column, nothing written
    sections = Sections("sweep", quiet=True)
    out = Context("sweep", inputs={"tasks": t}, parameters={"threshold": 0.8,
                                                            "n_boot": 50, "seed": 0},
                  out=tmp_path, sections=sections, read=[], subject="six runs")
    with out.section("frontier", "Cost-accuracy frontier"):  # as the sweep notebook's cell
        out.table(tables.sweep.frontier(t, threshold=0.8, n_boot=50, cost=(
            "cost", "total_tokens", "execution_time")), "frontier")
    assert sections.summary()["skipped"] == [{
        "section": "frontier", "title": "Cost-accuracy frontier",
        "missing": ["total_tokens recorded in two runs"]}]
    assert "frontier" not in out.results and not list(tmp_path.rglob("*"))


def test_frontier_section_takes_the_first_recorded_cost_column_not_the_first_present(
        tmp_path: Path):
    """A ``cost`` column of zeros (dollars not counted) is present but not recorded: the
    section's frontier is on total_tokens, recorded by 5 runs, and its note says why."""
    t = _sweep(n_runs=8, n_costed=5).assign(cost=0.0)
    from types import SimpleNamespace

    from notebook_runs import figures_not_rendered, sections_of

    import dabench_analysis as da

    sections = Sections("sweep", quiet=True)
    ctx = Context("sweep", inputs={"tasks": t}, parameters={"threshold": 0.8,
                                                            "n_boot": 50, "seed": 0},
                  out=tmp_path, sections=sections, read=[], subject="eight runs")
    cell = next(s["source"] for s in sections_of(Path(__file__).parents[1] / "notebooks" /
                                                 "sweep.ipynb") if s["name"] == "frontier")
    with warnings.catch_warnings(), figures_not_rendered():
        warnings.simplefilter("ignore")
        exec(cell, {"da": da, "out": ctx, "runs": SimpleNamespace(tasks=t),  # noqa: S102
                    "threshold": 0.8, "n_boot": 50, "seed": 0})
        direct = tables.sweep.frontier(t, cost="total_tokens", n_boot=50)
    got = ctx.results["frontier"]
    assert set(got["cost"]) == {"total_tokens"} and sections.summary()["skipped"] == []
    # the same numbers as asked for total_tokens by name; the five runs that count tokens
    costed = sorted(t.loc[t["total_tokens"] > 0, "run_id"].unique())
    assert sorted(got.loc[got["n_tasks"] > 0, "run_id"]) == costed
    pd.testing.assert_frame_equal(got.drop(columns="note"), direct.drop(columns="note"))
    assert got["note"].iloc[0].startswith(
        "cost column total_tokens: the first of cost, total_tokens, execution_time recorded "
        "for 5 runs (cost: not recorded)")
    # the function a notebook calls: the same choice
    assert tables.frontier.cost_column(t)[0] == "total_tokens"
    assert tables.frontier.cost_column(t.drop(columns="total_tokens"))[0] == "execution_time"


def test_frontier_figure_of_forty_runs_draws_the_costed_ones_without_overlap():
    table, _ = _quiet(tables.sweep.frontier, _sweep(), n_boot=100)
    ax = figures.frontier(table)
    try:
        fig = ax.figure
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        points = [c for c in ax.collections if isinstance(c, PathCollection)]
        assert sum(len(c.get_offsets()) for c in points) == 5  # the 5 costed runs
        lo, hi = ax.get_xlim()
        ticks = [t for t in ax.get_xticklabels() if t.get_text() and lo <= t.get_position()[0]
                 <= hi]  # matplotlib keeps labels of ticks outside the view, not drawn
        assert 3 <= len(ticks) <= 6
        boxes = [t.get_window_extent(renderer) for t in ticks]
        assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))
        inside = fig.bbox.padded(1)
        for text in [*ticks, ax.xaxis.label, *ax.texts]:
            box = text.get_window_extent(renderer)
            assert inside.x0 <= box.x0 and box.x1 <= inside.x1, text.get_text()
        assert ax.get_xlabel().endswith("not drawn: 35 runs, total_tokens not recorded "
                                         "(table's note)")
    finally:
        plt.close(ax.figure)


def test_leaderboard_key_numbers_and_table2_never_show_an_unrecorded_cost_as_zero():
    t = _sweep(n_runs=3, n_costed=2)
    board, notes = _quiet(tables.sweep.leaderboard, t, n_boot=50)
    b = board.set_index("run_id")
    free = "terminal-bench-core-0.1.1__codex-cli__model-02"
    assert b.loc[free, ["mean_tokens", "mean_tokens_ci_low", "mean_tokens_ci_high"]].isna().all()
    assert b.loc[free, "cost_method"] == "tokens: not recorded; runtime: t"
    mine = t[t["run_id"] == free]
    assert b.loc[free, "mean_runtime_s"] == pytest.approx(mine["execution_time"].mean())
    assert any(f"total_tokens not recorded (absent, all missing or all 0) for 1 run: {free}"
               in n for n in notes)
    numbers = tables.key_numbers(mine)
    assert numbers["mean_tokens"] is None and numbers["mean_tokens_ci_low"] is None
    assert numbers["not_recorded"] == ["total_tokens"]
    assert numbers["mean_runtime_s"] == pytest.approx(mine["execution_time"].mean())
    t2 = mine.assign(difficulty="Easy", execution_success=True)
    table2, _ = _quiet(tables.difficulty_breakdown, t2)
    assert table2[["mean_tokens", "mean_tokens_ci_low", "mean_tokens_ci_high"]].isna().all(
        axis=None)
    assert table2["method"].iloc[0].endswith("runtime: t; tokens: not recorded")
