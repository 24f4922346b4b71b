"""Benchmark of loading and reporting at sweep scale, on three run shapes (``make bench``).

Generates a sweep with the package's seeded generator into ``bench/_sweep/`` (the *clean*
shape, exactly as the generator writes runs) and derives a *realistic* one from it: the same
runs rewritten as other eval-v2 versions and people write them (per run: one to three optional
column groups absent, old column names (aliases), an extra column, flags spelled 1/0, True/False
or both, columns shuffled, a few values that load with a warning or a note: yes/no flags, a
lower-case difficulty, a blank flag; trajectory and tool-call files with an extra column, a
column absent, reversed column order, True/False flags), and an *older* one: the task files as
an older eval-v2 version wrote them (103 of the 152 columns: five column groups absent, every
aliased column under its old name, True/False flags; side files as in the realistic shape).
All are reused when already there.
Then, per shape, in this process, each several times, it prints medians and ratios against
named baselines:

- ``load_runs(sweep).tasks``, first call, vs the raw parse (``pyarrow.csv.read_csv`` of every
  task file, concatenated; where pyarrow infers different types for a column in different
  files, that column is cast to text first, which is what concatenating them takes) and vs the
  naive loop (``pd.concat([pd.read_csv(f) ...])``); a cold cache (parse + write) and a hit;
- all trajectories with the default columns vs their raw parse (``pyarrow.csv.read_csv`` of
  those columns with the loader's types), and peak memory vs their Arrow size, each in a fresh
  subprocess (peak = ``VmHWM`` of ``/proc/self/status`` minus the RSS after imports
  and the tasks, read with psutil);
- one run report (``notebooks/run_report.ipynb`` through ``report.run_notebook``) vs the import
  floor (``bench/floor.ipynb``), the parse cache cleared before each;
- a batch of run reports with ``--jobs 1`` vs ``--jobs 2`` (``report.plan_jobs`` +
  ``report.run_jobs``).

Figures go to ``bench/results.json``; a table per shape to stdout. ``--quick`` finishes in a
few minutes. The parse cache used here is ``bench/_sweep/.cache`` (``$DABENCH_CACHE_DIR``), so
the user's own cache is left alone.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT = {"runs": 120, "tasks": 400, "text_len": 200, "steps": 30, "repeats": 3,
           "reports": 6}
QUICK = {"runs": 20, "tasks": 100, "text_len": 100, "steps": 20, "repeats": 3, "reports": 2}
SHAPES = ("clean", "realistic", "older")
#: Column groups an older eval-v2 version did not write yet: its task file has 103 of the
#: catalogue's 152 columns (the "~100 columns" shape of issue 22).
OLDER_ABSENT_GROUPS = ("Per-Action", "AAT Architecture", "Data Understanding", "Research",
                       "Composite")
TARGETS = {  # name -> (comparison, target, what): issue 37
    "load_vs_raw": ("<=", 1.5, "load_runs (cache off) / raw pyarrow parse"),
    "load_vs_naive": ("<", 1.0, "load_runs (cache off) / naive pd.read_csv loop"),
    "hit_speedup": (">=", 10.0, "first load (cold cache) / second load (cache hit)"),
    "traj_vs_raw": ("<=", 1.6, "all trajectories (cache off) / their raw pyarrow parse"),
    "traj_peak_vs_arrow": ("<=", 2.0, "trajectory peak RSS increase / Arrow size"),
    "report_vs_floor": ("<=", 2.0, "one run report / import-floor notebook"),
    "jobs2_speedup": (">=", 1.7, "batch --jobs 1 / --jobs 2"),
}


def _gen_one(args: tuple) -> str:
    from dabench_analysis.synthetic import generate_run

    sweep, i, tasks, text_len, steps = args
    skill = (-0.6, -0.2, 0.0, 0.3, 0.6, 1.0)[i % 6]  # a sweep of systems of varied strength
    return str(generate_run(sweep, run_id=f"run_{i:03d}", skill=skill, n_tasks=tasks, seed=i,
                            text_len=text_len, replays=True, trajectories=True,
                            mean_steps=steps))


def _reused(marker: Path, params: dict) -> bool:
    return marker.is_file() and json.loads(marker.read_text()).get("params") == params


def make_sweep(base: Path, runs: int, tasks: int, text_len: int, steps: int) -> Path:
    """Generate (or reuse) ``base/r<runs>_t<tasks>_l<text_len>_s<steps>/``; returns it."""
    sweep = base / f"r{runs}_t{tasks}_l{text_len}_s{steps}"
    params = {"runs": runs, "tasks": tasks, "text_len": text_len, "steps": steps}
    if _reused(sweep / "sweep.json", params):
        print(f"reusing {sweep}")
        return sweep
    print(f"generating {runs} runs x {tasks} tasks into {sweep} ...", flush=True)
    start = time.perf_counter()
    sweep.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        list(pool.map(_gen_one, [(sweep, i, tasks, text_len, steps) for i in range(runs)]))
    (sweep / "pending_run").mkdir(exist_ok=True)  # a folder without artifacts: skipped
    (sweep / "sweep.json").write_text(json.dumps(
        {"params": params, "seconds": round(time.perf_counter() - start, 1)}))
    return sweep


# -- the realistic and older shapes ------------------------------------------------------------------


def _rewrite(src: Path, dest: Path, fn) -> None:
    with src.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = fn(rows[0], rows[1:])
    with dest.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *body])


def _select(header: list, body: list, keep: list) -> tuple[list, list]:
    idx = [header.index(h) for h in keep]
    return keep, [[r[i] for i in idx] for r in body]


#: Columns every shape keeps (the required columns of the eval-v2 versions the shapes stand for;
#: the catalogue now requires only task_id and final_score).
ALWAYS = frozenset({"run_id", "task_id", "difficulty", "final_score"})


def _task_shape(i: int):
    """Run ``i``'s task file as another eval-v2 version writes it (see the module notes)."""
    from dabench_analysis import schema

    rng = random.Random(i)
    groups: dict[str, list[str]] = {}
    for c in schema.TASK_COLUMNS.values():
        if c.name not in ALWAYS:
            groups.setdefault(c.group, []).append(c.name)
    old_name = {v: k for k, v in schema.ALIASES.items()}

    def fn(header, body):
        absent = {c for g in rng.sample(sorted(groups), rng.randint(1, 3)) for c in groups[g]}
        header, body = _select(header, body, [h for h in header if h not in absent])
        flags = [j for j, h in enumerate(header) if schema.TASK_COLUMNS[h].kind == "flag"]
        for n, row in enumerate(body):  # 1/0, True/False, or both (odd rows True/False)
            if i % 3 == 1 or (i % 3 == 2 and n % 2):
                for j in flags:
                    row[j] = {"1": "True", "0": "False"}.get(row[j], row[j])
        if i % 4 == 0 and flags:  # a warning: two flags spelled yes/no
            for n in (1, 3):
                body[n][flags[0]] = "yes" if body[n][flags[0]] in ("1", "True") else "no"
        if i % 5 == 0:  # a warning: a lower-case difficulty
            d = header.index("difficulty")
            body[2][d] = body[2][d].lower()
        if i % 3 == 0 and len(flags) > 1:  # a note: a flag left blank
            body[4][flags[1]] = ""
        names = [old_name[h] if h in old_name and rng.random() < 0.7 else h for h in header]
        names, body = [*names, "harness_build"], [[*r, "v1.9"] for r in body]
        order = list(range(len(names)))
        rng.shuffle(order)
        return [names[j] for j in order], [[r[j] for j in order] for r in body]
    return fn


def _older_task_shape(i: int):
    """Run ``i``'s task file as an older eval-v2 version wrote it: the groups of
    :data:`OLDER_ABSENT_GROUPS` absent, every aliased column under its old name, flags spelled
    True/False, the catalogue's column order."""
    from dabench_analysis import schema

    old_name = {v: k for k, v in schema.ALIASES.items()}

    def fn(header, body):
        keep = [h for h in header if h in ALWAYS
                or schema.TASK_COLUMNS[h].group not in OLDER_ABSENT_GROUPS]
        header, body = _select(header, body, keep)
        flags = [j for j, h in enumerate(header) if schema.TASK_COLUMNS[h].kind == "flag"]
        for row in body:
            for j in flags:
                row[j] = {"1": "True", "0": "False"}.get(row[j], row[j])
        return [old_name.get(h, h) for h in header], body
    return fn


def _side_shape(i: int, absent: str):
    def fn(header, body):
        header, body = _select(header, body, [h for h in header if h != absent])
        if "success" in header and i % 2 == 0:
            j = header.index("success")
            for row in body:
                row[j] = {"1": "True", "0": "False"}.get(row[j], row[j])
        header, body = [*header, "harness_build"], [[*r, "v1.9"] for r in body]
        return header[::-1], [r[::-1] for r in body]
    return fn


def _reshape_one(args: tuple) -> None:
    src, dest, i, shape = args
    dest.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():  # replay folders: hard links (copies across file systems)
        if entry.is_dir() and not (dest / entry.name).exists():
            try:
                shutil.copytree(entry, dest / entry.name, copy_function=os.link)
            except OSError:
                shutil.copytree(entry, dest / entry.name, dirs_exist_ok=True)
    task_shape = _older_task_shape if shape == "older" else _task_shape
    _rewrite(src / "task_metrics.csv", dest / "task_metrics.csv", task_shape(i))
    for name, absent in (("trajectory.csv", "legacy_stage"), ("tool_calls.csv", "trace_id")):
        if (src / name).is_file():
            _rewrite(src / name, dest / name, _side_shape(i, absent))


def make_shaped(clean: Path, shape: str) -> Path:
    """Derive (or reuse) ``<clean>_<shape>/`` (realistic or older) from the clean sweep;
    returns it."""
    sweep = clean.with_name(f"{clean.name}_{shape}")
    params = json.loads((clean / "sweep.json").read_text())["params"] | {"shape": shape}
    if _reused(sweep / "sweep.json", params):
        print(f"reusing {sweep}")
        return sweep
    print(f"rewriting {clean.name} as the {shape} shape into {sweep} ...", flush=True)
    start = time.perf_counter()
    runs = sorted(p for p in clean.iterdir() if (p / "task_metrics.csv").is_file())
    with ProcessPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        list(pool.map(_reshape_one, [(r, sweep / r.name, i, shape)
                                     for i, r in enumerate(runs)]))
    (sweep / "pending_run").mkdir(exist_ok=True)
    (sweep / "sweep.json").write_text(json.dumps(
        {"params": params, "seconds": round(time.perf_counter() - start, 1)}))
    return sweep


# -- measures --------------------------------------------------------------------------------


def _time(fn, repeats: int, before=None) -> dict:
    samples = []
    for _ in range(repeats):
        if before:
            before()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return {"median_s": statistics.median(samples), "samples_s": [round(s, 4) for s in samples]}


def raw_concat(tables: list):
    """``pa.concat_tables`` of tables whose inferred types may differ: such columns as text."""
    import pyarrow as pa

    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        types: dict[str, set] = {}
        for t in tables:
            for f in t.schema:
                types.setdefault(f.name, set()).add(f.type)
        mixed = {n for n, s in types.items() if len(s) > 1}
        tables = [t.cast(pa.schema([pa.field(f.name, pa.string()) if f.name in mixed else f
                                    for f in t.schema])) for t in tables]
        return pa.concat_tables(tables, promote_options="permissive")


def bench_load(sweep: Path, repeats: int) -> dict:
    """Task files: raw parse, naive loop, load_runs without cache, cold cache, cache hit."""
    import warnings

    import pandas as pd
    import pyarrow.csv as pacsv

    from dabench_analysis.load import cache, load_runs

    files = sorted(sweep.glob("*/task_metrics.csv"))
    out = {"files": len(files), "bytes": sum(f.stat().st_size for f in files)}
    warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # the naive loop's mixed columns
    for _ in range(repeats):  # interleaved, so that other load on the machine hits all alike
        for name, fn, before in (
                ("raw", lambda: raw_concat([pacsv.read_csv(f) for f in files]), None),
                ("naive", lambda: pd.concat([pd.read_csv(f) for f in files]), None),
                # .tasks: the stacked frame, as the raw baseline is the concatenated table
                ("load_runs_nocache",
                 lambda: load_runs(sweep, cache=False, progress=False).tasks, None),
                ("load_runs_cold", lambda: load_runs(sweep, progress=False).tasks, cache.clear),
                ("load_runs_hit", lambda: load_runs(sweep, progress=False).tasks, None)):
            cpu = time.process_time()  # every thread's CPU time: the work, whatever ran beside
            sample = _time(fn, 1, before=before)["samples_s"][0]
            cpu = time.process_time() - cpu
            entry = out.setdefault(name, {"samples_s": [], "cpu_samples_s": []})
            entry["samples_s"].append(sample)
            entry["cpu_samples_s"].append(round(cpu, 4))
    for v in out.values():
        if isinstance(v, dict):
            v["median_s"] = statistics.median(v["samples_s"])
            v["cpu_median_s"] = statistics.median(v["cpu_samples_s"])
    out["load_runs_nocache_1thread"] = _time(
        lambda: load_runs(sweep, cache=False, progress=False, parallel=False).tasks, 1)
    out["hash_all_files"] = _time(lambda: [cache.file_digest(f) for f in files], repeats)
    runs = load_runs(sweep, progress=False)
    out["tasks"], out["columns"] = len(runs.tasks), runs.tasks.shape[1]
    out["findings"] = runs.findings.groupby(["severity", "check"]).size().to_dict()
    out["findings"] = {" ".join(k): int(v) for k, v in out["findings"].items()}
    out["skipped"] = runs.skipped.to_dict("records")
    return out


def _child_trajectory(sweep: str, mode: str) -> None:
    """Run in a fresh process: load every trajectory, print time and memory as JSON.

    ``arrow``: the raw parse, i.e. the default columns of each file (those it has) read by
    pyarrow with the loader's column types: its time and Arrow size (``typed_bytes``), and the
    size with pyarrow's own inference (``inferred_bytes``). Other modes load the sweep's tasks
    first (not counted), then time ``Runs.trajectory`` and its peak RSS.
    """
    import gc
    import resource

    import psutil
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dabench_analysis import schema
    from dabench_analysis.load import load_runs
    from dabench_analysis.load._csv import read_header

    # the raw parse's types: numbers as float64, flags as pyarrow's bool, the rest as text
    PA_TYPES = {k: pa.float64() for k in ("count", "tokens", "bytes", "score", "float",
                                          "seconds")} | {"flag": pa.bool_()}

    files = sorted(Path(sweep).glob("*/trajectory.csv"))
    cols = [c for c in schema.TRAJECTORY_COLUMNS if c not in schema.columns.TEXT_TRAJECTORY_COLUMNS]
    types = {c: PA_TYPES.get(schema.TRAJECTORY_COLUMNS[c].kind, pa.string()) for c in cols}
    if mode == "arrow":
        out = {"typed_bytes": 0, "inferred_bytes": 0, "rows": 0}
        own = {f: [c for c in cols if c in read_header(f)] for f in files}
        cpu, start = time.process_time(), time.perf_counter()
        for f in files:
            t = pacsv.read_csv(f, convert_options=pacsv.ConvertOptions(
                include_columns=own[f], column_types={c: types[c] for c in own[f]}))
            out["typed_bytes"] += t.nbytes
            out["rows"] += t.num_rows
        out["seconds"] = time.perf_counter() - start
        out["cpu_seconds"] = time.process_time() - cpu
        for f in files:
            out["inferred_bytes"] += pacsv.read_csv(f, convert_options=pacsv.ConvertOptions(
                include_columns=own[f])).nbytes
        print(json.dumps(out))
        return
    cache = mode != "nocache"
    # warm-up on one run, so that lazy imports and allocator pools are not counted as data
    _ = load_runs([files[0].parent], cache=cache, progress=False).trajectory
    runs = load_runs(sweep, cache=cache, progress=False)
    gc.collect()
    base = psutil.Process().memory_info().rss
    cpu, start = time.process_time(), time.perf_counter()
    traj = runs.trajectory
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = _high_water_mark() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "rows": len(traj),
                      "frame_bytes": int(traj.memory_usage(deep=True).sum()),
                      "rss_before": base, "peak_rss": peak, "peak_increase": peak - base}))


def _high_water_mark() -> int | None:
    """This process's peak RSS in bytes, ``VmHWM`` of ``/proc/self/status`` (Linux); None
    elsewhere. Not ``ru_maxrss``: Linux carries it over ``fork`` and ``exec``, so a child
    started by a parent of 1.5 GiB reports a peak of at least 1.5 GiB (measured: a child
    printing ``ru_maxrss`` 1513 MiB, ``VmHWM`` 13 MiB); ``VmHWM`` belongs to the process's own
    memory map, which ``exec`` replaces."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _subprocess(sweep: Path, mode: str) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child-trajectory", str(sweep), mode],
                         capture_output=True, text=True, env=os.environ.copy())
    if res.returncode:
        raise RuntimeError(f"trajectory child ({mode}) failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_trajectory(sweep: Path, repeats: int) -> dict:
    """All trajectories, default columns: raw parse and Arrow size, then time and peak memory
    per mode (cache off, cold, hit), one fresh subprocess per sample, modes interleaved in
    an order that turns each repeat."""
    from dabench_analysis.load import cache

    modes = ("arrow", "nocache", "cold", "hit")
    samples: dict[str, list] = {m: [] for m in modes}
    for i in range(repeats):
        # the order turns each repeat: a child started right after another that freed
        # gigabytes paid more for its memory (the loader of 7c2e9e4: 5.4 s right after the
        # raw parse's child, 3.6 s right after another loader's), always the second mode
        for mode in modes[i % len(modes):] + modes[:i % len(modes)]:
            if mode == "cold":
                cache.clear()
            samples[mode].append(_subprocess(sweep, mode))
    arrow = samples.pop("arrow")
    out = {"arrow": {**arrow[0], "median_s": statistics.median(a["seconds"] for a in arrow),
                     "cpu_median_s": statistics.median(a["cpu_seconds"] for a in arrow),
                     "samples_s": [round(a["seconds"], 4) for a in arrow]}}
    for mode, runs in samples.items():
        out[mode] = {"median_s": statistics.median(r["seconds"] for r in runs),
                     "cpu_median_s": statistics.median(r["cpu_seconds"] for r in runs),
                     "samples_s": [round(r["seconds"], 4) for r in runs],
                     "peak_increase": max(r["peak_increase"] for r in runs),  # the worst
                     "peak_increase_median": statistics.median(r["peak_increase"] for r in runs),
                     "peak_samples": [r["peak_increase"] for r in runs],
                     "frame_bytes": runs[0]["frame_bytes"], "rows": runs[0]["rows"]}
    return out


def bench_trajectory_parts(sweep: Path, repeats: int, n_files: int = 20) -> dict:
    """What every first read of a trajectory file costs before any rule runs, one thread, over
    the first ``n_files`` files: the read into memory, the scan (digest, CR, quote parity:
    ``pipeline.scan``), the parse (``csv.parse``, default columns) and, for comparison, the raw
    one-thread ``pyarrow.csv.read_csv`` of the same columns from the path (its own read
    included). (read + scan + parse) / raw is the lowest ``traj_vs_raw`` the pipeline can reach
    with rules and conversion free. Medians of ``repeats``, the parts interleaved."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dabench_analysis import schema
    from dabench_analysis.load import _csv as csv_reader
    from dabench_analysis.load import _pipeline as pipeline
    from dabench_analysis.load._csv import read_header
    from dabench_analysis.schema._files import TRAJECTORY

    files = sorted(sweep.glob("*/trajectory.csv"))[:n_files]
    cols = tuple(c for c in schema.TRAJECTORY_COLUMNS if c not in schema.columns.TEXT_TRAJECTORY_COLUMNS)
    own = {f: [c for c in cols if c in read_header(f)] for f in files}
    data = [memoryview(pa.OSFile(str(f)).read_buffer()) for f in files]
    scans = [pipeline.scan(d) for d in data]
    parts = {
        "read": lambda: [pa.OSFile(str(f)).read_buffer() for f in files],
        "scan": lambda: [pipeline.scan(d) for d in data],
        "parse": lambda: [csv_reader.parse(d, TRAJECTORY, cols, has_cr=cr, odd_quotes=odd,
                                           threads=False)
                          for d, (_, cr, odd) in zip(data, scans, strict=True)],
        "raw_1thread": lambda: [pacsv.read_csv(f, read_options=pacsv.ReadOptions(
            use_threads=False), convert_options=pacsv.ConvertOptions(include_columns=own[f]))
            for f in files]}
    out = _interleaved(parts, repeats)
    out["files"], out["bytes"] = len(files), sum(len(d) for d in data)
    return out


def _interleaved(parts: dict, repeats: int) -> dict:
    """Each part timed ``repeats`` times, the parts interleaved: median and samples (seconds)."""
    samples: dict[str, list[float]] = {k: [] for k in parts}
    for _ in range(repeats):
        for name, run in parts.items():
            start = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - start)
    return {k: {"median_s": statistics.median(v), "samples_s": [round(x, 4) for x in v]}
            for k, v in samples.items()}


def bench_task_parts(sweep: Path, repeats: int) -> dict:
    """The floor of a first load of the task files, one thread over every task file: the read
    into memory, the scan (digest, CR, quote parity: ``pipeline.scan``) and the parse
    (``csv.parse``, every column, from memory), against the raw one-thread
    ``pyarrow.csv.read_csv`` of the same files from their paths. (read + scan + parse) / raw is
    the lowest ``load_vs_raw`` the pipeline can reach with its rules, the per-run work and the
    conversion to pandas free. Medians of ``repeats``, the parts interleaved."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dabench_analysis.load import _csv as csv_reader
    from dabench_analysis.load import _pipeline as pipeline
    from dabench_analysis.schema._files import TASKS

    files = sorted(sweep.glob("*/task_metrics.csv"))
    data = [memoryview(pa.OSFile(str(f)).read_buffer()) for f in files]
    scans = [pipeline.scan(d) for d in data]
    parts = {
        "read": lambda: [pa.OSFile(str(f)).read_buffer() for f in files],
        "scan": lambda: [pipeline.scan(d) for d in data],
        "parse": lambda: [csv_reader.parse(d, TASKS, None, has_cr=cr, odd_quotes=odd,
                                           threads=False)
                          for d, (_, cr, odd) in zip(data, scans, strict=True)],
        "raw_1thread": lambda: [pacsv.read_csv(f, read_options=pacsv.ReadOptions(
            use_threads=False)) for f in files]}
    out = _interleaved(parts, repeats)
    out["files"], out["bytes"] = len(files), sum(len(d) for d in data)
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
    """One run report vs the import floor (interleaved); a batch with --jobs 1 vs --jobs 2."""
    from dabench_analysis import report
    from dabench_analysis.load import cache

    run = sweep / "run_000"
    tmp = Path(tempfile.mkdtemp(prefix="dabench-bench-"))
    out: dict = {}
    for _ in range(repeats):
        for name, nb in (("floor", HERE / "floor.ipynb"),
                         ("run_report", report.NOTEBOOK_DIR / "run_report.ipynb")):
            dest = tmp / name
            sample = _time(lambda nb=nb, dest=dest: report.run_notebook(
                nb, dest, {"run_dir": str(run), "output_dir": str(dest)}), 1,
                before=cache.clear)["samples_s"][0]
            out.setdefault(name, {"samples_s": []})["samples_s"].append(sample)
    for name in ("floor", "run_report"):
        out[name]["median_s"] = statistics.median(out[name]["samples_s"])
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
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def ratios(res: dict) -> dict:
    """The ratios of one shape's measurements (only those measured)."""
    load, traj, rep = res.get("load", {}), res.get("trajectory", {}), res.get("reports", {})
    med = {k: v["median_s"] for k, v in load.items() if isinstance(v, dict) and "median_s" in v}
    out = {}
    if med:
        out["load_vs_raw"] = med["load_runs_nocache"] / med["raw"]
        out["load_cold_vs_raw"] = med["load_runs_cold"] / med["raw"]
        out["load_vs_naive"] = med["load_runs_nocache"] / med["naive"]
        out["hit_speedup"] = med["load_runs_cold"] / med["load_runs_hit"]
        out["hit_speedup_vs_nocache"] = med["load_runs_nocache"] / med["load_runs_hit"]
        out["hit_vs_raw"] = med["load_runs_hit"] / med["raw"]
        out["task_threads_speedup"] = med["load_runs_nocache_1thread"] / med["load_runs_nocache"]
        out["hash_share_of_hit"] = med["hash_all_files"] / med["load_runs_hit"]
        cpu = {k: v["cpu_median_s"] for k, v in load.items()
               if isinstance(v, dict) and "cpu_median_s" in v}
        if cpu:  # CPU time of every thread: the work done, which other load does not change
            out["load_cpu_vs_raw"] = cpu["load_runs_nocache"] / cpu["raw"]
            out["load_cpu_vs_naive"] = cpu["load_runs_nocache"] / cpu["naive"]
    if traj:
        arrow = traj["arrow"]["typed_bytes"]
        out["traj_vs_raw"] = traj["nocache"]["median_s"] / traj["arrow"]["median_s"]
        out["traj_cold_vs_raw"] = traj["cold"]["median_s"] / traj["arrow"]["median_s"]
        if "cpu_median_s" in traj["arrow"]:
            out["traj_cpu_vs_raw"] = traj["nocache"]["cpu_median_s"] / traj["arrow"]["cpu_median_s"]
        out["traj_peak_vs_arrow"] = traj["nocache"]["peak_increase"] / arrow
        out["traj_peak_median_vs_arrow"] = traj["nocache"]["peak_increase_median"] / arrow
        out["traj_peak_vs_arrow_inferred"] = (traj["nocache"]["peak_increase"]
                                              / traj["arrow"]["inferred_bytes"])
        out["traj_hit_peak_vs_arrow"] = traj["hit"]["peak_increase"] / arrow
        out["traj_hit_speedup"] = traj["cold"]["median_s"] / traj["hit"]["median_s"]
    tparts = res.get("task_parts")
    if tparts:
        raw = tparts["raw_1thread"]["median_s"]
        out["task_floor_vs_raw"] = sum(tparts[k]["median_s"]
                                       for k in ("read", "scan", "parse")) / raw
        for k in ("read", "scan", "parse"):
            out[f"task_{k}_vs_raw"] = tparts[k]["median_s"] / raw
    parts = res.get("trajectory_parts")
    if parts:
        raw = parts["raw_1thread"]["median_s"]
        out["traj_floor_vs_raw"] = sum(parts[k]["median_s"] for k in ("read", "scan", "parse")) / raw
        for k in ("read", "scan", "parse"):
            out[f"traj_{k}_vs_raw"] = parts[k]["median_s"] / raw
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
    for col in ("measure", *res["shapes"]):
        table.add_column(col)
    for section in ("load", "task_parts", "trajectory", "trajectory_parts", "reports"):
        names = dict.fromkeys(n for s in res["shapes"].values()
                              for n, v in s.get(section, {}).items()
                              if isinstance(v, dict) and "median_s" in v)
        for name in names:
            cells = []
            for s in res["shapes"].values():
                v = s.get(section, {}).get(name)
                extra = f"  peak +{v['peak_increase'] / 2**20:.0f} MiB" \
                    if v and "peak_increase" in v else ""
                cells.append(f"{v['median_s']:.2f} s{extra}" if v else "")
            table.add_row(f"{section}: {name}", *cells)
    names = dict.fromkeys(n for s in res["shapes"].values() for n in s["ratios"])
    for name in names:
        cells = []
        for s in res["shapes"].values():
            value = s["ratios"].get(name)
            cells.append("" if value is None else f"{value:.2f} {_verdict(name, value)}")
        table.add_row(f"ratio: {name}", *cells)
    table.add_row("load average (1/5/15 min) after the shape",
                  *[" / ".join(f"{x:.1f}" for x in s.get("loadavg_end", ()))
                    for s in res["shapes"].values()])
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
    ap.add_argument("--shape", choices=[*SHAPES, "all"], default="all")
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
    clean = make_sweep(args.sweep_dir, p["runs"], p["tasks"], p["text_len"], p["steps"])
    shapes = SHAPES if args.shape == "all" else (args.shape,)
    sweeps = {s: clean if s == "clean" else make_shaped(clean, s) for s in shapes}
    import pandas as pd
    import pyarrow as pa

    res: dict = {"params": p, "machine": {
        "cpus": os.cpu_count(), "python": platform.python_version(), "pandas": pd.__version__,
        "pyarrow": pa.__version__, "platform": platform.platform(),
        "loadavg_start": os.getloadavg()}, "shapes": {}}
    for shape, sweep in sweeps.items():
        out: dict = {"sweep": str(sweep)}
        print(f"[{shape}] loading task files ...", flush=True)
        out["load"] = bench_load(sweep, p["repeats"])
        out["task_parts"] = bench_task_parts(sweep, p["repeats"])
        if not args.skip_trajectory:
            print(f"[{shape}] loading trajectories (subprocesses) ...", flush=True)
            out["trajectory"] = bench_trajectory(sweep, p["repeats"])
            out["trajectory_parts"] = bench_trajectory_parts(sweep, p["repeats"])
        if not args.skip_reports:
            print(f"[{shape}] running reports ...", flush=True)
            out["reports"] = bench_reports(sweep, p["repeats"], p["reports"])
        out["ratios"] = ratios(out)
        out["loadavg_end"] = os.getloadavg()  # each shape's own: others' work skews it
        res["shapes"][shape] = out
    res["machine"]["loadavg_end"] = os.getloadavg()  # other work on the machine skews timings
    res["seconds_total"] = time.perf_counter() - start
    args.out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    print_table(res)
    print(f"results: {args.out} ({res['seconds_total']:.0f} s)")
    return res


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
