"""Applies to tests and doctests: Agg backend, repo root as working directory, closed figures."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# The tests' parse cache lives in a temporary folder, not in the user's cache directory.
_CACHE = tempfile.mkdtemp(prefix="dabench-test-cache-")
os.environ["DABENCH_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _repo_root_and_closed_figures(monkeypatch):
    monkeypatch.chdir(ROOT)
    yield
    plt.close("all")
