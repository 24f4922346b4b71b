"""The run report against the import floor on one run (issue 37 item 3: "the run report <= 2x the
papermill floor notebook (bench/floor.ipynb) on the sample run").

Three notebooks, interleaved, each through ``report.run_notebook`` with the HTML export and the
parse cache cleared before it: ``bench/floor.ipynb`` (the baseline: a kernel that imports the
scientific stack), ``notebooks/run_report.ipynb`` as the runner runs it (with the figure writer
when a core is left over), and the same report with ``DABENCH_FIGURE_WRITER=0`` (every figure
saved in the kernel). Prints the medians, ``report_vs_floor`` (target <= 2),
``report_in_kernel_vs_floor`` and ``writer_speedup``, and each report's slowest cells.

    python bench/report_bench.py [RUN_DIR] [--repeats 5]

RUN_DIR defaults to the sample run ``data/sample_runs/baseline_react``. Run it on an idle
machine: other work shows up in every timing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from run_bench import _cell_times  # noqa: E402

WRITER_ENV = "DABENCH_FIGURE_WRITER"


def main(argv: list[str] | None = None) -> dict:
    """Run the comparison; return the medians and ratios (also printed as JSON)."""
    from dabench_analysis import report
    from dabench_analysis.load import cache

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", nargs="?", type=Path,
                    default=ROOT / "data" / "sample_runs" / "baseline_react")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    run = args.run_dir.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="dabench-report-bench-"))
    notebooks = {"floor": (HERE / "floor.ipynb", None),
                 "report": (report.NOTEBOOK_DIR / "run_report.ipynb", None),
                 "report_in_kernel": (report.NOTEBOOK_DIR / "run_report.ipynb", "0")}
    samples: dict[str, list[float]] = {k: [] for k in notebooks}
    own = os.environ.get(WRITER_ENV)
    for i in range(args.repeats + 1):  # the first round warms the page cache and is dropped
        for name, (nb, writer) in notebooks.items():
            if writer is None:
                os.environ.pop(WRITER_ENV, None)
            else:
                os.environ[WRITER_ENV] = writer
            cache.clear()
            start = time.perf_counter()
            report.run_notebook(nb, tmp / name, {"run_dir": str(run), "output_dir": str(tmp / name)})
            if i:
                samples[name].append(time.perf_counter() - start)
    if own is None:
        os.environ.pop(WRITER_ENV, None)
    else:
        os.environ[WRITER_ENV] = own
    med = {k: statistics.median(v) for k, v in samples.items()}
    out = {"run": str(run), "repeats": args.repeats, "cpus": len(os.sched_getaffinity(0)),
           "loadavg_end": os.getloadavg(), "samples_s": samples, "median_s": med,
           "report_vs_floor": med["report"] / med["floor"],
           "report_in_kernel_vs_floor": med["report_in_kernel"] / med["floor"],
           "writer_speedup": med["report_in_kernel"] / med["report"],
           "cells": {k: _cell_times(tmp / k / "report.ipynb") for k in notebooks}}
    print(json.dumps(out, indent=1, default=str))
    return out


if __name__ == "__main__":
    main()
