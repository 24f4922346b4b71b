"""The committed figures of the README and the docs, drawn by the package: the leaderboard of a
synthetic sweep of 12 runs × 120 tasks (bench/sweep_bench.py's generator, seeded; the README,
docs/guide/sweeps.md, the gallery) and the directly-follows graph of the sample run
baseline_react (docs/guide/trajectories.md, the gallery).

    .venv/bin/python docs/make_readme_figures.py      # writes docs/leaderboard_forest.png,
                                                      # docs/transition_graph.png
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))

from sweep_bench import synthetic_sweep  # noqa: E402

from dabench_analysis import export, figures, load_run, tables, trajectory  # noqa: E402


def main() -> None:
    tasks, _ = synthetic_sweep(12, 120, reps=1, seed=7)
    board = tables.sweep.leaderboard(tasks, n_boot=2000, seed=0)
    ax = figures.leaderboard_forest(board)
    export.save_figure(ax.figure, HERE / "leaderboard_forest", formats=("png",), dpi=150)
    run = load_run(HERE.parent / "data" / "sample_runs" / "baseline_react")
    ax = trajectory.figures.transition_graph(trajectory.transitions(run))
    export.save_figure(ax.figure, HERE / "transition_graph", formats=("png",), dpi=150)


if __name__ == "__main__":
    main()
