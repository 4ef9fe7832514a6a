"""Sphinx configuration of the mas_eval documentation (``make docs`` builds it into ``site/``).

Sphinx with MyST-NB and numpydoc: pages are Markdown (MyST), the API reference is autodoc
reading the numpydoc docstrings, and the notebooks in ``notebooks/`` are executed at every
build and rendered with their outputs (a cell that raises fails the build). ``docs/about.md``
says why this generator.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

import mas_eval  # noqa: E402

project = "mas_eval"
author = "the mas_eval authors"
copyright = "the mas_eval authors, MIT licence"  # noqa: A001
version = release = mas_eval.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "mas_eval_docs",
]

# Pages are MyST Markdown; notebooks (.ipynb) go through MyST-NB.
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "notebooks/figures", "notebooks/figures/**"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Every notebook runs at every build, top to bottom; a cell that raises fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# Notebook 04 reads Local-DDx's result files from beside the clone (CI has them); without them it
# is shown unexecuted rather than failing the build.
if not (ROOT.parent / "shared" / "fixtures" / "lddx").is_dir():
    nb_execution_excludepatterns = ["notebooks/04_reproduce_lddx.ipynb"]
# The notebooks save their figures here, not into the checkout.
os.environ.setdefault("MAS_EVAL_FIGURES", tempfile.mkdtemp(prefix="mas-eval-docs-figures-"))

# The API reference: signatures with their type hints, docstrings read as numpydoc.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

html_theme = "pydata_sphinx_theme"
html_title = f"mas_eval {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    # The header lists the first sections; the rest sit under "More" (one row at 1280 px).
    "header_links_before_dropdown": 5,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
# A mode set on the page: without one, the theme's script logs an error on a first visit.
html_context = {"default_mode": "light"}
html_static_path = ["_static"]
html_css_files = ["mas_eval.css"]
html_show_sourcelink = False
# No request leaves the machine while building: nothing is fetched (no intersphinx).
