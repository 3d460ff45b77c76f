"""Sphinx configuration: MyST Markdown pages, the API reference from docstrings (autodoc),
and the pages' examples run by the doctest builder (`nox -s docs` runs both builders with
warnings as errors). Nothing here reaches the network."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent / "_ext"))

project = "ptc"
author = "the ptc authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.doctest", "dashboard"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
# Docstrings here write `name` for code, as Markdown does.
default_role = "code"
autodoc_member_order = "bysource"
autodoc_typehints = "none"
myst_heading_anchors = 3
html_theme = "alabaster"
# Examples compare with eager on random inputs; seed them so a failure reproduces.
doctest_global_setup = "import torch\ntorch.manual_seed(0)"
