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
    assert "\\toprule" in tex.read_text() and "final\\_score & 0.667 & 3" in tex.read_text()
    assert md.read_text().splitlines()[2] == "| final_score | 0.667 | 3 |"
    with pytest.raises(ValueError, match="unknown table format"):
        export.save_table(df, tmp_path / "x", formats=("xlsx",))


def test_markdown_and_latex_escape_data_text():
    df = pd.DataFrame({"root_cause": ["<script>alert(1)</script> | x", "50% & $5_{a}"]})
    md = export.to_markdown(df)
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\|" in md
    tex = export.to_latex(df)
    assert r"50\% \& \$5\_\{a\}" in tex


def test_missing_values_print_as_na_and_json_is_strict(tmp_path):
    df = pd.DataFrame({"difficulty": ["Extreme"], "n": [0], "rate": [math.nan]})
    assert export.to_markdown(df).splitlines()[2] == "| Extreme | 0 | n/a |"
    path = export.write_json({"x": math.inf, "y": [math.nan, 1]}, tmp_path / "s.json")
    assert path.read_text() == '{\n  "x": null,\n  "y": [\n    null,\n    1\n  ]\n}\n'


def test_table_p_values_follow_the_package_rule():
    # export.numbers: p to 2 significant digits, "< 0.001" below 0.001, whatever digits= is
    df = pd.DataFrame({"metric": ["a", "b", "c", "d"], "p_value": [0.0004, 0.09282, 0.27845, math.nan],
                       "p_adjusted": [0.0012, 0.2784, 1.0, math.nan], "mean": [0.5, 0.25, 1.0, 2.0]})
    rows = export.to_markdown(df, digits=2).splitlines()[2:]
    assert rows == ["| a | &lt; 0.001 | 0.0012 | 0.50 |", "| b | 0.093 | 0.28 | 0.25 |",
                    "| c | 0.28 | 1.0 | 1.00 |", "| d | n/a | n/a | 2.00 |"]
    assert r"a & \textless{} 0.001 & 0.0012 & 0.500 \\" in export.to_latex(df)
