"""The bad-input catalogue: every way a run's files can be wrong gives a clear error or a
documented finding that names the file (and, where there is one, the row and the column) —
never a traceback from inside pandas or pyarrow.

Each case copies a small generated run into ``tmp_path`` and damages one thing. ``load_run``
(strict and not) and ``validate_run`` must then either succeed with the expected finding or
raise :class:`RunLoadError`; ``validate_run`` never raises.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dabench_analysis import schema
from dabench_analysis.load import RunLoadError, load_run
from dabench_analysis.load._csv import read_header
from dabench_analysis.synthetic import generate_run
from dabench_analysis.validate import validate_run

TM = "task_metrics.csv"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    return generate_run(tmp_path_factory.mktemp("bad_base"), run_id="base", n_tasks=8, seed=1)


# --- helpers that damage a run ----------------------------------------------------------------

def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _write_rows(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def set_cell(col: str, row: int, value: str, file: str = TM) -> Callable[[Path], None]:
    """Set data row ``row`` (1-based) of ``col``."""
    def damage(run: Path) -> None:
        rows = _rows(run / file)
        rows[row][rows[0].index(col)] = value
        _write_rows(run / file, rows)
    return damage


def map_col(col: str, mapping: dict[str, str], file: str = TM) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        rows = _rows(run / file)
        j = rows[0].index(col)
        for r in rows[1:]:
            r[j] = mapping.get(r[j], r[j])
        _write_rows(run / file, rows)
    return damage


def edit_header(old: str, new: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        rows = _rows(run / TM)
        rows[0][rows[0].index(old)] = new
        _write_rows(run / TM, rows)
    return damage


def drop_col(col: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        rows = _rows(run / TM)
        j = rows[0].index(col)
        _write_rows(run / TM, [r[:j] + r[j + 1:] for r in rows])
    return damage


def add_col(col: str, value: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        rows = _rows(run / TM)
        _write_rows(run / TM, [rows[0] + [col]] + [r + [value] for r in rows[1:]])
    return damage


def raw(fn: Callable[[bytes], bytes], file: str = TM) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / file).write_bytes(fn((run / file).read_bytes()))
    return damage


def latin1_cell(col: str, row: int) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        set_cell(col, row, "cafXYZ")(run)
        (run / TM).write_bytes((run / TM).read_bytes().replace(b"cafXYZ", b"caf\xe9"))
    return damage


def unquoted_comma(col: str, row: int) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        set_cell(col, row, "DECIMALCOMMA")(run)
        (run / TM).write_bytes((run / TM).read_bytes().replace(b"DECIMALCOMMA", b"0,75"))
    return damage


def write(file: str, data: bytes) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / file).write_bytes(data)
    return damage


def percent_column(col: str) -> Callable[[Path], None]:
    """A whole [0, 1] column written on a 0-100 scale."""
    def damage(run: Path) -> None:
        rows = _rows(run / TM)
        j = rows[0].index(col)
        for r in rows[1:]:
            r[j] = f"{100 * float(r[j]):g}"
        _write_rows(run / TM, rows)
    return damage


def truncate_last_line(data: bytes) -> bytes:
    return data[:data.rstrip(b"\n").rfind(b"\n") + 40]


def concatenated(data: bytes) -> bytes:
    return data + data


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# --- the catalogue ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """``expect``: raise (RunLoadError), error/warning/info (a finding), ok (none of note)."""

    id: str
    damage: Callable[[Path], None]
    expect: str
    check: str | None = None
    file: str = TM
    row: int | None = None
    column: str | None = None
    text: str | None = None  # a piece of the message


CASES = [
    Case("empty_file", write(TM, b""), "raise", "empty_file"),
    Case("header_only", raw(lambda b: b.split(b"\n", 1)[0] + b"\n"), "warning", "no_rows"),
    Case("truncated_last_line", raw(truncate_last_line), "error", "column_count", row=8,
         text="row dropped"),
    Case("semicolon_delimiter", raw(lambda b: b.replace(b",", b";")), "raise", "delimiter"),
    Case("tab_delimiter", raw(lambda b: b.replace(b",", b"\t")), "raise", "delimiter"),
    Case("utf8_bom", raw(lambda b: b"\xef\xbb\xbf" + b), "ok"),
    Case("crlf_line_ends", raw(lambda b: b.replace(b"\n", b"\r\n")), "ok"),
    Case("latin1_cell", latin1_cell("task_type", 3), "error", "encoding", row=3,
         column="task_type", text="UTF-8"),
    Case("latin1_header", raw(lambda b: b.replace(b"task_type", b"t\xe2che", 1)), "raise",
         "encoding"),
    Case("binary_file", write(TM, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "raise", "encoding"),
    Case("duplicated_column_name", edit_header("answer_f1", "final_score"), "raise",
         "duplicate_column", column="final_score"),
    Case("repeated_header_line", raw(concatenated), "error", "repeated_header", row=9),
    Case("duplicated_task_id", set_cell("task_id", 2, "task_1"), "error", "duplicate_task_id",
         row=2, column="task_id", text="rows 1, 2"),
    Case("flag_yes_no", map_col("execution_success", {"1": "yes", "0": "no"}), "warning",
         "flag_coerced", column="execution_success"),
    Case("flag_TRUE_FALSE", map_col("execution_success", {"1": "TRUE", "0": "FALSE"}), "ok"),
    Case("flag_1.0_0.0", map_col("first_try_success", {"1": "1.0", "0": "0.0"}), "warning",
         "flag_coerced", column="first_try_success"),
    Case("flag_2", set_cell("verification_passed", 3, "2"), "error", "flag_value", row=3,
         column="verification_passed", text="'2'"),
    Case("score_percent_column", percent_column("answer_f1"), "error", "range",
         column="answer_f1", text="percentages"),
    Case("score_percent_cell", set_cell("final_score", 2, "85"), "error", "range", row=2,
         column="final_score", text="percentages"),
    Case("score_percent_sign", set_cell("answer_f1", 2, "85%"), "error", "number_value", row=2,
         column="answer_f1", text="percent"),
    Case("decimal_comma_quoted", set_cell("answer_f1", 4, "0,75"), "error", "number_value",
         row=4, column="answer_f1", text="decimal comma"),
    Case("decimal_comma_unquoted", unquoted_comma("answer_f1", 4), "error", "column_count",
         row=4),
    Case("NaN_optional", set_cell("answer_f1", 2, "NaN"), "ok"),
    Case("empty_optional", set_cell("answer_f1", 2, ""), "ok"),
    Case("NA_optional", set_cell("answer_f1", 2, "NA"), "ok"),
    Case("null_optional", set_cell("answer_f1", 2, "null"), "ok"),
    Case("null_required", set_cell("final_score", 2, "null"), "error", "required_value", row=2,
         column="final_score"),
    Case("inf_score", set_cell("answer_f1", 2, "inf"), "error", "finite", row=2,
         column="answer_f1"),
    Case("minus_inf_seconds", set_cell("execution_time", 5, "-inf"), "error", "finite", row=5,
         column="execution_time"),
    Case("inf_count", set_cell("llm_calls", 5, "inf"), "error", "integer", row=5,
         column="llm_calls"),
    Case("negative_count", set_cell("llm_calls", 6, "-1"), "error", "range", row=6,
         column="llm_calls", text="negative"),
    Case("fractional_count", set_cell("llm_calls", 6, "2.5"), "error", "integer", row=6,
         column="llm_calls"),
    Case("huge_count", set_cell("llm_calls", 6, "9" * 30), "error", "integer", row=6,
         column="llm_calls"),
    Case("difficulty_lower_case", map_col("difficulty", {"Easy": "easy"}), "warning",
         "enum_coerced", column="difficulty"),
    Case("difficulty_unknown", set_cell("difficulty", 7, "Trivial"), "error", "enum_value",
         row=7, column="difficulty", text="Easy, Medium, Hard, Extreme"),
    Case("missing_difficulty", drop_col("difficulty"), "warning", "absent_column",
         column="difficulty", text="tables.paper.difficulty_breakdown"),  # optional (issue 26)
    Case("missing_required_final_score", drop_col("final_score"), "raise", "required_column",
         column="final_score"),
    Case("extra_column", add_col("my_extra_metric", "3"), "info", "unknown_column",
         column="my_extra_metric"),
    Case("header_whitespace", edit_header("final_score", " final_score"), "warning",
         "header_whitespace"),
    Case("newline_in_quoted_text", set_cell("task_type", 2, "line one\nline two"), "ok"),
    Case("unbalanced_quote", raw(lambda b: b.rstrip(b"\n") + b',"\n'), "error", "unclosed_quote",
         row=8),
    Case("trajectory_unknown_task", set_cell("task_id", 5, "task_999", "trajectory.csv"),
         "error", "unknown_task_id", file="trajectory.csv", row=5, column="task_id"),
    Case("tool_calls_unknown_task", set_cell("task_id", 2, "task_999", "tool_calls.csv"),
         "error", "unknown_task_id", file="tool_calls.csv", row=2, column="task_id"),
    Case("trajectory_empty_file", write("trajectory.csv", b""), "error", "empty_file",
         file="trajectory.csv"),
    Case("trajectory_bad_flag", set_cell("success", 4, "maybe", "trajectory.csv"), "error",
         "flag_value", file="trajectory.csv", row=4, column="success"),
    Case("replay_malformed", write("task_2/task_replay.json", b'{"task_id": "task_2",'),
         "error", "replay_unreadable", file="task_2/task_replay.json", text="line 1"),
    Case("replay_empty", write("task_3/task_replay.json", b""), "error", "replay_unreadable",
         file="task_3/task_replay.json", text="empty"),
    Case("replay_not_object", write("task_3/task_replay.json", b"[1, 2]"), "error",
         "replay_unreadable", file="task_3/task_replay.json", text="JSON object"),
    Case("replay_nested_deeply", write("task_3/task_replay.json", nested(100_000)), "error",
         "replay_unreadable", file="task_3/task_replay.json", text="nested"),
    Case("replay_latin1", write("task_3/task_replay.json", b'{"q": "caf\xe9"}'), "error",
         "replay_unreadable", file="task_3/task_replay.json"),
]


def _copy(base: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(base, dest)
    return dest


def _typed_as_catalogue(tasks) -> None:
    for col in tasks.columns:
        if col in schema.TASK_COLUMNS:
            assert tasks[col].dtype == schema.TASK_COLUMNS[col].dtype, col


def test_catalogue_is_large_enough():
    assert len({c.id for c in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, base_run: Path, tmp_path: Path):
    run_dir = _copy(base_run, tmp_path)
    case.damage(run_dir)
    report = validate_run(run_dir)  # never raises
    if case.expect == "raise":
        for strict in (True, False):
            with pytest.raises(RunLoadError) as info:
                load_run(run_dir, strict=strict)
            assert case.file in str(info.value)
            assert case.check in {f.check for f in info.value.findings}
            if case.column:
                assert case.column in str(info.value)
        assert report.state == "failed" and not report.ok
        assert case.check in set(report.findings["check"])
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = load_run(run_dir, strict=False)
    _typed_as_catalogue(run.tasks)
    f = report.findings
    if case.expect == "ok":
        assert report.ok, f.to_string()
        assert not (f["severity"] == "warning").any(), f.to_string()
        load_run(run_dir, strict=True)
        return
    sel = f[f["check"] == case.check]
    assert not sel.empty, f"no {case.check} finding in\n{f.to_string()}"
    assert (sel["severity"] == case.expect).all()
    assert (sel["file"] == case.file).all()
    if case.row is not None:
        assert case.row in set(sel["row"].dropna())
    if case.column is not None:
        assert case.column in set(sel["column"].dropna())
    if case.text is not None:
        assert sel["message"].str.contains(case.text, regex=False).any(), sel["message"].tolist()
    if case.file == TM and case.expect == "error":
        with pytest.raises(RunLoadError) as info:
            load_run(run_dir, strict=True)
        msg = str(info.value)
        assert TM in msg
        if case.row is not None:
            assert f"row {case.row}" in msg
        if case.column is not None:
            assert repr(case.column) in msg
    elif case.file == TM:
        load_run(run_dir, strict=True)  # warnings and info never block a strict load


# --- the run directory itself -------------------------------------------------------------------

def test_run_dir_missing(tmp_path):
    with pytest.raises(RunLoadError, match="does not exist"):
        load_run(tmp_path / "nope")
    assert validate_run(tmp_path / "nope").state == "failed"


def test_run_dir_is_a_file(tmp_path):
    (tmp_path / "run").write_text("x")
    with pytest.raises(RunLoadError, match="is a file"):
        load_run(tmp_path / "run")
    assert not validate_run(tmp_path / "run").ok


def test_run_dir_symlink_loop(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(RunLoadError, match="symlink loop"):
        load_run(tmp_path / "a")
    assert validate_run(tmp_path / "a").state == "failed"


def test_run_dir_not_evaluated():
    with pytest.raises(RunLoadError, match="not evaluated"):
        load_run("data/sample_runs/pending_run")
    assert validate_run("data/sample_runs/pending_run").state == "not evaluated"


def test_task_file_is_a_directory(base_run, tmp_path):
    run = _copy(base_run, tmp_path)
    (run / TM).unlink()
    (run / "comprehensive_evaluation.csv").unlink()
    (run / TM).mkdir()
    with pytest.raises(RunLoadError, match="task_metrics.csv: cannot read \\(Is a directory\\)"):
        load_run(run)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads through chmod 000; simulated below")
def test_run_dir_unreadable_chmod(base_run, tmp_path):
    run = _copy(base_run, tmp_path)
    run.chmod(0)
    try:
        with pytest.raises(RunLoadError, match="not readable"):
            load_run(run)
    finally:
        run.chmod(0o755)


def test_run_dir_unreadable_simulated(base_run, tmp_path, monkeypatch):
    run = _copy(base_run, tmp_path)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    with pytest.raises(RunLoadError, match="not readable"):
        load_run(run)
    assert validate_run(run).state == "failed"


def test_task_file_unreadable_simulated(base_run, tmp_path, monkeypatch):
    run = _copy(base_run, tmp_path)
    real_open = open

    def deny(path, *args, **kwargs):
        if str(path).endswith(TM):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    with pytest.raises(RunLoadError, match="Permission denied") as info:
        load_run(run)
    assert TM in str(info.value)


# --- huge files: the header is read without reading the file ------------------------------------

def _sparse(path: Path, header: bytes, size: int = 2 << 30) -> Path:
    path.write_bytes(header)
    os.truncate(path, size)
    return path


def test_read_header_of_2gb_file_is_bounded(tmp_path, monkeypatch):
    p = _sparse(tmp_path / TM, b"task_id,difficulty,final_score\n")
    assert p.stat().st_size == 2 << 30
    read = []
    real_open = open

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def read(self, n=-1):
            data = self.fh.read(n)
            read.append(len(data))
            return data

    monkeypatch.setattr("builtins.open", lambda f, *a, **k: Counting(real_open(f, *a, **k)))
    start = time.perf_counter()
    assert read_header(p) == ["task_id", "difficulty", "final_score"]
    assert time.perf_counter() - start < 1.0
    assert sum(read) <= (1 << 20) + (1 << 16) + 1  # the header, and 64 KiB past a blank line


def test_2gb_file_without_a_header_line_is_refused_fast(tmp_path):
    p = _sparse(tmp_path / TM, b"task_id,difficulty,final_score")  # no newline: 2 GB "header"
    start = time.perf_counter()
    with pytest.raises(RunLoadError, match="header line longer"):
        read_header(p)
    assert time.perf_counter() - start < 1.0


def test_2gb_task_file_missing_required_column_fails_before_reading(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    _sparse(run / TM, b"task_id,difficulty\n")
    start = time.perf_counter()
    with pytest.raises(RunLoadError, match="final_score"):
        load_run(run)
    assert time.perf_counter() - start < 1.0
