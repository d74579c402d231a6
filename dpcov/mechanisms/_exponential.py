"""The exponential mechanism over a finite set of candidates.

McSherry and Talwar (2007): candidate ``j`` is chosen with probability
proportional to ``exp(epsilon s_j / (2 sensitivity))``, where every score
``s_j`` moves by at most ``sensitivity`` between neighbouring datasets. It is
pure ``epsilon``-DP and ``epsilon``-bounded range (Durfee and Rogers, 2019),
hence ``epsilon**2 / 8``-zCDP (Cesar and Rogers, 2021): under zCDP it runs at
the budget's :meth:`~dpcov.accounting.ZCDP.exponential_epsilon`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from . import _noise
from ._calibration import exponential_scale


def exponential_probabilities(scores, *, epsilon, sensitivity=1.0):
    """The exponential mechanism's law over the candidates (closed form).

    Parameters
    ----------
    scores : array-like of shape (k,)
        Finite scores (larger is better).
    epsilon : float
        Epsilon of the mechanism, positive (``inf``: uniform on the maximisers).
    sensitivity : float, default=1.0
        Bound on the change of any score between neighbouring datasets.

    Returns
    -------
    probabilities : ndarray of shape (k,)
        ``exp(c s_j) / sum exp(c s)`` with ``c = epsilon / (2 sensitivity)``.

    Examples
    --------
    >>> from dpcov.mechanisms import exponential_probabilities
    >>> exponential_probabilities([0.0, 0.0, -2.0], epsilon=1.0).round(3)
    array([0.422, 0.422, 0.155])
    """
    scores = np.asarray(scores, dtype=float)
    coefficient = exponential_scale(sensitivity, epsilon)
    if math.isinf(coefficient):
        weights = (scores == scores.max()).astype(float)
    else:
        weights = np.exp(coefficient * (scores - scores.max()))
    return weights / weights.sum()


def exponential_mechanism(scores, *, epsilon, rng, sensitivity=1.0):
    """Index of a candidate drawn by the exponential mechanism, pure epsilon-DP.

    Accuracy: with probability at least ``1 - beta`` the chosen score is
    within ``2 sensitivity log(k / beta) / epsilon`` of the largest (McSherry
    and Talwar, 2007); candidates whose scores are close to the largest share
    that probability, so a set with many good candidates and few bad ones
    rarely yields a bad one. Under ``secure_noise`` the draw is exact
    (:func:`dpcov.mechanisms._discrete.exponential_index`).

    Parameters
    ----------
    scores : array-like of shape (k,)
        Finite scores (larger is better), each of sensitivity ``sensitivity``.
    epsilon : float
        Epsilon of the mechanism.
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Bound on the change of any score between neighbouring datasets.

    Returns
    -------
    index : int
        The chosen candidate.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import exponential_mechanism
    >>> exponential_mechanism([0.0, -100.0], epsilon=1.0, rng=np.random.default_rng(0))
    0
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0 or not np.all(np.isfinite(scores)):
        raise ValueError("scores must be a non-empty 1-d array of finite values.")
    probabilities = exponential_probabilities(
        scores, epsilon=epsilon, sensitivity=sensitivity
    )
    return _noise.exponential_choice(
        rng,
        probabilities,
        scores=scores,
        coefficient=exponential_scale(sensitivity, epsilon),
    )
