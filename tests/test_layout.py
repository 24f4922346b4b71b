"""The package's layout: old import paths still work, modules stay readable, one implementation
each of flag parsing, the column check and McNemar's degenerate case."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis import schema
from dabench_analysis.load import parse_flags
from dabench_analysis.stats import StatisticsWarning, mcnemar
from dabench_analysis.stats.inputs import as_bool
from dabench_analysis.tables import mas

PKG = Path(da.__file__).resolve().parent


def test_old_module_names_import_with_a_deprecation_warning():
    """In a fresh interpreter, ``import dabench_analysis.<old>`` warns, naming the new home."""
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "import dabench_analysis as da\n"
            "for old in sorted(da.MOVED):\n"
            "    try:\n        __import__(f'dabench_analysis.{old}')\n"
            "    except DeprecationWarning as w:\n        print(w)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    warned = out.stdout.splitlines()
    assert [w.split()[0] for w in warned] == [f"dabench_analysis.{o}" for o in sorted(da.MOVED)]
    assert "dabench_analysis.style moved to dabench_analysis.figures.theme / " \
           "dabench_analysis.export.figures; the old name will be removed" in warned


@pytest.mark.parametrize("old", sorted(da.MOVED))
def test_old_module_names_hold_the_same_objects(old):
    homes = [importlib.import_module(f"dabench_analysis.{m}") for m in da.MOVED[old]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(f"dabench_analysis.{old}")
    for home in homes:
        for name in home.__all__ if hasattr(home, "__all__") else [
                n for n in vars(home) if not n.startswith("_")]:
            assert getattr(module, name) is getattr(home, name), (old, name)


def test_readme_snippets_old_and_new_paths_give_the_same_functions(monkeypatch):
    monkeypatch.delattr(da, "calibration", raising=False)
    monkeypatch.delitem(sys.modules, "dabench_analysis.calibration", raising=False)
    with pytest.warns(DeprecationWarning, match="calibration moved to"):
        old = da.calibration.calibration_table
    assert old is da.stats.calibration.calibration_table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from dabench_analysis.ablation import specialist_value
        from dabench_analysis.style import apply_style, save_and_show
    assert specialist_value is da.tables.mas.specialist_value
    assert apply_style is da.figures.apply_style and save_and_show is da.export.save_and_show
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        da.nonsense  # noqa: B018


def test_every_module_is_readable_in_one_sitting():
    """<= 400 lines, or <= 500 with the reason in the module's opening comment (issue 15)."""
    for f in PKG.rglob("*.py"):
        lines = f.read_text().splitlines()
        assert len(lines) <= 500, f
        if len(lines) > 400:
            assert lines[0].startswith("# Over 400 lines"), f


def test_the_layer_folders_are_the_pipeline():
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == {"schema", "load", "validate", "stats", "tables", "figures", "export",
                       "report", "synthetic"}
    loose = {p.name for p in PKG.glob("*.py")}
    assert loose == {"__init__.py", "_atomic.py"}


# One flag vocabulary: the loader and the statistics read every spelling the same way.
SPELLINGS = [("1", True), ("0", False), ("true", True), ("FALSE", False), (" True ", True),
             ("yes", True), ("No", False), ("t", True), ("F", False), ("1.0", True),
             ("0.0", False), ("PASS", True), ("fail", False), ("y", True), ("n", False)]


@pytest.mark.parametrize(("text", "value"), SPELLINGS)
def test_one_flag_vocabulary_for_loading_and_statistics(text, value):
    loaded, coerced, bad = parse_flags(pd.Series([text]))
    assert bool(loaded.iloc[0]) is value and not bad.iloc[0]
    assert bool(as_bool(pd.Series([text]), "flag").iloc[0]) is value
    plain = text.strip().lower() in {s.lower() for s in schema.FLAG_TRUE + schema.FLAG_FALSE}
    assert bool(coerced.iloc[0]) is not plain


@pytest.mark.parametrize("text", ["2", "maybe", "-1", "truthy"])
def test_a_non_flag_is_an_error_in_both(text):
    loaded, coerced, bad = parse_flags(pd.Series([text]))
    assert loaded.isna().all() and bad.all() and not coerced.any()
    with pytest.raises(ValueError, match="not a boolean"):
        as_bool(pd.Series([text]), "flag")


def test_one_column_check():
    frame = pd.DataFrame({"final_score": [1.0]})
    for call in (lambda: da.tables.main_results(frame, metrics=["final_scor"]),
                 lambda: da.tables.research_eval.pass_rate(frame),
                 lambda: da.export.save_table(frame, Path("/nonexistent/t"), columns=["x"])):
        with pytest.raises(ValueError, match=r"not in .*; known: final_score"):
            call()


def test_mcnemar_degenerate_case_is_defined_once():
    """No discordant pair: statistic 0, p = 1.0 and the same note from both users of the rule
    (R's mcnemar.test gives NaN here; binom.test(0, 0) is undefined)."""
    flags = pd.Series([True, False, True])
    with pytest.warns(StatisticsWarning, match="no discordant pairs: p set to 1.0"):
        paired = mcnemar(flags, flags).iloc[0]
    with pytest.warns(StatisticsWarning, match="no discordant pairs: p set to 1.0"):
        recovery = mas.mas_effectiveness(pd.DataFrame({"initial_answer_correct": flags,
                                                       "final_answer_correct": flags})).iloc[0]
    assert (paired["statistic"], paired["p_value"]) == (recovery["statistic"], recovery["p_value"])
    assert (paired["statistic"], paired["p_value"]) == (0.0, 1.0)


def test_mcnemar_exact_matches_r_in_both_users():
    """R: binom.test(3, 17)$p.value = 0.01272583 (b = 3, c = 14)."""
    base = pd.Series([True] * 3 + [False] * 14 + [True] * 5)
    prop = pd.Series([False] * 3 + [True] * 14 + [True] * 5)
    assert mcnemar(base, prop)["p_value"].iloc[0] == pytest.approx(0.01272583, abs=1e-8)
    rec = mas.mas_effectiveness(pd.DataFrame({"initial_answer_correct": base,
                                              "final_answer_correct": prop}))
    assert rec["p_value"].iloc[0] == pytest.approx(0.01272583, abs=1e-8)
    assert (rec["n_recovered"].iloc[0], rec["n_regressed"].iloc[0]) == (14, 3)


def test_table_helpers_left_the_figures_namespace_with_a_warning():
    assert "correct_mask" not in da.figures.__all__ and "require_columns" not in da.figures.__all__
    with pytest.warns(DeprecationWarning, match="moved to dabench_analysis.tables.correct_mask"):
        assert da.figures.correct_mask is da.tables.correct_mask


def test_judge_reader_left_the_synthetic_package_with_a_warning():
    from dabench_analysis.synthetic import judge

    with pytest.warns(DeprecationWarning, match="moved to dabench_analysis.load.read_judge_study"):
        assert judge.read_judge_study is da.load.read_judge_study
