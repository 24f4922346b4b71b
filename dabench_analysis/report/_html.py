# Over 400 lines (<= 500): the page as nbconvert makes it, its notes, contents and checks.
"""An executed report notebook as a page that reads as a report (:func:`export_html`).

The page is nbconvert's ``lab`` HTML with: no code (the executed ``.ipynb`` keeps it), a table of
contents built from the notebook's Markdown headings, warnings as short notes instead of the
kernel's ``file:line: Category: message`` text, figures embedded as data URIs, and nothing loaded
from the internet (nbconvert's require.js, MathJax and Mermaid ``<script>`` tags are left out:
the report notebooks use no LaTeX math). Widgets (the explorer) need a kernel, or widget scripts
from a CDN: the page shows the static copy their display carries as ``text/html`` instead.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import html
import os
import re
import threading
import warnings
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from dabench_analysis._atomic import atomic_write
from dabench_analysis._caller import outside_level
from dabench_analysis.export._text import visible

if TYPE_CHECKING:  # imported where used: its import takes seconds (runner.py says why)
    import nbconvert
    import nbformat

#: The page template: nbconvert's lab template without its scripts from a CDN.
TEMPLATE = """{%- extends 'index.html.j2' -%}
{% block html_head_js_requirejs %}{% endblock %}
{% block html_head_js_mathjax %}{% endblock %}
{% block html_head_js_mermaidjs %}{% endblock %}
{% block jupyter_widgets %}{% endblock %}
{% block extra_css %}<style type="text/css">{{ resources.dabench_css }}</style>{% endblock %}
{% block data_png scoped %}{{ super() | replace('<div ', '<div tabindex="0" ', 1)
   | replace('<img src=', '<img alt="' ~ (output.metadata.get('alt') or 'Figure') | escape_html
   ~ '" src=', 1) }}{% endblock %}
"""
#: What nbconvert's HTMLExporter adds in a BeautifulSoup pass over its whole page, added here by
#: the template to its own tags: the first ``old`` of each block (which opens with that tag)
#: becomes ``new``; an output's own HTML is left as written.
_FOCUS = ("<div ", '<div tabindex="0" ')
_WRAPPER = ('<div class="jp-Cell-inputWrapper">', '<div class="jp-Cell-inputWrapper" tabindex="0">')
_IMAGE = ("<img src=", '<img alt="No description has been provided for this image" src=')
_ACCESSIBLE = {**{f"{b} scoped" if b.startswith("data") else b: [_FOCUS] for b in (
    "stream_stdout", "stream_stderr", "stream_stdin", "data_html", "data_markdown", "data_latex",
    "error", "data_text", "data_javascript", "data_widget_view")},
    "data_jpg scoped": [_FOCUS, _IMAGE], "data_svg scoped": [_FOCUS, _IMAGE],
    "input_group": [_WRAPPER], "markdowncell scoped": [_WRAPPER]}
TEMPLATE += "".join(
    f"{{% block {block} %}}{{{{ super()"
    + "".join(f" | replace({old!r}, {new!r}, 1)" for old, new in subs)
    + " }}{% endblock %}\n" for block, subs in _ACCESSIBLE.items())
CSS = """
nav.dabench-toc { margin: 1em 0 1.5em; padding: 0.6em 1.2em; border-left: 3px solid #4c72b0;
                  background: #f5f7fa; font-family: var(--jp-content-font-family);
                  font-size: var(--jp-content-font-size1); line-height: 1.6; }
nav.dabench-toc a { color: var(--jp-content-link-color, #1a5fb4); text-decoration: none; }
nav.dabench-toc a:hover { text-decoration: underline; }
nav.dabench-toc p { font-weight: bold; margin: 0 0 0.3em; }
nav.dabench-toc ul { margin: 0; padding-left: 1.2em; columns: 2 24em; }
nav.dabench-toc li.level-3 { margin-left: 1.2em; }
.dabench-note { margin: 0.2em 0; padding: 0.3em 0.8em; border-left: 3px solid #dd8452;
                background: #fdf6ef; font-size: 0.95em; }
.dabench-table-note { margin: 0.2em 0 0.8em; font-size: 0.9em; color: #444; }
table.dabench-table { margin-bottom: 0.6em; }
table.dabench-table caption { caption-side: top; text-align: left; font-weight: bold; }
"""
_WARNING = re.compile(r"^\S.*?:\d+: (?P<category>[A-Za-z_][\w.]*Warning): (?P<message>.*)$")
_SAVED = re.compile(r"<SavedFigure .*?([^/\\]+): \.")
_REMOTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
_CSS_REMOTE = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])\s*((?:https?:)?//[^"')\s]+)""",
                         re.IGNORECASE)


def _warnings_to_notes(text: str) -> tuple[list[tuple[str, str]], str]:
    """Split kernel stderr into (category, message) warnings and the remaining text.

    A warning is ``path:line: SomeWarning: message``, its message's further lines, then the
    source line that warned, indented by two spaces (dropped), as ``warnings.formatwarning``
    writes it.
    """
    notes: list[tuple[str, str]] = []
    rest: list[str] = []
    in_message = False
    for line in text.splitlines():
        match = _WARNING.match(line)
        if match:
            notes.append((match["category"], match["message"].strip()))
            in_message = True
        elif in_message and line.startswith("  "):
            in_message = False  # the source line the warnings module quotes
        elif in_message:
            notes[-1] = (notes[-1][0], f"{notes[-1][1]} {line.strip()}".strip())
        elif line.strip():
            rest.append(line)
    return notes, "\n".join(rest)


def _note_output(notes: list[tuple[str, str]]) -> nbformat.NotebookNode:
    import nbformat

    body = "".join(f'<p class="dabench-note"><strong>Note.</strong> {html.escape(m)}'
                   + ("" if c in ("UserWarning", "StatisticsWarning") else
                      f" <em>({html.escape(c)})</em>") + "</p>" for c, m in notes)
    text = "\n".join(f"Note: {m}" for _, m in notes)
    return nbformat.v4.new_output("display_data", data={"text/html": body, "text/plain": text})


def _alt_text(out: nbformat.NotebookNode) -> None:
    """Name a figure for readers of the page who cannot see it (``<img alt>``): the file a
    :class:`~dabench_analysis.export._figures.SavedFigure` was saved as, else "Figure"."""
    if "image/png" in out.get("data", {}) and "alt" not in out.get("metadata", {}):
        match = _SAVED.search(str(out["data"].get("text/plain", "")))
        out.setdefault("metadata", {})["alt"] = (
            f"Figure: {match[1].replace('_', ' ')}" if match else "Figure")


def prepare_for_page(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose stderr warnings are notes (``Note. message``), for the page.

    Parameters
    ----------
    nb : NotebookNode
        An executed notebook (not modified).

    Returns
    -------
    NotebookNode
        Each stderr stream output that holds warnings is replaced by one output of notes (the
        message; the category when it is not a ``UserWarning`` or ``StatisticsWarning``),
        followed by any other stderr text, unchanged. Figures get an ``alt`` text (their
        file name) in their output's metadata. The saved widget state is left out, so that a
        widget's output shows its ``text/html`` (nbconvert shows a widget only with its state).

    Examples
    --------
    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("x")
    >>> cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=(
    ...     "/tmp/ipykernel_1/2.py:2: StatisticsWarning: 2 rows dropped\\n  t = f(x)\\n"))]
    >>> out = prepare_for_page(nbformat.v4.new_notebook(cells=[cell])).cells[0].outputs
    >>> out[0].data["text/plain"]
    'Note: 2 rows dropped'
    """
    import nbformat

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                notes, rest = _warnings_to_notes(out.text)
                if notes:
                    outputs.append(_note_output(notes))
                    if rest:
                        outputs.append(nbformat.v4.new_output("stream", name="stderr",
                                                              text=rest + "\n"))
                    continue
            _alt_text(out)
            outputs.append(out)
        if "outputs" in cell:
            cell.outputs = outputs
    nb.cells = _without_silent_sections(nb.cells)
    return nb


#: A report notebook's section cell (``with out.section(name, title):``).
_SECTION_CALL = re.compile(r"^with out\.section\(")


def _heading_level(source: str) -> int:
    """The level of the Markdown cell's first heading (0: it opens with none)."""
    m = re.match(r"(#{1,6}) ", source.lstrip("\n"))
    return len(m.group(1)) if m else 0


def _without_silent_sections(cells: list) -> list:
    """The cells without the sections that showed nothing (another harness's run, whose skipped
    sections are named once, grouped, at the end): each such ``out.section`` cell, the
    heading and text above it, and a parent heading left with no section under it."""
    out: list = []
    for cell in cells:
        silent = (cell.cell_type == "code" and not cell.get("outputs")
                  and _SECTION_CALL.match(cell.source))
        if not silent:
            out.append(cell)
            continue
        if out and out[-1].cell_type == "markdown":  # its heading: from the last '#' line
            lines = out[-1].source.split("\n")
            last = max((i for i, t in enumerate(lines) if t.startswith("#")), default=0)
            kept = "\n".join(lines[:last]).rstrip()
            if kept:
                out[-1]["source"] = kept
            else:
                out.pop()
    keep = []
    for i, cell in enumerate(out):  # a parent heading directly followed by one as high
        level = _heading_level(cell.source) if cell.cell_type == "markdown" else 0
        nxt = out[i + 1] if i + 1 < len(out) else None
        nxt_level = _heading_level(nxt.source) if nxt is not None and \
            nxt.cell_type == "markdown" else 0  # a code cell or the end: 0, kept
        if level >= 2 and 0 < nxt_level <= level:
            continue
        keep.append(cell)
    return keep


class _Headings(HTMLParser):
    """Headings (h1–h3 with an id) of the Markdown cells, and where the first cell ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str, str]] = []
        self.first_cell_end: tuple[int, int] | None = None
        self._divs: list[bool] = []  # one per open div: does it open a Markdown cell?
        self._heading: list | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            self._divs.append("jp-MarkdownCell" in (attrs.get("class") or "").split())
        elif tag in ("h1", "h2", "h3") and attrs.get("id") and any(self._divs):
            self._heading = [int(tag[1]), attrs["id"], ""]
        elif tag == "a" and "anchor-link" in (attrs.get("class") or "") and self._heading:
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            if self._divs.pop() and self.first_cell_end is None:
                self.first_cell_end = self.getpos()
        elif tag == "a" and self._skip:
            self._skip -= 1
        elif tag in ("h1", "h2", "h3") and self._heading:
            level, anchor, text = self._heading
            self.headings.append((level, anchor, " ".join(text.split())))
            self._heading = None

    def handle_data(self, data):
        if self._heading and not self._skip:
            self._heading[2] += data


def add_contents(page: str) -> str:
    """Insert a ``<nav>`` table of contents after the first Markdown cell (title and intro).

    Parameters
    ----------
    page : str
        An nbconvert HTML page; headings h2 and h3 of its Markdown cells are listed (the h1 is
        the title).

    Returns
    -------
    str
        The page with ``<nav class="dabench-toc">`` linking each heading by its id; unchanged
        when it has no such heading.

    Examples
    --------
    >>> page = ('<main><div class="jp-Cell jp-MarkdownCell"><h1 id="T">T</h1></div>'
    ...         '<div class="jp-MarkdownCell"><h2 id="A-b">A b<a class="anchor-link" '
    ...         'href="#A-b">¶</a></h2></div></main>')
    >>> nav = add_contents(page).split("</h1></div>")[1].split("<div")[0]
    >>> print(nav.replace("><", ">\\n<"))
    <nav class="dabench-toc" aria-label="Contents">
    <p>Contents</p>
    <ul>
    <li class="level-2">
    <a href="#A-b">A b</a>
    </li>
    </ul>
    </nav>
    """
    parser = _Headings()
    parser.feed(page)
    parser.close()
    items = [(level, anchor, text) for level, anchor, text in parser.headings if level > 1]
    if not items or parser.first_cell_end is None:
        return page
    links = "".join(f'<li class="level-{level}"><a href="#{html.escape(anchor)}">'
                    f"{html.escape(text)}</a></li>" for level, anchor, text in items)
    nav = f'<nav class="dabench-toc" aria-label="Contents"><p>Contents</p><ul>{links}</ul></nav>'
    line, col = parser.first_cell_end
    starts = [0]
    for text_line in page.splitlines(keepends=True):
        starts.append(starts[-1] + len(text_line))
    at = page.index(">", starts[line - 1] + col) + 1  # after the first cell's "</div>"
    return page[:at] + nav + page[at:]


class _Loads(HTMLParser):
    """Addresses an HTML page loads: ``src``/``srcset``/``data``/``poster`` attributes,
    ``<link href>``, and CSS ``url()``/``@import`` in ``<style>`` and ``style=``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            loads = name in ("src", "data", "poster") or (name == "href" and tag == "link")
            if loads and _REMOTE.match(value):
                self.found.append(value.strip())
            elif name == "srcset":
                self.found += [u for u in value.replace(",", " ").split() if _REMOTE.match(u)]
            elif name == "style":
                self.found += _CSS_REMOTE.findall(value)
        self._style = tag == "style"

    def handle_endtag(self, tag):
        self._style = False

    def handle_data(self, data):
        if self._style:
            self.found += _CSS_REMOTE.findall(data)


def external_references(page: str) -> list[str]:
    """Every address an HTML page would load from the network (not links a reader follows).

    Parameters
    ----------
    page : str
        An HTML page.

    Returns
    -------
    list of str
        Addresses (``http://``, ``https://`` or ``//``) in ``src``, ``srcset``, ``data`` and
        ``poster`` attributes, ``<link href>`` and CSS ``url()``/``@import``, in page order;
        empty for a page that works offline.

    Examples
    --------
    >>> external_references('<script src="https://cdn.x/r.js"></script><a href="https://x">x</a>'
    ...                     '<style>@import "//fonts.x/f.css";</style><img src="data:image/png;">')
    ['https://cdn.x/r.js', '//fonts.x/f.css']
    """
    parser = _Loads()
    parser.feed(page)
    parser.close()
    return parser.found


def _title(nb: nbformat.NotebookNode) -> str | None:
    """The text of the notebook's first ``# `` heading (the page's ``<title>``)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def export_html(notebook: str | os.PathLike[str], html_path: str | os.PathLike[str], *,
                page: str | None = None) -> Path:
    """Write the report page of an executed notebook, atomically.

    Parameters
    ----------
    notebook : path-like
        The executed ``.ipynb`` (kept as it is: with its code and raw outputs).
    html_path : path-like
        The page to write.
    page : str, optional
        The page :func:`page_of` already made of this notebook's cells (the runner makes it
        while the kernel shuts down); None: made here from ``notebook``.

    Returns
    -------
    Path
        ``html_path``: nbconvert's lab page without code cells' inputs or prompts, with a
        table of contents (:func:`add_contents`), warnings as notes
        (:func:`prepare_for_page`) and no script or style loaded from the network.

    Warns
    -----
    UserWarning
        If the page would still load something from the network (a notebook output showing a
        remote image, say), naming the addresses; the page is written all the same.
    """
    if page is None:
        import nbformat

        page = page_of(nbformat.read(os.fspath(notebook), as_version=4), Path(notebook).stem)
    remote = external_references(page)
    if remote:
        warnings.warn(f"{html_path}: the page loads {', '.join(sorted(set(remote)))} from the "
                      "network; it will be incomplete offline", stacklevel=outside_level())
    dest = Path(html_path)
    with atomic_write(dest) as fh:
        fh.write(visible(page))  # a NUL from the data as \x00 (export._text), as in every file
    return dest


def page_of(nb: nbformat.NotebookNode, name: str) -> str:
    """The report page of an executed notebook (what :func:`export_html` writes).

    Parameters
    ----------
    nb : NotebookNode
        The executed notebook (not modified: the page is made of a copy).
    name : str
        The notebook's file name without ``.ipynb`` (the page's title when the notebook has
        no ``# `` heading).

    Returns
    -------
    str
        nbconvert's lab page of the notebook prepared by :func:`prepare_for_page`, with a
        table of contents (:func:`add_contents`).
    """
    nb = prepare_for_page(nb)
    nb.metadata.setdefault("title", _title(nb) or name)
    with _exporter() as exporter:
        page, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": name},
                                                             "dabench_css": CSS})
    return add_contents(page)


@functools.cache
def _exporter_class() -> type:
    """nbconvert's HTMLExporter whose ``from_notebook_node`` ends at its template: without the
    BeautifulSoup pass it makes then over the whole page (0.2-0.4 s for a run report's 4,000
    table cells) to add ``tabindex="0"`` to outputs and input wrappers and a text to images
    without one; :data:`TEMPLATE` adds them on the template's own tags, and an output's own
    HTML is left as it was written."""
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class PageExporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter.from_notebook_node (nbconvert 7.16-7.17) before its soup
            info = nb.metadata.get("language_info", {})
            self.register_filter("highlight_code", self.filters.get(
                "highlight_code", Highlight2HTML(
                    pygments_lexer=info.get("pygments_lexer", info.get("name")), parent=self)))
            resources = self._init_resources(resources)
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            return TemplateExporter.from_notebook_node(self, nb, resources, **kw)

    return PageExporter


def prepare_exporter() -> None:
    """Make the page's exporter and compile its templates ahead (0.1-0.2 s), for the next
    :func:`page_of` in this process; the runner calls it in a thread while a kernel starts."""
    with _exporter() as exporter:
        exporter.template  # noqa: B018 - compiled on first access


_EXPORTERS: list = []  # exporters not in use, their templates compiled
_EXPORTERS_LOCK = threading.Lock()


@contextlib.contextmanager
def _exporter() -> Iterator[nbconvert.HTMLExporter]:
    """An exporter of the page used by one thread at a time, kept for the next page."""
    with _EXPORTERS_LOCK:
        exporter = _EXPORTERS.pop() if _EXPORTERS else None
    if exporter is None:
        import jinja2

        exporter = _exporter_class()(
            template_name="lab", template_file="dabench_report.html.j2",
            extra_loaders=[jinja2.DictLoader({"dabench_report.html.j2": TEMPLATE})],
            exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
            optimistic_validation=True)  # once, not after each preprocessor
    try:
        yield exporter
    finally:
        exporter._nb_metadata.clear()  # kept by nbconvert for every notebook converted
        with _EXPORTERS_LOCK:
            _EXPORTERS.append(exporter)
