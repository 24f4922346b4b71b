"""Benchmark of the trajectory tables on a sweep (issue 23, item 13).

Generates (or reuses) a sweep with ``run_bench.make_sweep`` (the package's seeded generator,
``--runs`` runs × ``--tasks`` tasks, ``--steps`` steps per task on average, ``--text-len``
characters of thought), loads it once (``load_runs``: tasks, trajectories and tool calls, parse
cache warm), then times each table of ``dabench_analysis.trajectory`` on the whole sweep
(a ``Runs``: one table per run, pooled and per difficulty) against the plain pandas / Arrow code
that computes the same counts from the same loaded frames (the baseline also reads what the
table reads beyond them: ``action_input`` for the loops, with ``pyarrow.csv``), and prints the
ratio per table, target ≤ 3.

Memory: in a fresh subprocess per table, the sweep's trajectories are loaded (default columns),
then the table is computed; the increase of the peak RSS (``ru_maxrss``) over the peak of
loading is compared with the trajectory frame's own size (``memory_usage(deep=True)``), target
≤ 1; also shown, the peak over the memory held right after loading (the table's working set,
which a load's own transient peak may hide).

The full sweep of the issue (200 runs × 500 tasks × ~30 steps, ~6 GB on disk) does not fit a
shared 2-core machine; the default is the stated subset 40 runs × 200 tasks × 20 steps
(160 000 steps). Results go to ``bench/trajectory_results.json``.

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
os.environ.setdefault("DABENCH_CACHE_DIR", str(HERE / "_sweep" / ".cache"))
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from run_bench import make_sweep  # noqa: E402

TARGET_TIME, TARGET_MEMORY = 3.0, 1.0
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


def bench_time(sweep: Path, repeats: int) -> dict:
    runs = _load(sweep)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (table, base) in tables().items():
            table(runs), base(runs)  # warm-up: the loops' text column parsed and cached
            samples = {"table": [], "baseline": []}
            for _ in range(repeats):  # interleaved: other load on the machine hits both
                for key, fn in (("table", table), ("baseline", base)):
                    start = time.perf_counter()
                    fn(runs)
                    samples[key].append(time.perf_counter() - start)
            med = {k: statistics.median(v) for k, v in samples.items()}
            out[name] = {**{f"{k}_s": round(v, 4) for k, v in med.items()},
                         "ratio": med["table"] / med["baseline"]}
            print(f"{name:16s} table {med['table']:7.3f} s  baseline {med['baseline']:7.3f} s"
                  f"  ratio {out[name]['ratio']:.2f}", flush=True)
    out["_steps"] = len(runs.trajectory)
    return out


def _status(field: str) -> int:
    """A ``/proc/self/status`` field (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _child(sweep: str, name: str) -> None:
    """In a fresh process: load the sweep (peak after loading), then one table (peak after);
    the peak is also reset after loading (``/proc/self/clear_refs``, Linux) so that the
    table's own peak over the memory held after loading is measured too."""
    import gc
    import resource

    runs = _load(Path(sweep))
    gc.collect()
    frame = int(runs.trajectory.memory_usage(deep=True).sum())
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rss = _status("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset the high-water mark
        reset = True
    except OSError:
        reset = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables()[name][0](runs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    own = _status("VmHWM") if reset else peak
    print(json.dumps({"frame_bytes": frame, "peak_after_load": loaded, "peak_after": peak,
                      "rss_after_load": rss, "own_peak": own, "reset": reset}))


def bench_memory(sweep: Path) -> dict:
    out = {}
    for name in tables():
        res = subprocess.run([sys.executable, __file__, "--child", str(sweep), name],
                             capture_output=True, text=True, env=os.environ.copy())
        if res.returncode:
            raise RuntimeError(f"{name}: {res.stderr[-2000:]}")
        m = json.loads(res.stdout.strip().splitlines()[-1])
        extra = max(0, m["peak_after"] - m["peak_after_load"])
        working = max(0, m["own_peak"] - m["rss_after_load"])
        out[name] = {**m, "extra_bytes": extra, "ratio": extra / m["frame_bytes"],
                     "working_bytes": working, "working_ratio": working / m["frame_bytes"]}
        print(f"{name:16s} peak +{extra / 2**20:6.1f} MiB over loading's peak (at most "
              f"+{working / 2**20:6.1f} MiB over the memory after loading); trajectory frame "
              f"{m['frame_bytes'] / 2**20:6.1f} MiB; ratio {out[name]['ratio']:.2f} "
              f"({out[name]['working_ratio']:.2f})", flush=True)
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--text-len", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--sweep-dir", type=Path, default=HERE / "_sweep")
    ap.add_argument("--out", type=Path, default=HERE / "trajectory_results.json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(*args.child)
        return {}
    sweep = make_sweep(args.sweep_dir, args.runs, args.tasks, args.text_len, args.steps)
    res = {"params": vars(args) | {"sweep_dir": str(args.sweep_dir), "out": str(args.out)},
           "time": bench_time(sweep, args.repeats)}
    if not args.skip_memory:
        res["memory"] = bench_memory(sweep)
    worst_t = max(v["ratio"] for k, v in res["time"].items() if not k.startswith("_"))
    print(f"worst time ratio {worst_t:.2f} (target <= {TARGET_TIME:g})")
    if "memory" in res:
        worst_m = max(v["ratio"] for v in res["memory"].values())
        print(f"worst memory ratio {worst_m:.2f} (target <= {TARGET_MEMORY:g})")
    args.out.write_text(json.dumps(res, indent=2, default=str))
    return res


if __name__ == "__main__":
    main()
