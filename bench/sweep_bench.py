"""Benchmark of the sweep statistics, tables and figures (issue 17, item 4).

A synthetic sweep of ``--runs`` runs × ``--tasks`` tasks is made with numpy (columns as eval-v2
names them: run_id, task_id, difficulty, final_score, total_tokens, execution_time, plus
final_answer_correct; runs grouped into configurations of ``--reps`` seeds), then each step of the
sweep report is timed once in this process:

- ``leaderboard`` (Wilson, logit-t and t intervals; rank intervals, B = 2000 bootstrap);
- ``pairwise`` (k(k − 1)/2 pairs: t-interval, Wilcoxon, McNemar, Holm and BH);
- ``flip_counts`` and ``items``;
- ``leaderboard_by_config`` and ``repetition_table``;
- the three figures, each saved as a 300 dpi PNG into a temporary folder.

Wall-clock and CPU time (``time.process_time``) are printed per step: on a shared machine the
CPU time is the better measure of the work itself.

Target: the whole sweep report for 200 runs × 500 tasks in <= 5 minutes on 2 cores, so these
steps should take well under a minute. ``python bench/sweep_bench.py`` prints a table;
``--report`` also writes the sweep to disk as run folders (``task_metrics.csv`` with the columns
above, ``run_config.json``) and times the whole ``dabench-analysis report DIR... --sweep
--no-run-reports`` (loading, the notebook, its tables, figures and HTML) against the 300 s target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dabench_analysis.figures import sweep as figs  # noqa: E402
from dabench_analysis.schema import DIFFICULTY_ORDER  # noqa: E402
from dabench_analysis.tables import sweep  # noqa: E402


def synthetic_sweep(n_runs: int, n_tasks: int, reps: int, seed: int = 0):
    """Task frame (one row per run and task) and configs frame of a synthetic sweep."""
    rng = np.random.default_rng(seed)
    diff = rng.choice(DIFFICULTY_ORDER, size=n_tasks, p=[0.3, 0.3, 0.25, 0.15])
    ease = pd.Series(diff).map({"Easy": 2.0, "Medium": 1.0, "Hard": 0.0, "Extreme": -1.0})
    ease = ease.to_numpy() + rng.normal(0, 1, n_tasks)
    n_cfg = -(-n_runs // reps)
    skill = np.repeat(rng.normal(0, 0.4, n_cfg), reps)[:n_runs]
    logit = ease[None, :] + skill[:, None] + rng.normal(0, 1, (n_runs, n_tasks))
    score = (1 / (1 + np.exp(-logit))).round(4)
    runs = [f"run_{i:03d}" for i in range(n_runs)]
    n = n_runs * n_tasks
    tasks = pd.DataFrame({
        "run_id": np.repeat(runs, n_tasks),
        "task_id": np.tile([f"task_{j}" for j in range(n_tasks)], n_runs),
        "difficulty": pd.Categorical(np.tile(diff, n_runs), DIFFICULTY_ORDER, ordered=True),
        "final_score": score.ravel(),
        "final_answer_correct": pd.array(score.ravel() >= 0.8, dtype="boolean"),
        "total_tokens": pd.array(rng.integers(500, 40_000, n), dtype="Int64"),
        "execution_time": rng.gamma(2.0, 30.0, n)})
    configs = pd.DataFrame({"run_id": runs,
                            "config": [f"cfg_{i // reps:03d}" for i in range(n_runs)],
                            "seed": pd.array([i % reps for i in range(n_runs)], dtype="Int64")})
    return tasks, configs


def write_runs(tasks: pd.DataFrame, configs: pd.DataFrame, root: str) -> list[str]:
    """One run folder per run: ``task_metrics.csv`` and ``run_config.json``."""
    dirs = []
    seeds = configs.set_index("run_id")
    for run_id, frame in tasks.groupby("run_id", sort=True):
        d = os.path.join(root, str(run_id))
        os.makedirs(d)
        frame.to_csv(os.path.join(d, "task_metrics.csv"), index=False)
        with open(os.path.join(d, "run_config.json"), "w") as fh:
            json.dump({"config": seeds.at[run_id, "config"],
                       "seed": int(seeds.at[run_id, "seed"])}, fh)
        dirs.append(d)
    return dirs


def time_report(tasks: pd.DataFrame, configs: pd.DataFrame, n_boot: int) -> float:
    """Wall-clock seconds of ``dabench-analysis report DIR... --sweep --no-run-reports``."""
    root = tempfile.mkdtemp(prefix="sweep-bench-runs-")
    try:
        dirs = write_runs(tasks, configs, os.path.join(root, "runs"))
        cli = os.path.join(os.path.dirname(sys.executable), "dabench-analysis")
        t0 = time.perf_counter()
        done = subprocess.run([cli, "report", *dirs, "--sweep", "--no-run-reports",
                               "--out", os.path.join(root, "out")],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"the sweep report failed:\n{done.stdout}\n{done.stderr}")
        return seconds
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--reps", type=int, default=4, help="runs per configuration (seeds)")
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--report", action="store_true",
                    help="also time the whole sweep report through the command line")
    args = ap.parse_args(argv)
    tasks, configs = synthetic_sweep(args.runs, args.tasks, args.reps)
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    out = tempfile.mkdtemp(prefix="sweep-bench-")

    def timed(name, fn):
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
        times[name], cpu[name] = time.perf_counter() - t0, time.process_time() - c0
        return result

    def save(ax, name):
        ax.figure.savefig(os.path.join(out, f"{name}.png"), dpi=300)
        plt.close(ax.figure)

    board = timed("leaderboard", lambda: sweep.leaderboard(tasks, n_boot=args.n_boot))
    pairs = timed("pairwise", lambda: sweep.pairwise(tasks))
    timed("flip_counts", lambda: sweep.flip_counts(tasks))
    items = timed("items", lambda: sweep.items(tasks))
    timed("leaderboard_by_config",
          lambda: sweep.leaderboard_by_config(tasks, configs, n_boot=args.n_boot))
    timed("repetition_table", lambda: sweep.repetition_table(tasks, configs))
    timed("figure: forest", lambda: save(figs.leaderboard_forest(board), "forest"))
    timed("figure: heatmap", lambda: save(figs.pairwise_heatmap(pairs), "heatmap"))
    timed("figure: items", lambda: save(figs.item_difficulty(items), "items"))
    total = sum(times.values())
    print(f"sweep of {args.runs} runs x {args.tasks} tasks ({len(pairs)} pairs, "
          f"B = {args.n_boot}), {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"  {'step':<24} {'wall':>8}   {'cpu':>8}")
    for name, sec in times.items():
        print(f"  {name:<24} {sec:8.2f} s {cpu[name]:8.2f} s")
    print(f"  {'total':<24} {total:8.2f} s {sum(cpu.values()):8.2f} s   "
          "(target: well under 60 s; whole report <= 300 s)")
    result = {"times_s": times, "cpu_s": cpu, "total_s": total}
    if args.report:
        seconds = time_report(tasks, configs, args.n_boot)
        print(f"  {'whole report (CLI)':<24} {seconds:8.2f} s   = {seconds / 300:.2f} x the "
              "300 s target")
        result["report_s"] = seconds
    return result


if __name__ == "__main__":
    main()
