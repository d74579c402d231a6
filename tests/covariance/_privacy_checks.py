"""Statistical privacy checks on worst-case neighbouring datasets.

Both checks measure the privacy loss between the output laws on two
neighbouring datasets and compare it with the closed form of the mechanism
at its claimed sensitivity. They are two-sided: noise calibrated to half the
sensitivity (a privacy bug) or twice it (an accuracy bug) makes them fail.
"""

import math

import numpy as np


def gaussian_shift(statistic_a, statistic_b):
    """Standardised mean shift between two samples of a 1-D statistic.

    For a Gaussian mechanism whose projected output is ``N(m, s^2)`` on one
    neighbour and ``N(m + Delta, s^2)`` on the other, this estimates
    ``Delta / s``; a rho-zCDP Gaussian mechanism on a worst-case pair has
    ``Delta / s = sqrt(2 rho)`` exactly (Renyi divergence ``alpha Delta^2 /
    (2 s^2)``).

    Returns
    -------
    shift : float
        ``|mean_a - mean_b| / pooled_std``.
    standard_error : float
        Its standard error, ``sqrt(2 / m)`` to first order for ``m`` runs per
        side.
    """
    a, b = np.asarray(statistic_a), np.asarray(statistic_b)
    pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    shift = abs(a.mean() - b.mean()) / pooled
    m = min(a.size, b.size)
    return shift, math.sqrt(2.0 / m + shift**2 / (4.0 * m))


def laplace_event_loss(in_event_a, in_event_b):
    """Log-ratio of the probabilities of an event on two neighbours.

    On the event where every Laplace coordinate lies beyond both neighbours'
    means (in the direction of the change), the density ratio of a Laplace
    mechanism is exactly ``exp(D1 / b)``, with ``D1`` the L1 distance between
    the neighbours' statistics and ``b`` the scale. So the log-ratio of the
    event's probabilities equals ``D1 / b``.

    Returns
    -------
    loss : float
        ``log(P_a(E) / P_b(E))``.
    standard_error : float
        Delta-method standard error of the log-ratio.
    """
    a, b = np.asarray(in_event_a), np.asarray(in_event_b)
    pa, pb = a.mean(), b.mean()
    se = math.sqrt((1 - pa) / (pa * a.size) + (1 - pb) / (pb * b.size))
    return math.log(pa / pb), se
