"""Turn a ``random_state`` parameter into a ``numpy.random.Generator``."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

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
