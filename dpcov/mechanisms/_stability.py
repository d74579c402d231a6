"""Stability test: release a discrete answer only when it is stable.

Let ``s(X)`` be a candidate answer (e.g. a subspace) and ``g(X)`` a score of
sensitivity ``Delta`` such that ``g(X) > Delta`` implies that every neighbour
of ``X`` has the same candidate, ``s(X') = s(X)``. Releasing ``s(X)`` when
``g(X) + Z > Delta + A``, with ``Z`` drawn from the truncated Laplace law
TLap(Delta, epsilon, delta) (scale ``Delta / epsilon`` on ``[-A, A]``), and
the bottom outcome otherwise, is (epsilon, delta)-DP:

* a release needs ``g > Delta`` (``Z <= A``), so whenever either of two
  neighbours can release, both have the same candidate and the outcome is a
  post-processing of ``g + Z``, (epsilon, delta)-DP by the truncated Laplace
  mechanism (Geng, Ding, Guo and Kumar, 2020);
* when neither can release, both output the bottom outcome surely.

This is the selection step of the exact-case subspace estimator of Singhal
and Steinke (2021, Section 3), in two provable forms that replace the paper's
noisy argmax (Algorithm 1): ``g`` is the gap between the two best scores or
the margin of a majority subspace (see
:class:`dpcov.decomposition.ExactSubspace`).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

from . import _noise
from ._calibration import truncated_laplace_params


def stability_threshold(sensitivity, epsilon, delta):
    """Threshold ``Delta + A`` of :func:`stability_test`.

    Parameters
    ----------
    sensitivity : float
        Sensitivity ``Delta`` of the score, positive.
    epsilon : float
        Privacy budget, positive; ``inf`` gives ``Delta`` (no noise, the bare
        stability condition; not private).
    delta : float
        In (0, 1).

    Returns
    -------
    threshold : float
        The score plus noise must be strictly above it for a release.

    Examples
    --------
    >>> from dpcov.mechanisms import stability_threshold
    >>> round(stability_threshold(1.0, 1.0, 1e-6), 3)
    14.664
    """
    if math.isinf(epsilon):
        return float(sensitivity)
    _, bound = truncated_laplace_params(sensitivity, epsilon, delta)
    return sensitivity + bound


def stability_test(rng, score, *, sensitivity, epsilon, delta):
    """Whether a stable candidate may be released: ``score + Z > Delta + A``.

    (epsilon, delta)-DP when ``score > sensitivity`` implies that the
    candidate is the same on every neighbouring dataset (module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    score : float
        The score, e.g. a gap between the two best candidates; ``-inf`` means
        no candidate.
    sensitivity : float
        Sensitivity ``Delta`` of the score under the neighbouring relation.
    epsilon : float
        Privacy budget, positive; ``inf`` tests ``score > sensitivity``
        without noise (not private; for testing).
    delta : float
        In (0, 1): the probability that a score just above ``sensitivity``
        is released.

    Returns
    -------
    release : bool
        True to release the candidate, False for the bottom outcome.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import stability_test
    >>> rng = np.random.default_rng(0)
    >>> stability_test(rng, 40.0, sensitivity=1.0, epsilon=1.0, delta=1e-6)
    True
    >>> stability_test(rng, 1.0, sensitivity=1.0, epsilon=1.0, delta=1e-6)
    False
    """
    return score + stability_noise(rng, sensitivity, epsilon, delta) > (
        stability_threshold(sensitivity, epsilon, delta)
    )


def stability_noise(rng, sensitivity, epsilon, delta):
    """Draw the noise ``Z`` of :func:`stability_test` (0 when epsilon is inf).

    Drawing ``Z`` first lets a caller decide ``score + Z > threshold`` without
    computing the score exactly when a bound settles it.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float
        Sensitivity ``Delta`` of the score.
    epsilon : float
        Privacy budget, positive.
    delta : float
        In (0, 1).

    Returns
    -------
    z : float
        A draw of TLap(Delta, epsilon, delta), in ``[-A, A]``.
    """
    if math.isinf(epsilon):
        return 0.0
    scale, bound = truncated_laplace_params(sensitivity, epsilon, delta)
    return float(_noise.truncated_laplace(rng, scale, bound))
