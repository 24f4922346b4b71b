"""Damaged judge studies (issue 24 item 5): each a copy of ``data/judge_study`` with one thing
broken, written with the csv module. Every problem is a finding naming file, row (1-based data
row) and column; with ``strict`` (the default) an error stops the read, and ``strict=False``
keeps the rest, never counting a row twice.

Expected counts come from the sample's README (the confusion matrices the paper's Table 3
implies): on the 53 comparable cases GT-as-code has TP 25, FP 19, FN 0, TN 9.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis.judge import read_judge_study
from dabench_analysis.judge._tables import configuration_table
from dabench_analysis.load import RunLoadError
from dabench_analysis.stats.reliability import aggregate_annotators

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "judge_study"
V, F, D, C = "judge_verdicts.csv", "factoid_ratings.csv", "dimension_ratings.csv", "cases.csv"


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    return header, rows


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])


@pytest.fixture
def study(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "judge_study"))


def _gt_as_code(s) -> pd.Series:
    with pytest.warns(UserWarning, match="2 item"):  # README: two cases without a majority
        human = aggregate_annotators(s.case_scores(), rule="majority", pass_threshold=4.5)
    cases = s.verdicts.assign(judge_pass=s.verdicts["exec_score"] >= 4.5).join(
        human, on="test_case_id")
    with pytest.warns(UserWarning):  # ... and dropped from the comparison
        table = configuration_table(cases, n_resamples=50)
    return table.set_index("configuration").loc["GT-as-code"]


def _errors(exc: RunLoadError, check: str) -> list:
    return [f for f in exc.findings if f.check == check]


def test_a_case_listed_twice_is_an_error_and_never_counted_twice(study):
    header, rows = _rows(study / V)
    i = next(k for k, r in enumerate(rows) if r[:2] == ["tc007", "GT-as-code"])
    _write(study / V, header, [*rows, rows[i]])  # what cat a.csv b.csv makes of a re-run
    with pytest.raises(RunLoadError, match="1 error") as info:
        read_judge_study(study)
    (dup,) = _errors(info.value, "duplicate_key")
    assert dup.file == V and dup.rows == (i + 1, len(rows) + 1)
    assert "test_case_id 'tc007', configuration 'GT-as-code' is listed 2 times" in dup.message
    s = read_judge_study(study, strict=False)
    row = _gt_as_code(s)
    # README: GT-as-code on the 53 comparable cases: (TP, FP, FN, TN) = (25, 19, 0, 9)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (53, 25, 19, 0, 9)


@pytest.mark.parametrize(("value", "check", "text"), [
    ("6", "range", "not a Likert rating 1-5"), ("0", "range", "not a Likert rating 1-5"),
    ("four", "number_value", "not a number"), ("2.5", "integer", "not a whole number")])
def test_bad_ratings_name_file_row_and_column(study, value, check, text):
    header, rows = _rows(study / F)
    rows[9][header.index("rating")] = value
    _write(study / F, header, rows)
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    (bad,) = _errors(info.value, check)
    assert (bad.file, bad.row, bad.column) == (F, 10, "rating")
    assert text in bad.message and repr(value) in bad.message
    s = read_judge_study(study, strict=False)
    assert s.factoid_ratings["rating"].isna().sum() == 1  # set to missing, the row kept


def test_a_duplicate_rating_is_an_error(study):
    header, rows = _rows(study / D)
    changed = [*rows[:4], [*rows[3][:3], "1"], *rows[4:]]  # row 4 again with another rating
    _write(study / D, header, changed)
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    (dup,) = _errors(info.value, "duplicate_key")
    assert dup.file == D and dup.rows == (4, 5)
    s = read_judge_study(study, strict=False)
    assert len(s.dimension_ratings) == len(rows)  # the first kept, the repeat left out
    assert s.rating_table("dimensions").notna().to_numpy().sum() == len(rows)


def test_an_out_of_range_judge_score_and_a_negative_count(study):
    header, rows = _rows(study / V)
    rows[2][header.index("exec_score")] = "12"
    rows[3][header.index("tokens")] = "-5"
    _write(study / V, header, rows)
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    found = {(f.check, f.row, f.column) for f in info.value.findings if f.severity == "error"}
    assert found == {("range", 3, "exec_score"), ("range", 4, "tokens")}


def test_a_rater_without_labels_is_left_out_with_a_warning(study):
    header, rows = _rows(study / F)
    extra = [[*r[:2], "A4", ""] for r in rows if r[header.index("annotator")] == "A1"]
    _write(study / F, header, [*rows, *extra])
    with pytest.warns(UserWarning, match="annotator 'A4' has no rating"):
        s = read_judge_study(study)
    (w,) = [f for f in s.findings if f.check == "rater_without_labels"]
    assert (w.file, w.column, len(w.rows)) == (F, "annotator", len(extra))
    assert w.rows[0] == len(rows) + 1
    assert sorted(s.rating_table().columns) == ["A1", "A2", "A3"]


def test_a_case_absent_from_one_file_and_an_unknown_case(study):
    header, rows = _rows(study / F)
    _write(study / F, header, [r for r in rows if r[0] != "tc005"])
    header, rows = _rows(study / V)
    _write(study / V, header, [*rows, ["tc999", *rows[0][1:]]])
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    (unknown,) = _errors(info.value, "unknown_case")
    assert (unknown.file, unknown.row, unknown.column) == (V, len(rows) + 1, "test_case_id")
    with pytest.warns(UserWarning, match="case"):
        s = read_judge_study(study, strict=False)
    (absent,) = [f for f in s.findings if f.check == "case_missing"]
    assert absent.file == F and "tc005" in absent.message and absent.severity == "warning"
    assert "tc999" not in set(s.verdicts["test_case_id"])


def test_a_bom_is_accepted_in_every_file(study):
    for name in (C, V, F, D):
        (study / name).write_bytes(b"\xef\xbb\xbf" + (study / name).read_bytes())
    s, clean = read_judge_study(study), read_judge_study(SAMPLE)
    for attr in ("cases", "verdicts", "factoid_ratings", "dimension_ratings"):
        pd.testing.assert_frame_equal(getattr(s, attr), getattr(clean, attr))


def test_the_worked_case_defaults_to_a_case_present_in_the_data(study):
    header, rows = _rows(study / V)
    _write(study / V, header, [r for r in rows if r[0] != "tc000"])  # the sample's own default
    with pytest.warns(UserWarning, match="tc000"):
        s = read_judge_study(study, strict=False)
    case = s.default_worked_case("GT-as-code")
    assert case == "tc001"  # cases.csv order: tc000 has no verdict now, tc001 is next
    assert int(s.worked_verdict(case, "GT-as-code")["n_gt_factoids"]) > 0
    with pytest.raises(ValueError, match="worked case 'tc000' has no verdict of configuration "
                                         "'GT-as-code'.*cases with one: tc001"):
        s.worked_verdict("tc000", "GT-as-code")
    with pytest.raises(ValueError, match="configuration 'nope' not in"):
        s.default_worked_case("nope")


def test_bytes_that_are_not_utf8_are_named_by_row_and_column(study):
    # the one CSV reader of the runs reads judge studies too: the same finding as in a run
    (study / C).write_bytes(b"test_case_id,query\n\xff\xfe,x\n")
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    enc = _errors(info.value, "encoding")
    assert [(f.file, f.row, f.column) for f in enc] == [(C, 1, "test_case_id")]


def test_structural_damage_is_found_as_in_a_run_and_other_rows_are_the_clean_ones(study):
    clean = read_judge_study(SAMPLE)
    header, rows = _rows(study / V)
    lines = (study / V).read_text(encoding="utf-8").splitlines(keepends=True)
    # row 3: a field too few; row 6: a field too many; a repeated header after row 10
    damaged = [lines[0], *lines[1:3], lines[3].rstrip("\n").rsplit(",", 1)[0] + "\n",
               *lines[4:6], lines[6].rstrip("\n") + ",x\n", *lines[7:11], lines[0],
               *lines[11:]]
    (study / V).write_text("".join(damaged), encoding="utf-8")
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    assert {(f.check, f.rows) for f in info.value.findings if f.file == V
            and f.check in ("column_count", "repeated_header")} == {
        ("column_count", (3, 6)), ("repeated_header", (11,))}
    s = read_judge_study(study, strict=False)
    lost = {(rows[2][0], rows[2][1]), (rows[5][0], rows[5][1])}
    expected = clean.verdicts[[(c, str(k)) not in lost for c, k in zip(
        clean.verdicts["test_case_id"], clean.verdicts["configuration"], strict=True)]]
    pd.testing.assert_frame_equal(s.verdicts.reset_index(drop=True),
                                  expected.reset_index(drop=True), check_categorical=False)


def test_a_verdict_without_a_score_is_an_error_and_never_a_fail(study):
    header, rows = _rows(study / V)
    i = next(k for k, r in enumerate(rows) if r[:2] == ["tc002", "GT-as-code"])
    rows[i][header.index("exec_score")] = ""
    _write(study / V, header, rows)
    with pytest.raises(RunLoadError) as info:
        read_judge_study(study)
    assert [(f.row, f.column) for f in _errors(info.value, "required_value")] == [
        (i + 1, "exec_score")]
    s = read_judge_study(study, strict=False)
    gt = _gt_as_code(s)
    # README: GT-as-code on the 53 comparable cases is TP 25, FP 19, FN 0, TN 9; tc002 is one
    # of the comparable cases: left out, n is 52 and no fail is invented (FN stays 0)
    assert gt["n"] == 52 and gt["fn"] == 0 and gt["tp"] + gt["fp"] + gt["tn"] == 52


def test_ids_spelled_with_spaces_or_another_case_are_named(study):
    header, rows = _rows(study / V)
    i = next(k for k, r in enumerate(rows) if r[:2] == ["tc008", "GT-as-code"])
    rows[i][1] = "GT-as-code "
    _write(study / V, header, rows)
    fh, frows = _rows(study / F)
    j = next(k for k, r in enumerate(frows) if r[fh.index("annotator")] == "A1")
    frows[j][fh.index("annotator")] = "a1"
    _write(study / F, fh, frows)
    with pytest.warns(UserWarning):
        s = read_judge_study(study)
    space = [f for f in s.findings if f.check == "id_whitespace"]
    assert [(f.file, f.row, f.column) for f in space] == [(V, i + 1, "configuration")]
    assert (s.verdicts["configuration"] == "GT-as-code").sum() == 55  # read as the one config
    case = [f for f in s.findings if f.check == "id_case_variant"]
    assert [(f.file, f.column) for f in case] == [(F, "annotator")] and j + 1 in case[0].rows


def test_a_configuration_without_a_verdict_for_a_case_is_a_warning(study):
    header, rows = _rows(study / V)
    _write(study / V, header, [r for r in rows if r[:2] != ["tc008", "GT-as-code"]])
    with pytest.warns(UserWarning, match="no verdict for 1 case"):
        s = read_judge_study(study)
    (f,) = [f for f in s.findings if f.check == "verdict_missing"]
    assert "'GT-as-code'" in f.message and "tc008" in f.message


def test_the_judge_report_takes_its_worked_case_from_the_data_or_the_cli(study, tmp_path):
    import json
    import subprocess
    import sys

    header, rows = _rows(study / V)
    _write(study / V, header, [r for r in rows if r[0] != "tc000"])  # the old fixed default
    cli = [sys.executable, "-m", "dabench_analysis.report._cli", "report",
           str(Path(__file__).resolve().parents[1] / "data" / "sample_runs" / "pending_run"),
           "--judge-study", str(study)]
    for extra, case in (([], "tc001"), (["--worked-case", "tc003"], "tc003")):
        out = tmp_path / f"out_{case}"
        proc = subprocess.run([*cli, "--out", str(out), *extra], capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads((out / "judge_study" / "summary.json").read_text())
        assert summary["worked_case"]["case"] == case
        # Table 4 of that case: |F_gt| from its verdict row, rescaled recall = 9 |F_rg| / |F_g|
        verdict = next(r for r in rows if r[:2] == [case, "GT-as-code"])
        n_gt, n_match = (int(verdict[header.index(c)]) for c in ("n_gt_factoids",
                                                                  "n_matched_factoids"))
        assert summary["worked_case"]["Recall"] == pytest.approx(9 * n_match / n_gt, abs=1e-9)
