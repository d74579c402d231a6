"""Write the intersphinx inventories of scikit-learn, NumPy and SciPy that the docs use.

The documentation is built on machines without internet access, so intersphinx
cannot download the projects' ``objects.inv``. This script writes small
inventories instead, with the objects the docs and docstrings cross-reference
(``:class:`sklearn...```, ``:func:`numpy...```, ...), each checked by importing
it, and the URL its project's documentation gives it. Run it again after adding
a cross-reference to a new object of these projects::

    python docs/_intersphinx/make_inventories.py
"""

import importlib
import inspect
import re
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SOURCES = ["dpcov", "docs/user_guide", "docs/index.rst", "docs/install.rst", "examples"]
ROLE = re.compile(r":(?:py:)?([a-z]+):`~?((?:sklearn|numpy|scipy)\.[A-Za-z0-9_.]+)`")
# Named in numpydoc types and prose without a role, but worth linking.
EXTRA = [
    "numpy.random.Generator",
    "numpy.random.RandomState",
    "numpy.ndarray",
    "scipy.linalg.eigh",
    "scipy.linalg.pinvh",
    "scipy.stats.uniform",
]
# Pages that do not follow the projects' generated/<name>.html rule.
PAGES = {
    "numpy.random.Generator": "reference/random/generator.html",
    "numpy.random.RandomState": "reference/random/legacy.html",
}
PROJECTS = {
    "sklearn": ("scikit-learn", "modules/generated/"),
    "numpy": ("NumPy", "reference/generated/"),
    "scipy": ("SciPy", "reference/generated/"),
}


def _resolve(name):
    # The object and its owner class (for methods), by importing the longest
    # importable module prefix.
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        owner = None
        for attribute in parts[cut:]:
            owner, obj = obj, getattr(obj, attribute)
        return obj, owner if inspect.isclass(owner) else None
    raise ImportError(name)


def _entry(name):
    obj, owner = _resolve(name)
    project = name.split(".")[0]
    if inspect.ismodule(obj):
        role, page = "module", None
    elif owner is not None:
        role = "method" if callable(obj) else "attribute"
        page = name.rsplit(".", 1)[0]
    elif inspect.isclass(obj):
        role, page = "class", name
    elif callable(obj):
        role, page = "function", name
    else:
        role, page = "data", name
    if page is None:
        return None
    uri = PAGES.get(page, f"{PROJECTS[project][1]}{page}.html")
    return f"{name} py:{role} 1 {uri}#{name} -"


def main():
    names = set(EXTRA)
    for source in SOURCES:
        path = ROOT / source
        files = [path] if path.is_file() else path.rglob("*")
        for file in files:
            if file.suffix in {".py", ".rst", ".txt"}:
                names.update(m[1] for m in ROLE.findall(file.read_text()))
    for project, (title, _) in PROJECTS.items():
        module = importlib.import_module(project)
        lines = sorted(
            line
            for line in (_entry(n) for n in names if n.split(".")[0] == project)
            if line is not None
        )
        header = (
            "# Sphinx inventory version 2\n"
            f"# Project: {title}\n"
            f"# Version: {module.__version__}\n"
            "# The remainder of this file is compressed using zlib.\n"
        )
        body = zlib.compress(("\n".join(lines) + "\n").encode())
        (HERE / f"{project}.inv").write_bytes(header.encode() + body)
        print(f"{project}.inv: {len(lines)} objects")


if __name__ == "__main__":
    main()
