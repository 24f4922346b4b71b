"""Property-based tests: valid task_metrics files load with catalogue dtypes and their values;
corrupted ones load or raise RunLoadError — never another exception."""

from __future__ import annotations

import csv
import io
import math
import tempfile
import warnings
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dabench_analysis import schema
from dabench_analysis.load import RunLoadError, load_run
from dabench_analysis.schema import NULL_VALUES
from dabench_analysis.validate import ValidationReport, validate_run

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: Optional columns the frames draw from: one or two of every catalogue kind.
OPTIONAL = ["execution_success", "first_try_success", "tool_calls", "total_tokens",
            "execution_time", "answer_f1", "analyst_score", "branching_factor",
            "failure_category", "severity", "outcome_status", "root_cause", "task_type",
            "run_id"]
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n,\"\t;"),
               max_size=12)


def _value(kind: str, name: str):
    """Strategy of valid CSV text for one catalogue column (optional: may be empty)."""
    if kind == "score":
        v = st.floats(0, 1).map(repr)
    elif kind == "float":
        v = st.floats(-1e6, 1e6).map(repr)
    elif kind == "seconds":
        v = st.floats(0, 1e6).map(repr)
    elif kind in ("count", "tokens"):
        v = st.integers(0, 10**12).map(str)
    elif kind == "flag":
        v = st.sampled_from(["0", "1", "true", "false", "True", "False", "TRUE", "FALSE"])
    elif kind == "enum":
        v = st.sampled_from(schema.ENUMS[name])
    else:
        v = TEXT
    return v | st.just("") if name not in ("task_id", "difficulty", "final_score") else v


@st.composite
def task_frames(draw) -> dict[str, list[str]]:
    n = draw(st.integers(1, 6))
    cols = ["task_id", "difficulty", "final_score"] + draw(
        st.lists(st.sampled_from(OPTIONAL), unique=True, max_size=6))
    frame = {"task_id": [f"task_{i}" for i in range(1, n + 1)]}
    for c in cols[1:]:
        spec = schema.TASK_COLUMNS[c]
        frame[c] = draw(st.lists(_value(spec.kind, c), min_size=n, max_size=n))
    order = draw(st.permutations(cols))
    return {c: frame[c] for c in order}


def _csv(frame: dict[str, list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(frame)
    w.writerows(zip(*frame.values(), strict=True))
    return buf.getvalue()


def _load(run: Path, strict: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_run(run, strict=strict)


def _typed(tasks: pd.DataFrame) -> None:
    for col in tasks.columns:
        if col in schema.TASK_COLUMNS:
            assert tasks[col].dtype == schema.TASK_COLUMNS[col].dtype, col
    assert tasks["replay_path"].dtype == "string"


def _expected(kind: str, name: str, text: str):
    # text and ids: only an empty cell is missing ("None", "NA" are kept as written)
    if text.strip() in NULL_VALUES if kind != "text" and kind != "id" else text == "":
        return pd.NA
    if kind in ("score", "float", "seconds"):
        return float(text)
    if kind in ("count", "tokens"):
        return int(text)
    if kind == "flag":
        return text.lower() in ("1", "true")
    return text


@SETTINGS
@given(task_frames())
def test_valid_frames_load_with_catalogue_dtypes_and_values(frame):
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "task_metrics.csv").write_text(_csv(frame), encoding="utf-8")
        loaded = _load(run, strict=True)
    t = loaded.tasks
    _typed(t)
    assert t["task_id"].tolist() == frame["task_id"]
    for col, texts in frame.items():
        spec = schema.TASK_COLUMNS[col]
        if col == "run_id":
            continue  # blanks are filled from the folder name
        got = t[col].astype(object).tolist()
        for g, text in zip(got, texts, strict=True):
            want = _expected(spec.kind, col, text)
            if want is pd.NA:
                assert g is pd.NA or (isinstance(g, float) and math.isnan(g)), (col, text, g)
            else:
                assert g == want, (col, text, g)


CORRUPT_VALUES = st.sampled_from(
    ["2", "yes", "85", "inf", "-inf", "-1", "1.5", "0,5", "NaN", "", "null", "1e400", "0x10",
     "\x00", "é", "9" * 40, "Trivial", "easy", "12%", " 0.5 ", "[1]", '"', "\r"]) | st.text(
    max_size=6)


@st.composite
def corrupted_files(draw) -> bytes:
    frame = draw(task_frames())
    cols = list(frame)
    n = len(frame["task_id"])
    how = draw(st.sampled_from(["cell", "cell", "drop_col", "dup_row", "truncate", "insert",
                                "extra_field", "delimiter", "header"]))
    if how == "cell":
        col = draw(st.sampled_from(cols))
        frame[col][draw(st.integers(0, n - 1))] = draw(CORRUPT_VALUES)
    elif how == "drop_col":
        frame.pop(draw(st.sampled_from(cols)))
    elif how == "dup_row":
        i = draw(st.integers(0, n - 1))
        for c in frame:
            frame[c].append(frame[c][i])
    elif how == "header":
        col = draw(st.sampled_from(cols))
        frame = {(draw(st.text(max_size=8)) if c == col else c): v for c, v in frame.items()}
    data = _csv(frame).encode("utf-8") if frame else b""
    if how == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "insert":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif how == "extra_field":
        lines = data.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] += b",extra"
        data = b"\n".join(lines)
    elif how == "delimiter":
        data = data.replace(b",", b";", draw(st.integers(1, 3)))
    return data


@SETTINGS
@given(corrupted_files())
def test_corrupted_frames_load_or_raise_the_documented_error(data):
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "task_metrics.csv").write_bytes(data)
        outcomes = {}
        for strict in (True, False):
            try:
                loaded = _load(run, strict)
            except RunLoadError as exc:
                assert "task_metrics.csv" in str(exc) or str(run) in str(exc)
                outcomes[strict] = None
                continue
            _typed(loaded.tasks)
            outcomes[strict] = loaded
        report = validate_run(run)
    assert isinstance(report, ValidationReport)
    lenient = outcomes[False]
    if outcomes[True] is not None:  # a strict load succeeds exactly when there is no error
        assert lenient is not None
        assert not [f for f in lenient.findings if f.severity == "error"]
    elif lenient is not None:
        assert [f for f in lenient.findings if f.severity == "error"]
        assert not report.ok
