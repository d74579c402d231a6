"""The package's shape: short functions, small utility modules.

Long functions are where concerns mix (a fit that plans, spends, releases
and records in one body); ``dpcov/utils`` is for small shared helpers.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "dpcov"

#: Lines a function may span, not counting its docstring.
MAX_FUNCTION_LINES = 80
#: Lines a module of dpcov/utils may have.
MAX_UTILS_MODULE_LINES = 500
#: Argument-parser builders: one declaration per option, nothing to split.
PARSER_BUILDERS = {("cli/_parser.py", "add_fit_arguments")}


def _function_lengths():
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if ast.get_docstring(node, clean=False) is not None:
                    docstring = node.body[0]
                    length -= docstring.end_lineno - docstring.lineno + 1
                yield relative, node.name, node.lineno, length


def test_functions_are_short():
    long = [
        f"{path}:{line} {name} ({length} lines)"
        for path, name, line, length in _function_lengths()
        if length > MAX_FUNCTION_LINES and (path, name) not in PARSER_BUILDERS
    ]
    assert long == []


def test_utils_modules_are_small():
    large = [
        f"{path.relative_to(ROOT).as_posix()} ({n} lines)"
        for path in sorted((ROOT / "utils").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines()))
        > MAX_UTILS_MODULE_LINES
    ]
    assert large == []
