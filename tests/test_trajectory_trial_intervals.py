"""Variants on repeated trials (tau2-bench results built by hand: 6 tasks x 3 trials): the
share and accuracy intervals are a percentile bootstrap over tasks, every trial of a drawn task
with it (Field & Welsh 2007, JRSS B 69(3), 369-390), recomputed here with numpy from the
per-task counts of the file's own spec; when the trials of each task agree perfectly the
interval is wider than Wilson's over the traces as if independent.
"""

from __future__ import annotations

import json
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

import dabench_analysis as da
from dabench_analysis import trajectory as tr

# each task's trials: (tools called in order, reward); A = lookup, B = lookup then book
A, B = ("lookup",), ("lookup", "book")
MIXED = {"t0": [(A, 1), (A, 1), (B, 0)], "t1": [(A, 0), (A, 0), (A, 0)],
         "t2": [(B, 1), (B, 1), (A, 1)], "t3": [(A, 1), (B, 0), (B, 0)],
         "t4": [(B, 1), (B, 1), (B, 1)], "t5": [(A, 0), (B, 1), (A, 1)]}
AGREE = {t: [trace] * 3 for t, trace in zip(
    ["t0", "t1", "t2", "t3", "t4", "t5"], [(A, 1), (A, 0), (B, 1), (B, 0), (A, 1), (B, 1)],
    strict=True)}


def _gap(task: int, trial: int, message: int) -> int:
    """Seconds each message took (its timestamp minus the previous one's)."""
    return 1 + (7 * task + 3 * trial + 2 * message) % 9


def _write(path: Path, spec: dict) -> Path:
    sims = []
    for t, (task, trials) in enumerate(spec.items()):
        for trial, (tools, reward) in enumerate(trials):
            messages, clock = [], datetime(2025, 10, 13, 0, 0, 0)
            start = clock.isoformat()
            for i, tool in enumerate(tools):
                cid = f"c{i}"
                messages += [{"role": "assistant", "content": None, "turn_idx": 2 * i,
                              "tool_calls": [{"id": cid, "name": tool, "arguments": {"q": i},
                                              "requestor": "assistant"}]},
                             {"role": "tool", "id": cid, "content": "ok", "error": False,
                              "requestor": "assistant", "turn_idx": 2 * i + 1}]
            for m, message in enumerate(messages):
                clock += timedelta(seconds=_gap(t, trial, m))
                message["timestamp"] = clock.isoformat()
            sims.append({"id": f"{task}-{trial}", "task_id": task, "trial": trial,
                         "start_time": start, "reward_info": {"reward": float(reward)},
                         "duration": (clock - datetime.fromisoformat(start)).total_seconds(),
                         "messages": messages})
    path.write_text(json.dumps({"timestamp": "x", "info": {"num_trials": 3}, "tasks": [],
                                "simulations": sims}))
    return path


def _variants(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(path)
        assert run.tasks["task_id"].astype(str).tolist() == [t for t in MIXED for _ in "abc"]
        v = tr.variants(run, by="tool")
    v = v[v["difficulty"] == "all"]
    return v.set_index(v["pattern"].str.contains("book").map({True: "B", False: "A"}))


def _boot(k: np.ndarray, n: np.ndarray, seed: int = 0, n_boot: int = 2000) -> tuple:
    """Percentile bootstrap over tasks of sum(k)/sum(n): replicate b draws tasks
    default_rng(seed).integers(0, 6, size=(n_boot, 6))[b]; draws without a denominator left
    out; numpy's linear quantiles."""
    draw = np.random.default_rng(seed).integers(0, len(k), size=(n_boot, len(k)))
    den = n[draw].sum(axis=1)
    ratio = k[draw].sum(axis=1)[den > 0] / den[den > 0]
    return tuple(np.quantile(ratio, [0.025, 0.975]))


def _counts(spec: dict, variant: tuple) -> dict[str, np.ndarray]:
    """Per task (file order): traces taking the variant, of them correct, and all traces."""
    return {"k_share": np.array([sum(t == variant for t, _ in tr_) for tr_ in spec.values()],
                                dtype=float),
            "n_share": np.array([len(tr_) for tr_ in spec.values()], dtype=float),
            "k_acc": np.array([sum(t == variant and r >= 0.8 for t, r in tr_)
                               for tr_ in spec.values()], dtype=float)}


def test_variant_intervals_resample_tasks(tmp_path):
    v = _variants(_write(tmp_path / "tau2.json", MIXED))
    for name, variant in (("A", A), ("B", B)):
        c = _counts(MIXED, variant)
        row = v.loc[name]
        assert row["n_tasks"] == c["k_share"].sum()  # traces taking the variant
        assert row["share"] == pytest.approx(c["k_share"].sum() / 18)
        lo, hi = _boot(c["k_share"], c["n_share"])
        assert (row["share_ci_low"], row["share_ci_high"]) == (pytest.approx(lo, abs=1e-12),
                                                               pytest.approx(hi, abs=1e-12))
        lo, hi = _boot(c["k_acc"], c["k_share"])
        assert row["accuracy"] == pytest.approx(c["k_acc"].sum() / c["k_share"].sum())
        assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == (
            pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert v["note"].iloc[0] == ("each trial its own trace; intervals clustered by task "
                                 "(6 tasks, 18 traces)")  # p-values: clustered Wald already
    assert "percentile bootstrap over tasks (2000 draws, seed 0)" in v["method"].iloc[0]
    assert "Wilson" not in v["method"].iloc[0]


def test_agreeing_trials_widen_the_intervals(tmp_path):
    v = _variants(_write(tmp_path / "tau2.json", AGREE))
    for name, variant in (("A", A), ("B", B)):
        row, c = v.loc[name], _counts(AGREE, variant)
        k, n = c["k_share"].sum(), 18
        # the traces as if independent: Wilson on k of 18 (statsmodels)
        w_lo, w_hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert row["share_ci_high"] - row["share_ci_low"] > w_hi - w_lo
        lo, hi = _boot(c["k_share"], c["n_share"])
        assert (row["share_ci_low"], row["share_ci_high"]) == (pytest.approx(lo, abs=1e-12),
                                                               pytest.approx(hi, abs=1e-12))
        ka, na = c["k_acc"].sum(), c["k_share"].sum()
        a_lo, a_hi = proportion_confint(ka, na, alpha=0.05, method="wilson")
        assert row["accuracy_ci_high"] - row["accuracy_ci_low"] > a_hi - a_lo


def test_step_latency_quantile_intervals_resample_tasks(tmp_path):
    """The assistant's step times (each message's gap from the previous timestamp): p50, p90,
    p99 by numpy's linear rule; their intervals the 2.5 % and 97.5 % points over 2000 draws of
    the 6 tasks (seed 0), each drawn task bringing every step of its 3 trials."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lat = tr.step_latency(da.load_run(_write(tmp_path / "tau2.json", MIXED)), by="agent")
    row = lat[(lat["difficulty"] == "all") & (lat["agent"] == "assistant")].iloc[0]
    per_task = [np.array([_gap(t, trial, m) for trial, (tools, _) in enumerate(trials)
                          for m in range(0, 2 * len(tools), 2)], dtype=float)
                for t, trials in enumerate(MIXED.values())]
    every = np.concatenate(per_task)
    # one assistant message per tool call
    assert row["n"] == every.size == sum(len(tools) for trials in MIXED.values()
                                         for tools, _ in trials)
    draw = np.random.default_rng(0).integers(0, 6, size=(2000, 6))
    reps = np.array([np.quantile(np.concatenate([per_task[i] for i in d]), [0.5, 0.9, 0.99])
                     for d in draw])
    bounds = np.quantile(reps, [0.025, 0.975], axis=0)
    for j, name in enumerate(("p50", "p90", "p99")):
        assert row[f"{name}_s"] == pytest.approx(np.quantile(every, [0.5, 0.9, 0.99][j]))
        assert (row[f"{name}_s_ci_low"], row[f"{name}_s_ci_high"]) == (
            pytest.approx(bounds[0, j], abs=1e-9), pytest.approx(bounds[1, j], abs=1e-9))
    assert row["note"].endswith("quantile intervals: percentile bootstrap over tasks "
                                "(2000 draws, seed 0)")


def test_first_failure_agreement_resamples_tasks():
    """first_failures' table of 4 tasks x 3 failed trials: agreement with the evidence per
    trace, its interval the bootstrap over tasks (tasks in order of appearance, seed 0)."""
    import pandas as pd

    agree = {"a": [True, True, False], "b": [False, False, None], "c": [True, True, True],
             "d": [False, True, False]}
    table = pd.DataFrame([{"task_id": t, "trial": i, "difficulty": "Hard", "stage": "E",
                           "agent": "x", "in_evidence": v}
                          for t, vs in agree.items() for i, v in enumerate(vs)])
    table["in_evidence"] = table["in_evidence"].astype("boolean")
    r = tr.first_failure_agreement(table).query("difficulty == 'all'").iloc[0]
    k = np.array([sum(v is True for v in vs) for vs in agree.values()], dtype=float)
    n = np.array([sum(v is not None for v in vs) for vs in agree.values()], dtype=float)
    assert (r["n_agree"], r["n_compared"]) == (k.sum(), n.sum()) == (6, 11)
    lo, hi = _boot(k, n)
    assert (r["agreement_ci_low"], r["agreement_ci_high"]) == (pytest.approx(lo, abs=1e-12),
                                                               pytest.approx(hi, abs=1e-12))
    assert r["note"] == "each trial its own trace; intervals clustered by task (4 tasks, 12 traces)"


def test_solve_curve_by_seconds_resamples_tasks(tmp_path):
    """Each trace ends at its ``duration`` (the sum of its messages' times); at each time x, the share of the 18
    traces solved by x, its interval the bootstrap over the 6 tasks (k, n per task)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = tr.solve_curve(da.load_run(_write(tmp_path / "tau2.json", MIXED)),
                               axis="seconds")
    ends = [[(sum(_gap(t, trial, m) for m in range(2 * len(tools))), r >= 0.8)
             for trial, (tools, r) in enumerate(trials)]
            for t, trials in enumerate(MIXED.values())]
    grid = sorted({e for task in ends for e, ok in task if ok}
                  | {max(e for task in ends for e, _ in task)})
    assert curve["seconds"].tolist() == grid
    n = np.full(6, 3.0)
    for x, row in zip(grid, curve.itertuples(), strict=True):
        k = np.array([sum(ok and e <= x for e, ok in task) for task in ends], dtype=float)
        assert row.share == pytest.approx(k.sum() / 18)
        if 0 < k.sum() < 18:  # (a share of 0 or 1 takes Wilson's bound over the tasks)
            lo, hi = _boot(k, n)
            assert (row.ci_low, row.ci_high) == (pytest.approx(lo, abs=1e-12),
                                                 pytest.approx(hi, abs=1e-12))
    assert curve["method"].iloc[0].endswith(
        "pointwise percentile bootstrap over tasks (2000 draws, seed 0)")


def test_solve_curve_notes_count_the_traces_each_axis_counts():
    """The real tau2 file (README of tests/data/harness): 41 simulations of 40 tasks with a
    duration, the messages of four only (tasks 0 twice and two others). The seconds curve
    counts every simulation with a duration, the steps curve those with steps: each note
    counts its own traces (the seconds note used to count the four traces with steps)."""
    path = Path(__file__).parent / "data" / "harness" / "tau2-bench" / "airline_grok-3.json"
    sims = json.loads(path.read_text())["simulations"]
    timed = [s for s in sims if s["duration"] is not None]
    stepped = [s for s in sims if s["messages"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(path)
        by_time, by_steps = tr.solve_curve(run, axis="seconds"), tr.solve_curve(run)
    for curve, traces in ((by_time, timed), (by_steps, stepped)):
        tasks = len({s["task_id"] for s in traces})
        assert curve["n"].iloc[0] == len(traces)
        assert curve["note"].iloc[0].endswith(f"({tasks} tasks, {len(traces)} traces)")
    assert (len(timed), len(stepped)) == (41, 4)
