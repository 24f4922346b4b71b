"""Atomic writes and escaping in Markdown/LaTeX tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dabench_analysis import export


def test_atomic_write_keeps_old_file_on_error(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), export.atomic_write(target) as fh:
        fh.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_save_table_formats_and_precision(tmp_path):
    df = pd.DataFrame({"metric": ["final_score"], "mean": [2 / 3], "n": [3]})
    csv, tex, md = export.save_table(df, tmp_path / "tables" / "t", caption="Table 1")
    assert csv.read_text() == "metric,mean,n\nfinal_score,0.6666666666666666,3\n"
    assert tex.read_text() == ("% Table 1\n\\begin{tabular}{lrr}\n\\toprule\n"
                               "Metric & Mean & n \\\\\n\\midrule\nFinal score & 0.667 & 3 \\\\\n"
                               "\\bottomrule\n\\end{tabular}\n")
    assert md.read_text() == ("| Metric | Mean | n |\n|:---|---:|---:|\n"
                              "| Final score | 0.667 | 3 |\n")
    with pytest.raises(ValueError, match="unknown table format"):
        export.save_table(df, tmp_path / "x", formats=("xlsx",))


def _difficulty_table() -> pd.DataFrame:
    """Table 2's shape: counts, a Wilson share, seconds and tokens, each with its interval."""
    return pd.DataFrame({
        "difficulty": pd.Categorical(["Easy", "Hard"], categories=["Easy", "Medium", "Hard"],
                                     ordered=True),
        "n": [20, 22],
        "answer_accuracy": [0.95, 0.9090909], "answer_accuracy_ci_low": [0.7639, 0.7219],
        "answer_accuracy_ci_high": [0.9911, 0.9747],
        "mean_runtime_s": [23.5676, 66.2], "mean_runtime_s_ci_low": [17.0691, 56.01],
        "mean_runtime_s_ci_high": [30.0661, 76.3],
        "mean_tokens": [3886.25, 6928.0], "mean_tokens_ci_low": [3767.05, 5680.4],
        "mean_tokens_ci_high": [4005.45, 8176.6],
        "method": ["Wilson; t", "Wilson; t"],
    })


def test_paper_tables_have_labels_units_intervals_and_integer_counts(tmp_path):
    # the rule (schema.numbers): 3 decimals in [-1, 1] (0.7639 -> 0.764), else 3 significant
    # digits (3886.25 -> 3886, 23.5676 -> 23.6); bounds with the estimate's decimals
    csv, tex, md = export.save_table(_difficulty_table(), tmp_path / "difficulty",
                                     caption="Table 2: breakdown by difficulty")
    assert md.read_text() == (
        "| Difficulty | n | Answer accuracy [95% CI] | Runtime (s) [95% CI] | Tokens [95% CI] |\n"
        "|:---|---:|---:|---:|---:|\n"
        "| Easy | 20 | 0.950 [0.764, 0.991] | 23.6 [17.1, 30.1] | 3886 [3767, 4005] |\n"
        "| Hard | 22 | 0.909 [0.722, 0.975] | 66.2 [56.0, 76.3] | 6928 [5680, 8177] |\n"
        "\n"
        "Method: Wilson; t\n")
    assert tex.read_text() == (
        "% Table 2: breakdown by difficulty\n"
        "\\begin{tabular}{lrrrr}\n"
        "\\toprule\n"
        "Difficulty & n & Answer accuracy [95\\% CI] & Runtime (s) [95\\% CI] & Tokens [95\\% CI]"
        " \\\\\n"
        "\\midrule\n"
        "Easy & 20 & 0.950 [0.764, 0.991] & 23.6 [17.1, 30.1] & 3886 [3767, 4005] \\\\\n"
        "Hard & 22 & 0.909 [0.722, 0.975] & 66.2 [56.0, 76.3] & 6928 [5680, 8177] \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\par\\smallskip\n"  # the method as a visible note under the table (booktabs only)
        "{\\footnotesize Method: Wilson; t.\\par}\n")
    # the csv keeps machine names, every column and full precision
    assert csv.read_text().splitlines()[:2] == [
        "difficulty,n,answer_accuracy,answer_accuracy_ci_low,answer_accuracy_ci_high,"
        "mean_runtime_s,mean_runtime_s_ci_low,mean_runtime_s_ci_high,mean_tokens,"
        "mean_tokens_ci_low,mean_tokens_ci_high,method",
        "Easy,20,0.95,0.7639,0.9911,23.5676,17.0691,30.0661,3886.25,3767.05,4005.45,Wilson; t"]


def test_columns_and_labels_choose_and_rename(tmp_path):
    df = pd.DataFrame({"metric": ["final_score", "total_tokens"], "n": [80, 80],
                       "mean": [0.8777649, 3886.25], "std": [0.228, 1020.5],
                       "ci_low": [0.8173711, 3767.05], "ci_high": [0.9201385, 4005.45],
                       "method": ["logit t", "t"]})
    csv, md = export.save_table(df, tmp_path / "main", formats=("csv", "md"),
                                columns=["metric", "mean", "ci_low", "ci_high", "n"],
                                labels={"mean": "Mean score", "n": "Tasks"})
    assert md.read_text() == ("| Metric | Mean score [95% CI] | Tasks |\n"
                              "|:---|---:|---:|\n"
                              "| Final score | 0.878 [0.817, 0.920] | 80 |\n"
                              "| Total tokens (tokens) | 3886 [3767, 4005] | 80 |\n")
    assert csv.read_text().splitlines()[0] == "metric,n,mean,std,ci_low,ci_high,method"
    with pytest.raises(ValueError, match="column 'mea' not in the table"):
        export.save_table(df, tmp_path / "x", columns=["metric", "mea"])
    with pytest.raises(ValueError, match="column 'std' not in the table's shown columns"):
        export.to_markdown(df, columns=["metric", "mean"], labels={"std": "SD"})


def test_counts_print_as_integers_and_method_columns_as_notes():
    df = pd.DataFrame({"group": ["a", "b"], "n": [3.0, math.nan], "count": [2.0, 5.0],
                       "mean": [2 / 3, 0.5], "method": ["Wilson", "exact"], "note": [None, ""]})
    # a method that differs between rows stays a column; an empty note column is left out
    assert export.to_markdown(df) == ("| Group | n | Count | Mean | Method |\n"
                                      "|:---|---:|---:|---:|:---|\n"
                                      "| a | 3 | 2 | 0.667 | Wilson |\n"
                                      "| b | n/a | 5 | 0.500 | exact |")


def test_markdown_is_plain_text_escaping_only_what_markdown_reads():
    df = pd.DataFrame({"root_cause": ["<script>alert(1)</script> | x", "p < 0.05 & C:\\tmp\\*"],
                       "p_value": [0.0004, 0.0123]})
    assert export.to_markdown(df).splitlines() == [
        "| Root cause | p |", "|:---|---:|",
        r"| \<script>alert(1)\</script> \| x | < 0.001 |",
        r"| p < 0.05 & C:\tmp\\\* | 0.012 |"]  # "\\" a backslash, "\*" an asterisk


def test_latex_escapes_text_from_the_data():
    tex = export.to_latex(pd.DataFrame({"task_id": ["50% & $5_{a}", "[x] ~^<>|"]}))
    assert tex == ("\\begin{tabular}{l}\n\\toprule\nTask ID \\\\\n\\midrule\n"
                   "50\\% \\& \\$5\\_\\{a\\} \\\\\n"
                   "{}[x] \\textasciitilde{}\\textasciicircum{}\\textless{}\\textgreater{}"
                   "\\textbar{} \\\\\n"
                   "\\bottomrule\n\\end{tabular}")


@pytest.mark.parametrize("df", [
    pd.DataFrame({"task_id": ["a_1", "b & c"], "n": [3, 40], "mean": [0.5, 0.25],
                  "ci_low": [0.25, 0.1], "ci_high": [0.75, 0.4], "p_value": [0.0004, 0.2],
                  "50% {x}": ["≥ 0.8 × σ", None], "method": ["t", "t"]}),
    pd.DataFrame({"n": pd.Series([], dtype="int64"), "label": pd.Series([], dtype="string")}),
    pd.DataFrame({"x": [1.5]}, index=pd.Index(["r"], name="row")),
    pd.DataFrame(index=[0, 1]),  # no columns: no header row
    pd.DataFrame(),
])
def test_latex_tabular_is_the_one_pandas_styler_writes(df):
    # the tabular of a presented table, byte for byte what pandas' Styler.to_latex writes
    # (hidden index, every header and cell escaped, booktabs rules): the reference
    from dabench_analysis.export._presentation import present
    from dabench_analysis.export._tables import _tex_escape

    shown = present(df.reset_index() if df.index.name else df)
    styler = shown.style.hide(axis="index").format(_tex_escape).format_index(_tex_escape, axis=1)
    expected = styler.to_latex(hrules=True, column_format=shown.attrs["align"] or "l")
    tex = export.to_latex(df)
    assert tex.split("\\end{tabular}")[0] + "\\end{tabular}\n" == expected


def test_missing_values_print_as_na_and_json_is_strict(tmp_path):
    df = pd.DataFrame({"difficulty": ["Extreme"], "n": [0], "rate": [math.nan]})
    assert export.to_markdown(df).splitlines()[2] == "| Extreme | 0 | n/a |"
    path = export.write_json({"x": math.inf, "y": [math.nan, 1]}, tmp_path / "s.json")
    assert path.read_text() == '{\n  "x": null,\n  "y": [\n    null,\n    1\n  ]\n}\n'


def test_table_p_values_follow_the_package_rule():
    # schema.numbers: p to 3 decimals, "< 0.001" below 0.001, whatever digits= is (digits=2:
    # estimates in [-1, 1] to 2 decimals, 2.0 to 2 significant digits)
    df = pd.DataFrame({"metric": ["a", "b", "c", "d"], "p_value": [0.0004, 0.09282, 0.27845, math.nan],
                       "p_adjusted": [0.0012, 0.2784, 1.0, math.nan], "mean": [0.5, 0.25, 1.0, 2.0]})
    lines = export.to_markdown(df, digits=2).splitlines()
    assert lines[0] == "| Metric | p | Adjusted p | Mean |"
    assert lines[2:] == ["| a | < 0.001 | 0.001 | 0.50 |", "| b | 0.093 | 0.278 | 0.25 |",
                         "| c | 0.278 | 1.000 | 1.00 |", "| d | n/a | n/a | 2.0 |"]
    assert r"a & \textless{} 0.001 & 0.001 & 0.500 \\" in export.to_latex(df)


def test_estimate_and_interval_cells():
    # by hand: 3 decimals in [-1, 1], the bounds with the estimate's, half-up on the decimal text
    assert export.format_interval(0.8777649, 0.8173711, 0.9201385) == "0.878 [0.817, 0.920]"
    assert export.format_interval(-0.0222, -0.1579, 0.1135) == "-0.022 [-0.158, 0.114]"
    assert export.format_interval(math.nan, 0.1, 0.2) == "n/a"
    assert export.format_interval(0.5, 0.25, None) == "0.500 [–]"
    pairs = export._presentation.find_intervals(pd.DataFrame({
        "specialist": ["x"], "accuracy_with": [0.9], "ci_low_with": [0.8], "ci_high_with": [0.95],
        "delta": [0.1], "ci_low": [0.0], "ci_high": [0.2], "failure_rate": [0.1],
        "failure_ci_low": [0.05], "failure_ci_high": [0.2]}))
    assert pairs == {"accuracy_with": ("ci_low_with", "ci_high_with"),
                     "delta": ("ci_low", "ci_high"),
                     "failure_rate": ("failure_ci_low", "failure_ci_high")}


# --- parameters as one note, ranks, missing intervals, empty tables (sweep tables) -----------

def _board() -> pd.DataFrame:
    """A leaderboard's shape: constant parameter columns beside the numbers."""
    return pd.DataFrame({"run_id": ["a", "b", "c"], "metric": "final_score",
                         "mean_score": [0.8591, 0.5, 0.25], "mean_score_ci_low": [math.nan, 0.4, 0.2],
                         "mean_score_ci_high": [math.nan, 0.6, 0.3], "rank": [1.0, 2.0, 3.0],
                         "rank_low": [1.0, 1.5, 3.0], "rank_high": [1.5, 2.0, 3.0],
                         "threshold": 0.8, "ci": 0.95, "n_boot": 2000, "boot_seed": 0})


def test_constant_parameters_become_one_note_in_md_tex_and_not_in_csv(tmp_path):
    csv, tex, md = export.save_table(_board(), tmp_path / "leaderboard")
    assert md.read_text() == (
        "| Run ID | Final score [95% CI] | Rank | Rank (low) | Rank (high) |\n"
        "|:---|---:|---:|---:|---:|\n"
        "| a | 0.859 [–] | 1 | 1 | 1.5 |\n"  # ranks: integers, or halves when averaged
        "| b | 0.500 [0.400, 0.600] | 2 | 1.5 | 2 |\n"
        "| c | 0.250 [0.200, 0.300] | 3 | 3 | 3 |\n"
        "\n"
        "Metric: Final score; threshold: 0.8; level: 0.95; bootstrap: 2000 draws, seed 0\n"
        "Interval [–]: not estimable (fewer than 2 values, or no variation)\n")
    assert tex.read_text().splitlines()[-1] == (
        "{\\footnotesize Metric: Final score; threshold: 0.8; level: 0.95; bootstrap: 2000 "
        "draws, seed 0. Interval [--]: not estimable (fewer than 2 values, or no variation).\\par}")
    assert "a & 0.859 [--] & 1 & 1 & 1.5 \\\\" in tex.read_text()
    assert csv.read_text().splitlines()[0] == (
        "run_id,metric,mean_score,mean_score_ci_low,mean_score_ci_high,rank,rank_low,rank_high,"
        "threshold,ci,n_boot,boot_seed")


def test_parameters_that_vary_or_are_labelled_stay_columns():
    varying = _board().assign(threshold=[0.5, 0.8, 0.9])
    shown = export.present(varying)
    assert shown["Threshold"].tolist() == ["0.500", "0.800", "0.900"]
    assert shown.attrs["notes"][0] == "Metric: Final score; level: 0.95; bootstrap: 2000 draws, seed 0"
    kept = export.present(_board(), labels={"ci": "Level of the interval"})
    assert kept["Level of the interval"].tolist() == ["0.950"] * 3
    # one row: its metric is the row's label, not a note
    one = export.present(pd.DataFrame({"metric": ["final_score"], "mean": [0.5], "threshold": [0.8]}))
    assert one.to_dict("records") == [{"Metric": "Final score", "Mean": "0.500"}]
    assert one.attrs["notes"] == ["Threshold: 0.8"]


def test_integer_like_columns_and_statistics():
    df = pd.DataFrame({"run_a": ["a", "b"], "statistic": [1.0, 36.0], "seed": [0.0, 3.0],
                       "config_rank": [2.0, 1.0], "p_holm": [0.0928, 0.00012],
                       "mean_diff": [0.08, -0.1], "ci_low": [math.nan, -0.2], "ci_high": [0.2, 0.0]})
    assert export.present(df).to_dict("list") == {
        "Run a": ["a", "b"], "Statistic": ["1.000", "36.0"],  # 3 decimals in [-1, 1]
        "Seed": ["0", "3"], "Config rank": ["2", "1"],
        "p (Wilcoxon, Holm)": ["0.093", "< 0.001"],  # p columns by the p rule
        "Difference [95% CI]": ["0.080 [–]", "-0.100 [-0.200, 0.000]"]}


def test_an_empty_table_does_not_guess_its_intervals():
    cols = ["run_a", "run_b", "mean_diff", "ci_low", "ci_high", "p_holm"]
    shown = export.present(pd.DataFrame(columns=cols).astype({"p_holm": float}))
    assert list(shown.columns) == ["Run a", "Run b", "Difference [95% CI]", "p (Wilcoxon, Holm)"]
    # no estimate named as such: the bounds stay two columns
    bare = export.present(pd.DataFrame(columns=["run_a", "p_holm", "ci_low", "ci_high"],
                                       dtype=float))
    assert list(bare.columns) == ["Run a", "p (Wilcoxon, Holm)", "CI low", "CI high"]


def test_latex_maps_unicode_symbols_to_commands():
    tex = export.to_latex(pd.DataFrame({"x": ["Σ × § ≥ ≤ − … ‘a’ “b” → α Ω", "pass→fail – café"]}))
    rows = tex.splitlines()[4:6]
    assert rows == [
        r"\ensuremath{\Sigma} \ensuremath{\times} \S{} \ensuremath{\geq} \ensuremath{\leq} "
        r"\ensuremath{-} \ldots{} `a' ``b'' \ensuremath{\rightarrow} \ensuremath{\alpha} "
        r"\ensuremath{\Omega} \\",
        r"pass\ensuremath{\rightarrow}fail -- café \\"]  # accented letters: pdflatex reads UTF-8


def test_markdown_escapes_emphasis_and_code_but_keeps_snake_case():
    md = export.to_markdown(pd.DataFrame({"x": ["x*y*", "_a_ and run_a", "`rm -rf`", "a__b"]}))
    assert md.splitlines()[2:] == [r"| x\*y\* |", r"| \_a\_ and run_a |", r"| \`rm -rf\` |",
                                   r"| a\_\_b |"]


def test_atomic_write_leaves_the_flush_of_a_staged_report_to_the_runner(tmp_path, monkeypatch):
    import os

    from dabench_analysis import _atomic

    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    stage = tmp_path / ".papermill-x" / "out"
    monkeypatch.setenv(_atomic.STAGE_ENV, str(stage))
    with export.atomic_write(stage / "tables" / "t.csv") as fh:  # inside the staging folder
        fh.write("a\n")
    assert synced == []  # no fsync per file: the runner's one sync_all(folder) does it
    assert (stage / "tables" / "t.csv").read_text() == "a\n"
    assert [p.name for p in (stage / "tables").iterdir()] == ["t.csv"]  # renamed, no .tmp left
    with export.atomic_write(tmp_path / "elsewhere.txt") as fh:  # outside: flushed as before
        fh.write("b\n")
    assert len(synced) == 1
    monkeypatch.delenv(_atomic.STAGE_ENV)
    with export.atomic_write(stage / "u.csv") as fh:  # no report running: flushed
        fh.write("c\n")
    assert len(synced) == 2
    synced.clear()
    _atomic.sync_all(stage)  # the runner's one pass: every file under the staging folder
    assert len(synced) == 2  # tables/t.csv and u.csv
