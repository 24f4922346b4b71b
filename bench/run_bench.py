"""Benchmark of loading and reporting at sweep scale (``make bench``).

Generates a sweep with the package's seeded generator into ``bench/_sweep/`` (reused when it is
already there), then measures in this process, each several times, and prints medians and
ratios against the targets of issue 7:

- ``load_runs`` over every task_metrics.csv vs the raw parse (``pyarrow.csv.read_csv`` of each
  file, concatenated) and vs the naive loop (``pd.concat([pd.read_csv(f) ...])``); the same load
  with a cold cache (parse + write) and a warm one (hit);
- all trajectories with the default columns: time, and peak memory vs their Arrow size, each in
  a fresh subprocess (peak = ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` minus the RSS after
  imports, read with psutil);
- one run report (``notebooks/run_report.ipynb`` through ``report.run_notebook``) vs the import
  floor (``bench/floor.ipynb``), the parse cache cleared before each;
- a batch of run reports with ``--jobs 1`` vs ``--jobs 2`` (``report.plan_jobs`` +
  ``report.run_jobs``).

Figures go to ``bench/results.json``; a table to stdout. ``--quick`` finishes in about two
minutes. The parse cache used here is ``bench/_sweep/.cache`` (``$DABENCH_CACHE_DIR``), so the
user's own cache is left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT = {"runs": 200, "tasks": 500, "text_len": 200, "steps": 30, "repeats": 3,
           "reports": 20}
QUICK = {"runs": 20, "tasks": 100, "text_len": 200, "steps": 30, "repeats": 3, "reports": 4}
TARGETS = {  # name -> (ratio, comparison, target, what)
    "load_vs_raw": ("<=", 1.3, "load_runs (cache off) / raw pyarrow parse"),
    "load_vs_naive": ("<", 1.0, "load_runs (cache off) / naive pd.read_csv loop"),
    "hit_speedup": (">=", 5.0, "first load (cold cache) / second load (cache hit)"),
    "traj_peak_vs_arrow": ("<=", 2.0, "trajectory peak RSS increase / Arrow size"),
    "report_vs_floor": ("<=", 3.0, "one run report / import-floor notebook"),
    "jobs2_speedup": (">=", 1.7, "batch --jobs 1 / --jobs 2"),
}


def _gen_one(args: tuple) -> str:
    from dabench_analysis.synthetic import generate_run

    sweep, i, tasks, text_len, steps = args
    skill = (-0.6, -0.2, 0.0, 0.3, 0.6, 1.0)[i % 6]  # a sweep of systems of varied strength
    return str(generate_run(sweep, run_id=f"run_{i:03d}", skill=skill, n_tasks=tasks, seed=i,
                            text_len=text_len, replays=True, trajectories=True,
                            mean_steps=steps))


def make_sweep(base: Path, runs: int, tasks: int, text_len: int, steps: int) -> Path:
    """Generate (or reuse) ``base/r<runs>_t<tasks>_l<text_len>_s<steps>/``; returns it."""
    sweep = base / f"r{runs}_t{tasks}_l{text_len}_s{steps}"
    marker = sweep / "sweep.json"
    params = {"runs": runs, "tasks": tasks, "text_len": text_len, "steps": steps}
    if marker.is_file() and json.loads(marker.read_text()).get("params") == params:
        print(f"reusing {sweep}")
        return sweep
    print(f"generating {runs} runs x {tasks} tasks into {sweep} ...", flush=True)
    start = time.perf_counter()
    sweep.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        list(pool.map(_gen_one, [(sweep, i, tasks, text_len, steps) for i in range(runs)]))
    (sweep / "pending_run").mkdir(exist_ok=True)  # a folder without artifacts: skipped
    marker.write_text(json.dumps({"params": params,
                                  "seconds": round(time.perf_counter() - start, 1)}))
    return sweep


def _time(fn, repeats: int, before=None) -> dict:
    samples = []
    for _ in range(repeats):
        if before:
            before()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return {"median_s": statistics.median(samples), "samples_s": [round(s, 4) for s in samples]}


def bench_load(sweep: Path, repeats: int) -> dict:
    """Task files: raw parse, naive loop, load_runs without cache, cold cache, cache hit."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dabench_analysis.load import cache, load_runs

    files = sorted(sweep.glob("*/task_metrics.csv"))
    out = {"files": len(files), "bytes": sum(f.stat().st_size for f in files)}

    def raw():
        return pa.concat_tables([pacsv.read_csv(f) for f in files], promote_options="permissive")

    out["raw"] = _time(raw, repeats)
    out["naive"] = _time(lambda: pd.concat([pd.read_csv(f) for f in files]), repeats)
    # .tasks: the stacked frame, as the raw baseline is the concatenated table
    out["load_runs_nocache"] = _time(
        lambda: load_runs(sweep, cache=False, progress=False).tasks, repeats)
    out["load_runs_nocache_1thread"] = _time(
        lambda: load_runs(sweep, cache=False, progress=False, parallel=False).tasks, 1)
    out["load_runs_cold"] = _time(lambda: load_runs(sweep, progress=False).tasks, repeats,
                                  before=cache.clear)
    out["load_runs_hit"] = _time(lambda: load_runs(sweep, progress=False).tasks, repeats)
    out["hash_all_files"] = _time(lambda: [cache.file_digest(f) for f in files], repeats)
    runs = load_runs(sweep, progress=False)
    out["tasks"] = len(runs.tasks)
    out["skipped"] = runs.skipped.to_dict("records")
    return out


def _child_trajectory(sweep: str, mode: str) -> None:
    """Run in a fresh process: load every trajectory, print time and memory as JSON.

    ``arrow``: the Arrow size of the default columns, read with the loader's column types
    (``typed_bytes``) and with pyarrow's inference (``inferred_bytes``). Other modes load the
    sweep's tasks first (not counted), then time ``Runs.trajectory`` and its peak RSS.
    """
    import gc
    import resource

    import psutil
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dabench_analysis import schema
    from dabench_analysis.load import load_runs
    from dabench_analysis.load.csv import PA_TYPES

    files = sorted(Path(sweep).glob("*/trajectory.csv"))
    cols = [c for c in schema.TRAJECTORY_COLUMNS if c not in schema.TEXT_TRAJECTORY_COLUMNS]
    types = {c: PA_TYPES.get(schema.TRAJECTORY_COLUMNS[c].kind, pa.string()) for c in cols}
    if mode == "arrow":
        out = {"typed_bytes": 0, "inferred_bytes": 0, "rows": 0}
        start = time.perf_counter()
        for f in files:
            t = pacsv.read_csv(f, convert_options=pacsv.ConvertOptions(include_columns=cols,
                                                                       column_types=types))
            out["typed_bytes"] += t.nbytes
            out["rows"] += t.num_rows
        out["seconds"] = time.perf_counter() - start
        for f in files:
            out["inferred_bytes"] += pacsv.read_csv(f, convert_options=pacsv.ConvertOptions(
                include_columns=cols)).nbytes
        print(json.dumps(out))
        return
    cache = mode != "nocache"
    # warm-up on one run, so that lazy imports and allocator pools are not counted as data
    _ = load_runs([files[0].parent], cache=cache, progress=False).trajectory
    runs = load_runs(sweep, cache=cache, progress=False)
    gc.collect()
    base = psutil.Process().memory_info().rss
    start = time.perf_counter()
    traj = runs.trajectory
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "rows": len(traj),
                      "frame_bytes": int(traj.memory_usage(deep=True).sum()),
                      "rss_before": base, "peak_rss": peak, "peak_increase": peak - base}))


def _subprocess(sweep: Path, mode: str) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child-trajectory", str(sweep), mode],
                         capture_output=True, text=True, check=True, env=os.environ.copy())
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_trajectory(sweep: Path, repeats: int) -> dict:
    """All trajectories, default columns: Arrow size, then time and peak memory per mode."""
    from dabench_analysis.load import cache

    out = {"arrow": _subprocess(sweep, "arrow")}
    for mode in ("nocache", "cold", "hit"):
        runs = []
        for _ in range(repeats if mode != "cold" else 1):
            if mode == "cold":
                cache.clear()
            runs.append(_subprocess(sweep, mode))
        out[mode] = {"median_s": statistics.median(r["seconds"] for r in runs),
                     "peak_increase": max(r["peak_increase"] for r in runs),
                     "frame_bytes": runs[0]["frame_bytes"], "rows": runs[0]["rows"],
                     "samples": runs}
    return out


def _cell_times(executed: Path) -> dict:
    """Seconds per cell of an executed notebook (papermill's metadata): total and the slowest."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    cells = [(c.metadata.get("papermill", {}).get("duration") or 0.0, c.source.splitlines()[0])
             for c in nb.cells if c.cell_type == "code" and c.source]
    return {"total_s": sum(d for d, _ in cells),
            "slowest": [{"s": round(d, 2), "cell": src[:60]} for d, src in sorted(cells)[::-1][:8]]}


def bench_reports(sweep: Path, repeats: int, n_reports: int) -> dict:
    """One run report vs the import floor; a batch with --jobs 1 vs --jobs 2."""
    from dabench_analysis import report
    from dabench_analysis.load import cache

    run = sweep / "run_000"
    tmp = Path(tempfile.mkdtemp(prefix="dabench-bench-"))
    out = {}
    for name, nb in (("floor", HERE / "floor.ipynb"),
                     ("run_report", report.NOTEBOOK_DIR / "run_report.ipynb")):
        dest = tmp / name
        out[name] = _time(lambda nb=nb, dest=dest: report.run_notebook(
            nb, dest, {"run_dir": str(run), "output_dir": str(dest)}), repeats,
            before=cache.clear)
    out["run_report_cells"] = _cell_times(tmp / "run_report" / "report.ipynb")
    out["floor_cells"] = _cell_times(tmp / "floor" / "report.ipynb")
    dirs = sorted(p for p in sweep.iterdir() if (p / "task_metrics.csv").is_file())[:n_reports]
    out["batch_size"] = len(dirs)
    for n in (1, 2):
        jobs = report.plan_jobs(dirs, tmp / f"batch_jobs{n}")
        cache.clear()
        start = time.perf_counter()
        results = report.run_jobs(jobs, n_jobs=n)
        out[f"batch_jobs{n}"] = {"median_s": time.perf_counter() - start,
                                 "failed": [r.reason for r in results if r.state != "evaluated"]}
    return out


def ratios(res: dict) -> dict:
    """The target ratios from the measurements (only those measured)."""
    load, traj, rep = res.get("load", {}), res.get("trajectory", {}), res.get("reports", {})
    med = {k: v["median_s"] for k, v in load.items() if isinstance(v, dict)}
    out = {}
    if med:
        out["load_vs_raw"] = med["load_runs_nocache"] / med["raw"]
        out["load_cold_vs_raw"] = med["load_runs_cold"] / med["raw"]
        out["load_vs_naive"] = med["load_runs_nocache"] / med["naive"]
        out["hit_speedup"] = med["load_runs_cold"] / med["load_runs_hit"]
        out["hit_vs_raw"] = med["load_runs_hit"] / med["raw"]
        out["task_threads_speedup"] = med["load_runs_nocache_1thread"] / med["load_runs_nocache"]
        out["hash_share_of_hit"] = med["hash_all_files"] / med["load_runs_hit"]
    if traj:
        arrow = traj["arrow"]["typed_bytes"]
        out["traj_peak_vs_arrow"] = traj["nocache"]["peak_increase"] / arrow
        out["traj_peak_vs_arrow_inferred"] = (traj["nocache"]["peak_increase"]
                                              / traj["arrow"]["inferred_bytes"])
        out["traj_hit_peak_vs_arrow"] = traj["hit"]["peak_increase"] / arrow
        out["traj_vs_raw"] = traj["nocache"]["median_s"] / traj["arrow"]["seconds"]
        out["traj_hit_speedup"] = traj["cold"]["median_s"] / traj["hit"]["median_s"]
    if "run_report" in rep:
        out["report_vs_floor"] = rep["run_report"]["median_s"] / rep["floor"]["median_s"]
        out["jobs2_speedup"] = rep["batch_jobs1"]["median_s"] / rep["batch_jobs2"]["median_s"]
    return out


def _verdict(name: str, value: float) -> str:
    if name not in TARGETS:
        return ""
    op, target, _ = TARGETS[name]
    ok = {"<=": value <= target, "<": value < target, ">=": value >= target}[op]
    return f"{'met' if ok else 'MISSED'} ({op} {target:g})"


def print_table(res: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"dabench-analysis benchmark: {res['params']}")
    for col in ("measure", "median", "ratio / target"):
        table.add_column(col)
    for section in ("load", "trajectory", "reports"):
        for name, v in res.get(section, {}).items():
            if isinstance(v, dict) and "median_s" in v:
                extra = (f"  peak +{v['peak_increase'] / 2**20:.0f} MiB"
                         if "peak_increase" in v else "")
                table.add_row(f"{section}: {name}", f"{v['median_s']:.2f} s{extra}", "")
    for name, value in res["ratios"].items():
        table.add_row(f"ratio: {name}", f"{value:.2f}", _verdict(name, value))
    Console().print(table)


def main(argv: list[str] | None = None) -> dict:
    """Parse options, run the benchmark, write ``bench/results.json``; returns the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int)
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--text-len", type=int, help="mean characters of thought (observation 2x, "
                    "raw_response 3x)")
    ap.add_argument("--steps", type=int, help="mean trajectory steps per task")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--reports", type=int, help="run reports in the --jobs batch")
    ap.add_argument("--skip-reports", action="store_true")
    ap.add_argument("--skip-trajectory", action="store_true")
    ap.add_argument("--quick", action="store_true", help=f"preset {QUICK}")
    ap.add_argument("--sweep-dir", type=Path, default=HERE / "_sweep")
    ap.add_argument("--out", type=Path, default=HERE / "results.json")
    ap.add_argument("--child-trajectory", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_trajectory:
        _child_trajectory(*args.child_trajectory)
        return {}
    preset = QUICK if args.quick else DEFAULT
    p = {k: getattr(args, k) if getattr(args, k) is not None else v for k, v in preset.items()}
    os.environ.setdefault("DABENCH_CACHE_DIR", str(args.sweep_dir / ".cache"))
    os.environ.setdefault("MPLBACKEND", "Agg")
    start = time.perf_counter()
    sweep = make_sweep(args.sweep_dir, p["runs"], p["tasks"], p["text_len"], p["steps"])
    import pandas as pd
    import pyarrow as pa

    res: dict = {"params": p, "sweep": str(sweep), "machine": {
        "cpus": os.cpu_count(), "python": platform.python_version(), "pandas": pd.__version__,
        "pyarrow": pa.__version__, "platform": platform.platform(),
        "loadavg_start": os.getloadavg()}}
    traj_rows = pd.concat(pd.read_csv(f, usecols=["task_id"]) for f in
                          sorted(sweep.glob("*/trajectory.csv"))[:5])
    res["steps_per_task"] = len(traj_rows) / (5 * p["tasks"])
    print("loading task files ...", flush=True)
    res["load"] = bench_load(sweep, p["repeats"])
    if not args.skip_trajectory:
        print("loading trajectories (subprocesses) ...", flush=True)
        res["trajectory"] = bench_trajectory(sweep, p["repeats"])
    if not args.skip_reports:
        print("running reports ...", flush=True)
        res["reports"] = bench_reports(sweep, p["repeats"], p["reports"])
    res["machine"]["loadavg_end"] = os.getloadavg()  # other work on the machine skews timings
    res["ratios"] = ratios(res)
    res["seconds_total"] = time.perf_counter() - start
    args.out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    print_table(res)
    print(f"results: {args.out} ({res['seconds_total']:.0f} s)")
    return res


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
