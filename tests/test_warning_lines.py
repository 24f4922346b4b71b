"""A warning names the user's line, whatever path of the package made it: ``load_run`` or
``load_runs``, a frame read through a cached property (``run.trajectory``), a statistic. Fixed
``stacklevel`` numbers named a line of the library on some paths (``_loader.py`` for a legacy
task file, ``functools.py`` for a side file's rejected values)."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load_run, load_runs
from dabench_analysis.load import cache
from dabench_analysis.stats.reliability import aggregate_annotators

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs" / "baseline_react"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))


def _caught(action) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    assert caught, "no warning"
    return caught


def _lines(caught) -> set[str]:
    return {w.filename for w in caught}


@pytest.fixture
def legacy_run(tmp_path) -> Path:
    run = tmp_path / "legacy" / "run_a"
    shutil.copytree(SAMPLE, run)
    (run / "task_metrics.csv").unlink()
    return run


@pytest.fixture
def bad_step_run(tmp_path) -> Path:
    """The sample run with one step duration that is no number."""
    run = tmp_path / "bad_step" / "run_b"
    shutil.copytree(SAMPLE, run)
    frame = pd.read_csv(run / "trajectory.csv", dtype=str, keep_default_na=False)
    frame.loc[0, "duration_seconds"] = "soon"
    frame.to_csv(run / "trajectory.csv", index=False)
    return run


def test_task_file_warnings_name_the_callers_line(legacy_run):
    for load in (lambda: load_run(legacy_run), lambda: load_runs([legacy_run], progress=False),
                 lambda: load_runs(legacy_run.parent, progress=False)):
        caught = _caught(load)
        assert any("only the legacy" in str(w.message) for w in caught)
        assert _lines(caught) == {__file__}


def test_side_file_warnings_through_a_cached_property_name_the_callers_line(bad_step_run):
    for load in (lambda: load_run(bad_step_run).trajectory,
                 lambda: load_runs([bad_step_run], progress=False).trajectory):
        caught = _caught(load)
        assert [re.sub(r"\d+ problem", "N problem", str(w.message)) for w in caught] == [
            "baseline_react: N problem(s) in trajectory.csv; rejected values set to missing "
            "(see run.findings)"]
        assert _lines(caught) == {__file__}


def test_sweep_and_statistics_warnings_name_the_callers_line(tmp_path):
    for name in ("a", "b"):  # one run in two folders: the second is skipped with a warning
        shutil.copytree(SAMPLE, tmp_path / "dup" / name)
    caught = _caught(lambda: load_runs(tmp_path / "dup", progress=False))
    assert any("appears in" in str(w.message) for w in caught)
    assert _lines(caught) == {__file__}
    caught = _caught(lambda: load_runs([SAMPLE], columns=["no_such_column"], progress=False))
    assert _lines(caught) == {__file__}
    ratings = pd.DataFrame({"r1": [5, 1, None], "r2": [1, 1, None]})  # a tie, an unrated item
    caught = _caught(lambda: aggregate_annotators(ratings, pass_threshold=3))
    assert _lines(caught) == {__file__}


def test_no_fixed_stacklevel_is_left_in_the_package():
    """The whole kind: every warning of the package counts its own frames
    (:func:`dabench_analysis._caller.outside_level`)."""
    fixed = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "dabench_analysis").rglob("*.py")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"stacklevel=\d", line)]
    assert fixed == []
