"""Sphinx configuration of the dabench-analysis documentation (``make docs``).

Offline by design: no intersphinx, no remote images, notebooks never executed (MyST-NB shows the
notebooks' source, committed without outputs). The API pages are generated from the packages'
``__all__`` at build time (``_ext/apipages.py``), the eval-v2 column reference from the column
catalogue (``_ext/catalogue.py``); the notebooks and the figures ``make report`` wrote are copied
in (``_ext/copied.py``). Generated and copied files go only to git-ignored folders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")  # importing the package never opens a window

import dabench_analysis  # noqa: E402

project = "dabench-analysis"
author = "the dabench-analysis authors"
copyright = "2026, the dabench-analysis authors"  # noqa: A001
release = version = dabench_analysis.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "apipages",
    "catalogue",
    "copied",
]

# MyST-NB: Markdown pages and notebooks; notebooks are shown as committed, never executed.
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
highlight_language = "none"  # unlabelled blocks (file trees, command output) are plain text
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "_gallery/*.md"]

# API reference: autosummary writes a page per public name (into api/generated, git-ignored).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # the numpydoc Parameters say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"dabench-analysis {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
