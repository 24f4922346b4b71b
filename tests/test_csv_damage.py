"""Structural damage in CSV files (issue: faults): each kind is a finding naming the file and the
row, the damaged rows are excluded (or read, where the damage is only in form), and every other
value is exactly that of the clean file: every column of every row is compared with the clean
load. Damaged copies of a generated run, one file and one kind at a time."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load_run, load_runs
from dabench_analysis.synthetic import generate_run

FILES = {"task_metrics.csv": "tasks", "trajectory.csv": "trajectory",
         "tool_calls.csv": "tool_calls"}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    return generate_run(tmp_path_factory.mktemp("damage"), run_id="damage", n_tasks=12, seed=5,
                        mean_steps=3, replays=False)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# Each damage: lines -> (damaged lines, data rows excluded (1-based, in the damaged file),
# the finding's check and severity, or None when the damage is only noted).
def _repeated_header(lines):
    return lines[:5] + [lines[0]] + lines[5:], [], ("repeated_header", "error", [5])


def _too_many(lines):
    out = list(lines)
    out[3] = out[3].rstrip(b"\r\n") + b",x\n"
    return out, [3], ("column_count", "error", [3])


def _too_few(lines):
    out = list(lines)
    out[4] = out[4].split(b",", 1)[1]  # the first field gone
    return out, [4], ("column_count", "error", [4])


def _truncated_last(lines):
    last = lines[-1]
    return lines[:-1] + [last[: last.index(b",") + 1]], [len(lines) - 1], \
        ("column_count", "error", [len(lines) - 1])


def _stray_some(lines):
    out = list(lines)
    for i in (2, 6):
        out[i] = out[i].rstrip(b"\r\n") + b",\n"
    return out, [2, 6], ("trailing_delimiter", "error", [2, 6])


def _stray_every_data_line(lines):
    return [lines[0]] + [ln.rstrip(b"\r\n") + b",\n" for ln in lines[1:]], [], \
        ("trailing_delimiter", "info", [])


def _stray_every_line(lines):
    return [ln.rstrip(b"\r\n") + b",\n" for ln in lines], [], ("trailing_delimiter", "info", [])


def _mixed_endings(lines):
    return [ln.rstrip(b"\r\n") + (b"\r\n" if i % 3 == 0 else b"\n")
            for i, ln in enumerate(lines)], [], ("line_endings", "info", [])


def _unclosed_quote(lines):
    # a quote opened at the start of row 5 and never closed: the reader would take every line
    # after it as one value; the row is dropped and the lines after it read as rows
    out = list(lines)
    out[5] = b'"' + out[5]
    return out, [5], ("unclosed_quote", "error", [5])


DAMAGE = {"repeated_header": _repeated_header, "unclosed_quote": _unclosed_quote, "too_many_fields": _too_many,
          "too_few_fields": _too_few, "truncated_last_line": _truncated_last,
          "stray_delimiter_some_lines": _stray_some,
          "stray_delimiter_every_data_line": _stray_every_data_line,
          "stray_delimiter_every_line": _stray_every_line, "mixed_line_endings": _mixed_endings}


def _kept(n_rows: int, excluded: list[int], header_at: list[int]) -> list[int]:
    """Positions (0-based, in the clean file's rows) of the rows a damaged load keeps."""
    gone = {r - 1 - sum(h < r for h in header_at) for r in excluded}
    return [i for i in range(n_rows) if i not in gone]


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("file", FILES)
def test_damaged_rows_are_found_and_every_other_value_is_the_clean_one(clean, tmp_path, file,
                                                                      damage):
    run = shutil.copytree(clean, tmp_path / "run")
    lines, excluded, (check, severity, rows) = DAMAGE[damage](_lines(run / file))
    (run / file).write_bytes(b"".join(lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rejected rows warn; findings say which
        loaded = load_run(run, strict=False, cache=False, include_text=True)
        frame = getattr(loaded, FILES[file])
    reference = getattr(load_run(clean, cache=False, include_text=True), FILES[file])
    found = [f for f in loaded.findings if f.file == file and f.check == check]
    assert len(found) == 1, [str(f) for f in loaded.findings if f.file == file]
    assert found[0].severity == severity and list(found[0].rows) == rows
    header_at = rows if check == "repeated_header" else []
    keep = _kept(len(reference), excluded, header_at)
    expected = reference.iloc[keep].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), expected, check_exact=True)
    if file == "task_metrics.csv":  # each kept row remembers where it stood in the file
        clean_rows = [r + sum(h <= r for h in header_at) for r in range(1, len(reference) + 1)]
        assert loaded.source_rows == [clean_rows[i] for i in keep]


@pytest.mark.parametrize("damage", ["repeated_header", "too_many_fields", "stray_delimiter_some_lines"])
def test_strict_load_of_a_damaged_task_file_names_the_file_and_row(clean, tmp_path, damage):
    run = shutil.copytree(clean, tmp_path / "run")
    lines, _, (check, _, rows) = DAMAGE[damage](_lines(run / "task_metrics.csv"))
    (run / "task_metrics.csv").write_bytes(b"".join(lines))
    from dabench_analysis.load import RunLoadError

    with pytest.raises(RunLoadError) as info:
        load_run(run, cache=False)
    (f,) = [f for f in info.value.findings if f.check == check]
    assert f.file == "task_metrics.csv" and list(f.rows) == rows
    assert f"row {rows[0]}" in str(info.value)


def test_a_concatenated_sweep_file_gives_the_numbers_of_its_parts(clean, tmp_path):
    # cat a.csv b.csv > c.csv: the second header is dropped, no column shifts
    run = shutil.copytree(clean, tmp_path / "run")
    lines = _lines(run / "task_metrics.csv")
    (run / "task_metrics.csv").write_bytes(b"".join(lines[:7] + lines[:1] + lines[7:]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        runs = load_runs([run], strict=False, cache=False, progress=False)
    ref = load_run(clean, cache=False).tasks
    pd.testing.assert_frame_equal(runs.tasks, ref, check_exact=True)
    assert runs.tasks["final_score"].tolist() == ref["final_score"].tolist()


@pytest.mark.parametrize("file", FILES)
def test_a_file_concatenated_with_itself_counts_every_row_once(clean, tmp_path, file):
    # cat a.csv a.csv > a.csv: the second header is dropped and every repeated row is named and
    # left out (a task file: the repeated task_id; a side file: the row equal to an earlier one)
    run = shutil.copytree(clean, tmp_path / "run")
    lines = _lines(run / file)
    (run / file).write_bytes(b"".join(lines + lines))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        loaded = load_run(run, strict=False, cache=False, include_text=True)
        frame = getattr(loaded, FILES[file])
    reference = getattr(load_run(clean, cache=False, include_text=True), FILES[file])
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), reference, check_exact=True)
    found = {f.check: f for f in loaded.findings if f.file == file}
    assert found["repeated_header"].rows == (len(lines),)
    dup = [f for f in loaded.findings if f.file == file and f.check.startswith("duplicate")]
    assert len(dup) == len(reference)  # one finding per repeated key, naming both rows
    assert all(f.rows[1] == f.rows[0] + len(lines) for f in dup)


def test_two_rows_with_one_key_but_other_values_are_both_kept(clean, tmp_path):
    # a repeated call id whose rows differ is not a copy: both kept, the finding says so
    run = shutil.copytree(clean, tmp_path / "run")
    lines = _lines(run / "tool_calls.csv")
    header = lines[0].decode().rstrip("\n").split(",")
    twin = lines[1].decode().rstrip("\n").split(",")
    twin[header.index("latency_seconds")] = "99.5"
    (run / "tool_calls.csv").write_bytes(b"".join([*lines, (",".join(twin) + "\n").encode()]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        loaded = load_run(run, strict=False, cache=False)
        calls = loaded.tool_calls
    assert len(calls) == len(lines)  # every data row, the twin included
    (f,) = [f for f in loaded.findings if f.check == "duplicate_key"]
    assert f.rows == (1, len(lines)) and "rows kept, told apart by position" in f.message
