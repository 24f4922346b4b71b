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
