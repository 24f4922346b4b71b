"""Shared fixtures: a seeded rng, tiny generated runs, and reports built once per test session
(shared by every xdist worker; see ../conftest.py for the rest)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from notebook_runs import cli_report, locked

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


@pytest.fixture(scope="session")
def built_once(tmp_path_factory) -> Callable[[str, Callable[[Path], dict]], tuple[Path, dict]]:
    """``built_once(name, make)``: the folder ``make(folder)`` filled and the JSON-able result
    it returned, made once per test session however many xdist workers ask: the first to ask
    builds it under a file lock in the session's shared temporary folder, the others wait for it
    and read it. Tests must not write into the folder (copy it first)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this session (pytest-xdist's own layout)

    def get(name: str, make: Callable[[Path], dict]) -> tuple[Path, dict]:
        folder, done = base / f"once_{name}", base / f"once_{name}.json"
        with locked(base / f"once_{name}.lock"):
            if not done.is_file():
                shutil.rmtree(folder, ignore_errors=True)  # left by a builder that failed
                folder.mkdir()
                done.write_text(json.dumps(make(folder)))
        return folder, json.loads(done.read_text())

    return get


@pytest.fixture(scope="session")
def sample_report(built_once) -> tuple[SimpleNamespace, Path]:
    """The batch CLI with ``--jobs 2`` over the sample runs (``pending_run`` not evaluated), with
    ``--baseline baseline_react`` and ``--sweep``: two run reports, one comparison, the sweep and
    the index, built once per session. Returns (the process's returncode/stdout/stderr, out)."""
    def make(out: Path) -> dict:
        return cli_report(out, *(str(SAMPLE_RUNS / r) for r in (
            "baseline_react", "proposed_aat", "pending_run")), "--baseline",
            str(SAMPLE_RUNS / "baseline_react"), "--sweep", "--jobs", "2")

    out, proc = built_once("sample_report", make)
    return SimpleNamespace(**proc), out

