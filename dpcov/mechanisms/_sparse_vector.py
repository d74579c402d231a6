"""The sparse vector technique (AboveThreshold).

AboveThreshold (Algorithm 1 in Dwork and Roth, 2014) answers "which is the
first query whose value is (approximately) above the threshold?" for a sequence
of queries of sensitivity ``Delta`` under pure epsilon-DP, whatever the number
of queries: the threshold gets ``Laplace(2 Delta / epsilon)`` noise and each
query ``Laplace(4 Delta / epsilon)`` noise.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from . import _noise
from ._calibration import laplace_scale


def above_threshold_scales(epsilon, sensitivity=1.0):
    """Laplace scales of the threshold noise and of the query noise.

    Parameters
    ----------
    epsilon : float
        Budget of the whole AboveThreshold run (pure DP).
    sensitivity : float, default=1.0
        Sensitivity of each query.

    Returns
    -------
    threshold_scale : float
        ``2 * sensitivity / epsilon``.
    query_scale : float
        ``4 * sensitivity / epsilon``.

    Examples
    --------
    >>> from dpcov.mechanisms import above_threshold_scales
    >>> above_threshold_scales(0.5)
    (4.0, 8.0)
    """
    return laplace_scale(2.0 * sensitivity, epsilon), laplace_scale(
        4.0 * sensitivity, epsilon
    )


def above_threshold_accuracy(epsilon, n_queries, beta, sensitivity=1.0):
    """Accuracy ``alpha`` of AboveThreshold (Theorem 3.24 in Dwork and Roth).

    With probability at least ``1 - beta``, every query before the returned
    index is at most ``threshold + alpha`` and the returned query is at least
    ``threshold - alpha``, for ``alpha = 8 Delta log(2 k / beta) / epsilon``.

    Parameters
    ----------
    epsilon : float
        Budget of the run.
    n_queries : int
        Number of queries ``k``.
    beta : float
        Failure probability, in (0, 1).
    sensitivity : float, default=1.0
        Sensitivity of each query.

    Returns
    -------
    alpha : float
        The accuracy bound.
    """
    if math.isinf(epsilon):
        return 0.0
    return 8.0 * sensitivity * math.log(2.0 * n_queries / beta) / epsilon


def above_threshold(queries, threshold, *, epsilon, rng, sensitivity=1.0):
    """Index of the first query above a noisy threshold, pure epsilon-DP.

    All query noises are drawn at once; only the index is released, so the
    output has the law of the sequential algorithm. The privacy guarantee does
    not depend on the number of queries. The queries must be fixed in advance
    (not chosen after seeing earlier answers).

    Parameters
    ----------
    queries : array-like of shape (k,)
        Query values on the data, each of sensitivity ``sensitivity``.
    threshold : float
        The public threshold.
    epsilon : float
        Budget (pure DP).
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Sensitivity of each query.

    Returns
    -------
    index : int
        First ``i`` with ``queries[i] + nu_i > threshold + nu``, or ``k`` when
        no query fires.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.mechanisms import above_threshold
    >>> above_threshold([-np.inf, -np.inf, np.inf], 0.0, epsilon=1.0,
    ...                 rng=np.random.default_rng(0))
    2
    """
    queries = np.asarray(queries, dtype=float)
    threshold_scale, query_scale = above_threshold_scales(epsilon, sensitivity)
    noisy_queries, noisy_threshold = _noise.noisy_above_threshold(
        rng,
        queries,
        threshold,
        threshold_scale=threshold_scale,
        query_scale=query_scale,
        sensitivity=sensitivity,
    )
    # Strict inequality: identical in law for continuous noise, and at
    # epsilon=inf it stops at the first query that is really above threshold.
    fired = np.flatnonzero(noisy_queries > noisy_threshold)
    return int(fired[0]) if fired.size else int(queries.shape[0])
