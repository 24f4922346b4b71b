"""The documentation outside the README (issue 34, item 5): the README stays a front page whose
links lead to pages that exist, every page's relative links resolve, and the eval-v2 reference
is rendered from the column catalogue (never a copy that can drift). ``make docs`` itself (the
Sphinx build, warnings as errors) runs in ``.ci/run``; these checks need no Sphinx."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if not p.relative_to(DOCS).parts[0].startswith("_")
               and p.relative_to(DOCS).parts[0] not in ("notebooks", "api"))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if "://" not in t]


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for heading in ("## The two commands", "## Your own run", "## Documentation"):
        assert heading in text
    assert "make report" in text and "make test" in text and "make docs" in text
    assert "![" in text  # a figure


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_lead_to_files(path):
    def exists(target: str) -> bool:  # docs/notebooks/ is the build's copy of notebooks/
        if path.parent == DOCS and target.startswith("notebooks/"):
            return (ROOT / target).exists()
        return (path.parent / target).exists()

    missing = [t for t in _links(path) if not exists(t)]
    assert not missing, f"{path.relative_to(ROOT)} links to missing {missing}"


def test_every_guide_page_is_linked_from_the_readme_and_the_index():
    readme = _links(ROOT / "README.md")
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for page in sorted((DOCS / "guide").glob("*.md")):
        assert f"docs/guide/{page.name}" in readme
        assert f"guide/{page.stem}" in index


def test_the_eval_v2_reference_is_rendered_from_the_catalogue():
    text = (DOCS / "reference" / "eval-v2.md").read_text(encoding="utf-8")
    for directive in ("{eval-v2-columns} task_metrics", "{eval-v2-columns} trajectory",
                      "{eval-v2-columns} tool_calls", "{eval-v2-aliases}", "{eval-v2-enums}",
                      "{eval-v2-replay}"):
        assert f"```{directive}\n```" in text
    # the docstrings that define "seed 000" point at the page
    from dabench_analysis.schema import columns

    assert "docs/reference/eval-v2.md" in columns.__doc__


@pytest.mark.parametrize(("file", "catalogue"), [("task_metrics", "TASK_COLUMNS"),
                                                 ("trajectory", "TRAJECTORY_COLUMNS"),
                                                 ("tool_calls", "TOOL_CALL_COLUMNS")])
def test_the_column_tables_have_every_catalogue_column_in_order(file, catalogue, monkeypatch):
    pytest.importorskip("sphinx")  # the [docs] extra, which make installs
    from dabench_analysis import schema

    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    import catalogue as directives

    directive = directives.ColumnsDirective.__new__(directives.ColumnsDirective)
    directive.arguments = [file]
    header, rows = directive.table()
    columns = getattr(schema, catalogue)
    assert [str(r[0]) for r in rows] == list(columns)
    tiers = {str(r[0]): r[header.index("tier")] for r in rows}
    assert {n for n, t in tiers.items() if t == "required"} == \
        {n for n, c in columns.items() if c.required}
    if file == "task_metrics":  # the meaning column is the catalogue's description
        assert rows[[str(r[0]) for r in rows].index("final_score")][-1] == \
            schema.TASK_COLUMNS["final_score"].description
