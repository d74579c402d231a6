"""Sphinx configuration of the dpcov documentation."""

import dpcov

project = "dpcov"
author = "The dpcov developers"
copyright = "2026, The dpcov developers"
version = release = dpcov.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # MathJax 3 served from the built docs' _static/mathjax, not a CDN: the
    # maths render with no network.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
]

autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "user_guide/_*.rst",
    "_intersphinx",
]

# Links to scikit-learn, NumPy and SciPy. The docs are built offline, so the
# inventories are local files written by _intersphinx/make_inventories.py
# (the objects the docs cross-reference, with their projects' URLs).
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", "_intersphinx/sklearn.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_intersphinx/numpy.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy/", "_intersphinx/scipy.inv"),
}

html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_title = f"dpcov {release}"

sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "backreferences_dir": None,
    "doc_module": ("dpcov",),
    "reference_url": {"dpcov": None},
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
}
