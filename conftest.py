"""Applies to tests and doctests: Agg backend, repo root as working directory, closed figures."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _repo_root_and_closed_figures(monkeypatch):
    monkeypatch.chdir(ROOT)
    yield
    plt.close("all")
