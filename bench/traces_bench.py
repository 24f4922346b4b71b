"""Loading real SWE-bench trajectories against a plain ``json.load`` of their files (issue 35,
item 7).

Reads the shared mini-swe-agent trajectories (``--source``, default the 40 of
``../shared/realdata/mini-swe-agent``), optionally replicated to ``--tasks`` tasks (each copy
a new instance id, in a temporary folder with the resolved list), then times, in one process,
interleaved and ``--repeats`` times (medians): ``json.load`` of every file, the reader alone
(``read_swe``: the Record) and ``load_run`` (the typed Run: tasks, trajectory, tool calls).
Prints the ratios (target: ``load_run`` within 2x the plain load), of wall time and of the
process's CPU time (``time.process_time``: steadier on a machine others share).

    .venv/bin/python bench/traces_bench.py [--tasks 500 --repeats 5]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

#: ``../shared`` beside the checkout (a worktree one level further down: its parent's).
SOURCE = next((p / "shared" / "realdata" / "mini-swe-agent"
               for p in Path(__file__).resolve().parents[2:4]
               if (p / "shared" / "realdata").is_dir()),
              Path("../shared/realdata/mini-swe-agent"))


def replicate(source: Path, tasks: int, out: Path) -> Path:
    """``source``'s trajectories copied to ``tasks`` instances (new ids) under ``out``."""
    files = sorted(source.glob("trajs/*/*.traj.json"))
    with open(source / "results_summary.csv", newline="", encoding="utf-8") as fh:
        resolved = {r["instance_id"]: r["resolved"] for r in csv.DictReader(fh)}
    rows = []
    for i in range(tasks):
        f = files[i % len(files)]
        data = json.loads(f.read_text(encoding="utf-8"))
        iid = f"{data['instance_id']}__{i // len(files)}"
        rows.append((iid, resolved[data["instance_id"]]))
        data["instance_id"] = iid
        (out / "trajs" / iid).mkdir(parents=True)
        (out / "trajs" / iid / f"{iid}.traj.json").write_text(json.dumps(data), encoding="utf-8")
    with open(out / "results_summary.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([("instance_id", "resolved"), *rows])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--tasks", type=int, default=0, help="replicate to this many (0: as is)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import dabench_analysis as da
    from dabench_analysis.harnesses._swe_traj import read_swe

    tmp = Path(tempfile.mkdtemp(prefix="traces_bench_"))
    try:
        folder = replicate(args.source, args.tasks, tmp) if args.tasks else args.source
        files = sorted(folder.glob("trajs/*/*.traj.json"))
        measures = {"json.load": lambda: [json.load(open(f, encoding="utf-8")) for f in files],
                    "read_swe": lambda: read_swe(folder), "load_run": lambda: da.load_run(folder)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = da.load_run(folder)
            times = {k: [] for k in measures}
            cpu = {k: [] for k in measures}
            for _ in range(args.repeats):
                for name, fn in measures.items():
                    start, start_cpu = time.perf_counter(), time.process_time()
                    fn()
                    times[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - start_cpu)
        med = {k: statistics.median(v) for k, v in times.items()}
        med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
        print(f"{len(run.tasks)} tasks, {len(run.trajectory)} steps, {len(run.tool_calls)} calls")
        for name, t in med.items():
            c = med_cpu[name]
            print(f"{name:10s} {t:.3f} s  x{t / med['json.load']:.2f}   cpu {c:.3f} s  "
                  f"x{c / med_cpu['json.load']:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
