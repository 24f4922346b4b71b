"""One threshold check (issue 13, item 4): every public function of ``tables``, ``stats`` and
``figures`` with a ``threshold`` on the [0, 1] final_score scale refuses 80, 0, -0.1 and 1.5 with
a ValueError naming the argument and the scale, and accepts 1.0."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load_run, tables
from dabench_analysis.stats import check_threshold
from dabench_analysis.tables import mas

SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "data" / "sample_runs"

#: Functions with a ``threshold`` whose module this change could not edit; each must call
#: ``dabench_analysis.stats.check_threshold`` (remove it here when it does).
NOT_YET_CHECKED: dict[str, str] = {}  # every public function with a threshold checks it


def _functions_with_a_threshold():
    found = {}
    for pkg in ("tables", "stats", "figures"):
        package = importlib.import_module(f"dabench_analysis.{pkg}")
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"dabench_analysis.{pkg}.{info.name}")
            for name, f in inspect.getmembers(module, inspect.isfunction):
                if (not name.startswith("_") and f.__module__ == module.__name__
                        and "threshold" in inspect.signature(f).parameters
                        and f is not check_threshold):
                    found[f"{f.__module__}.{name}"] = f
    return found


FUNCTIONS = _functions_with_a_threshold()


def _params():
    for qualname, f in sorted(FUNCTIONS.items()):
        marks = ([pytest.mark.xfail(reason=NOT_YET_CHECKED[qualname], strict=True)]
                 if qualname in NOT_YET_CHECKED else [])
        yield pytest.param(f, id=qualname.removeprefix("dabench_analysis."), marks=marks)


@pytest.fixture(scope="module")
def tasks() -> pd.DataFrame:
    return load_run(SAMPLE_RUNS / "proposed_aat").tasks


def _call(f, tasks: pd.DataFrame, threshold):
    first = list(inspect.signature(f).parameters)[:2]
    args = (tasks, tasks) if first[1] in ("proposed", "proposed_correct") else (tasks,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, threshold=threshold)


def test_the_public_functions_are_found():
    names = set(FUNCTIONS)
    assert {"dabench_analysis.tables.paper.difficulty_breakdown",
            "dabench_analysis.tables.mas.specialist_value",
            "dabench_analysis.stats.calibration.expected_calibration_error",
            "dabench_analysis.figures.calibration.reliability_diagram",
            "dabench_analysis.figures.distributions.score_distribution"} <= names


@pytest.mark.parametrize("bad", [80, 0, -0.1, 1.5])
@pytest.mark.parametrize("f", list(_params()))
def test_threshold_outside_zero_one_is_refused(f, tasks, bad):
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\] on the \w+ scale"):
        _call(f, tasks, bad)


@pytest.mark.parametrize("f", [pytest.param(f, id=q.removeprefix("dabench_analysis."))
                               for q, f in sorted(FUNCTIONS.items())])
def test_threshold_one_is_allowed(f, tasks):
    _call(f, tasks, 1.0)


def test_message_names_argument_scale_and_suggests_a_share():
    with pytest.raises(ValueError) as e:
        check_threshold(80)
    assert str(e.value) == ("threshold must be in (0, 1] on the final_score scale, got 80; "
                            "did you mean 0.8?")
    with pytest.raises(ValueError, match="got 0$"):
        check_threshold(0)
    with pytest.raises(ValueError, match="success_threshold must be in .* got -0.1$"):
        check_threshold(-0.1, name="success_threshold")
    with pytest.raises(ValueError, match="got 1.5; did you mean 0.015"):
        check_threshold(1.5)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), True, "0.8", None])
def test_non_numbers_are_refused(bad):
    with pytest.raises(ValueError, match="threshold must be"):
        check_threshold(bad)


def test_the_threshold_reaches_the_tables(tasks):
    # strictest threshold: only perfect scores are correct, in every table that counts them
    perfect = float((tasks["final_score"] >= 1.0).mean())
    assert tables.key_numbers(tasks, threshold=1.0)["answer_accuracy"] == pytest.approx(perfect)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # schema agent used on every task: no comparison group
        sv = mas.specialist_value(tasks, threshold=1.0)
        default = mas.specialist_value(tasks)
    assert (sv.accuracy_with <= default.accuracy_with).all()
    assert not sv.accuracy_with.equals(default.accuracy_with)
