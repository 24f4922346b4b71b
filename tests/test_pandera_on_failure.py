"""pandera describes values that fail; a run whose values all pass never imports it.

The per-file loader (``load.coerce.check_domain``) and the cross-file invariants
(``validate.invariants.check_invariants``) first decide without pandera whether anything fails
(``_domain_passes``, ``_holds_everywhere``). These tests check that decision against pandera
itself on generated frames (it must never call a frame clean that pandera rejects), and that a
clean run loads and validates without pandera while a run with a bad value still gets its
finding, by file, row and column.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dabench_analysis import schema
from dabench_analysis.load import coerce
from dabench_analysis.validate import invariants

SAMPLE = "data/sample_runs/proposed_aat"
SPECS = tuple(schema.column(c) for c in
              ("run_id", "task_id", "difficulty", "final_score", "execution_time", "llm_calls",
               "confidence_score"))
KEYS = ("task_id",)

_FLOATS = st.sampled_from([0.0, 0.5, 1.0, 1.5, -0.25, 7.0, np.nan, np.inf, -np.inf])
_COUNTS = st.sampled_from([0, 3, -1, None])
_IDS = st.sampled_from(["task_1", "task_2", "task_3", None])
_LEVELS = st.sampled_from(["Easy", "Hard", None])


@st.composite
def _frames(draw) -> pd.DataFrame:
    n = draw(st.integers(1, 5))
    df = pd.DataFrame({
        "run_id": pd.array(["r"] * n, dtype="string"),
        "task_id": pd.array(draw(st.lists(_IDS, min_size=n, max_size=n)), dtype="string"),
        "difficulty": pd.Categorical(draw(st.lists(_LEVELS, min_size=n, max_size=n)),
                                     dtype=schema.column("difficulty").dtype),
        "final_score": draw(st.lists(_FLOATS, min_size=n, max_size=n)),
        "execution_time": draw(st.lists(_FLOATS, min_size=n, max_size=n)),
        "llm_calls": pd.array(draw(st.lists(_COUNTS, min_size=n, max_size=n)), dtype="Int64"),
        "confidence_score": draw(st.lists(_FLOATS, min_size=n, max_size=n)),
    })
    if draw(st.booleans()):  # a required column with another dtype
        df["final_score"] = df["final_score"].astype(object)
    return df


def _pandera_passes(df: pd.DataFrame) -> bool:
    from pandera.errors import SchemaErrors

    try:
        coerce.domain_schema(SPECS, KEYS).validate(df.copy(), lazy=True)
        return True
    except SchemaErrors:
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_frames())
def test_clean_without_pandera_exactly_when_pandera_passes(df):
    assert coerce._domain_passes(df, SPECS, KEYS) == _pandera_passes(df)


def test_invariant_outputs_that_are_not_plain_true_go_to_pandera():
    rec = pd.DataFrame({"a": [1, 2, 3]}, index=[4, 5, 6])

    def holds(out) -> bool:
        return invariants._holds_everywhere(lambda _: out, rec)

    assert holds(pd.Series(True, index=rec.index))
    assert not holds(pd.Series([True, False, True], index=rec.index))
    # a missing value, another index, another length, a non-bool dtype: pandera decides
    assert not holds(pd.Series([True, pd.NA, True], index=rec.index, dtype="boolean"))
    assert not holds(pd.Series(True, index=[0, 1, 2]))
    assert not holds(pd.Series(True, index=[4, 5]))
    assert not holds(pd.Series([1, 1, 1], index=rec.index))
    assert not holds(np.ones(3, dtype=bool))

    def raises(_):
        raise KeyError("no such column")

    assert not invariants._holds_everywhere(raises, rec)  # pandera reports it, as before


def test_a_frame_the_shortcut_cannot_read_goes_to_pandera_not_a_traceback(monkeypatch):
    # a number column of text (never made by the loader's typing): the shortcut raises, and
    # check_domain gives what pandera alone gives, for a required and an optional column
    for col in ("final_score", "execution_time"):
        df = pd.DataFrame({"run_id": pd.array(["r"], dtype="string"),
                           "task_id": pd.array(["task_1"], dtype="string"),
                           "final_score": [0.5], "execution_time": [3.0]})
        df[col] = pd.Series(["high"], dtype=object)
        specs = tuple(schema.column(c) for c in df.columns)
        got: list = []
        coerce.check_domain(df.copy(), specs, "task_metrics.csv", got, keys=("task_id",))
        with monkeypatch.context() as m:
            m.setattr(coerce, "_domain_passes", lambda *a: False)
            alone: list = []
            coerce.check_domain(df.copy(), specs, "task_metrics.csv", alone, keys=("task_id",))
        assert got == alone


_PROBE = ("import sys, json, dabench_analysis as da; run = da.load_run(sys.argv[1], strict=False); "
          "v = da.validate_run(run.path); f = da.validate.findings_table(v); "
          "print(json.dumps({'pandera': 'pandera' in sys.modules, "
          "'findings': f[['severity', 'file', 'row', 'column', 'check']].astype(str)"
          ".values.tolist()}))")


def _probe(run_dir) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", _PROBE, str(run_dir)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_clean_run_loads_and_validates_without_importing_pandera():
    assert _probe(SAMPLE)["pandera"] is False


def test_a_bad_value_still_gets_its_finding(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    path = run / "task_metrics.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[2, "execution_time"] = "-5"  # data row 3
    df.loc[4, "final_score"] = "1.5"  # data row 5
    df.to_csv(path, index=False)
    got = _probe(run)
    assert got["pandera"] is True
    rows = {(f[2], f[3], f[4]) for f in got["findings"] if f[1] == "task_metrics.csv"}
    assert ("3", "execution_time", "range") in rows
    assert ("5", "final_score", "range") in rows
