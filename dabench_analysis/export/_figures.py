"""Saving figures: 300-dpi PNG and vector PDF with embedded glyph-only font subsets, written
atomically; :func:`save_and_show` renders a figure once for both the files and the notebook.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from dabench_analysis import _mplbackend  # noqa: F401 - MPLBACKEND checked before matplotlib

# isort: split
import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from dabench_analysis._atomic import atomic_write

#: OpenType layout tables (substitution, positioning, math, ...). A font embedded in a PDF is
#: drawn glyph by glyph at positions matplotlib has already computed, so viewers never read them.
_LAYOUT_TABLES = ("GSUB", "GPOS", "GDEF", "MATH", "BASE", "JSTF")

#: Pixels per printed inch of a figure shown in a notebook or report page: a one-column figure
#: (3.5 in) is 525 px wide, its 7-pt text about 15 px high.
DISPLAY_PPI = 150


_SUBSET_LOCK = threading.Lock()

#: Characters every PDF font subset holds besides a figure's own: printable ASCII, the
#: ligatures matplotlib's text shaping draws (ff, fi, fl, ffi, ffl) and the signs the toolkit's
#: figures print (minus, dashes, ×, ≤, ≥, ±, ·, …, °, ², µ, arrows), in the figures' text font
#: (:func:`_common_glyphs`). Subsetting DejaVu Sans costs ~35 ms, a third of a PDF's time; with
#: this common set every figure whose text uses no other character shares one subset of it in a
#: process, at ~17 KB more per PDF.
_COMMON_CHARS = "".join(map(chr, range(0x20, 0x7F))) + (
    "\ufb00\ufb01\ufb02\ufb03\ufb04"
    "\u2212\u2013\u2014\u00d7\u2264\u2265\u00b1\u00b7\u2026\u00b0\u00b2\u00b5\u2192\u2190")

#: PDF font subsets made in this process, the most recent last: (font path, face index, glyph
#: ids) -> (the subset's font file, requested glyph id -> the subset's glyph id).
_SUBSETS: collections.OrderedDict = collections.OrderedDict()
_SUBSETS_KEPT = 32  # ~50 KB each


class _SubsetFile:
    """A subset already written, as matplotlib's PDF backend uses a subset's font: saved."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def save(self, fh, reorderTables: bool = False) -> None:  # noqa: N803 - fontTools' name
        fh.write(self._data)


@functools.cache
def _font_glyphs(path: str, face_index: int) -> frozenset[int]:
    """The glyph ids of the :data:`_COMMON_CHARS` one font has."""
    from matplotlib.ft2font import FT2Font

    font = FT2Font(path, face_index=face_index)
    return frozenset({font.get_char_index(ord(c)) for c in _COMMON_CHARS} - {0})


def _common_glyphs(path: str, face_index: int) -> frozenset[int]:
    """The common characters' glyphs for the figures' text font (rcParams' default font, that
    of every title, label and tick); none for another font (bold, oblique, a mathtext font:
    subset to its own glyphs, as matplotlib does), which the common set would only enlarge."""
    from matplotlib import font_manager

    text = os.fspath(font_manager.findfont(font_manager.FontProperties()))
    return _font_glyphs(path, face_index) if (path, face_index) == (text, 0) else frozenset()


def _kept_subset(make, fontfile, glyphs):
    """matplotlib's ``get_glyphs_subset`` (``make``) of ``glyphs`` and the common characters,
    made once per font and glyph set in this process. The subset depends on the figure's glyphs
    only, never on what was drawn before: a file's bytes are the same in any process."""
    from matplotlib.backends import _backend_pdf_ps

    path, face = os.fspath(fontfile), getattr(fontfile, "face_index", 0)
    key = (path, face, frozenset(glyphs) | _common_glyphs(path, face))
    if key in _SUBSETS:
        _SUBSETS.move_to_end(key)
    else:
        with make(fontfile, set(key[2])) as made:
            _SUBSETS[key] = (_backend_pdf_ps.font_as_file(made.font).getvalue(),
                             dict(made.glyph_index_map))
        while len(_SUBSETS) > _SUBSETS_KEPT:
            _SUBSETS.popitem(last=False)
    data, index_map = _SUBSETS[key]
    return contextlib.nullcontext(_backend_pdf_ps.SubsetResults(_SubsetFile(data), index_map))


@contextlib.contextmanager
def _glyph_only_font_subsets(fmt: str) -> Iterator[None]:
    """While a PDF or PS file is written, subset its embedded TrueType fonts without layout
    tables; in a PDF, with the common characters, made once (:func:`_kept_subset`).

    matplotlib subsets every embedded font with fontTools, which decompiles and prunes the
    font's GSUB/GPOS tables (DejaVu Sans carries large ones): most of the cost of a PDF, with
    two fonts per figure. The glyphs, metrics, ``cmap`` and hinting that a viewer uses are
    kept. There is no option for this in matplotlib, so ``fontTools.subset.load_font`` (which
    matplotlib calls) is wrapped for the duration to remove those tables before they are read,
    and for a PDF (matplotlib >= 3.11, whose subsets are of glyph ids) so is matplotlib's
    ``get_glyphs_subset``. The lock keeps two of the toolkit's saves from wrapping them at
    once; a save by another thread meanwhile (the user's own ``savefig``) calls the functions
    as they were.
    """
    from fontTools import subset
    from matplotlib.backends import _backend_pdf_ps

    with _SUBSET_LOCK:
        load, make = subset.load_font, _backend_pdf_ps.get_glyphs_subset
        owner = threading.get_ident()

        def load_glyphs_only(*args, **kwargs):
            font = load(*args, **kwargs)
            if threading.get_ident() == owner:
                for tag in _LAYOUT_TABLES:
                    if tag in font:
                        del font[tag]
            return font

        def kept_subset(fontfile, glyphs):
            if threading.get_ident() != owner:
                return make(fontfile, glyphs)
            return _kept_subset(make, fontfile, glyphs)

        subset.load_font = load_glyphs_only
        if fmt == "pdf" and hasattr(_backend_pdf_ps, "SubsetResults"):
            _backend_pdf_ps.get_glyphs_subset = kept_subset
        try:
            yield
        finally:
            subset.load_font = load
            _backend_pdf_ps.get_glyphs_subset = make


@contextlib.contextmanager
def _layout_kept(fig: Figure) -> Iterator[None]:
    """Skip the layout engine while saving: the figure has just been laid out.

    The engine is removed (not replaced by ``"none"``'s placeholder), so that savefig, given
    an explicit box, does not draw the figure once more before drawing it into the file.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        yield
        return
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # None, with neither rc layout on: no engine at all
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


def _tight_bbox(fig: Figure, dpi: int):
    """The figure's tight bounding box (inches, padded by ``savefig.pad_inches``), laid out once.

    What ``savefig(bbox_inches="tight")`` computes before each save (the layout engine run by a
    draw that renders nothing, then the extent of every artist, measured by the Agg renderer at
    ``dpi``), done once so that every format is saved with this box and a single draw. None
    when ``savefig.bbox`` is not ``"tight"`` or the figure's canvas is not an Agg canvas (a
    bare ``Figure()``): savefig then measures each format itself.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if mpl.rcParams["savefig.bbox"] != "tight" or not isinstance(fig.canvas, FigureCanvasAgg):
        return None
    original = fig.dpi
    fig.dpi = dpi
    try:
        fig.draw_without_rendering()  # runs the layout engine, as savefig's first draw does
        bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    finally:
        fig.dpi = original
    pad = mpl.rcParams["savefig.pad_inches"]
    return bbox.padded(pad) if pad not in (None, "layout") else bbox


def _save(fig: Figure, stem: Path, formats: Sequence[str], dpi: int) -> tuple[list[Path], bytes | None]:
    """Write each format atomically; return the paths and the PNG bytes (if PNG was written).

    The figure is laid out and its tight box measured once (:func:`_tight_bbox`, at ``dpi``
    with the Agg renderer, as the PNG save would); every format is then drawn once with that
    box, instead of savefig drawing each twice (once to measure, once to write).
    """
    written, png = [], None
    bbox = _tight_bbox(fig, dpi)
    with mpl.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        for i, fmt in enumerate(formats):
            dest = stem.with_name(f"{stem.name}.{fmt}")
            # A fixed creation date keeps re-runs byte-identical for PDF.
            meta = {"CreationDate": None} if fmt == "pdf" else ({"Software": None} if fmt == "png" else None)
            buf = io.BytesIO()
            with (_layout_kept(fig) if i or bbox is not None else contextlib.nullcontext()), \
                    (_glyph_only_font_subsets(fmt) if fmt in ("pdf", "ps", "eps")
                     else contextlib.nullcontext()):
                fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta,
                            **({} if bbox is None else {"bbox_inches": bbox}))
            with atomic_write(dest, mode="wb") as fh:
                fh.write(buf.getbuffer())
            if fmt == "png" and png is None:
                png = buf.getvalue()
            written.append(dest)
    return written, png


def save_figure(
    fig: Figure,
    path_stem: str | os.PathLike[str],
    *,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = 300,
) -> list[Path]:
    """Save a figure as 300-dpi PNG and vector PDF, each written atomically.

    Parameters
    ----------
    fig : Figure
        The figure (not closed by this function).
    path_stem : path-like
        Destination without suffix, e.g. ``figures/RUN/score_distribution``.
    formats : sequence of str
        Matplotlib formats, default ``("png", "pdf")``.
    dpi : int
        Raster resolution.

    Returns
    -------
    list of Path
        Files written.

    Raises
    ------
    ValueError
        If ``formats`` is empty.

    Notes
    -----
    The figure is laid out once, by the first format's save (the PNG by default, at ``dpi``);
    later formats reuse that layout instead of running the layout engine again. PDF (and PS)
    embed TrueType fonts (``pdf.fonttype = 42``) subset to the glyphs used, without the
    OpenType layout tables that no PDF viewer reads; in a PDF, the subset of the figures' text
    font also holds printable ASCII and the signs the toolkit's figures print
    (``_COMMON_CHARS``), so that the figures of a process share one subset of it (about 17 KB
    more per file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dabench_analysis.figures import new_figure
    >>> fig = new_figure()
    >>> [p.suffix for p in save_figure(fig, pathlib.Path(tempfile.mkdtemp()) / "f")]
    ['.png', '.pdf']
    >>> plt.close(fig)
    """
    if not formats:
        raise ValueError("formats must name at least one file type")
    return _save(fig, Path(path_stem), formats, dpi)[0]


@dataclass(frozen=True, repr=False)
class SavedFigure:
    """The files of a figure saved by :func:`save_and_show`; a notebook displays it as its PNG.

    Attributes
    ----------
    paths : tuple of Path
        Files written, in the order of ``formats``.
    png : bytes or None
        The bytes of the PNG file written (None if no PNG was asked for).
    dpi : int
        Resolution of the PNG; it is displayed at :data:`DISPLAY_PPI` pixels per inch of the
        printed width (150: a one-column figure, 3.5 in, is 525 px wide on screen, with text
        about 15 px high).
    """

    paths: tuple[Path, ...]
    png: bytes | None
    dpi: int

    def __iter__(self) -> Iterator[Path]:
        return iter(self.paths)

    def __repr__(self) -> str:
        # the file name only: a report runs in a staging folder that is gone once it has finished
        stem = self.paths[0].with_suffix("").name if self.paths else "?"
        return f"<SavedFigure {stem}: {', '.join(p.suffix for p in self.paths)}>"

    def display_size(self) -> tuple[int, int] | None:
        """Width and height in CSS pixels at which the PNG is shown.

        Returns
        -------
        (int, int) or None
            The PNG's pixel size scaled from ``dpi`` to :data:`DISPLAY_PPI` (150 px per
            printed inch); None without a PNG.
        """
        if not self.png or self.png[12:16] != b"IHDR":
            return None
        width, height = (int.from_bytes(self.png[i:i + 4], "big") for i in (16, 20))
        scale = DISPLAY_PPI / self.dpi
        return max(1, round(width * scale)), max(1, round(height * scale))

    def _repr_png_(self):
        if self.png is None:
            return None
        size = self.display_size()
        return (self.png, {"width": size[0], "height": size[1]}) if size else self.png


def save_and_show(
    fig: Figure,
    path_stem: str | os.PathLike[str],
    *,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = 300,
) -> SavedFigure:
    """Save a figure like :func:`save_figure`, close it, and show the saved PNG in a notebook.

    The notebook displays the very PNG that was written, at 150 px per inch of its printed
    width (:data:`DISPLAY_PPI`: a one-column figure 525 px wide, two columns 1050 px), so the
    figure is rendered once for the file instead of once more for the screen.

    Parameters
    ----------
    fig : Figure
        The figure; closed (``plt.close``) after saving, so that the inline backend does not
        draw it again.
    path_stem : path-like
        Destination without suffix, e.g. ``figures/RUN/score_distribution``.
    formats : sequence of str
        Matplotlib formats, default ``("png", "pdf")``; without ``"png"`` nothing is shown.
    dpi : int
        Raster resolution of the file.

    Returns
    -------
    SavedFigure
        The paths written and the PNG bytes; displayed as the PNG when it is the last
        expression of a notebook cell.

    Raises
    ------
    ValueError
        If ``formats`` is empty.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dabench_analysis.figures import new_figure
    >>> fig = new_figure()
    >>> saved = save_and_show(fig, pathlib.Path(tempfile.mkdtemp()) / "f")
    >>> saved.png == saved.paths[0].read_bytes(), 500 <= saved.display_size()[0] <= 540
    (True, True)
    >>> plt.fignum_exists(fig.number)
    False
    """
    if not formats:
        raise ValueError("formats must name at least one file type")
    try:
        paths, png = _save(fig, Path(path_stem), formats, dpi)
    finally:
        plt.close(fig)
    return SavedFigure(tuple(paths), png, dpi)
