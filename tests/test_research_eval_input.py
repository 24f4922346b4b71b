"""Values a real research-eval harness may write that are not plain JSON numbers, booleans or lists
(issue "Real run directories", item 9; pitfall P14): each is read with a warning naming file, line
and field, or rejected with a ValueError naming them; the analyses on top never see NaN surprises.

Every session is a copy of ``data/research_eval`` in ``tmp_path`` with one value (or one line) of
``standard-gf-live/artifacts/results.jsonl`` or one field of its ``summary.json`` changed.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dabench_analysis.research_eval import ResearchEval, load_research_eval
from dabench_analysis.research_eval import tables as rev

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "research_eval"
RUN = "standard-gf-live"
LINE = 3  # 1-based line of results.jsonl that is edited: case rfc9110-404, PASS
CASE = "rfc9110-404"
NAN_RULE = "written as NaN, read as missing"
FLAG_RULE = "written as a string or number in a boolean field, read as true/false"
SPLIT_RULE = "written as a comma-separated string in a list field, split on commas"


@pytest.fixture(scope="module")
def original() -> ResearchEval:
    return load_research_eval(SAMPLE)


def copy_sample(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "session"
    shutil.copytree(SAMPLE, root)
    return root, root / RUN / "artifacts" / "results.jsonl"


def with_value(tmp_path: Path, path: tuple[str, ...], raw: str, *,
               lines: tuple[int, ...] = (LINE,)) -> tuple[Path, Path]:
    """The sample with field ``path`` of each of ``lines`` written as the JSON text ``raw``."""
    root, file = copy_sample(tmp_path)
    text = file.read_text(encoding="utf-8").splitlines(keepends=True)
    for line in lines:
        obj = json.loads(text[line - 1])
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        assert path[-1] in parent  # an existing field is changed
        parent[path[-1]] = "@@VALUE@@"
        text[line - 1] = json.dumps(obj).replace('"@@VALUE@@"', raw) + "\n"
    file.write_text("".join(text), encoding="utf-8")
    return root, file


def with_line(tmp_path: Path, raw: bytes) -> tuple[Path, Path]:
    """The sample with line LINE of results.jsonl replaced by ``raw``."""
    root, file = copy_sample(tmp_path)
    text = file.read_bytes().split(b"\n")
    text[LINE - 1] = raw
    file.write_bytes(b"\n".join(text))
    return root, file


def with_summary(tmp_path: Path, key: str, value: object) -> tuple[Path, Path]:
    root, _ = copy_sample(tmp_path)
    file = root / RUN / "artifacts" / "summary.json"
    file.write_text(json.dumps(json.loads(file.read_text()) | {key: value}))
    return root, file


def load_recording(root: Path) -> tuple[ResearchEval, list[str]]:
    """Load, returning every warning message (all categories, nothing filtered)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = load_research_eval(root)
    return ev, [str(w.message) for w in caught]


def case(ev: ResearchEval, case_id: str = CASE) -> pd.Series:
    return ev.cases.set_index(["run_id", "case_id"]).loc[(RUN, case_id)]


def check_analyses_quietly(ev: ResearchEval) -> None:
    """pass_rate and describe_profiles run with every warning an error (RuntimeWarning above all)."""
    cols = ("elapsed_ms", "total_tokens", "main_input_tokens", "run_turn_ms")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rates = rev.pass_rate(ev.cases)
        described = rev.describe_profiles(ev.cases, columns=cols)
    assert rates["n"].tolist() == [24, 24, 24]
    assert np.isfinite(described[["n", "mean", "std", "min", "median", "max"]].to_numpy()).all()


# ---------------------------------------------------------------- the sample itself


def test_sample_loads_without_any_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = load_research_eval(SAMPLE)
    assert ev.cases.shape[0] == 72


# ---------------------------------------------------------------- NaN: missing, with a warning


@pytest.mark.parametrize("path, column", [
    (("token_usage", "main", "input_tokens"), "main_input_tokens"),  # a count
    (("timings_ms", "run_turn_ms"), "run_turn_ms"),  # a timing (ms)
    (("elapsed_ms",), "elapsed_ms"),  # the per-case float field (ms)
])
def test_nan_is_missing_with_a_warning(tmp_path, original, path, column):
    root, file = with_value(tmp_path, path, "NaN")
    ev, messages = load_recording(root)
    name = ".".join(path)
    assert messages == [f"1 value {NAN_RULE} (field(s) '{name}'): {file}:{LINE} field "
                        f"'{name}' (NaN)"]
    assert pd.isna(case(ev)[column])
    before, after = case(original), case(ev)
    untouched = [c for c in after.index if c != column]
    assert after[untouched].equals(before[untouched])  # total_tokens sums role totals only
    check_analyses_quietly(ev)


def test_nan_in_a_role_total_makes_total_tokens_missing_not_partial(tmp_path, original):
    root, file = with_value(tmp_path, ("token_usage", "main", "total_tokens"), "NaN")
    ev, messages = load_recording(root)
    assert messages == [f"1 value {NAN_RULE} (field(s) 'token_usage.main.total_tokens'): "
                        f"{file}:{LINE} field 'token_usage.main.total_tokens' (NaN)"]
    assert pd.isna(case(ev)["main_total_tokens"]) and pd.isna(case(ev)["total_tokens"])
    check_analyses_quietly(ev)
    # the other 23 cases of the run, described as before
    out = rev.describe_profiles(ev.cases).set_index(["run_id", "metric"])
    rest = original.cases.query("run_id == @RUN and case_id != @CASE")["total_tokens"]
    assert out.loc[(RUN, "total_tokens"), "n"] == 23
    assert out.loc[(RUN, "total_tokens"), "mean"] == pytest.approx(rest.astype(float).mean(),
                                                                   rel=1e-12)


def test_many_nans_are_one_warning_with_a_count(tmp_path, original):
    lines = (1, 2, 3, 4, 5, 6, 7)
    root, file = with_value(tmp_path, ("elapsed_ms",), "NaN", lines=lines)
    ev, messages = load_recording(root)
    places = "; ".join(f"{file}:{n} field 'elapsed_ms' (NaN)" for n in lines[:5])
    assert messages == [f"7 values {NAN_RULE} (field(s) 'elapsed_ms'): {places}; and 2 more"]
    run = ev.cases[ev.cases["run_id"] == RUN]
    assert run["elapsed_ms"].isna().sum() == 7
    check_analyses_quietly(ev)
    out = rev.describe_profiles(ev.cases).set_index(["run_id", "metric"])
    kept = original.cases[original.cases["run_id"] == RUN]["elapsed_ms"].iloc[7:]
    assert out.loc[(RUN, "elapsed_s"), "n"] == 17  # times in seconds: elapsed_ms / 1000
    assert out.loc[(RUN, "elapsed_s"), "median"] == pytest.approx(kept.median() / 1000,
                                                                   rel=1e-12)


# ---------------------------------------------------------------- non-finite and huge numbers: errors


@pytest.mark.parametrize("path, raw, what", [
    (("token_usage", "main", "input_tokens"), "Infinity", "Infinity is not a finite count"),
    (("token_usage", "main", "input_tokens"), "-Infinity", "-Infinity is not a finite count"),
    (("token_usage", "main", "input_tokens"), "1e400", "1e400 is not a finite count"),
    (("token_usage", "main", "input_tokens"), str(2 ** 70),
     "1180591620717411303424 is not a count below 2**53"),
    (("token_usage", "summarizer", "output_tokens"), "9" * 5000,
     "999999999999... (5000 digits) is not a finite count"),
    (("token_usage", "main", "output_tokens"), "-3", "-3 is not a count (negative)"),
    (("token_usage", "main", "output_tokens"), "12.5", "12.5 is not a whole number"),
    (("token_usage", "main", "output_tokens"), "true", "true is not a count"),
    (("token_usage", "main", "output_tokens"), '"many"', "'many' is not a count"),
    (("timings_ms", "run_turn_ms"), "Infinity", "Infinity is not a finite duration in ms"),
    (("timings_ms", "run_turn_ms"), "-Infinity", "-Infinity is not a finite duration in ms"),
    (("timings_ms", "llm_total_ms"), "-0.5", "-0.5 is not a duration in ms (negative)"),
    (("elapsed_ms",), "Infinity", "Infinity is not a finite duration in ms"),
    (("elapsed_ms",), "-Infinity", "-Infinity is not a finite duration in ms"),
])
def test_bad_numbers_are_errors_naming_file_line_and_field(tmp_path, path, raw, what):
    root, file = with_value(tmp_path, path, raw)
    expected = f"{file}:{LINE}: field '{'.'.join(path)}': {what}"
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    assert str(err.value) == expected


def test_numbers_written_as_text_are_read_with_a_warning(tmp_path):
    root, file = with_value(tmp_path, ("token_usage", "main", "input_tokens"), '"15267"')
    ev, messages = load_recording(root)
    assert messages == ["1 value written as a string in a numeric field, read as a number "
                        "(field(s) 'token_usage.main.input_tokens'): "
                        f"{file}:{LINE} field 'token_usage.main.input_tokens' ('15267')"]
    assert case(ev)["main_input_tokens"] == 15267
    root, file = with_value(tmp_path / "b", ("token_usage", "main", "input_tokens"), "15267.0")
    ev, messages = load_recording(root)
    assert messages == ["1 value written as a float with no fraction (e.g. 12.0) in a count "
                        "field, read as an integer (field(s) 'token_usage.main.input_tokens'): "
                        f"{file}:{LINE} field 'token_usage.main.input_tokens' (15267.0)"]
    assert case(ev)["main_input_tokens"] == 15267


# ---------------------------------------------------------------- booleans


@pytest.mark.parametrize("raw, value", [('"true"', True), ('"false"', False), ('"yes"', True),
                                        ('"FALSE"', False), ("1", True)])
def test_booleans_as_strings_are_read_with_a_warning(tmp_path, original, raw, value):
    root, file = with_value(tmp_path, ("passed",), raw)
    ev, messages = load_recording(root)
    shown = repr(json.loads(raw)) if raw.startswith('"') else raw
    assert messages == [f"1 value {FLAG_RULE} (field(s) 'passed'): {file}:{LINE} field "
                        f"'passed' ({shown})"]
    assert case(ev)["passed"] == value  # <NA> would raise here
    assert ev.cases["passed"].dtype == "boolean"
    rest = ev.cases.drop(index=ev.cases.index[(ev.cases["run_id"] == RUN)
                                              & (ev.cases["case_id"] == CASE)])
    assert rest["passed"].equals(original.cases.loc[rest.index, "passed"])
    check_analyses_quietly(ev)


@pytest.mark.parametrize("raw, shown", [('"maybe"', "'maybe'"), ("2", "2"),
                                        ("Infinity", "Infinity"), ('["true"]', '["true"]')])
def test_ambiguous_booleans_are_errors(tmp_path, raw, shown):
    root, file = with_value(tmp_path, ("passed",), raw)
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    assert str(err.value) == f"{file}:{LINE}: field 'passed': {shown} is not a boolean (true/false)"


def test_research_mode_as_a_string_is_read_with_a_warning(tmp_path):
    root, file = with_summary(tmp_path, "research_mode", "no")
    ev, messages = load_recording(root)
    assert messages == [f"1 value {FLAG_RULE} (field(s) 'research_mode'): {file} field "
                        "'research_mode' ('no')"]
    assert ev.runs.set_index("run_id").loc[RUN, "research_mode"] == False  # noqa: E712 (<NA>)


# ---------------------------------------------------------------- lists


@pytest.mark.parametrize("raw, stored", [
    ("web_search,code", "web_search,code"), ("web_search, code ", "web_search,code"),
    ("web_search", "web_search"), ("", "")])
def test_disabled_tools_as_a_comma_string_is_split_with_a_warning(tmp_path, raw, stored):
    root, file = with_summary(tmp_path, "disabled_tools", raw)
    ev, messages = load_recording(root)
    assert messages == [f"1 value {SPLIT_RULE} (field(s) 'disabled_tools'): {file} field "
                        f"'disabled_tools' ({raw!r})"]
    runs = ev.runs.set_index("run_id")
    assert runs.loc[RUN, "disabled_tools"] == stored  # not "w,e,b,_,s,..."
    assert runs.loc["research-gf-no-web-search", "disabled_tools"] == "web_search,get_url_content"
    check_analyses_quietly(ev)


def test_disabled_tools_of_another_type_is_an_error(tmp_path):
    root, file = with_summary(tmp_path, "disabled_tools", 5)
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    assert str(err.value) == f"{file}: field 'disabled_tools': 5 is not a list of strings"
    root, file = with_summary(tmp_path / "b", "disabled_tools", ["web_search", None])
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    assert str(err.value) == (f"{file}: field 'disabled_tools[1]': null is not an identifier "
                              "(a non-empty string)")


@pytest.mark.parametrize("raw, stored", [('"rfc9110,rfc9111"', "rfc9110,rfc9111"),
                                         ('"rfc9110"', "rfc9110"), ('""', "")])
def test_doc_ids_as_a_comma_string_is_split_with_a_warning(tmp_path, raw, stored):
    root, file = with_value(tmp_path, ("doc_ids",), raw)
    ev, messages = load_recording(root)
    assert messages == [f"1 value {SPLIT_RULE} (field(s) 'doc_ids'): {file}:{LINE} field "
                        f"'doc_ids' ({json.loads(raw)!r})"]
    assert case(ev)["doc_ids"] == stored


# ---------------------------------------------------------------- lines that are not case objects


@pytest.mark.parametrize("raw, what", [
    (b'{"case_id": "x", "status": "PASS", "passed": tru', "malformed JSON: Expecting value"),
    (b"not json at all", "malformed JSON: Expecting value"),
    (b'["rfc9110-404", "PASS"]', "expected a JSON object, got list"),
    (b'"rfc9110-404"', "expected a JSON object, got str"),
    (b'{"status": "PASS"}', "missing field 'case_id'"),
    (b'{"case_id": "rfc9110-404"}', "missing field 'status'"),
    (b'{"case_id": "rfc9110-404", "status": ["PASS"]}',
     'status ["PASS"] not one of PASS, FAIL, ERROR, HALTED'),
    (b'{"case_id": null, "status": "PASS"}',
     "field 'case_id': null is not an identifier (a non-empty string)"),
    (b'{"case_id": "x", "status": "PASS", "expected": "Not Found"}',
     "field 'expected': 'Not Found' is not a JSON object"),
    (b'{"case_id": "x", "status": "PASS", "token_usage": {"main": 5}}',
     "field 'token_usage.main': 5 is not a JSON object"),
    (b'{"case_id": "x", "status": "PASS", "answer": "caf\xe9"}', "not UTF-8 text (byte 49)"),
    (b"[" * 100_000, "JSON nested too deeply"),
])
@pytest.mark.filterwarnings("ignore:.*summary.json:UserWarning")  # counts change with the line
def test_bad_lines_are_errors_naming_file_and_line(tmp_path, raw, what):
    root, file = with_line(tmp_path, raw)
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    assert str(err.value) == f"{file}:{LINE}: {what}"


def test_only_case_id_and_status_are_required(tmp_path):
    root, file = with_line(tmp_path, b'{"case_id": "bare", "status": "FAIL"}')
    ev, messages = load_recording(root)
    # line 3's case is now "bare": the other two profiles lack "bare", this one lacks the case
    # it replaced (a case absent from one file, issue 24 item 5)
    absent = [("research-glmflash-local", "bare"), (RUN, CASE), ("research-gf-no-web-search",
                                                                "bare")]
    assert messages == [f"{RUN}: summary.json passed_cases=12 but results.jsonl has 11 PASS",
                        f"{RUN}: summary.json failed_cases=9 but results.jsonl has 10 FAIL",
                        *(f"warning: {r}/artifacts/results.jsonl, column 'case_id': 1 case(s) "
                          f"other runs have are absent here: {c} [case_missing]"
                          for r, c in absent)]
    assert [(f.check, f.file) for f in ev.findings] == [
        ("case_missing", f"{r}/artifacts/results.jsonl") for r, _ in absent]
    bare = case(ev, "bare")
    assert bare["status"] == "FAIL" and pd.isna(bare["passed"]) and pd.isna(bare["elapsed_ms"])
    assert pd.isna(bare["total_tokens"]) and bare["n_tool_calls"] == 0 and bare["doc_ids"] == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rev.describe_profiles(ev.cases).set_index(["run_id", "metric"])
    assert out.loc[(RUN, "elapsed_s"), "n"] == 23


# --- issue 24 item 5: a BOM, a case listed twice, a case absent from one file -------------------

def test_a_bom_is_accepted_as_in_the_other_readers(tmp_path):
    root = Path(shutil.copytree(SAMPLE, tmp_path / "s"))
    files = [root / "summary.json", *root.glob("*/artifacts/*.json*")]
    for f in files:
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    ev, clean = load_research_eval(root), load_research_eval(SAMPLE)
    pd.testing.assert_frame_equal(ev.cases.drop(columns="source"),
                                  clean.cases.drop(columns="source"))
    assert len(files) == 7  # the session summary, then results.jsonl + summary.json of 3 runs


@pytest.mark.filterwarnings("ignore:.*summary.json:UserWarning")  # its counts change too
def test_a_case_listed_twice_names_both_lines(tmp_path):
    root = Path(shutil.copytree(SAMPLE, tmp_path / "s"))
    file = root / RUN / "artifacts" / "results.jsonl"
    lines = file.read_bytes().splitlines(keepends=True)
    file.write_bytes(b"".join([*lines, lines[4]]))  # line 5 again, as line 25
    with pytest.raises(ValueError) as err:
        load_research_eval(root)
    case_id = json.loads(lines[4])["case_id"]
    assert str(err.value) == (f"{RUN}/artifacts/results.jsonl:25: field 'case_id': duplicate "
                              f"case {case_id!r} (first at line 5); one line per case")
