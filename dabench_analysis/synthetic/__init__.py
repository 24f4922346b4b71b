"""Seeded generators of sample data: eval-v2 runs (:mod:`._evalv2`), a judge study
(``judge``) and a research-eval session.

``python -m dabench_analysis.synthetic [OUT_DIR]`` regenerates the committed sample runs in
``data/sample_runs/`` byte for byte.

Public modules besides those above (reached as ``da.<folder>.<module>``): ``research_eval``
(seeded sample of a research-eval harness session (seed 002)).
"""

from __future__ import annotations

from pathlib import Path

from dabench_analysis.synthetic._evalv2 import Task, generate_run, make_tasks

__all__ = ["SAMPLE_RUNS", "generate_run", "generate_sample_runs", "make_tasks", "Task"]

#: The committed sample runs: run_id -> generator arguments.
SAMPLE_RUNS: dict[str, dict] = {
    "baseline_react": {"skill": 0.0, "seed": 101},
    "proposed_aat": {"skill": 1.0, "seed": 202},
}
PENDING_RUN = "pending_run"


def generate_sample_runs(out_dir: str | Path = "data/sample_runs", *, n_tasks: int = 80) -> list[Path]:
    """Write the sample runs: a baseline, a proposed system, and a run not yet evaluated.

    Parameters
    ----------
    out_dir : path-like
        Parent folder of the run directories.
    n_tasks : int
        Tasks per run (both evaluated runs share the same tasks).

    Returns
    -------
    list of Path
        The evaluated run directories (the pending run, which only has ``task_*/trace.json``
        and no eval-v2 artifacts, is written but not returned).

    Examples
    --------
    >>> import tempfile
    >>> [p.name for p in generate_sample_runs(tempfile.mkdtemp(), n_tasks=8)]
    ['baseline_react', 'proposed_aat']
    """
    out = Path(out_dir)
    paths = [generate_run(out, run_id=rid, n_tasks=n_tasks, **kw) for rid, kw in SAMPLE_RUNS.items()]
    pending = out / PENDING_RUN / "task_1"
    pending.mkdir(parents=True, exist_ok=True)
    (pending / "trace.json").write_text('{"task_id": "task_1", "steps": []}\n', encoding="utf-8")
    return paths
