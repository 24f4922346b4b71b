"""Figures: inspect artists (bars, labels, notes), not pixels. Pitfall P08.

Every figure function is checked on a small hand-built frame against values counted and
intervals computed here from their formulas. Over 400 lines (CONVENTIONS allows 500 with the
reason): one artist-level test per figure plus the saving tests kept here from before.
"""

from __future__ import annotations

import importlib
import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer
from scipy import special
from scipy import stats as sps

from dabench_analysis import export, figures


def _bars(ax):
    return [(round(p.get_x(), 6), float(p.get_height())) for p in ax.patches if p.get_height() > 0]


# Intervals computed here from their formulas, independently of dabench_analysis.stats.
def _wilson(k, n, ci=0.95):
    """Wilson (1927) score interval, closed form:
    (p + z²/2n ± z·sqrt(p(1 − p)/n + z²/4n²)) / (1 + z²/n), p = k/n, z = Φ⁻¹((1 + ci)/2)."""
    z, p = sps.norm.ppf((1 + ci) / 2), k / n
    centre, half = p + z**2 / (2 * n), z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return (centre - half) / (1 + z**2 / n), (centre + half) / (1 + z**2 / n)


def _t_ci(x, ci=0.95):
    """Student t interval of the mean: m ± t_{n−1, (1+ci)/2} · s/√n (R t.test)."""
    x = np.asarray(x, dtype=float)
    half = sps.t.ppf((1 + ci) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return x.mean() - half, x.mean() + half


def _logit_t(x, ci=0.95):
    """Logit-t interval of a mean m of [0, 1] scores (delta method, Brown, Cai & DasGupta 2001):
    expit(logit(m) ± t_{n−1, (1+ci)/2} · (s/√n) / (m(1 − m)))."""
    x = np.asarray(x, dtype=float)
    m = x.mean()
    half = sps.t.ppf((1 + ci) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size) / (m * (1 - m))
    return special.expit(special.logit(m) - half), special.expit(special.logit(m) + half)


def _flat(pairs):
    return [float(v) for pair in pairs for v in pair]


def _bar_containers(ax):
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _error_ends(bars, axis=1):
    """Low and high end of each drawn error bar, flattened (axis 1: vertical, 0: horizontal)."""
    segments = bars.errorbar.lines[2][0].get_segments()
    return _flat(sorted(seg[:, axis]) for seg in segments if len(seg))  # none for a NaN interval


def _centres(bars, axis=0):
    return [p.get_x() + p.get_width() / 2 if axis == 0 else p.get_y() + p.get_height() / 2
            for p in bars]


def test_hand_intervals_agree_with_r():
    # R 4.x: prop.test(2, 3, correct = FALSE)$conf.int -> 0.2076596008 0.9385080553
    assert _wilson(2, 3) == pytest.approx((0.2076596008, 0.9385080553), abs=1e-9)
    # R: prop.test(1, 4, correct = FALSE, conf.level = 0.9)$conf.int -> 0.0579073212 0.6438319914
    assert _wilson(1, 4, 0.9) == pytest.approx((0.0579073212, 0.6438319914), abs=1e-9)
    # R: t.test(c(1, 2, 6), conf.level = 0.9)$conf.int -> -1.46035165 7.46035165
    assert _t_ci([1, 2, 6], 0.9) == pytest.approx((-1.46035165, 7.46035165), abs=1e-8)
    # R: x <- c(rep(1, 19), 0); plogis(qlogis(0.95) + c(-1, 1) * qt(0.975, 19) * sd(x) /
    # sqrt(20) / (0.95 * 0.05)) -> 0.6772703962 0.9942203871
    assert _logit_t([1.0] * 19 + [0.0]) == pytest.approx((0.6772703962, 0.9942203871), abs=1e-9)


def test_p08_constant_scores_with_fixed_binwidth():
    # pitfalls.md P08: one bar of height 4 at [0.5, 0.55), no exception
    ax = figures.score_distribution(pd.DataFrame({"final_score": [0.5] * 4}), binwidth=0.05)
    assert _bars(ax) == [(0.5, 4.0)]
    assert ax.get_xlim() == (0.0, 1.0)


def test_p08_narrow_data_with_wide_bin():
    # pitfalls.md P08: [1, 2, 3] with binwidth 7 -> a single bar of height 3
    ax = figures.score_distribution(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), x="x", binwidth=7,
                                    scale=None, threshold=None)
    assert [h for _, h in _bars(ax)] == [3.0]


def test_score_distribution_hue_in_catalogue_order():
    t = pd.DataFrame({"final_score": [0.1, 0.9, 0.5, 0.95],
                      "difficulty": ["Hard", "Easy", "Extreme", "Easy"]})
    ax = figures.score_distribution(t, hue="difficulty")
    legend = ax.get_legend()
    assert [x.get_text() for x in legend.get_texts()] == ["Easy", "Hard", "Extreme"]
    assert ax.get_title() == "Final score distribution (n = 4)"


def test_score_distribution_stacks_counts_per_level():
    t = pd.DataFrame({"final_score": [0.02, 0.03, 0.97, 0.5, 0.51, 1.0, 0.99],
                      "difficulty": ["Easy", "Hard", "Easy", "Hard", "Hard", "Easy", None]})
    ax = figures.score_distribution(t, hue="difficulty")
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
    assert ax.get_legend().get_title().get_text() == "Difficulty"  # the catalogue label
    assert ax.get_ylim()[1] == pytest.approx(2.1)  # 5% headroom above the tallest stack
    many = pd.DataFrame({"final_score": [0.5] * 10, "g": [f"g{i}" for i in range(10)]})
    colours = {p.get_facecolor() for p in figures.score_distribution(many, hue="g").patches}
    assert len(colours) == 10  # beyond the eight Okabe-Ito colours: viridis, one per level


def test_failure_distribution_counts_order_and_labels():
    t = pd.DataFrame({
        "final_score": [0.0, 0.1, 0.2, 0.9, 0.5],
        "failure_category": ["REASONING_FAILURE", "PLANNING_FAILURE", "REASONING_FAILURE",
                             None, None]})
    ax = figures.failure_distribution(t)
    labels = [x.get_text() for x in ax.get_yticklabels()]
    # every catalogue category in the catalogue's order, empty ones at zero (so that two runs'
    # figures line up); a failed task without category is shown last
    assert labels == ["Planning", "Data understanding", "Tool selection", "Tool execution",
                      "Reasoning", "Verification", "Aggregation", "Answer format",
                      "Schema mismatch", "Unknown", "(missing)"]  # the tables' labels
    assert [float(p.get_width()) for p in ax.patches] == [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1]
    # shares as proportions with 3 decimals, as the failure tables print them (1 of 4: 0.250)
    assert [x.get_text() for x in ax.texts] == ([" 1 (0.250)"] + [" 0 (0.000)"] * 3
                                                + [" 2 (0.500)"] + [" 0 (0.000)"] * 5
                                                + [" 1 (0.250)"])
    assert all(float(t).is_integer() for t in ax.get_xticks())  # a count axis: whole ticks
    assert ax.get_xlim() == (0.0, 2.0 * 1.35) and "n = 4" in ax.get_xlabel()


def test_nothing_to_show_says_so():
    ax = figures.failure_distribution(pd.DataFrame({"final_score": [0.9, 1.0],
                                                    "failure_category": [None, None]}))
    assert ax.texts[0].get_text().startswith("no failed tasks")
    ax = figures.score_distribution(pd.DataFrame({"final_score": [float("nan")]}))
    assert ax.texts[0].get_text() == "no final_score values"


def test_errors_and_ax_reuse():
    with pytest.raises(ValueError, match="'nope' not in tasks"):
        figures.score_distribution(pd.DataFrame({"final_score": [1.0]}), x="nope")
    with pytest.raises(ValueError, match="binwidth must be positive"):
        figures.score_bins(0)
    with pytest.raises(ValueError, match="ci must be a confidence level"):  # a percentage
        figures.reliability_diagram(pd.DataFrame({"confidence_score": [0.5],
                                                  "final_score": [1.0]}), ci=95)
    fig, ax = plt.subplots()
    assert figures.score_distribution(pd.DataFrame({"final_score": [1.0]}), ax=ax) is ax


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
    with plt.rc_context(figures._theme.RC_PARAMS):  # tight bounding box, as in the notebooks
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


def _titled_figure(fig):
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_title("A title − with a minus ≥ 0.8")
    ax.set_xlabel("Final score")
    return fig


def test_png_measured_once_is_matplotlibs_own_tight_save(tmp_path):
    import io

    from matplotlib.figure import Figure

    with plt.rc_context(figures._theme.RC_PARAMS):  # tight bounding box, as in the notebooks
        png, _ = export.save_figure(_titled_figure(figures.new_figure("one")), tmp_path / "f")
        # expected: matplotlib's savefig with its own tight box (measure draw, then write)
        reference = _titled_figure(figures.new_figure("one"))
        buf = io.BytesIO()
        reference.savefig(buf, format="png", dpi=300, bbox_inches="tight",
                          metadata={"Software": None})
        # a bare Figure (no Agg canvas) is measured by savefig itself, for each format
        bare = _titled_figure(Figure(figsize=(3.5, 2.5), layout="constrained"))
        written = export.save_figure(bare, tmp_path / "bare")
    assert png.read_bytes() == buf.getvalue()  # byte for byte, pixels and size alike
    assert [p.read_bytes()[:5] for p in written] == [b"\x89PNG\r", b"%PDF-"]
    plt.close("all")


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
        # a subset (the title's glyphs and the common characters), not DejaVu Sans' 6,000
        assert {full.getBestCmap()[ord(c)] for c in "Final score ≥ 0.8"} <= set(names)
        assert len(names) < 150
        for name in names:  # outlines and advance widths exactly as in the font file
            ours, theirs = font["glyf"][name], full["glyf"][name]
            assert ours.getCoordinates(font["glyf"])[0] == theirs.getCoordinates(full["glyf"])[0]
            assert font["hmtx"][name] == full["hmtx"][name]
    # fontTools and matplotlib are as they were after saving
    assert subset.load_font.__module__ == "fontTools.subset"
    from matplotlib.backends import _backend_pdf_ps
    assert _backend_pdf_ps.get_glyphs_subset.__module__ == _backend_pdf_ps.__name__


@pytest.mark.skipif(not hasattr(importlib.import_module("matplotlib.backends._backend_pdf_ps"),
                            "SubsetResults"), reason="subsets are kept from matplotlib 3.11 on")
def test_pdf_font_subset_made_once_and_each_file_depends_on_its_own_text(tmp_path, monkeypatch):
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager
    from matplotlib.backends import _backend_pdf_ps

    from dabench_analysis.export import _figures

    made = []
    make = _backend_pdf_ps.get_glyphs_subset
    monkeypatch.setattr(_backend_pdf_ps, "get_glyphs_subset",
                        lambda font, glyphs: made.append(len(glyphs)) or make(font, glyphs))
    monkeypatch.setattr(_figures, "_SUBSETS", type(_figures._SUBSETS)())

    def pdf(title, name):
        fig = figures.new_figure("one")
        fig.add_subplot().set_title(title)
        return export.save_figure(fig, tmp_path / name, formats=("pdf",))[0].read_bytes()

    first = pdf("Final score ≥ 0.8 (5 tasks)", "a")
    others = [pdf("Difficulty: easy − hard, 95% interval", "b"), pdf("Tokens × 1000", "c")]
    assert len(made) == 1  # one subset of DejaVu Sans for three figures of common characters
    omega = pdf("Ω = 0.5", "d")  # a character outside the common set: a subset of its own
    assert len(made) == 2
    monkeypatch.setattr(_figures, "_SUBSETS", type(_figures._SUBSETS)())
    assert pdf("Final score ≥ 0.8 (5 tasks)", "e") == first  # the same bytes in a new process
    assert len({first, omega, *others}) == 4
    full = TTFont(font_manager.findfont("DejaVu Sans"))
    [font] = _embedded_fonts(omega)
    names = set(font.getGlyphOrder())
    assert {full.getBestCmap()[ord(c)] for c in "Ω= 0.5"} <= names  # the title's glyphs
    for name in names - {".notdef"}:  # outlines exactly as in the font file
        assert font["glyf"][name].getCoordinates(font["glyf"])[0] \
            == full["glyf"][name].getCoordinates(full["glyf"])[0]



@pytest.mark.skipif(not hasattr(importlib.import_module("matplotlib.backends._backend_pdf_ps"),
                            "SubsetResults"), reason="subsets are kept from matplotlib 3.11 on")
def test_pdf_subsets_of_other_fonts_keep_their_own_glyphs_and_other_threads_save_as_before(
        tmp_path):
    import io
    import threading

    from matplotlib.figure import Figure

    from dabench_analysis.export import _figures

    fig = figures.new_figure("one")
    fig.add_subplot().set_title(r"Final score $\alpha^2$")
    _, pdf = export.save_figure(fig, tmp_path / "f")
    sizes = {font["name"].getDebugName(4): len(font.getGlyphOrder())
             for font in _embedded_fonts(pdf.read_bytes())}
    # the text font with the common characters; the math font (oblique) as matplotlib's own
    # subset of its one glyph, α
    from matplotlib import font_manager
    from matplotlib.backends import _backend_pdf_ps
    from matplotlib.ft2font import FT2Font

    oblique = font_manager.findfont(font_manager.FontProperties(style="oblique"))
    alpha = FT2Font(oblique).get_char_index(ord("α"))
    with _backend_pdf_ps.get_glyphs_subset(font_manager.FontPath(oblique, 0), {alpha}) as own:
        expected = len(own.font.getGlyphOrder())
    assert sizes == {"DejaVu Sans": sizes["DejaVu Sans"], "DejaVu Sans Oblique": expected}
    assert sizes["DejaVu Sans"] > 95 and expected < 10
    # a save of another thread while the toolkit writes a PDF: matplotlib's own functions
    errors = []

    def eps():
        try:
            with plt.rc_context({"ps.fonttype": 42}):
                other = Figure()
                other.add_subplot().set_title("Other thread")
                other.savefig(io.BytesIO(), format="eps")
        except Exception as exc:  # noqa: BLE001 - the test's finding
            errors.append(exc)

    with _figures._glyph_only_font_subsets("pdf"):
        thread = threading.Thread(target=eps)
        thread.start()
        thread.join()
    assert errors == []

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
    # displayed at 150 px per printed inch: a 7-inch figure is about 1050 CSS pixels wide
    assert meta == {"width": round(w / 2), "height": round(h / 2)}
    assert 1035 <= meta["width"] <= 1080
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend will not draw it again
    assert "bars" in repr(saved)
    no_png = export.save_and_show(figures.new_figure(), tmp_path / "v", formats=("pdf",))
    assert no_png.png is None and no_png._repr_png_() is None
    with pytest.raises(ValueError, match="at least one"):
        export.save_and_show(figures.new_figure(), tmp_path / "x", formats=())


# --- analysis figures: small hand-built frames, values counted by hand ---------------------


DIFFICULTY = pd.DataFrame({
    "difficulty": ["Hard", "Easy", "Hard", "Medium", "Easy", "Easy", "Hard", "Medium", "Easy"],
    "execution_success": [1] * 9, "final_score": [0.9, 1.0, 0.2, 0.3, 0.85, 0.6, 0.5, 0.8, 0.9],
    "execution_time": [1.0] * 9, "total_tokens": [10] * 9})


@pytest.mark.parametrize("ci, label", [(0.95, "95% CI"), (0.9, "90% CI")])
def test_difficulty_bars_draw_hand_counted_rates_and_intervals(ci, label):
    ax = figures.difficulty_bars(DIFFICULTY, ci=ci)
    # catalogue order Easy < Medium < Hard whatever the row order; Extreme has no task: its
    # place is kept, without bars
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Easy\nn=4", "Medium\nn=2",
                                                            "Hard\nn=3", "Extreme\nn=0"]
    acc, score = _bar_containers(ax)
    assert _centres(acc) == pytest.approx([-0.2, 0.8, 1.8])
    assert _centres(score) == pytest.approx([0.2, 1.2, 2.2])
    # final_score >= 0.8: Easy 3 of 4, Medium 1 of 2, Hard 1 of 3
    assert [p.get_height() for p in acc] == pytest.approx([3 / 4, 1 / 2, 1 / 3], abs=1e-12)
    assert _error_ends(acc) == pytest.approx(
        _flat(_wilson(k, n, ci) for k, n in ((3, 4), (1, 2), (1, 3))), abs=1e-9)
    scores = [[1.0, 0.85, 0.6, 0.9], [0.3, 0.8], [0.9, 0.2, 0.5]]
    assert [p.get_height() for p in score] == pytest.approx([0.8375, 0.55, 1.6 / 3], abs=1e-12)
    assert _error_ends(score) == pytest.approx(_flat(_logit_t(v, ci) for v in scores), abs=1e-9)
    assert ax.get_ylim() == (0.0, 1.0) and max(_error_ends(score) + _error_ends(acc)) <= 1
    assert ax.get_ylabel() == f"Share / score ({label})"


def test_failure_by_stage_shares_wilson_intervals_and_stage_order():
    t = pd.DataFrame({"final_score": [0.1, 0.2, 0.3, 0.5, 0.9, 1.0],
                      "failure_stage": ["VERIFY", "PLAN", "EXECUTE", "PLAN", None, None]})
    ax = figures.failure_by_stage(t, ci=0.9)
    # the pipeline order of the catalogue, stages without failures kept at zero
    assert [x.get_text() for x in ax.get_xticklabels()] == [
        "Understand\n(0)", "Plan\n(2)", "Execute\n(1)", "Verify\n(1)", "Aggregate\n(0)"]
    (bars,) = _bar_containers(ax)
    assert _centres(bars) == pytest.approx([0, 1, 2, 3, 4])
    assert [p.get_height() for p in bars] == pytest.approx([0, 0.5, 0.25, 0.25, 0], abs=1e-12)
    assert _error_ends(bars) == pytest.approx(
        _flat(_wilson(k, 4, 0.9) for k in (0, 2, 1, 1, 0)), abs=1e-9)
    assert ax.get_title() == "Failures by stage (n = 4)" and ax.get_ylim() == (0.0, 1.0)
    assert ax.get_ylabel() == "Share of failed tasks (90% CI)"
    none = figures.failure_by_stage(pd.DataFrame({"final_score": [1.0],
                                                  "failure_stage": [None]}))
    assert none.texts[0].get_text().startswith("no failed tasks")


def test_reliability_diagram_bars_markers_intervals_and_ece_by_hand():
    t = pd.DataFrame({"confidence_score": [0.95, 0.9, 0.85, 0.7, 0.65, 0.3, 0.1],
                      "final_score": [1.0, 0.9, 0.3, 0.8, 0.1, 0.0, 0.0]})
    ax = figures.reliability_diagram(t, ci=0.9, min_n=0)  # every bin in colour
    (bars,) = _bar_containers(ax)
    # seed buckets [0, .2) [.2, .4) [.4, .6) [.6, .8) [.8, 1]: n 1, 1, 0, 2, 3; correct (final
    # score >= 0.8) 0, 0, -, 1, 2; the empty bucket gets no bar
    assert _centres(bars) == pytest.approx([0.1, 0.3, 0.7, 0.9])
    assert [p.get_width() for p in bars] == pytest.approx([0.18] * 4)
    assert [p.get_height() for p in bars] == pytest.approx([0, 0, 1 / 2, 2 / 3], abs=1e-12)
    assert _error_ends(bars) == pytest.approx(
        _flat(_wilson(k, n, 0.9) for k, n in ((0, 1), (0, 1), (1, 2), (2, 3))), abs=1e-9)
    marks = next(line for line in ax.lines if line.get_marker() == "o")
    assert np.asarray(marks.get_xdata()).tolist() == pytest.approx([0.1, 0.3, 0.675, 0.9])
    assert np.asarray(marks.get_ydata()).tolist() == pytest.approx([0, 0, 1 / 2, 2 / 3])
    assert [x.get_text() for x in ax.texts] == ["n=1", "n=1", "n=0", "n=2", "n=3"]
    # ECE = Σ_b (n_b/N)|acc_b − conf_b| (Naeini et al. 2015, AAAI)
    #     = (1·0.1 + 1·0.3 + 2·0.175 + 3·(0.9 − 2/3)) / 7 = 1.45 / 7 = 0.20714
    assert ax.get_title() == "Reliability (ECE = 0.207, n = 7)"
    assert [x.get_text() for x in ax.get_legend().get_texts()] == [
        "perfect", "mean confidence", "accuracy (90% CI)"]
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim()[1] >= max(_error_ends(bars))


def test_paired_difference_sorted_bars_mean_and_t_band():
    base = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4", "t5", "t9"],
                         "final_score": [0.2, 0.5, 0.9, 0.4, 0.6, 0.1]})
    prop = pd.DataFrame({"task_id": ["t1", "t2", "t3", "t4", "t5", "t8"],
                         "final_score": [0.6, 0.5, 0.7, 0.9, 0.7, 0.1]})
    with pytest.warns(UserWarning, match="2 tasks present in only one run"):
        ax = figures.paired_difference(base, prop, ci=0.9)
    diffs = [-0.2, 0.0, 0.1, 0.4, 0.5]  # t3, t2, t5, t1, t4: proposed − baseline, sorted
    (bars,) = _bar_containers(ax)
    assert [p.get_height() for p in bars] == pytest.approx(diffs, abs=1e-12)
    assert _centres(bars) == pytest.approx([0, 1, 2, 3, 4])
    blue, vermillion = (matplotlib.colors.to_rgba(figures.OKABE_ITO[i]) for i in (0, 3))
    assert [p.get_facecolor() for p in bars] == [vermillion, matplotlib.colors.to_rgba("0.6"),
                                                 blue, blue, blue]
    assert ax.lines[1].get_ydata() == pytest.approx([0.16, 0.16])  # the mean line
    band = ax.patches[-1]  # axhspan: the t-interval of the mean difference
    # R: t.test(c(-0.2, 0, 0.1, 0.4, 0.5), conf.level = 0.9)$conf.int -> -0.1146692 0.4346692
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx(
        _t_ci(diffs, 0.9), abs=1e-9)
    assert [x.get_text() for x in ax.get_legend().get_texts()] == [
        "mean Δ = 0.160", "tied (Δ = 0): 1 of 5", "90% CI"]
    # R: wilcox.test(p, b, paired = TRUE) (a zero difference: normal approximation with
    # continuity correction) -> p-value = 0.3613104
    assert ax.get_title() == ("Paired differences, proposed − baseline (n = 5, Wilcoxon "
                              "p = 0.361, unadjusted)")
    lo, hi = ax.get_ylim()
    assert lo <= -0.2 and hi >= 0.5


def test_tool_latency_bars_are_hand_means_and_rates_with_intervals():
    calls = pd.DataFrame({
        "task_id": ["a", "a", "b", "b", "c", "c"],
        "tool_name": ["sql", "py", "sql", "grep", "sql", "py"],
        "success": [True, True, False, False, True, True],
        "latency_seconds": [1.0, 0.5, 2.0, 4.0, 6.0, 1.5], "tokens": [10, 5, 10, 3, 10, 5]})
    ax1, ax2 = figures.tool_latency(calls, ci=0.9)
    # most-called first, drawn top down; the label carries the call count
    assert [t.get_text() for t in ax1.get_yticklabels()] == ["sql (3)", "py (2)", "grep (1)"]
    assert ax1.yaxis_inverted()
    (lat,), (fail,) = _bar_containers(ax1), _bar_containers(ax2)
    assert _centres(lat, axis=1) == pytest.approx([0, 1, 2])
    assert [p.get_width() for p in lat] == pytest.approx([3.0, 1.0, 4.0])
    # t-intervals of sql (1, 2, 6) and py (0.5, 1.5); grep has one call: no interval drawn
    assert _error_ends(lat, axis=0) == pytest.approx(
        _flat([_t_ci([1, 2, 6], 0.9), _t_ci([0.5, 1.5], 0.9)]), abs=1e-9)
    assert [p.get_width() for p in fail] == pytest.approx([1 / 3, 0.0, 1.0])
    assert _error_ends(fail, axis=0) == pytest.approx(
        _flat(_wilson(k, n, 0.9) for k, n in ((1, 3), (0, 2), (1, 1))), abs=1e-9)
    lo, hi = ax1.get_xlim()
    assert lo <= min(_error_ends(lat, axis=0)) and hi >= max(_error_ends(lat, axis=0))
    assert ax2.get_xlim() == (0.0, 1.0)
    assert ax1.get_xlabel() == "Mean latency (s, 90% CI)"
    assert ax2.get_xlabel() == "Failure rate (90% CI)"
    assert ax1.get_title(loc="left") == "Tool latency and failures (6 calls)"
    top, _ = figures.tool_latency(calls, top=2)
    assert [t.get_text() for t in top.get_yticklabels()] == ["sql (3)", "py (2)"]
    assert top.get_title(loc="left") == "Tool latency and failures (5 calls)"


def _check_scatter(ax, tasks):
    """One point per task with all three scores, at (autonomy ± jitter, efficiency)."""
    kept = tasks[["autonomy_score", "tool_efficiency", "final_score"]].astype(float).dropna()
    (points,) = ax.collections
    xy = np.asarray(points.get_offsets())
    assert xy.shape == (len(kept), 2)
    assert xy[:, 1].tolist() == kept["tool_efficiency"].tolist()
    jitter = xy[:, 0] - kept["autonomy_score"].to_numpy()
    assert np.all(np.abs(jitter) <= 0.025) and np.any(jitter != 0)
    assert np.all((xy[:, 0] >= 0) & (xy[:, 0] <= 1))  # reflected at the ends of the scale
    assert np.asarray(points.get_array()).tolist() == kept["final_score"].tolist()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= xy[:, 0].min() and xy[:, 0].max() <= x1
    assert y0 <= xy[:, 1].min() and xy[:, 1].max() <= y1
    assert ax.get_title() == f"Autonomy vs tool efficiency (n = {len(kept)})"


def test_autonomy_vs_efficiency_one_point_per_task_at_its_values():
    t = pd.DataFrame({"autonomy_score": [0.0, 1 / 3, 2 / 3, 1.0, 1.0, None],
                      "tool_efficiency": [0.0, 0.5, 0.25, 1.0, 0.75, 0.3],
                      "final_score": [0.1, 0.5, 0.9, 1.0, 0.0, 0.5]})
    ax = figures.autonomy_vs_efficiency(t)
    _check_scatter(ax, t)  # 5 points: the task without autonomy_score is left out
    bar = ax.collections[0].colorbar.ax
    assert bar.get_ylabel() == "Final score"  # the colour bar, 0 to 1
    assert bar.get_ylim() == (0.0, 1.0)


def test_correlation_matrix_cells_and_labels_by_hand():
    t = pd.DataFrame({"final_score": [0.1, 0.2, 0.3, 0.4, 0.5],
                      "analyst_score": [0.2, 0.4, 0.6, 0.8, 1.0],
                      "autonomy_score": [0.5, 0.4, 0.3, 0.2, 0.1],
                      "tool_efficiency": [0.2, 0.1, 0.4, 0.3, 0.5],
                      "verification_score": [0.7] * 5,
                      "data_understanding_score": [0.5, 0.1, 0.3, 0.2, 0.4]})
    ax = figures.correlation_matrix(t)
    labels = ["Final", "Analyst", "Autonomy", "Tool efficiency", "Verification",
              "Data understanding"]  # the catalogue's order and labels
    assert [x.get_text() for x in ax.get_xticklabels()] == labels
    assert [x.get_text() for x in ax.get_yticklabels()] == labels
    # row final_score by hand: r = Σdxdy / sqrt(Σdx²Σdy²) with dx = (-.2, -.1, 0, .1, .2):
    # analyst 1, autonomy -1, tool efficiency .08/.1 = 0.8, verification constant (n/a),
    # data understanding -.01/.1 = -0.1
    texts = [x.get_text() for x in ax.texts]
    assert texts[:6] == ["1.000", "1.000", "-1.000", "0.800", "n/a", "-0.100"]
    assert texts[24:30] == ["n/a"] * 6 and texts[4::6] == ["n/a"] * 6
    cells = np.asarray(ax.images[0].get_array().filled(np.nan))
    assert cells[0].tolist() == pytest.approx([1, 1, -1, 0.8, np.nan, -0.1], nan_ok=True)
    assert cells == pytest.approx(cells.T, nan_ok=True)
    assert ax.images[0].colorbar.ax.get_ylabel() == "Pearson r"
    assert ax.get_title() == "Correlations (n = 5)"


# --- the same figures on the sample runs -------------------------------------------------------

from dabench_analysis.load import load_run  # noqa: E402


@pytest.fixture(scope="module")
def runs():
    return (load_run("data/sample_runs/baseline_react"), load_run("data/sample_runs/proposed_aat"))


def test_sample_runs_scatter_and_paired_bars(runs):
    base, prop = runs
    for run in runs:
        _check_scatter(figures.autonomy_vs_efficiency(run.tasks), run.tasks)
    ax = figures.paired_difference(base.tasks, prop.tasks)
    diff = (prop.tasks.set_index("task_id")["final_score"]
            - base.tasks.set_index("task_id")["final_score"]).dropna().astype(float)
    (bars,) = _bar_containers(ax)
    assert [p.get_height() for p in bars] == pytest.approx(sorted(diff), abs=1e-12)
    assert "n = 80" in ax.get_title()
