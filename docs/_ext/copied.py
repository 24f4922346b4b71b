"""Files copied into the documentation when the build starts (into git-ignored folders).

* ``notebooks/*.ipynb`` -> ``docs/notebooks/``: the shipped notebooks as committed (no outputs),
  shown by MyST-NB without executing them.
* ``figures/**/*.png`` -> ``docs/_gallery/``: the PNG figures of the last ``make report`` (none:
  the gallery says so), listed in ``docs/_gallery/report-figures.md``, which ``gallery.md``
  includes. Figures are never drawn by the docs build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sync(pairs: list[tuple[Path, Path]], folder: Path, pattern: str) -> None:
    """Copy each (source, target) whose bytes differ; remove targets no source has."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {dst for _, dst in pairs}
    for old in folder.rglob(pattern):
        if old not in wanted:
            old.unlink()
    for empty in sorted((d for d in folder.rglob("*") if d.is_dir()), reverse=True):
        if not any(empty.iterdir()):
            empty.rmdir()
    for src, dst in pairs:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)


def copy_notebooks(app, config=None) -> None:
    folder = Path(app.srcdir) / "notebooks"
    pairs = [(nb, folder / nb.name) for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    _sync(pairs, folder, "*.ipynb")


def _figures() -> list[Path]:
    figures = ROOT / "figures"
    return sorted(p for p in figures.rglob("*.png")
                  if not any(part.startswith(".") for part in p.relative_to(figures).parts))


def copy_figures(app, config=None) -> None:
    folder = Path(app.srcdir) / "_gallery"
    found = _figures()
    pairs = [(p, folder / p.relative_to(ROOT / "figures")) for p in found]
    _sync(pairs, folder, "*.png")
    lines: list[str] = []
    if not found:
        lines += ["No report figures in `figures/` when these pages were built: run `make report`",
                  "first, then `make docs`, to see every figure of the sample reports here.", ""]
    by_report: dict[str, list[Path]] = {}
    for p in found:
        by_report.setdefault(p.relative_to(ROOT / "figures").parts[0], []).append(p)
    for report, paths in by_report.items():
        lines += [f"## `{report}/`", ""]
        for p in paths:
            rel = p.relative_to(ROOT / "figures").as_posix()
            # the path is relative to gallery.md, which includes this page
            lines += [f"```{{figure}} _gallery/{rel}", f":alt: {p.stem} of the {report} report",
                      ":width: 80%", "", f"`{rel}`", "```", ""]
    text = "\n".join(lines)
    page = folder / "report-figures.md"
    if not page.exists() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("config-inited", copy_notebooks)
    app.connect("config-inited", copy_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
