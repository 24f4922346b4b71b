"""Benchmark of the trajectory tables on a sweep (issue 23, item 13; issue 37, item 4).

Generates (or reuses) a sweep with ``run_bench.make_sweep`` (the package's seeded generator,
``--runs`` runs × ``--tasks`` tasks, ``--steps`` steps per task on average, ``--text-len``
characters of thought), loads it once (``load_runs``: tasks, trajectories and tool calls, parse
cache warm), then times each table of ``dabench_analysis.trajectory`` on the whole sweep
(a ``Runs``: one table per run, pooled and per difficulty) against the plain pandas / Arrow code
that computes the same counts from the same loaded frames (the baseline also reads what the
table reads beyond them: ``action_input`` for the loops, with ``pyarrow.csv``), medians of
``--repeats`` interleaved timings, and prints the ratio per table, target ≤ 3.

Memory: in a fresh subprocess per table, the sweep is loaded as above, then the peak RSS is
reset (``/proc/self/clear_refs``, Linux) and the table computed; its peak is ``VmHWM`` of
``/proc/self/status`` after the table minus ``VmRSS`` before it (not ``ru_maxrss``, which Linux
carries over ``fork`` and ``exec`` from the parent, here a process holding the whole sweep),
compared with the Arrow size of the steps the loader gives (``Runs.trajectory``, default
columns: ``pyarrow.Table.from_pandas(...).nbytes``), target ≤ 2. A table that reads free-text
columns beyond them (the loops: ``action_input``) states its own peak beside it.

The default is a subset, 40 runs × 200 tasks × 20 steps (160 000 steps); the issue's sweep is
``--runs 200 --tasks 500 --steps 30 --text-len 200`` (3 M steps, ~6 GB; ``--sweep-dir`` outside
the checkout). ``--tables`` picks tables (default the six of issue 37 item 4; ``all``: every
one). Results go to ``bench/trajectory_results.json`` (``--out``).

    .venv/bin/python bench/trajectory_bench.py [--runs 40 --tasks 200 --steps 20 --repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from run_bench import make_sweep  # noqa: E402

TARGET_TIME, TARGET_MEMORY = 3.0, 2.0
#: The tables of issue 37 item 4, measured by default.
DEFAULT_TABLES = ("variants", "transitions", "loops", "recovery", "step_latency",
                  "solve_curve")
KEYS = ["run_id", "task_id"]


def _sorted_steps(runs, columns):
    t = runs.trajectory[[*KEYS, "step_id", *columns]]
    return t.sort_values([*KEYS, "step_id"], kind="stable")


def _tasks(runs):
    t = runs.tasks[[*KEYS, "difficulty", "final_score"]].copy()
    t["correct"] = t["final_score"] >= 0.8
    return t


def _two_levels(frame, keys, agg):
    """``agg`` grouped by run and by run and difficulty: the two levels every table reports."""
    return [frame.groupby(["run_id", *keys], observed=True).agg(**agg),
            frame.groupby(["run_id", "difficulty", *keys], observed=True).agg(**agg)]


def _blocks(runs, by="stage"):
    s = _sorted_steps(runs, [by, "duration_seconds"])
    new = s[by].ne(s.groupby(KEYS, sort=False)[by].shift()).fillna(True).to_numpy(bool)
    return s[new]


def base_variants(runs):
    b = _blocks(runs)
    pat = b.groupby(KEYS, sort=False)["stage"].agg("→".join).rename("pattern").reset_index()
    t = _tasks(runs).merge(pat, on=KEYS, how="left")
    return _two_levels(t, ["pattern"], {"n": ("task_id", "size"), "k": ("correct", "sum")})


def base_transitions(runs):
    b = _blocks(runs).copy()
    b["target"] = b.groupby(KEYS, sort=False)["stage"].shift(-1).fillna("end")
    t = b.merge(_tasks(runs), on=KEYS)
    return _two_levels(t, ["stage", "target"], {"n": ("task_id", "size"),
                                                "median": ("duration_seconds", "median")})


def base_loops(runs):
    import pyarrow.csv as pacsv

    parts = [pacsv.read_csv(r.path / "trajectory.csv", convert_options=pacsv.ConvertOptions(
        include_columns=["task_id", "step_id", "tool", "action_input"])).to_pandas()
        .assign(run_id=r.run_id) for r in runs]
    s = pd.concat(parts, ignore_index=True).sort_values([*KEYS, "step_id"], kind="stable")
    g = s.groupby(KEYS, sort=False)
    hit = np.zeros(len(s), dtype=bool)
    for d in (1, 2, 3):
        hit |= ((s["tool"] == g["tool"].shift(d)) & (s["action_input"]
                                                      == g["action_input"].shift(d))).to_numpy()
    per_task = s.assign(hit=hit).groupby(KEYS)["hit"].sum().rename("loops").reset_index()
    t = _tasks(runs).merge(per_task, on=KEYS)
    t["loop"] = t["loops"] > 0
    return _two_levels(t, ["loop"], {"n": ("task_id", "size"), "k": ("correct", "sum")})


def base_recovery(runs):
    s = runs.trajectory[[*KEYS, "step_id", "tool", "stage", "success"]]
    c = runs.tool_calls[[*KEYS, "step_id", "tool_name", "success"]].rename(
        columns={"tool_name": "tool"}).merge(s[[*KEYS, "step_id", "stage"]],
                                             on=[*KEYS, "step_id"], how="left")
    ev = pd.concat([s, c], ignore_index=True)
    ev["key"] = ("tool:" + ev["tool"]).fillna("stage:" + ev["stage"])
    ok = ev[ev["success"].eq(True).fillna(False).to_numpy(bool)]
    last = pd.concat([ok.dropna(subset=["tool"]).groupby([*KEYS, "key"])["step_id"].max(),
                      ok.assign(key="stage:" + ok["stage"]).groupby([*KEYS, "key"])[
                          "step_id"].max()])
    err = ev[ev["success"].eq(False).fillna(False).to_numpy(bool)].drop_duplicates(
        [*KEYS, "step_id", "key"])
    err = err.join(last.rename("last_ok"), on=[*KEYS, "key"])
    err["recovered"] = err["last_ok"] > err["step_id"]
    err = err.merge(_tasks(runs), on=KEYS)
    agg = {"n": ("task_id", "size"), "k": ("recovered", "sum")}
    out = [*_two_levels(err, ["tool"], agg), *_two_levels(err, ["stage"], agg)]
    task = err.groupby(KEYS)["recovered"].all().rename("all_recovered").reset_index()
    task = _tasks(runs).merge(task, on=KEYS, how="left")
    return out + _two_levels(task, ["all_recovered"], {"n": ("task_id", "size"),
                                                       "k": ("correct", "sum")})


def base_first_failures(runs):
    s = runs.trajectory[[*KEYS, "step_id", "stage", "agent", "success"]]
    first = s[s["success"].eq(False).fillna(False)].sort_values("step_id").drop_duplicates(KEYS)
    t = _tasks(runs)
    t = t[~t["correct"]].merge(first, on=KEYS, how="left")
    paths = {r.run_id: r.path for r in runs}  # the replays' evidence, as the table reads it
    evidence = []
    for rid, tid in zip(t["run_id"], t["task_id"], strict=True):
        path = paths[rid] / tid / "task_replay.json"
        fa = json.loads(path.read_text()).get("failure_attribution") if path.is_file() else None
        evidence.append((fa or {}).get("evidence_trace_step_ids"))
    t["agree"] = [bool(e) and not pd.isna(s) and int(s) in e
                  for s, e in zip(t["step_id"], evidence, strict=True)]
    return _two_levels(t, ["stage", "agent"], {"n": ("task_id", "size"),
                                               "agree": ("agree", "sum")})


def base_step_latency(runs):
    """n, p50, p90, p99, the total time and the tokens' sum per run and stage, pooled and per
    difficulty; less than the table (bench/README.md): not its quantiles' intervals, the
    tokens' median, the share of time or its checks of the steps."""
    s = runs.trajectory[[*KEYS, "stage", "duration_seconds", "tokens"]].merge(_tasks(runs),
                                                                            on=KEYS)
    out = _two_levels(s, ["stage"], {"n": ("duration_seconds", "count"),
                                     "p50": ("duration_seconds", "median"),
                                     "total": ("duration_seconds", "sum"),
                                     "tokens": ("tokens", "sum")})
    for keys in (["run_id", "stage"], ["run_id", "difficulty", "stage"]):
        out.append(s.groupby(keys, observed=True)["duration_seconds"].quantile([0.9, 0.99]))
    return out


def base_solve_curve(runs):
    """The cumulative solved counts per run, pooled and per difficulty, up to the longest
    trajectory; less than the table (bench/README.md): not n, the share or its Wilson interval,
    and every row counted (the table: each task's valid, distinct steps)."""
    n = runs.trajectory.groupby(KEYS).size().rename("steps").reset_index()
    t = _tasks(runs).merge(n, on=KEYS)
    out = []
    for keys in (["run_id"], ["run_id", "difficulty"]):
        solved = t[t["correct"]].groupby([*keys, "steps"], observed=True).size().unstack(
            fill_value=0).reindex(columns=range(1, int(t["steps"].max()) + 1), fill_value=0)
        out.append(solved.cumsum(axis=1).stack())
    return out


def base_tool_fit(runs):
    c = runs.tool_calls[[*KEYS, "tool_name", "success"]]
    c = c.assign(failed=c["success"].eq(False).fillna(False).astype(bool))
    per = c.groupby([*KEYS, "tool_name"], sort=False).agg(
        calls=("success", "size"), failed=("failed", "sum"))
    t = per.reset_index().merge(runs.tasks[[*KEYS, "task_type", "difficulty", "final_score"]],
                                on=KEYS)
    t["correct"] = t["final_score"] >= 0.8
    agg = {"n": ("task_id", "size"), "k": ("correct", "sum"), "calls": ("calls", "sum")}
    return [t.groupby(["run_id", g, "tool_name"], observed=True).agg(**agg)
            for g in ("task_type", "difficulty")]


def tables():
    from dabench_analysis import trajectory as tr

    return {"variants": (tr.variants, base_variants),
            "conformance": (tr.conformance, base_variants),
            "transitions": (tr.transitions, base_transitions),
            "loops": (tr.loops, base_loops),
            "recovery": (tr.recovery, base_recovery),
            "first_failures": (tr.first_failures, base_first_failures),
            "step_latency": (tr.step_latency, base_step_latency),
            "solve_curve": (tr.solve_curve, base_solve_curve),
            "tool_fit": (tr.tool_fit, base_tool_fit)}


def _load(sweep: Path):
    from dabench_analysis import load_runs

    runs = load_runs(sweep, progress=False)
    _ = runs.trajectory, runs.tool_calls
    return runs


def _load_average() -> float:
    return round(os.getloadavg()[0], 2)


def bench_time(sweep: Path, repeats: int, names, warm_up: bool = True) -> dict:
    start = time.perf_counter()
    runs = _load(sweep)
    out = {"_load_s": round(time.perf_counter() - start, 2)}
    print(f"loaded {len(runs)} runs, {len(runs.trajectory):,} steps in {out['_load_s']} s "
          f"(load average {_load_average()})", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            table, base = tables()[name]
            if name == "loops" or warm_up:  # the loops' text column parsed and cached
                table(runs), base(runs)
            samples = {"table": [], "baseline": []}
            for _ in range(repeats):  # interleaved: other load on the machine hits both
                for key, fn in (("table", table), ("baseline", base)):
                    start = time.perf_counter()
                    fn(runs)
                    samples[key].append(time.perf_counter() - start)
            med = {k: statistics.median(v) for k, v in samples.items()}
            out[name] = {**{f"{k}_s": round(v, 4) for k, v in med.items()},
                         "samples": samples, "ratio": med["table"] / med["baseline"],
                         "load_average": _load_average()}
            print(f"{name:16s} table {med['table']:7.3f} s  baseline {med['baseline']:7.3f} s"
                  f"  ratio {out[name]['ratio']:.2f}  (load {out[name]['load_average']})",
                  flush=True)
    out["_steps"] = len(runs.trajectory)
    return out


def _status(field: str) -> int:
    """A ``/proc/self/status`` field (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _child(sweep: str, name: str) -> None:
    """In a fresh process: load the sweep, compute the table on its first run (the imports
    and allocator pools it needs are not counted), reset the peak RSS (``/proc/self/clear_refs``),
    compute one table; print its peak (``VmHWM`` after it minus ``VmRSS`` before it), the
    Arrow size of the loaded steps and of the free-text columns the table reads itself."""
    import gc

    import pyarrow as pa

    runs = _load(Path(sweep))
    with warnings.catch_warnings():  # warm-up on one run: imports and pools are not the table's
        warnings.simplefilter("ignore")
        tables()[name][0](next(iter(runs)))
    gc.collect()
    before = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark := the RSS now
    if _status("VmHWM") > before + 2**20:
        raise RuntimeError("could not reset the peak RSS (/proc/self/clear_refs)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        tables()[name][0](runs)
        seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    arrow = pa.Table.from_pandas(runs.trajectory, preserve_index=False).nbytes
    text = 0
    if name == "loops":  # the free text the table reads beyond the loaded steps
        text = sum(pa.Table.from_pandas(r.select("trajectory", ["action_input", "observation"]),
                                        preserve_index=False).nbytes for r in runs)
    print(json.dumps({"seconds": seconds, "rss_before": before, "peak": peak,
                      "peak_increase": peak - before, "arrow_bytes": arrow,
                      "text_arrow_bytes": text, "steps": len(runs.trajectory),
                      "frame_bytes": int(runs.trajectory.memory_usage(deep=True).sum())}))


def bench_memory(sweep: Path, names) -> dict:
    out = {}
    for name in names:
        res = subprocess.run([sys.executable, __file__, "--child", str(sweep), name],
                             capture_output=True, text=True, env=os.environ.copy())
        if res.returncode:
            raise RuntimeError(f"{name}: {res.stderr[-2000:]}")
        m = json.loads(res.stdout.strip().splitlines()[-1])
        out[name] = {**m, "ratio": m["peak_increase"] / m["arrow_bytes"],
                     "load_average": _load_average()}
        if m["text_arrow_bytes"]:
            out[name]["ratio_with_text"] = m["peak_increase"] / (m["arrow_bytes"]
                                                                 + m["text_arrow_bytes"])
        extra = (f", with its text ({m['text_arrow_bytes'] / 2**20:.0f} MiB) "
                 f"{out[name]['ratio_with_text']:.2f}" if m["text_arrow_bytes"] else "")
        print(f"{name:16s} peak +{m['peak_increase'] / 2**20:7.1f} MiB over the RSS after "
              f"loading; steps' Arrow size {m['arrow_bytes'] / 2**20:7.1f} MiB; ratio "
              f"{out[name]['ratio']:.2f}{extra}  (load {out[name]['load_average']})",
              flush=True)
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--text-len", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tables", nargs="+", default=list(DEFAULT_TABLES),
                    help="tables to measure, or 'all'")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--no-warm-up", action="store_true",
                    help="no untimed first call of each table (the loops' still has one)")
    ap.add_argument("--skip-time", action="store_true")
    ap.add_argument("--sweep-dir", type=Path, default=HERE / "_sweep")
    ap.add_argument("--out", type=Path, default=HERE / "trajectory_results.json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        os.environ.setdefault("DABENCH_CACHE_DIR", str(Path(args.child[0]).parent / ".cache"))
        _child(*args.child)
        return {}
    names = list(tables()) if args.tables == ["all"] else args.tables
    unknown = sorted(set(names) - set(tables()))
    if unknown:
        ap.error(f"unknown table(s) {', '.join(unknown)}; known: {', '.join(tables())}")
    os.environ.setdefault("DABENCH_CACHE_DIR", str(args.sweep_dir / ".cache"))  # not the user's
    sweep = make_sweep(args.sweep_dir, args.runs, args.tasks, args.text_len, args.steps)
    res = {"params": vars(args) | {"sweep_dir": str(args.sweep_dir), "out": str(args.out)}}
    if not args.skip_time:
        res["time"] = bench_time(sweep, args.repeats, names, not args.no_warm_up)
        worst_t = max(v["ratio"] for k, v in res["time"].items() if not k.startswith("_"))
        print(f"worst time ratio {worst_t:.2f} (target <= {TARGET_TIME:g})")
    if not args.skip_memory:
        res["memory"] = bench_memory(sweep, names)
        worst_m = max(v["ratio"] for v in res["memory"].values())
        print(f"worst memory ratio {worst_m:.2f} (target <= {TARGET_MEMORY:g})")
    args.out.write_text(json.dumps(res, indent=2, default=str))
    return res


if __name__ == "__main__":
    main()
