"""Every trajectory table on a 500-task SWE-bench run (issue 35, item 7): the shared
mini-swe-agent trajectories replicated to ``--tasks`` tasks (``traces_bench.replicate``), loaded
once, then each table timed ``--repeats`` times (median, seconds; target < 2 s each). A table
the run cannot feed (no stages, no labels) is listed as skipped.

    .venv/bin/python bench/swe_tables_bench.py [--tasks 500 --repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from traces_bench import SOURCE, replicate  # noqa: E402


def tables(tr, run) -> dict:
    """name -> a call computing one table."""
    ff = tr.first_failures(run)
    return {
        "variants(by=auto, cycles)": lambda: tr.variants(run, by="auto", collapse_cycles=True),
        "variants(by=auto, shape=auto)": lambda: tr.variants(run, by="auto", shape="auto"),
        "variants(by=action_class, first)": lambda: tr.variants(run, by="action_class",
                                                                shape="first"),
        "variants(by=program, shape)": lambda: tr.variants(run, by="program",
                                                           collapse_cycles="shape"),
        "transitions(by=auto)": lambda: tr.transitions(run, by="auto"),
        "transitions(by=program)": lambda: tr.transitions(run, by="program"),
        "conformance": lambda: tr.conformance(run),
        "loop_tasks": lambda: tr.loop_tasks(run), "loops": lambda: tr.loops(run),
        "recovery": lambda: tr.recovery(run), "first_failures": lambda: tr.first_failures(run),
        "first_failure_counts": lambda: tr.first_failure_counts(ff),
        "first_failure_agreement": lambda: tr.first_failure_agreement(ff),
        "mistake_agreement": lambda: tr.mistake_agreement(run),
        "step_latency(by=auto)": lambda: tr.step_latency(run, by="auto"),
        "solve_curve": lambda: tr.solve_curve(run), "tool_fit": lambda: tr.tool_fit(run),
        "agent_attribution": lambda: tr.agent_attribution(run)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import dabench_analysis as da
    from dabench_analysis.schema.needs import Skipped

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        run = da.load_run(replicate(args.source, args.tasks, Path(tmp)))
        print(f"{len(run.tasks)} tasks, {len(run.trajectory)} steps, "
              f"{len(run.tool_calls)} tool calls")
        for name, call in tables(da.trajectory, run).items():
            times = []
            try:
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - t0)
            except Skipped as exc:
                print(f"{name:32s} skipped: {exc.reason}")
                continue
            med = statistics.median(times)
            print(f"{name:32s} {med:7.3f} s {'ok' if med < 2 else 'OVER 2 s'}")


if __name__ == "__main__":
    main()
