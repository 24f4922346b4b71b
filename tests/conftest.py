"""Shared fixtures: a seeded rng and tiny generated runs (see ../conftest.py for the rest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RUNS = ROOT / "data" / "sample_runs"


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory):
    """Two small generated runs on the same 12 tasks: (baseline_dir, proposed_dir)."""
    from dabench_analysis.synthetic import generate_run

    root = tmp_path_factory.mktemp("tiny_runs")
    base = generate_run(root, run_id="tiny_base", n_tasks=12, seed=1, skill=0.0)
    prop = generate_run(root, run_id="tiny_prop", n_tasks=12, seed=2, skill=0.6)
    return base, prop


def _drop_columns(run_dir: Path, columns: set[str], rename: dict[str, str] | None = None) -> None:
    """Rewrite ``run_dir/task_metrics.csv`` without ``columns`` (header names in ``rename``
    renamed), every other byte as it was: Python's csv module reads and writes it."""
    import csv

    path = run_dir / "task_metrics.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    keep = [i for i, h in enumerate(rows[0]) if h not in columns]
    rename = rename or {}
    rows[0] = [rename.get(h, h) for h in rows[0]]
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])


@pytest.fixture(scope="session")
def drop_columns():
    """The function that removes task_metrics columns from a copied run (see _drop_columns)."""
    return _drop_columns
