"""Control characters in free text (issue 24 item 8): a NUL, an ESC or a BEL in a damaged copy of
a sample run is kept in the frames as read, reported by ``validate`` (``control_characters``,
naming file, row and column) and written as a visible escape (``\\x00``) in every file the
toolkit writes: .csv, .tex, .md, the HTML of a table, a report page and the index.

The expected escapes are Python's own notation: ``repr("\\x00")`` is ``'\\x00'``.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import dabench_analysis as da
from dabench_analysis.export import save_table, visible
from dabench_analysis.export._files import write_text
from dabench_analysis.report import JobResult, export_html, table_html, write_index
from dabench_analysis.report._jobs import Job
from dabench_analysis.tables import failures

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"
NUL, ESC = "\x00", "\x1b"


def _set(path: Path, column: str, edits: dict[int, str]) -> None:
    """Write ``edits`` (1-based data row -> value) into ``column`` with the csv module."""
    with path.open(newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    for row, value in edits.items():
        rows[row - 1][header.index(column)] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Path:
    run = Path(shutil.copytree(SAMPLE / "baseline_react", tmp_path_factory.mktemp("c") / "r"))
    tasks = pd.read_csv(run / "task_metrics.csv", dtype=str, keep_default_na=False)
    failed = [i + 1 for i in tasks.index[tasks["final_score"].astype(float) < 0.8][:2]]
    # two failed tasks share one root cause holding a NUL and an ESC sequence
    _set(run / "task_metrics.csv", "root_cause", dict.fromkeys(failed, f"bad{NUL}join{ESC}[0m"))
    return run


def test_frames_keep_the_text_as_read(damaged):
    run = da.load_run(damaged)
    assert (run.tasks["root_cause"] == f"bad{NUL}join{ESC}[0m").sum() == 2


def test_validate_names_file_row_and_column(damaged):
    found = da.validate_run(damaged).findings
    hit = found[found["check"] == "control_characters"]
    assert set(hit["severity"]) == {"warning"}
    assert set(hit["file"]) == {"task_metrics.csv"} and set(hit["column"]) == {"root_cause"}
    tasks = pd.read_csv(damaged / "task_metrics.csv", dtype=str, keep_default_na=False)
    rows = [i + 1 for i in tasks.index[tasks["root_cause"].str.contains(NUL, regex=False)]]
    assert hit["row"].tolist() == rows and len(rows) == 2
    assert "bad\\x00join\\x1b[0m" in hit["message"].iloc[0]  # the message itself is visible


def test_every_table_format_shows_the_escape(damaged, tmp_path):
    table = failures.root_causes(da.load_run(damaged))
    assert f"bad{NUL}join{ESC}[0m" in set(table["root_cause"])  # analyses see it as read
    paths = save_table(table, tmp_path / "root_causes")
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert NUL not in text and ESC not in text, path.name
    csv_text, tex, md = (p.read_text(encoding="utf-8") for p in paths)
    assert "bad\\x00join\\x1b[0m" in csv_text and "bad\\x00join\\x1b[0m" in md
    assert r"bad\textbackslash{}x00join\textbackslash{}x1b[0m" in tex  # typeset as \x00
    page = table_html(table)
    assert NUL not in page and "bad\\x00join\\x1b[0m" in page


def test_lone_surrogates_and_the_layout_characters(tmp_path):
    # a lone surrogate (JSON "\ud800") cannot be written as UTF-8: shown as \ud800; tab,
    # line feed and carriage return are the text's own layout and stay
    assert visible("a\ud800b\tc\nd\re") == "a\\ud800b\tc\nd\re"
    frame = pd.DataFrame({"answer": pd.Series(["x\ud800y"], dtype=object), "n": [1]})
    paths = save_table(frame, tmp_path / "t")
    assert "x\\ud800y" in paths[0].read_text(encoding="utf-8")
    assert write_text(f"p{NUL}q\n", tmp_path / "p.md").read_text() == "p\\x00q\n"


def test_report_page_and_index_show_the_escape(tmp_path):
    nb = new_notebook(cells=[new_code_cell("print('out\\x00put')")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="out\x00put\n")]
    src = tmp_path / "r.ipynb"
    nbformat.write(nb, src)
    page = export_html(src, tmp_path / "r.html").read_text(encoding="utf-8")
    assert NUL not in page and "out\\x00put" in page
    job = Job("run", f"run{NUL}x", Path("run_report.ipynb"), {}, (tmp_path / "o" / "r").resolve())
    index = write_index([JobResult(job, "failed", f"cell said {ESC}[31mno")], tmp_path / "o")
    text = index.read_text(encoding="utf-8")
    assert NUL not in text and ESC not in text
    assert "run\\x00x" in text and "cell said \\x1b[31mno" in text


def test_a_replays_text_is_reported_by_file_and_field(tmp_path):
    import json

    run = Path(shutil.copytree(SAMPLE / "baseline_react", tmp_path / "r"))
    path = run / "task_38" / "task_replay.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["question"] = f"{NUL}{ESC}[2J\ud800 " + data["question"]
    path.write_text(json.dumps(data), encoding="utf-8")  # json writes \u0000, \u001b, \ud800
    loaded = da.load_run(run)
    assert loaded.replay("task_38")["question"].startswith(f"{NUL}{ESC}[2J\ud800 ")  # as read
    found = da.validate_run(loaded).findings
    hit = found[found["check"] == "control_characters"]
    assert hit[["file", "column"]].values.tolist() == [["task_38/task_replay.json", "question"]]


def test_a_name_with_a_line_feed_stays_on_its_row_of_the_reports_table(tmp_path, monkeypatch):
    """The command line's Reports table and its one-line messages write a folder name's tab,
    line feed and carriage return as escapes (visible(one_line=True)): the row is not split."""
    import io

    from rich.console import Console

    from dabench_analysis.report import _cli

    out = io.StringIO()
    monkeypatch.setattr(_cli, "console", Console(file=out, width=200, color_system=None))
    job = Job("run", "run\n2\tb\rc", Path("run_report.ipynb"), {}, (tmp_path / "o").resolve())
    _cli._print_summary([JobResult(job, "failed", "cell said\nno")])
    rows = [line for line in out.getvalue().splitlines() if "run\\n2" in line]
    assert len(rows) == 1 and "run\\n2\\tb\\rc" in rows[0] and "cell said\\nno" in rows[0]
    assert visible("a\nb") == "a\nb" and visible("a\nb\x00", one_line=True) == "a\\nb\\x00"


@pytest.mark.parametrize("values", [
    ["plain", "text", None, 3, 2.5],
    ["plain", "tab\tnew\nline\r", "a\x00b"],
    [None, "\x7f", 1],
    ["ok", "\x85 (NEL, C1)"],
    ["lone \ud800 surrogate", "ok"],
    ["\n".join(["x"] * 5), "\x1b[31m"],
    [],
])
def test_control_mask_marks_each_text_value_with_a_control_character(values):
    # the expected marks from the characters' code points (C0 but tab, newline and carriage
    # return; DEL; C1; surrogates), value by value; the mask also checks every text value at
    # once first, so a hit in one value among many is the case to get right
    from dabench_analysis.schema.checks import control_mask

    def control(v):
        return isinstance(v, str) and any(
            (ord(ch) < 0x20 and ch not in "\t\n\r") or 0x7F <= ord(ch) <= 0x9F
            or 0xD800 <= ord(ch) <= 0xDFFF for ch in v)

    series = pd.Series(values, dtype=object, index=range(10, 10 + len(values)))
    mask = control_mask(series)
    assert mask.dtype == bool and list(mask.index) == list(series.index)
    assert mask.tolist() == [control(v) for v in values]


def test_visible_frame_escapes_by_position_when_two_columns_share_a_name():
    # a frame may repeat a column name (pandas allows it): each column is escaped on its own,
    # by position; the expected cells spelled out from visible()'s \xNN rule
    from dabench_analysis.export._text import visible_frame

    df = pd.DataFrame([["a\x00", "b", 1], ["c", "d\x1b", 2]], columns=["note", "note", "n"])
    shown = visible_frame(df)
    assert shown.to_numpy().tolist() == [["a\\x00", "b", 1], ["c", "d\\x1b", 2]]
    assert list(shown.columns) == ["note", "note", "n"] and df.iloc[0, 0] == "a\x00"
    text = pd.DataFrame({"note": pd.array(["e\x07", None], dtype="string")})
    assert visible_frame(text)["note"].dtype == text["note"].dtype
    assert visible_frame(text)["note"].tolist() == ["e\\x07", pd.NA]
