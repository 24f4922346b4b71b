"""One presentation rule (issue 25, items 1 and 2): the same value prints the same way in every
output a reader sees -- the .md and .tex tables, the HTML report, figure titles and
annotations, index.html, the results paragraph -- and category values, headers and notes are
the catalogue's labels (the .csv keeps machine names).

The expected texts are written here from the rule itself (3 decimals for values in [-1, 1] and
p-values, "< 0.001" below 0.001; intervals with the estimate's decimals), with Python's own
formatting, never with the package's formatter.
"""

from __future__ import annotations

import json
import re
import warnings
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis import export, figures
from dabench_analysis.report._show import key_numbers_frame
from dabench_analysis.schema import numbers
from dabench_analysis.schema._labels import value_label

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"


def r3(x: float) -> str:
    """3 decimals, half-up on the value's decimal text: the rule for values in [-1, 1]."""
    return str(Decimal(repr(float(x))).quantize(Decimal("0.001"), ROUND_HALF_UP))


# --- the rule ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.0, "0.000"), (1.0, "1.000"), (0.0820, "0.082"), (0.00607, "0.006"), (-0.534, "-0.534"),
    (0.9996, "1.000"), (1.5, "1.50"), (12.5, "12.5"), (99.96, "100"), (118.2, "118"),
    (12345.6, "12346"), (-1e-5, "0.000"), (0.0005, "0.001")])
def test_estimates(value, text):
    # 3 decimals in [-1, 1]; else 3 significant digits, whole numbers from 100; half-up
    assert numbers.format_estimate(value) == text


def test_intervals_take_the_estimates_decimals():
    assert numbers.format_interval(0.0820, 0.00607, 0.158) == "0.082 [0.006, 0.158]"
    assert numbers.format_interval(1.0, 0.8667, 1.0) == "1.000 [0.867, 1.000]"
    assert numbers.format_interval(118.2, 92.5, 143.4) == "118 [93, 143]"  # 92.5 half-up
    assert numbers.format_interval(0.5, float("nan"), 0.7) == "0.500 [–]"


def test_pvalues_counts_ranks():
    assert [numbers.format_pvalue(p) for p in (0.0928, 0.27845, 0.00099, 1.0)] == \
        ["0.093", "0.278", "< 0.001", "1.000"]
    assert numbers.format_p(0.0123) == "p = 0.012"
    assert [numbers.format_rank(r) for r in (1.0, 2.5, 3.0)] == ["1", "2.5", "3"]
    assert numbers.format_count(80.0) == "80"


def test_a_table_keeps_one_number_of_decimals_per_column():
    t = pd.DataFrame({"difficulty": ["Easy", "Medium", "Extreme"], "mean": [0.0, 1.0, 0.615],
                      "ci_low": [0.0, 0.867, 0.355], "ci_high": [0.168, 1.0, 0.823],
                      "rank": [1.0, 2.5, 2.5]})
    shown = export.present(t)
    assert shown["Mean [95% CI]"].tolist() == ["0.000 [0.000, 0.168]", "1.000 [0.867, 1.000]",
                                               "0.615 [0.355, 0.823]"]
    assert shown["Rank"].tolist() == ["1", "2.5", "2.5"]


def test_a_rank_biserial_r_is_an_estimate_not_a_rank():
    """r = 0.244 printed as a rank read '0.2' in da.show (found by a new-user trial)."""
    t = pd.DataFrame({"metric": ["final_score", "answer_f1"], "rank_biserial": [0.24404, 0.58],
                      "rank_low": [1.0, 1.5], "rank_high": [2.0, 2.0]})
    shown = export.present(t)
    assert shown.filter(like="biserial").iloc[:, 0].tolist() == ["0.244", "0.580"]
    assert shown.filter(like="ank").drop(columns=shown.filter(like="biserial").columns) \
        .iloc[:, 0].tolist() == ["1", "1.5"]


def test_category_values_are_labelled_but_csv_keeps_machine_names(tmp_path):
    t = pd.DataFrame({"failure_category": ["DATA_UNDERSTANDING_FAILURE", "PLANNING_FAILURE"],
                      "count": [2, 1], "share": [0.25, 0.125], "ci_low": [0.0715, 0.0224],
                      "ci_high": [0.591, 0.471], "n": [8, 8], "method": ["Wilson"] * 2})
    export.save_table(t, tmp_path / "t")
    md = (tmp_path / "t.md").read_text()
    assert "| Data understanding | 2 | 0.250 [0.072, 0.591] | 8 |" in md  # 0.0715 half-up
    assert "DATA_UNDERSTANDING_FAILURE" not in md
    assert "DATA_UNDERSTANDING_FAILURE" in (tmp_path / "t.csv").read_text()


def test_tex_note_is_visible_under_the_table(tmp_path):
    t = pd.DataFrame({"n": [3], "mean": [0.5], "ci_low": [0.25], "ci_high": [0.75],
                      "method": ["logit t"]})
    export.save_table(t, tmp_path / "t")
    tex = (tmp_path / "t.tex").read_text()
    body, _, after = tex.partition(r"\end{tabular}")
    assert "%" not in body.split(r"\begin{tabular}")[0]  # no note hidden in a comment
    assert after.strip().splitlines() == [r"\par\smallskip", r"{\footnotesize Method: logit t.\par}"]


def test_key_numbers_are_a_labelled_table_without_literals():
    frame = key_numbers_frame({
        "run_id": "proposed_aat", "n_tasks": 80, "answer_accuracy": 0.9,
        "answer_accuracy_ci_low": 0.815, "answer_accuracy_ci_high": 0.948, "skipped": [],
        "n_own_tasks": {"baseline_react": 80}, "p_value_final_score": 0.0928,
        "schema_version": 1, "manifest": {"x": 1}})
    rows = dict(zip(frame["quantity"], frame["value"], strict=True))
    assert rows == {"Run ID": "proposed_aat", "Tasks": "80",
                    "Answer accuracy": "0.900 [0.815, 0.948]", "Skipped sections": "none",
                    "Own tasks per run": "baseline_react: 80",
                    "p (Wilcoxon, final score)": "0.093"}


# --- one value across all its outputs ----------------------------------------------------------

def _cells(md: str, first: str) -> list[str]:
    row = next(line for line in md.splitlines() if line.startswith(f"| {first} |"))
    return [c.strip() for c in row.strip("|").split("|")]


def test_one_comparison_value_prints_the_same_everywhere(sample_report):
    _, out = sample_report
    comp = out / "compare_baseline_react_vs_proposed_aat"
    row = pd.read_csv(comp / "tables" / "paired_comparison.csv").set_index("metric") \
        .loc["final_score"]
    holm, p, diff = row["p_adjusted"], row["p_value"], row["mean_diff"]
    # the rule, written out: p to 3 decimals; a value in [-1, 1] to 3 decimals
    holm_text, p_text = r3(holm), r3(p)
    diff_text = f"{r3(diff)} [{r3(row['ci_low'])}, {r3(row['ci_high'])}]"
    md = (comp / "tables" / "paired_comparison.md").read_text()
    cells = _cells(md, "Final score")
    assert holm_text in cells and p_text in cells and diff_text in cells
    tex = (comp / "tables" / "paired_comparison.tex").read_text()
    assert f"& {holm_text} &" in tex and f"& {diff_text} &" in tex
    paragraph = (comp / "results_paragraph.md").read_text()
    assert f"single-test p = {p_text}, Holm-adjusted p = {holm_text}" in paragraph
    index = (out / "index.html").read_text()
    assert f"Wilcoxon p = {holm_text} (Holm-adjusted)" in index
    # McNemar's discordant pairs name the run that solved the task (b = 3, c = 14 by the .csv)
    mc = pd.read_csv(comp / "tables" / "mcnemar.csv").iloc[0]
    header = (comp / "tables" / "mcnemar.md").read_text().splitlines()[0]
    cells = _cells((comp / "tables" / "mcnemar.md").read_text(), str(int(mc["n_pairs"])))
    heads = [h.strip() for h in header.strip("|").split("|")]
    assert cells[heads.index("Solved by baseline only")] == str(int(mc["b"]))
    assert cells[heads.index("Solved by proposed only")] == str(int(mc["c"]))
    page = (comp / "report.html").read_text()
    assert f">{holm_text}<" in page and f">{diff_text}<" in page
    assert ">0.0928<" not in page and ">0.28<" not in page  # the two forms the audit saw
    # the paired-difference figure's title quotes the unadjusted p the same way
    base, prop = (da.load_run(SAMPLE / r) for r in ("baseline_react", "proposed_aat"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ax = figures.paired_difference(base, prop)
    assert f"Wilcoxon p = {p_text}, unadjusted" in ax.get_title()


def test_one_run_value_prints_the_same_everywhere(sample_report):
    _, out = sample_report
    run = out / "proposed_aat"
    summary = json.loads((run / "summary.json").read_text())
    acc = summary["answer_accuracy"]
    text = f"{r3(acc)} [{r3(summary['answer_accuracy_ci_low'])}, " \
           f"{r3(summary['answer_accuracy_ci_high'])}]"
    status = (run / "tables" / "outcome_status.md").read_text()
    assert _cells(status, "Correct")[2] == text  # "correct" labelled; same share and interval
    page = (run / "report.html").read_text()
    assert page.count(f">{text}<") >= 2  # the outcome table and the key numbers
    index = (out / "index.html").read_text()
    assert f"answer accuracy {r3(acc)}" in index
    assert "%" not in re.sub(r"\d+(\.\d+)?% CI|95%", "", index)  # no share as a percentage
    # a failure share: the table, the figure's bar label and the paragraph agree
    cats = pd.read_csv(run / "tables" / "failure_categories.csv")
    top = cats.sort_values("count", ascending=False, kind="stable").iloc[0]  # named first
    share, k, n = r3(top["share"]), int(top["count"]), int(top["n"])
    md = (run / "tables" / "failure_categories.md").read_text()
    name = value_label("failure_category", top["failure_category"])  # e.g. "Data understanding"
    assert any(c.startswith(f"{share} [") for c in _cells(md, name))
    ax = figures.failure_distribution(da.load_run(SAMPLE / "proposed_aat"))
    assert f" {k} ({share})" in [t.get_text() for t in ax.texts]
    paragraph = (out / "compare_baseline_react_vs_proposed_aat" / "results_paragraph.md") \
        .read_text()
    assert f"{name} ({k} of {n}, a share of {share}" in paragraph
    assert "_FAILURE" not in paragraph  # categories by their labels


def test_reports_show_no_python_literal_or_repr(sample_report):
    _, out = sample_report
    for page in out.glob("*/report.html"):
        text = page.read_text()
        for bad in ("&lt;Run ", "&lt;Runs:", ">[]<", "{&#x27;", "{'", "=&#x27;"):
            assert bad not in text, (page, bad)


# --- the command line at 80 columns and in a log ----------------------------------------------

def test_report_help_reads_at_eighty_columns():
    from typer.testing import CliRunner

    from dabench_analysis.report._cli import app

    res = CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "80"},
                             terminal_width=80)
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert max(map(len, lines)) <= 80
    # each option's text keeps a column of about 46 characters (rich's panels left it ~16)
    start = next(line for line in lines if line.lstrip().startswith("--worked-case <"))
    text_col = start.index("the judge study's")  # where the option's own text begins
    assert any(line.lstrip().startswith("--threshold, --success-threshold <") for line in lines)
    assert 20 <= text_col <= 36, start
    assert "╭" not in res.output and "│" not in res.output  # plain text, no panel borders
    help_lines = [line[text_col:] for line in lines if line.startswith(" " * text_col) and
                  line.strip()]
    assert max(len(t) for t in help_lines) >= 40


def test_html_shows_figures_at_their_printed_width(sample_report):
    # 150 px per printed inch: a one-column figure (3.5 in, a little less once cropped to its
    # drawing) is at least 500 px wide on screen, a two-column one about 1050 px
    _, out = sample_report
    for page in ("proposed_aat", "compare_baseline_react_vs_proposed_aat", "sweep"):
        html = (out / page / "report.html").read_text()
        widths = [int(w) for w in re.findall(r'<img[^>]*?width="?(\d+)', html)]  # as written
        assert widths and min(widths) >= 500, (page, widths)


def test_a_table_with_two_columns_of_one_name_is_a_clear_error():
    # which of two "n" columns is the table's n is not for the presentation to guess
    table = pd.DataFrame([[1, 2, 0.5]], columns=["n", "n", "mean"])
    with pytest.raises(ValueError, match="more than one column named n"):
        export.present(table)
