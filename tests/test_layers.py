"""The package's layers: no import runs up them, none goes round in a circle.

The layers, bottom to top, are those CONTRIBUTING.md draws ("Where code
goes"). A module may import from a layer below its own and from its own
package; two packages of one layer do not import each other, except where
:data:`SIDEWAYS` says so. Every import of a dpcov module is at module level:
one inside a function would hide a circle from ``import dpcov``.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "dpcov"

#: Bottom to top. A name is a top-level package or module of dpcov.
LAYERS = (
    {"exceptions", "_config", "_version"},
    {"accounting"},
    {"mechanisms"},
    {"utils"},
    {"base"},
    {"preprocessing", "covariance", "impute", "distributions", "datasets"},
    {"decomposition", "linear_model", "discriminant_analysis"},
    {"pipeline"},
    {"model_selection"},
    {"cli"},
    {"__init__", "__main__"},
)
#: Estimator families that build on a peer: PCA and LDA hold a covariance
#: estimator.
SIDEWAYS = {
    ("decomposition", "covariance"),
    ("discriminant_analysis", "covariance"),
}


def _layer(top):
    return next(i for i, names in enumerate(LAYERS) if top in names)


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node, module, is_package):
    # The dpcov modules an import statement names (absolute names).
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "dpcov"]
    package = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = package[: len(package) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "dpcov":
        return []
    names = [f"{target}.{a.name}" for a in node.names]
    submodules = [name for name in names if _exists(name)]
    # ``from package import submodule`` imports the submodule (the package's
    # own __init__ runs first, but is not what the module uses).
    if submodules and len(submodules) == len(names):
        return submodules
    return [target] + submodules


def _exists(name):
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports():
    # (module, target, line, inside a function) for every dpcov import.
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        local = {
            id(inner)
            for function in functions
            for inner in ast.walk(function)
            if isinstance(inner, (ast.Import, ast.ImportFrom))
        }
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(node, module, path.name == "__init__.py"):
                    found.append((module, target, node.lineno, id(node) in local))
    return found


def _top(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_violations(imports):
    """Imports that run up the layers or sideways between peer packages."""
    bad = []
    for module, target, line, _ in imports:
        source, dest = _top(module), _top(target)
        if source == dest or module == "dpcov.__main__":
            continue
        if _layer(dest) > _layer(source) or (
            _layer(dest) == _layer(source) and (source, dest) not in SIDEWAYS
        ):
            bad.append(f"{module}:{line} imports {target}")
    return bad


def circles(imports):
    """Groups of modules that import each other, at module level."""
    graph = {}
    for module, target, _, local in imports:
        if not local and target != module:
            graph.setdefault(module, set()).add(target)
    # Tarjan's strongly connected components.
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_package_has_a_layer():
    tops = {_top(_module_name(path)) for path in ROOT.rglob("*.py")}
    assert tops <= set().union(*LAYERS)


def test_no_import_runs_up_the_layers():
    assert layer_violations(_imports()) == []


def test_no_import_hides_inside_a_function():
    local = [
        f"{m}:{line} imports {t}" for m, t, line, is_local in _imports() if is_local
    ]
    assert local == []


def test_no_circle_between_packages():
    # Package level: a package's modules together, against the others'.
    packages = [(_top(m), _top(t), line, local) for m, t, line, local in _imports()]
    edges = [
        (f"dpcov.{a}", f"dpcov.{b}", line, local)
        for a, b, line, local in packages
        if a != b and "__init__" not in (a, b)
    ]
    assert circles(edges) == []


def test_no_circle_between_modules():
    assert circles(_imports()) == []


@pytest.mark.parametrize(
    "edge",
    [
        # An estimator family importing a composite (LDA once imported the
        # search's cost walk), utils importing the pipeline, a composite
        # importing the search that imports it.
        ("dpcov.discriminant_analysis._lda", "dpcov.model_selection._cost"),
        ("dpcov.utils.estimator_checks", "dpcov.pipeline._pipeline"),
        ("dpcov.pipeline._pipeline", "dpcov.model_selection._composition"),
        ("dpcov.covariance._base", "dpcov.preprocessing._ranges"),
    ],
)
def test_the_check_catches_a_violation(edge):
    # Each of these imports existed once; the check must refuse it.
    assert layer_violations([(edge[0], edge[1], 1, False)]) != []


def test_the_check_catches_a_circle():
    edges = [
        ("dpcov.utils._array_api", "dpcov.utils._gram", 1, False),
        ("dpcov.utils._gram", "dpcov.utils._array_api", 1, False),
    ]
    assert circles(edges) == [["dpcov.utils._array_api", "dpcov.utils._gram"]]
