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


def _in_package_namespace(source: str, **names):
    """Functions compiled as if in a module of the package (outside_level steps over them)."""
    namespace = {"__name__": "dabench_analysis._probe", **names}
    exec(compile(source, "<package probe>", "exec"), namespace)  # noqa: S102
    return namespace


def test_a_package_function_at_the_bottom_of_a_thread_warns_without_crashing():
    """No frame outside the package (a public function run by ``_thread`` or ``atexit``): the
    warning names the outermost package frame, never an IndexError or a line past the stack."""
    import _thread
    import queue

    from dabench_analysis._caller import outside_level

    ns = _in_package_namespace(
        "def public(done):\n"
        "    try:\n"
        "        inner()\n"
        "        done.put(None)\n"
        "    except BaseException as exc:\n"
        "        done.put(exc)\n"
        "def inner():\n"
        "    warnings.warn('note', stacklevel=outside_level())\n"
        "def bottom(done):\n"
        "    try:\n"
        "        warnings.warn('note', stacklevel=outside_level())\n"
        "        done.put(None)\n"
        "    except BaseException as exc:\n"
        "        done.put(exc)\n",
        warnings=warnings, outside_level=outside_level)
    done: queue.Queue = queue.Queue()
    for function, line in (("public", 3), ("bottom", 11)):  # the frame that warns is the bottom
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _thread.start_new_thread(ns[function], (done,))
            assert done.get(timeout=10) is None
        assert [(w.filename, w.lineno) for w in caught] == [("<package probe>", line)]


def test_odd_globals_and_a_context_manager_still_name_the_callers_line(monkeypatch):
    from dabench_analysis.report._figure_writer import FIGURE_WRITER_ENV, writer_setting

    # a caller whose module has no string __name__ (exec with such globals): no AttributeError
    # (Python itself then drops the warning)
    g = {"__name__": None, "load_runs": load_runs, "run": str(SAMPLE)}
    exec("runs = load_runs([run], columns=['no_such_column'], progress=False)", g)  # noqa: S102
    assert g["runs"].run_ids == ["baseline_react"]
    # a warning inside the package's @contextmanager, given from contextlib's __enter__
    monkeypatch.setenv(FIGURE_WRITER_ENV, "yes")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with writer_setting({}):
            pass
    assert [w.filename for w in caught] == [__file__]
