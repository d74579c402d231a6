"""Exact laws of the Bingham distribution on the circle, for tests.

On the unit circle, ``u = (cos psi, sin psi)`` and the law with density
proportional to ``exp(c u^T M u)`` is a law of the line angle ``psi`` in
``[0, pi)`` (the density is pi-periodic). Its density is smooth and periodic,
so the trapezoidal rule on a uniform grid is spectrally accurate; 4096 points
give every quantity below to about machine precision for ``c |M| <= 100``.
"""

import numpy as np
from scipy import special

GRID = np.linspace(0.0, np.pi, 4097)[:-1]


def _log_density(matrix, scale):
    c, s = np.cos(GRID), np.sin(GRID)
    q = matrix[0, 0] * c * c + 2 * matrix[0, 1] * c * s + matrix[1, 1] * s * s
    log_f = scale * q
    log_f -= log_f.max()
    log_f -= np.log(np.mean(np.exp(log_f)) * np.pi)
    return log_f


def line_angle_cdf(matrix, scale):
    """CDF of the line angle ``psi = atan2(u_1, u_0) mod pi``, as a callable."""
    pdf = np.exp(_log_density(matrix, scale))
    step = np.pi / GRID.size
    # Trapezoid on the periodic grid: cumulative sums of cell averages.
    cells = (pdf + np.roll(pdf, -1)) / 2 * step
    cdf = np.concatenate([[0.0], np.cumsum(cells)])
    nodes = np.append(GRID, np.pi)
    return lambda psi: np.interp(psi, nodes, cdf / cdf[-1])


def line_angle(u):
    """Line angle in [0, pi) of unit vectors in R^2 (rows of ``u``)."""
    return np.mod(np.arctan2(u[..., 1], u[..., 0]), np.pi)


def renyi_divergence(matrix_p, matrix_q, scale, alpha):
    """Renyi divergence of order alpha between two circle Bingham laws."""
    log_p = _log_density(matrix_p, scale)
    log_q = _log_density(matrix_q, scale)
    if np.isinf(alpha):
        return float(np.max(log_p - log_q))
    log_mean = special.logsumexp(alpha * log_p + (1 - alpha) * log_q) - np.log(
        GRID.size
    )
    return float((log_mean + np.log(np.pi)) / (alpha - 1))


def bessel_second_moment(gap_times_scale):
    """``E[u_0**2]`` for ``M = diag(m0, m1)``, ``a = scale (m0 - m1)``.

    ``u_0**2 = cos(phi)**2 = (1 + cos 2 phi) / 2`` with ``2 phi`` von Mises of
    concentration ``a / 2``: ``E = (1 + I_1(a/2) / I_0(a/2)) / 2``.
    """
    half = gap_times_scale / 2.0
    return 0.5 * (1.0 + special.ive(1, half) / special.ive(0, half))


def kummer_second_moment(kappa, q):
    """``E[x_0**2]`` for density prop. to ``exp(kappa x_0**2)`` on S^{q-1}.

    ``E = M(3/2, q/2 + 1, kappa) / (q M(1/2, q/2, kappa))`` (Kummer's M):
    ``x_0**2`` is Beta(1/2, (q-1)/2) under the uniform law, tilted by
    ``exp(kappa x_0**2)``.
    """
    return special.hyp1f1(1.5, q / 2 + 1, kappa) / (
        q * special.hyp1f1(0.5, q / 2, kappa)
    )
