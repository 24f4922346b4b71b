"""Figures: inspect artists (bars, labels, notes), not pixels. Pitfall P08."""

from __future__ import annotations

import re

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from dabench_analysis import export, figures


def _bars(ax):
    return [(round(p.get_x(), 6), float(p.get_height())) for p in ax.patches if p.get_height() > 0]


def test_p08_constant_scores_with_fixed_binwidth():
    # pitfalls.md P08: one bar of height 4 at [0.5, 0.55), no exception
    fig = figures.score_distribution(pd.DataFrame({"final_score": [0.5] * 4}), binwidth=0.05)
    assert _bars(fig.axes[0]) == [(0.5, 4.0)]
    assert fig.axes[0].get_xlim() == (0.0, 1.0)


def test_p08_narrow_data_with_wide_bin():
    # pitfalls.md P08: [1, 2, 3] with binwidth 7 -> a single bar of height 3
    fig = figures.score_distribution(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), x="x", binwidth=7,
                                     scale=None, threshold=None)
    assert [h for _, h in _bars(fig.axes[0])] == [3.0]


def test_score_distribution_hue_in_catalogue_order():
    t = pd.DataFrame({"final_score": [0.1, 0.9, 0.5, 0.95],
                      "difficulty": ["Hard", "Easy", "Extreme", "Easy"]})
    fig = figures.score_distribution(t, hue="difficulty")
    legend = fig.axes[0].get_legend()
    assert [x.get_text() for x in legend.get_texts()] == ["Easy", "Hard", "Extreme"]
    assert fig.axes[0].get_title() == "Final score distribution (n = 4)"


def test_score_distribution_stacks_counts_per_level():
    t = pd.DataFrame({"final_score": [0.02, 0.03, 0.97, 0.5, 0.51, 1.0, 0.99],
                      "difficulty": ["Easy", "Hard", "Easy", "Hard", "Hard", "Easy", None]})
    ax = figures.score_distribution(t, hue="difficulty").axes[0]
    bars = {(round(p.get_x(), 6), round(p.get_y(), 6)): (p.get_height(), p.get_facecolor())
            for p in ax.patches if p.get_height() > 0}
    hard, easy = (matplotlib.colors.to_rgba(c, 0.75) for c in (figures.OKABE_ITO[1],
                                                               figures.OKABE_ITO[0]))
    # the last level at the bottom, the first on top; the last bin is closed at 1.0; a task
    # without a difficulty is counted in the title but in no bar
    assert bars == {(0.0, 0.0): (1.0, hard), (0.0, 1.0): (1.0, easy),
                    (0.5, 0.0): (2.0, hard), (0.95, 0.0): (2.0, easy)}
    handles = ax.get_legend().legend_handles
    assert [h.get_facecolor() for h in handles] == [easy, hard]
    assert ax.get_legend().get_title().get_text() == "difficulty"
    assert ax.get_ylim()[1] == pytest.approx(2.1)  # 5% headroom above the tallest stack
    many = pd.DataFrame({"final_score": [0.5] * 10, "g": [f"g{i}" for i in range(10)]})
    colours = {p.get_facecolor() for p in figures.score_distribution(many, hue="g").axes[0].patches}
    assert len(colours) == 10  # beyond the eight Okabe-Ito colours: viridis, one per level


def test_failure_distribution_counts_order_and_labels():
    t = pd.DataFrame({
        "final_score": [0.0, 0.1, 0.2, 0.9, 0.5],
        "failure_category": ["REASONING_FAILURE", "PLANNING_FAILURE", "REASONING_FAILURE",
                             None, None]})
    ax = figures.failure_distribution(t).axes[0]
    labels = [x.get_text() for x in ax.get_yticklabels()]
    # catalogue order: PLANNING before REASONING; a failed task without category is shown
    assert labels == ["Planning", "Reasoning", "(Missing)"]
    assert [float(p.get_width()) for p in ax.patches] == [1.0, 2.0, 1.0]
    assert "n = 4" in ax.get_xlabel()


def test_nothing_to_show_says_so():
    fig = figures.failure_distribution(pd.DataFrame({"final_score": [0.9, 1.0],
                                                     "failure_category": [None, None]}))
    assert fig.axes[0].texts[0].get_text().startswith("no failed tasks")
    fig = figures.score_distribution(pd.DataFrame({"final_score": [float("nan")]}))
    assert fig.axes[0].texts[0].get_text() == "no final_score values"


def test_errors_and_ax_reuse():
    with pytest.raises(ValueError, match="'nope' not in tasks"):
        figures.score_distribution(pd.DataFrame({"final_score": [1.0]}), x="nope")
    with pytest.raises(ValueError, match="binwidth must be positive"):
        figures.score_bins(0)
    fig, ax = plt.subplots()
    assert figures.score_distribution(pd.DataFrame({"final_score": [1.0]}), ax=ax) is fig


def test_style_sizes_and_embedded_fonts(tmp_path):
    fig = figures.new_figure("one")
    assert fig.get_size_inches()[0] == pytest.approx(3.5)
    fig.add_subplot().plot([0, 1], [0, 1], label="x")
    png, pdf = export.save_figure(fig, tmp_path / "f")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = pdf.read_bytes()
    assert b"/FontFile2" in data  # TrueType fonts embedded (pdf.fonttype 42)
    assert not list(tmp_path.glob(".*tmp"))


def _embedded_fonts(pdf: bytes):
    """The TrueType programs of a PDF's /FontFile2 streams, parsed with fontTools."""
    import io
    import re
    import zlib

    from fontTools.ttLib import TTFont

    fonts = []
    for num in re.findall(rb"/FontFile2 (\d+) 0 R", pdf):
        m = re.search(rb"\n" + num + rb" 0 obj\n<<[^>]*/FlateDecode[^>]*>>\nstream\n", pdf)
        start = m.end()
        fonts.append(TTFont(io.BytesIO(zlib.decompressobj().decompress(pdf[start:]))))
    return fonts


def test_png_is_300_dpi_and_pdf_page_matches_it(tmp_path):
    from PIL import Image

    fig = figures.new_figure("one")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_title("A title − with a minus ≥ 0.8")
    with plt.rc_context(figures.RC_PARAMS):  # tight bounding box, as in the notebooks
        png, pdf = export.save_figure(fig, tmp_path / "f")
    with Image.open(png) as im:
        assert im.info["dpi"] == pytest.approx((300, 300), abs=0.01)
        width_in, height_in = im.size[0] / 300, im.size[1] / 300
    # the PDF reuses the layout of the PNG save: the same page within 1% (72 pt per inch; the
    # tight box differs by the two renderers' text extents only)
    box = [float(v) for v in re.search(rb"/MediaBox \[ *([\d. ]+)\]", pdf.read_bytes())
           .group(1).split()]
    assert box[2] == pytest.approx(width_in * 72, rel=0.01)
    assert box[3] == pytest.approx(height_in * 72, rel=0.01)
    # and the figure keeps its constrained layout afterwards
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"


def test_pdf_fonts_are_embedded_glyph_subsets(tmp_path):
    from fontTools import subset

    fig = figures.new_figure("one")
    fig.add_subplot().set_title("Final score ≥ 0.8")
    _, pdf = export.save_figure(fig, tmp_path / "f")
    data = pdf.read_bytes()
    fonts = _embedded_fonts(data)
    assert fonts and b"/ToUnicode" in data  # text stays searchable
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager

    full = TTFont(font_manager.findfont("DejaVu Sans"))
    for font in fonts:
        assert {"glyf", "loca", "hmtx", "head"} <= set(font.keys())
        assert not {"GSUB", "GPOS", "GDEF", "MATH"} & set(font.keys())  # never read in a PDF
        names = [g for g in font.getGlyphOrder() if g != ".notdef"]
        assert 0 < len(names) < 100  # a subset, not the whole of DejaVu Sans
        for name in names:  # outlines and advance widths exactly as in the font file
            ours, theirs = font["glyf"][name], full["glyf"][name]
            assert ours.getCoordinates(font["glyf"])[0] == theirs.getCoordinates(full["glyf"])[0]
            assert font["hmtx"][name] == full["hmtx"][name]
    # fontTools is as it was after saving
    assert subset.load_font.__module__ == "fontTools.subset"


def test_save_and_show_displays_the_saved_png(tmp_path):
    from PIL import Image

    fig = figures.new_figure("two", aspect=0.4)
    fig.add_subplot().bar([0, 1], [1, 2])
    saved = export.save_and_show(fig, tmp_path / "bars")
    png, pdf = saved  # unpacks like save_figure's list
    assert (png.name, pdf.name) == ("bars.png", "bars.pdf")
    data, meta = saved._repr_png_()
    assert data == png.read_bytes()  # shown inline: the very file, not a second rendering
    with Image.open(png) as im:
        w, h = im.size
    # displayed at the inline backend's 100 dpi: a 7-inch figure is about 700 CSS pixels wide
    assert meta == {"width": round(w / 3), "height": round(h / 3)}
    assert 690 <= meta["width"] <= 720
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend will not draw it again
    assert "bars" in repr(saved)
    no_png = export.save_and_show(figures.new_figure(), tmp_path / "v", formats=("pdf",))
    assert no_png.png is None and no_png._repr_png_() is None
    with pytest.raises(ValueError, match="at least one"):
        export.save_and_show(figures.new_figure(), tmp_path / "x", formats=())


# --- analysis figures -------------------------------------------------------------------------

from dabench_analysis.load import load_run  # noqa: E402


@pytest.fixture(scope="module")
def runs():
    return (load_run("data/sample_runs/baseline_react"), load_run("data/sample_runs/proposed_aat"))


def test_correlation_matrix_annotations_match_pandas(runs):
    tasks = runs[1].tasks
    ax = figures.correlation_matrix(tasks).axes[0]
    metrics = ["final_score", "analyst_score", "autonomy_score", "tool_efficiency",
               "verification_score", "data_understanding_score"]
    corr = tasks[metrics].astype(float).corr()
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 36 and texts[0] == "1.00"
    assert texts[1] == f"{corr.iat[0, 1]:.2f}"


def test_constant_metric_shows_na():
    t = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, 1.0, 1.0]})
    ax = figures.correlation_matrix(t, metrics=["a", "b"]).axes[0]
    assert [x.get_text() for x in ax.texts] == ["1.00", "n/a", "n/a", "n/a"]


def test_difficulty_bars_heights_are_the_table(runs):
    from dabench_analysis import tables

    tasks = runs[0].tasks
    ax = figures.difficulty_bars(tasks).axes[0]
    t2 = tables.difficulty_breakdown(tasks)
    heights = [float(p.get_height()) for p in ax.patches]
    assert heights[:4] == pytest.approx(t2["answer_accuracy"].tolist())
    assert heights[4:] == pytest.approx(t2["mean_final_score"].tolist())
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "Easy\nn=20"


def test_reliability_and_stage_and_latency(runs):
    base, prop = runs
    rel = figures.reliability_diagram(prop.tasks).axes[0]
    assert rel.get_title().startswith("Reliability (ECE = ")
    stage = figures.failure_by_stage(base.tasks).axes[0]
    assert [t.get_text().split("\n")[0] for t in stage.get_xticklabels()] == [
        "Understand", "Plan", "Execute", "Verify", "Aggregate"]
    none = figures.failure_by_stage(pd.DataFrame({"final_score": [1.0],
                                                  "failure_stage": [None]})).axes[0]
    assert none.texts[0].get_text().startswith("no failed tasks")
    fig = figures.tool_latency(prop.tool_calls)
    assert len(fig.axes) == 2 and fig.axes[1].get_xlim() == (0.0, 1.0)


def test_paired_difference_one_bar_per_pair(runs):
    base, prop = runs
    ax = figures.paired_difference(base.tasks, prop.tasks).axes[0]
    assert len(ax.containers[0].patches) == 80  # the CI band is one more patch
    assert "n = 80" in ax.get_title()
