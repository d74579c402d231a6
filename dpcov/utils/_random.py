"""Turn a ``random_state`` parameter into a ``numpy.random.Generator``."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers
from types import ModuleType

import numpy as np


def check_random_state(seed):
    """Return the generator that a ``random_state`` parameter asks for.

    A fixed seed makes a fit reproducible, which is what tests and research
    need, but a release made with a seed is **not private against anyone who
    knows the seed**: they can regenerate and subtract the noise. Use
    ``random_state=None`` (the default of every dpcov estimator) for releases.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` seeds a new generator from operating-system entropy; an int
        seeds a new generator deterministically; a Generator is used as is (and
        advanced by each fit); a RandomState seeds a new generator from its
        stream (for compatibility with scikit-learn's conventions).

    Returns
    -------
    rng : numpy.random.Generator
        The generator.

    Examples
    --------
    >>> from dpcov.utils import check_random_state
    >>> a = check_random_state(0).standard_normal()
    >>> a == check_random_state(0).standard_normal()
    True
    """
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**32, size=4, dtype=np.uint64))
    raise ValueError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {seed!r}."
    )


def spawn_generators(rng, n):
    """Draw ``n`` independent generators from ``rng``'s stream.

    Their seed sequences are spawned (:meth:`numpy.random.SeedSequence.spawn`)
    from 128 bits drawn from ``rng``, so they are reproducible when ``rng``
    is and fresh when ``rng`` comes from operating-system entropy. A meta
    estimator hands them to its inner fits and never leaves one on a released
    estimator.

    Parameters
    ----------
    rng : numpy.random.Generator
        The parent generator (advanced by the draw).
    n : int
        How many generators.

    Returns
    -------
    generators : list of numpy.random.Generator
        Independent generators.
    """
    entropy = [int(word) for word in rng.integers(0, 2**32, size=4, dtype=np.uint64)]
    return [
        np.random.default_rng(child)
        for child in np.random.SeedSequence(entropy).spawn(n)
    ]


def held_objects(value, path="", _seen=None):
    """Every object reachable from ``value``, with its path.

    The walk goes through attributes (``vars``), dicts, lists and tuples, to
    any depth, each object once; arrays, strings, classes and modules are
    not entered. A fitted estimator's nested estimators, their fitted copies
    (a ColumnTransformer's ``transformers_``, a PCA's
    ``covariance_estimator_``) and anything they hold are reached: where a
    seed or a generator could sit on a released model.

    Parameters
    ----------
    value : object
        Where the walk starts (yielded first).
    path : str, default=""
        Its name, the prefix of the paths yielded.

    Yields
    ------
    path : str
        ``path`` followed by the attribute names, keys and indices walked.
    obj : object
        The object found there.
    """
    _seen = set() if _seen is None else _seen
    if id(value) in _seen:
        return
    _seen.add(id(value))
    yield path, value
    if isinstance(value, (np.ndarray, str, bytes, type, ModuleType)):
        return
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif hasattr(value, "__dict__"):
        items = vars(value).items()
    else:
        return
    for key, item in list(items):
        yield from held_objects(item, f"{path}.{key}", _seen)
