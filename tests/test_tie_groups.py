"""Tie groups of the sweep leaderboard (issue 36, item 4): runs not distinguishable from the
top run, then from the best run left, under McNemar's exact test with Holm over all pairs;
the expected groups computed here with statsmodels directly."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

import dabench_analysis as da

RUNS = ["top", "near", "mid_a", "mid_b", "low"]
SOLVE = [0.85, 0.80, 0.55, 0.50, 0.15]  # success probability per run (a shared task effect)


def _sweep(n_tasks: int = 80, seed: int = 36) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    u = rng.random(n_tasks)  # task difficulty, shared: the outcomes are paired
    noise = rng.random((n_tasks, len(RUNS))) * 0.3
    ok = ((u[:, None] * 0.7 + noise) < np.array(SOLVE)).astype(float)
    rows = [{"run_id": r, "task_id": f"t{i:03d}", "final_score": ok[i, j],
             "total_tokens": 1000 + i, "execution_time": 10.0 + j}
            for j, r in enumerate(RUNS) for i in range(n_tasks)]
    return pd.DataFrame(rows), ok


def _expected_groups(ok: np.ndarray, alpha: float = 0.05) -> list[int]:
    k = ok.shape[1]
    pairs = list(itertools.combinations(range(k), 2))
    raw = []
    for a, b in pairs:
        x, y = ok[:, a].astype(bool), ok[:, b].astype(bool)
        table = [[np.sum(x & y), np.sum(x & ~y)], [np.sum(~x & y), np.sum(~x & ~y)]]
        raw.append(mcnemar(table, exact=True).pvalue)
    adj = multipletests(raw, method="holm")[1]
    p = np.ones((k, k))
    for (a, b), v in zip(pairs, adj, strict=True):
        p[a, b] = p[b, a] = v
    order = list(np.argsort(-ok.mean(axis=0), kind="stable"))
    group, g = {}, 0
    while len(group) < k:
        g += 1
        lead = next(i for i in order if i not in group)
        for i in order:
            if i not in group and (i == lead or p[lead, i] >= alpha):
                group[i] = g
    return [group[i] for i in order]


def test_tie_groups_match_mcnemar_holm_computed_directly():
    t, ok = _sweep()
    expected = _expected_groups(ok)
    assert expected == [1, 1, 2, 2, 3]  # the construction: two near the top, two mid, one low
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = da.tables.sweep.leaderboard(t, n_boot=200)
        groups = da.tables.sweep.tie_groups(t)
    assert board["run_id"].tolist() == RUNS
    assert board["tie_group"].tolist() == expected
    assert list(board.columns[board.columns.get_loc("rank_high"):][:3]) == [
        "rank_high", "tied", "tie_group"]
    assert groups["tie_group"].tolist() == expected
    assert groups["group_leader"].tolist() == ["top", "top", "mid_a", "mid_a", "low"]
    # the same p as the pairwise table's p_mcnemar_holm
    pw = da.tables.sweep.pairwise(t).set_index(["run_a", "run_b"])["p_mcnemar_holm"]
    assert groups.set_index("run_id").loc["near", "p_vs_leader_holm"] == pytest.approx(
        pw.loc[("top", "near")])
    assert groups.set_index("run_id").loc["mid_b", "p_vs_leader_holm"] == pytest.approx(
        pw.loc[("mid_a", "mid_b")])


def test_tie_groups_refuse_a_bad_alpha_or_order():
    t, _ = _sweep(20)
    with pytest.raises(ValueError, match="alpha must be in"):
        da.tables.sweep.tie_groups(t, alpha=1.5)
    with pytest.raises(ValueError, match="order must name the runs"):
        da.tables.sweep.tie_groups(t, order=["top", "x"])


def test_tie_groups_of_the_sample_runs():
    """The guide's worked example: the two shipped runs, 80 shared tasks (csv directly)."""
    import csv
    from pathlib import Path

    sample = Path(__file__).resolve().parents[1] / "data" / "sample_runs"

    def success(run):
        with (sample / run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
            return {r["task_id"]: float(r["final_score"]) >= 0.8 for r in csv.DictReader(fh)}

    a, b = success("proposed_aat"), success("baseline_react")
    only_a = sum(a[t] and not b[t] for t in a)
    only_b = sum(b[t] and not a[t] for t in a)
    both = sum(a[t] and b[t] for t in a)
    p = mcnemar([[both, only_a], [only_b, 80 - both - only_a - only_b]], exact=True).pvalue
    assert (only_a, only_b, round(p, 4)) == (14, 3, 0.0127)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = da.load_runs([sample / "baseline_react", sample / "proposed_aat"], progress=False)
        board = da.tables.sweep.leaderboard(runs)
        pw = da.tables.sweep.pairwise(runs)
    assert board[["run_id", "tie_group"]].values.tolist() == [["proposed_aat", 1],
                                                               ["baseline_react", 2]]
    assert pw["p_mcnemar_holm"].iloc[0] == pytest.approx(p)
