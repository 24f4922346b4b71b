"""The API reference pages, written from the packages' ``__all__`` when the build starts.

One page per public namespace (``dabench_analysis`` itself, then each layer), each listing that
namespace's ``__all__`` in an autosummary table (one generated page per name); a submodule named
in a namespace's ``__all__`` (``da.tables.sweep``) gets its own section listing its ``__all__``.
The pages go to ``api/generated/`` (git-ignored), so the reference follows the code as it moves.
"""

from __future__ import annotations

import importlib
import types
from pathlib import Path

#: The public namespaces, in the order of the layers (``dabench_analysis`` first).
NAMESPACES = ("dabench_analysis", "dabench_analysis.schema", "dabench_analysis.load",
              "dabench_analysis.validate", "dabench_analysis.stats", "dabench_analysis.tables",
              "dabench_analysis.figures", "dabench_analysis.export", "dabench_analysis.trajectory",
              "dabench_analysis.judge", "dabench_analysis.research_eval",
              "dabench_analysis.harnesses", "dabench_analysis.report")


def _public(module: types.ModuleType) -> tuple[list[str], list[str]]:
    """(names, submodules) of a module's ``__all__``; without one, its public callables."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
                 and getattr(v, "__module__", "").startswith(module.__name__)]
    subs = [n for n in names if isinstance(getattr(module, n, None), types.ModuleType)]
    plain = [n for n in names if n not in subs and not n.startswith("__")]
    return sorted(plain, key=str.lower), subs


def _first_paragraph(module: types.ModuleType) -> str:
    """The first paragraph of a module's docstring, on one line."""
    return " ".join((module.__doc__ or "").strip().split("\n\n", 1)[0].split())


def _table(prefix: str, names: list[str]) -> list[str]:
    """An autosummary of ``names`` (``prefix.name`` under the page's current module)."""
    if not names:
        return []
    return [".. autosummary::", "   :toctree: .", "   :nosignatures:", "",
            *(f"   {prefix}.{n}" if prefix else f"   {n}" for n in names), ""]


def _page(name: str) -> str:
    module = importlib.import_module(name)
    names, subs = _public(module)
    title = f"``{name}``"
    summary = _first_paragraph(module)
    lines = [title, "=" * len(title), "", f".. currentmodule:: {name}", "", summary, "",
             *_table("", names)]
    for sub in subs:
        full = f"{name}.{sub}"
        submodule = importlib.import_module(full)
        sub_names, _ = _public(submodule)
        heading = f"``{full}``"
        first = _first_paragraph(submodule)
        lines += [heading, "-" * len(heading), "", first, "", *_table(sub, sub_names)]
    return "\n".join(lines) + "\n"


def _front_page() -> str:
    """``dabench_analysis`` itself: its names, each linked to its namespace's page (documented
    there once), and its namespaces."""
    top = importlib.import_module(NAMESPACES[0])
    names, subs = _public(top)
    homes = []
    for n in names:
        home = next((ns for ns in NAMESPACES[1:]
                     if getattr(importlib.import_module(ns), n, None) is getattr(top, n)
                     and n in getattr(importlib.import_module(ns), "__all__", ())), None)
        homes.append(f"   ~{home}.{n}" if home else f"   {NAMESPACES[0]}.{n}")
    summary = _first_paragraph(top)
    lines = ["``dabench_analysis``", "=" * 20, "", summary, "",
             "``import dabench_analysis as da`` gives these names, each documented in the layer "
             "it comes from, and the layers as namespaces (``da.tables``, ``da.stats``, ...).", "",
             ".. autosummary::", "   :nosignatures:", "", *homes, "", "Namespaces", "-" * 10, ""]
    lines += [f"* :doc:`{ns}`: {_first_paragraph(importlib.import_module(ns))}"
              for ns in NAMESPACES[1:] if ns.rsplit(".", 1)[1] in subs]
    return "\n".join(lines) + "\n"


def write_pages(app, config=None) -> None:
    """Write ``api/generated/<namespace>.rst`` (only when the text changed: incremental builds)."""
    out = Path(app.srcdir) / "api" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    for name in NAMESPACES:
        path = out / f"{name}.rst"
        text = _front_page() if name == NAMESPACES[0] else _page(name)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    # config-inited: before the sources are listed (autosummary generates the stubs of the
    # pages found then)
    app.connect("config-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
