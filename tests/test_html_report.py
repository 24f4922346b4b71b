"""HTML reports read as reports (issue 14, item 3): no code, a table of contents, every column
shown, estimates as ``0.78 [0.65, 0.87]``, integers as integers, figures embedded, nothing loaded
from the network, warnings as notes.

The sample runs' comparison report (of the batch the suite builds once, conftest.sample_report)
is parsed with the standard library's ``html.parser``; the rest builds pages from hand-made notebooks without a
kernel. A look in a real browser is a manual check (docs/guide/reports.md, "Reading the reports").
"""

from __future__ import annotations

import csv
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dabench_analysis.report._html import export_html, external_references
from dabench_analysis.report._show import table_html

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = re.compile(r"-?\d+(\.\d+)?(e-\d+)? \[-?\d+(\.\d+)?(e-\d+)?, -?\d+(\.\d+)?(e-\d+)?\]")


class Page(HTMLParser):
    """Tags with their attributes, tables as (headers, rows), headings and the TOC's links."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self.toc: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._in_nav = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "nav":
            self._in_nav = True
        elif tag == "a" and self._in_nav:
            self.toc.append(attrs.get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables:
            text = "".join(self._cell).strip()
            headers, rows = self.tables[-1]
            (headers if tag == "th" and len(rows) == 1 else rows[-1]).append(text)
            self._cell = None
        elif tag == "nav":
            self._in_nav = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)

    def column(self, header: str) -> list[str]:
        for headers, rows in self.tables:
            if header in headers:
                i = headers.index(header)
                return [r[i] for r in rows if len(r) > i]
        raise AssertionError(f"no table with a column {header!r}")


@pytest.fixture(scope="module")
def compare_page(sample_report):
    """The comparison report of the sample runs, from the batch built once per session
    (conftest.sample_report)."""
    out = sample_report[1] / "compare_baseline_react_vs_proposed_aat"
    text = (out / "report.html").read_text(encoding="utf-8")
    return Page(text), text, nbformat.read(out / "report.ipynb", as_version=4)


def test_nothing_is_loaded_from_the_network(compare_page):
    page, text, _ = compare_page
    assert external_references(text) == []
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value), (tag, name, value)
    assert not [t for t, a in page.tags if t == "script"]  # require.js, MathJax: gone
    images = [a["src"] for t, a in page.tags if t == "img"]
    assert images and all(s.startswith("data:image/png;base64,") for s in images)


def test_code_is_hidden_in_the_page_and_kept_in_the_notebook(compare_page):
    page, text, executed = compare_page
    classes = [(a.get("class") or "").split() for _, a in page.tags]
    for hidden in ("jp-InputPrompt", "jp-OutputPrompt", "jp-CodeMirrorEditor", "hl-ipython3"):
        assert not [c for c in classes if hidden in c], hidden
    # input areas are left only for the Markdown cells (the text of the report)
    markdown = sum(c.cell_type == "markdown" for c in executed.cells)
    assert sum("jp-InputArea" in c for c in classes) == markdown
    assert "out.section(" not in text and "In&nbsp;[" not in text
    assert any("with out.section('paired_comparison'" in c.source for c in executed.cells)


def test_table_of_contents_links_every_section_heading(compare_page):
    page, _, _ = compare_page
    ids = {a["id"] for _, a in page.tags if "id" in a}
    headings = [a["id"] for t, a in page.tags if t in ("h2", "h3") and "id" in a]
    assert len(headings) >= 5
    assert page.toc == [f"#{h}" for h in headings]
    assert all(link[1:] in ids for link in page.toc)
    assert any("Key-numbers" in link for link in page.toc)


def test_every_column_is_shown_and_nothing_is_elided(compare_page):
    page, _, _ = compare_page
    headers = {h for hs, _ in page.tables for h in hs}
    # the compare report's main table hid p_value, ci_high and statistic (issue 14)
    assert {"Metric", "Pairs", "Baseline", "Proposed", "Difference [95% CI]", "Statistic", "p",
            "Adjusted p", "Cohen's d_z", "Magnitude"} <= headers
    cells = [c for hs, rows in page.tables for c in hs + [c for r in rows for c in r]]
    assert cells
    assert not [c for c in cells if c in ("...", "…") or c.endswith("...")]


def test_estimates_intervals_integers_and_p_values(compare_page):
    page, _, _ = compare_page
    diffs = page.column("Difference [95% CI]")
    assert diffs and all(INTERVAL.fullmatch(d) for d in diffs), diffs
    assert any(re.search(r"\d\.\d+ \[\d\.\d+, \d\.\d+\]", c)
               for _, rows in page.tables for r in rows for c in r)
    with (ROOT / "data" / "sample_runs" / "proposed_aat" / "task_metrics.csv").open() as fh:
        n_tasks = sum(1 for _ in csv.DictReader(fh))  # 80 tasks, both runs: an integer
    assert set(page.column("Pairs")) == {str(n_tasks)}
    assert all(re.fullmatch(r"< 0\.001|\d\.\d+|n/a", p) for p in page.column("p"))


# --- pages from hand-made notebooks (no kernel) -------------------------------------------------

def _executed(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def test_warnings_become_notes_in_the_page_only(tmp_path):
    code = nbformat.v4.new_code_cell("t = tables.f(x)", execution_count=1)
    code.outputs = [nbformat.v4.new_output("stream", name="stderr", text=(
        "/tmp/ipykernel_7/123.py:2: StatisticsWarning: 3 row(s) with a missing score dropped\n"
        "  t = tables.f(x)\n"
        "/tmp/ipykernel_7/123.py:2: FutureWarning: a <b>change</b>\n  t = tables.f(x)\n"
        "kernel said this\n"))]
    nb = _executed([nbformat.v4.new_markdown_cell("# Title\n\nIntro."),
                    nbformat.v4.new_markdown_cell("## Section A"), code])
    nbformat.write(nb, tmp_path / "report.ipynb")
    page_text = export_html(tmp_path / "report.ipynb", tmp_path / "report.html").read_text()
    page = Page(page_text)
    notes = [a for t, a in page.tags if "dabench-note" in (a.get("class") or "")]
    assert len(notes) == 2
    text = "".join(page.text)
    assert "Note. 3 row(s) with a missing score dropped" in text
    assert "Note. a <b>change</b> (FutureWarning)" in text  # escaped, category named
    assert "kernel said this" in text  # other stderr text is kept as it was
    assert "ipykernel_7" not in page_text and "StatisticsWarning:" not in page_text
    assert page.toc == ["#Section-A"]
    kept = nbformat.read(tmp_path / "report.ipynb", as_version=4)
    assert "StatisticsWarning" in kept.cells[2].outputs[0].text  # the notebook is unchanged
    assert re.search(r"<title>Title</title>", page_text)


def test_a_wide_single_row_table_is_transposed():
    wide = pd.DataFrame({"comparison": ["verification_triggered"], "group_a": ["with " * 8],
                         "group_b": ["without " * 8], "n_a": [69], "n_b": [11],
                         "mean_a": [0.8747], "mean_b": [0.8969], "mean_diff": [-0.0222],
                         "ci_low": [-0.1579], "ci_high": [0.1135], "p_value": [0.8650],
                         "effect_size": [-0.0316], "magnitude": ["negligible"]})
    page = Page(table_html(wide))
    assert len(page.tables) == 1
    headers, rows = page.tables[0]
    assert headers == ["", "Verification"]  # the comparison by its label
    assert rows[1:] == [["Group a", "with " * 7 + "with"], ["Group b", "without " * 7 + "without"],
                        ["n (a)", "69"], ["n (b)", "11"], ["Mean a", "0.875"],
                        ["Mean b", "0.897"], ["Difference [95% CI]", "-0.022 [-0.158, 0.114]"],
                        ["p", "0.865"], ["Effect size", "-0.032"], ["Magnitude", "negligible"]]


def test_a_wide_long_table_is_split_with_its_key_repeated():
    rows = 6
    wide = pd.DataFrame({"task_id": [f"task_{i}" for i in range(rows)],
                         **{f"metric_{k}": [f"text {'x' * 30} {k}"] * rows for k in range(6)}})
    page = Page(table_html(wide, caption="Per-task text"))
    assert len(page.tables) == 2
    assert [h[0] for h, _ in page.tables] == ["Task ID", "Task ID"]
    assert page.tables[0][0][1:] + page.tables[1][0][1:] == [f"Metric {k}" for k in range(6)]
    assert [r[0] for r in page.tables[1][1][1:]] == [f"task_{i}" for i in range(rows)]
    assert "Per-task text (continued)" in "".join(page.text)


def test_a_sweep_table_shows_parameters_once_and_ranks_as_integers():
    board = pd.DataFrame({"run_id": ["a", "b"], "metric": "final_score", "rank": [1.0, 2.0],
                          "rank_low": [1.0, 1.0], "rank_high": [2.0, 2.0], "threshold": 0.8,
                          "ci": 0.95, "n_boot": 2000, "boot_seed": 0,
                          "rank_method": "bootstrap over tasks"})
    text = table_html(board)
    page = Page(text)
    headers, rows = page.tables[0]
    assert headers == ["Run ID", "Rank", "Rank (low)", "Rank (high)"]
    assert rows[1:] == [["a", "1", "1", "2"], ["b", "2", "1", "2"]]
    notes = re.findall(r'<p class="dabench-table-note">(.*?)</p>', text)
    assert notes == ["Metric: Final score; threshold: 0.8; level: 0.95; bootstrap: 2000 draws, "
                     "seed 0", "Rank method: bootstrap over tasks"]


def test_each_page_of_the_batch_is_the_page_of_its_executed_notebook(sample_report, tmp_path):
    """The runner makes a report's page while its kernel shuts down, from the notebook as the
    last cell left it: the run, comparison and sweep pages of the sample batch are byte for
    byte the pages export_html makes from their executed notebooks afterwards."""
    _, out = sample_report
    notebooks = sorted(out.glob("*/report.ipynb"))
    assert len(notebooks) >= 4  # two runs, the comparison, the sweep
    for i, nb in enumerate(notebooks):
        again = export_html(nb, tmp_path / f"{i}.html")
        assert again.read_bytes() == (nb.parent / "report.html").read_bytes(), nb.parent.name


def test_the_page_validates_the_notebook_once_and_still_rejects_an_invalid_one(monkeypatch):
    # nbconvert validates the notebook after each of its ~12 preprocessors unless told to do it
    # once, after the last (optimistic_validation): a third of a report page's time
    from nbconvert.exporters.exporter import Exporter
    from nbformat import ValidationError

    from dabench_analysis.report._html import page_of

    checked, validate = [], Exporter._validate_preprocessor
    monkeypatch.setattr(Exporter, "_validate_preprocessor",
                        lambda self, nb, p: checked.append(p) or validate(self, nb, p))
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                           execution_count=1)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), cell])
    page = page_of(nb, "x")
    assert len(checked) == 1 and "<title>Title</title>" in page
    cell.outputs[0]["output_type"] = "no such output"
    with pytest.raises(ValidationError):
        page_of(nb, "x")


def _canonical(page: str) -> str:
    """A page as BeautifulSoup's html.parser writes it, each tag's attributes in name order."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page, features="html.parser")
    for tag in soup.find_all(True):
        tag.attrs = dict(sorted(tag.attrs.items()))
    return str(soup)


def _varied_notebook() -> nbformat.NotebookNode:
    """Markdown, code with every kind of output the lab template writes an image or an output
    area for, an HTML output with an <img> of its own without alternative text."""
    v4 = nbformat.v4
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
           "RU5ErkJggg==")
    cell = v4.new_code_cell("show()", execution_count=1)
    cell.outputs = [
        v4.new_output("stream", name="stdout", text="printed\n"),
        v4.new_output("display_data", {"image/png": png, "text/plain": "<Figure>"},
                      metadata={"alt": "Score by difficulty"}),
        v4.new_output("display_data", {"image/png": png}),
        v4.new_output("display_data", {"image/jpeg": png}),
        v4.new_output("display_data", {"text/html": '<div class="x">'
                                                    '<img alt="kept" src="b.png"></div>'}),
        v4.new_output("display_data", {"text/markdown": "**bold** & <i>i</i>"}),
        v4.new_output("execute_result", {"text/plain": "2 < 3 & 'q'"}, execution_count=1),
        v4.new_output("error", ename="ValueError", evalue="bad", traceback=["ValueError: bad"]),
    ]
    return v4.new_notebook(cells=[v4.new_markdown_cell("# Title\n\nIntro & <b>more</b>"),
                                  v4.new_markdown_cell("## Section"), cell,
                                  v4.new_raw_cell("raw")])


def test_the_page_is_nbconverts_page_without_its_soup_pass(monkeypatch):
    # page_of renders nbconvert's template and adds what HTMLExporter's BeautifulSoup pass adds
    # (tabindex on outputs and input wrappers, nbconvert's alt text on an image without one)
    # on the template's tags: the same page, tag for tag, as nbconvert's own exporter makes
    import jinja2
    from nbconvert import HTMLExporter

    from dabench_analysis.report import _html

    nb = _varied_notebook()
    exporter = HTMLExporter(template_name="lab", template_file="dabench_report.html.j2",
                            extra_loaders=[jinja2.DictLoader({"dabench_report.html.j2":
                                                              _html.TEMPLATE})],
                            exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    prepared = _html.prepare_for_page(nb)
    prepared.metadata["title"] = "Title"
    expected, _ = exporter.from_notebook_node(prepared, resources={"metadata": {"name": "x"},
                                                                   "dabench_css": _html.CSS})
    import nbconvert.exporters.html

    def soup(*args, **kwargs):
        raise AssertionError("the page went through BeautifulSoup")

    monkeypatch.setattr(nbconvert.exporters.html, "BeautifulSoup", soup)
    page = _html.page_of(nb, "x")
    monkeypatch.undo()
    assert _canonical(page) == _canonical(_html.add_contents(expected))
    parsed = Page(page)
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert [i.get("alt") for i in images] == [
        "Score by difficulty", "Figure", "No description has been provided for this image",
        "kept"]
    outputs = [attrs for tag, attrs in parsed.tags
               if tag == "div" and "jp-OutputArea-output" in attrs.get("class", "").split()]
    assert len(outputs) == 8 and all(o.get("tabindex") == "0" for o in outputs)


def test_an_outputs_own_html_is_left_as_written():
    # the page's additions are made on the template's tags: an <img> or an output-looking
    # <div> in an output's own HTML (in an attribute, a script, upper case) is not touched
    from dabench_analysis.report._html import page_of

    own = ('<a title="<img src=q>" href="#">hover</a><script type="application/json">'
           '{"h": "<img src=\\"a.png\\">"}</script><IMG SRC="a.png"><img/>'
           '<div id="d" class="jp-OutputArea-output" tabindex="-1">x</div>')
    cell = nbformat.v4.new_code_cell("show()", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", {"text/html": own})]
    page = page_of(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), cell]),
                   "x")
    assert own in page
    assert page.count('tabindex="0"') == 2  # the markdown cell's input and the output's div


def test_pages_made_at_once_in_two_threads_are_each_their_own(tmp_path):
    # the runner makes a batch's pages in threads (--jobs 2): each takes an exporter of its own
    # from the kept ones, and gives it back
    from concurrent.futures import ThreadPoolExecutor

    from dabench_analysis.report import _html

    _html.prepare_exporter()
    kept = len(_html._EXPORTERS)
    assert kept >= 1
    books = []
    for i in range(4):
        nb = _varied_notebook()
        nb.cells[0].source = f"# Page {i}"
        books.append(nb)
    with ThreadPoolExecutor(2) as pool:
        pages = list(pool.map(lambda nb: _html.page_of(nb, "x"), books))
    assert [re.search(r"<title>(.*?)</title>", p)[1] for p in pages] == [
        f"Page {i}" for i in range(4)]
    assert pages == [_html.page_of(nb, "x") for nb in books]
    assert kept <= len(_html._EXPORTERS) <= kept + 1
