"""numpydoc validation of every public class, method and function."""

import inspect

import pytest
from numpydoc.validate import validate

import dpcov
from dpcov import (
    accounting,
    base,
    covariance,
    datasets,
    decomposition,
    distributions,
    mechanisms,
    preprocessing,
    utils,
)

# Checks we do not enforce: extended summary (ES01), See Also (SA01) and
# Examples (EX01) on every method, and RT02 (returns named like scikit-learn's
# "self : object" are our style, as they are scikit-learn's).
IGNORED = {"ES01", "SA01", "EX01", "RT02"}
MODULES = [
    accounting,
    base,
    covariance,
    datasets,
    decomposition,
    distributions,
    mechanisms,
    preprocessing,
    utils,
]


def _public_objects():
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            yield qualname
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not callable(member):
                        continue
                    yield f"{qualname}.{attr}"
                # Methods inherited from dpcov's own base classes.
                for base in obj.__mro__[1:]:
                    if base.__module__.startswith("dpcov"):
                        for attr, member in vars(base).items():
                            if not attr.startswith("_") and callable(member):
                                yield f"{base.__module__}.{base.__qualname__}.{attr}"


@pytest.mark.parametrize("name", sorted(set(_public_objects())))
def test_docstring(name):
    errors = [
        (code, msg) for code, msg in validate(name)["errors"] if code not in IGNORED
    ]
    assert not errors, "\n".join(f"{code}: {msg}" for code, msg in errors)


def test_version():
    assert isinstance(dpcov.__version__, str)
