"""Shrinkage of a private covariance release toward zero, from public noise scales.

A private release is ``Y = C + E`` (additive mechanisms) or a matrix whose
error has a public predicted size (the spectral mechanisms). The zero matrix
knows nothing and has relative error 1; when the noise dominates, ``Y`` is
farther from ``C`` than zero is. The rule here multiplies the release by

    s = max(0, 1 - kappa / ||Y||_W**2),

the positive-part James-Stein factor, where ``||A||_W = ||D A D||_F`` is the
Frobenius norm in the units the user sees (``D = diag(h)``: the half-widths of
the public box, or ones) and ``kappa`` is the predicted energy of the error
in that norm. It reads the release and public values only (post-processing).

Additive Gaussian noise (GaussCov). The free entries of the upper triangle,
scaled to the metric, are independent Gaussians with known, unequal
variances ``v_k``. The factor ``1 - a / ||Y||**2`` with ``0 < a <= 2 (sum v_k
- 2 max v_k)`` has lower risk than ``Y`` for every ``C`` (Bock 1975, Theorem
A), and the positive part lowers it further (Baranchik 1964); ``a = sum v_k -
2 max v_k`` is the centre of that range (for equal variances, Stein's ``(p -
2) sigma**2``). The released estimate is never worse in expectation than the
raw release, and is about the better of the raw release and zero.

Additive Laplace noise (LapCov) and the nuclear-norm mechanism: the same
factor with the noise's variances. Stein's identity needs Gaussian noise, so
the dominance is not a theorem here: it is measured (``benchmarks/
bench_shrinkage.py``).

Spectral releases (SeparateCov, eigenvector sampling): ``Y = V diag(l) V^T``
with noisy eigenvalues ``l`` and noisy eigenvectors ``V``. The best factor
is ``<Y, C> / ||Y||**2 = 1 - <Y, Y - C> / ||Y||**2``; for additive noise
independent of ``C``, ``E <Y, Y - C>`` is the noise's energy, which is why
the factors agree. Here it depends on ``C`` (its eigenvalue gaps decide the
eigenvectors' error), so ``kappa`` is measured by running the mechanism on a
public surrogate of ``C`` (:class:`SimulatedError`). Like the Laplace case,
this is a plug-in rule, measured.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._config import config_context
from ..mechanisms import project_psd

#: Draws of the parametric bootstrap of :class:`SimulatedError`.
N_SIMULATIONS = 4
#: Its generator's seed: these draws are not a release's noise.
SIMULATION_SEED = 0
#: Standard deviations of the noise's energy added to its mean.
NOISE_MARGIN = 1.0


@dataclass(frozen=True)
class AdditiveError:
    """Public law of an additive symmetric noise matrix.

    Parameters
    ----------
    diagonal_variance : float
        Variance of each diagonal entry of the noise.
    off_diagonal_variance : float
        Variance of each off-diagonal entry.
    """

    diagonal_variance: float
    off_diagonal_variance: float
    kurtosis: float = 3.0

    def energy(self, weights, raw=None):
        """Predicted ``E ||D E D||_F**2``, the noise's energy in the metric.

        Parameters
        ----------
        weights : ndarray of shape (d,)
            The metric's scales ``h`` (``D = diag(h)``).
        raw : ndarray, default=None
            Unused: the noise does not depend on the truth.

        Returns
        -------
        kappa : float
            ``sum_ij h_i**2 h_j**2 v_ij`` with ``v_ij`` the variance of entry
            ``(i, j)``.
        """
        squares = np.asarray(weights, dtype=float) ** 2
        fourth = float(np.sum(squares**2))
        total = self.off_diagonal_variance * (float(np.sum(squares)) ** 2 - fourth)
        total += self.diagonal_variance * fourth
        # The variance of the energy: sum over the free entries of
        # (kurtosis - 1) times their variance in the metric squared (an
        # off-diagonal entry counts twice in the norm).
        eighth = float(np.sum(squares**4))
        spread = self.diagonal_variance**2 * eighth
        spread += 2.0 * self.off_diagonal_variance**2 * (fourth**2 - eighth)
        return total + NOISE_MARGIN * math.sqrt((self.kurtosis - 1.0) * spread)


@dataclass(frozen=True)
class SimulatedError:
    """Predicted error of a release whose error depends on the truth.

    The spectral mechanisms' error (noisy eigenvalues, noisy eigenvectors)
    is not additive: ``E <Y, Y - C>`` depends on ``C``'s eigenvalues and
    gaps. It is measured by running the mechanism again, with its public
    parameters, on a public surrogate of ``C``: the release projected onto
    the PSD cone. A parametric bootstrap; post-processing, since it reads
    the release and public values only, and its draws, from a fixed
    generator, are not the release's noise and say nothing about the data.

    Parameters
    ----------
    simulate : callable
        ``simulate(second_moment, rng=rng)`` returns a
        :class:`~dpcov.covariance._base.Release` of the same mechanism with
        the same public parameters.
    vectors : ndarray of shape (d, k)
        The released eigenvectors (columns).
    values : ndarray of shape (k,)
        The released eigenvalues, largest first.
    value_law : {"gaussian", "laplace"}
        Law of the noise on the eigenvalues.
    value_scale : float
        Its scale (standard deviation, or Laplace ``b``).
    nonnegative : bool, default=False
        Whether the released eigenvalues were clipped at 0.
    """

    simulate: Callable
    vectors: np.ndarray
    values: np.ndarray
    value_law: str
    value_scale: float
    nonnegative: bool = False

    def energy(self, weights, raw):
        """Mean of ``<Y*, Y* - S>_W`` over :data:`N_SIMULATIONS` draws ``Y*``.

        Parameters
        ----------
        weights : ndarray of shape (d,)
            The metric's scales.
        raw : ndarray of shape (d, d)
            The release (in the mechanism's coordinates).

        Returns
        -------
        kappa : float
            The predicted ``||Y||_W**2 - <Y, C>_W`` at ``C = S``, the
            release's PSD part.
        """
        outer = np.outer(weights, weights) ** 2
        surrogate = project_psd(raw)
        rng = np.random.default_rng(SIMULATION_SEED)
        inner = 0.0
        with config_context(secure_noise=False):
            for _ in range(N_SIMULATIONS):
                draw = self.simulate(surrogate, rng=rng).raw
                inner += float(np.sum(outer * draw * (draw - surrogate)))
        # At least the energy of the eigenvalue noise along the released
        # directions, weighted by (v^T D^2 v)**2 in the metric. Released
        # values are sorted, so on directions without signal the k-th value
        # is the k-th largest of the noise draws (its mean square m_k, from
        # the same generator); a value far above it is signal, whose noise
        # has the law's variance; between, all of it may be noise.
        along = (np.asarray(weights, dtype=float) ** 2 @ self.vectors**2) ** 2
        ranked = _order_statistic_squares(
            len(raw), self.value_law, self.value_scale, self.nonnegative, rng
        )[: len(self.values)]
        variance = self.value_scale**2 * (1.0 if self.value_law == "gaussian" else 2.0)
        per_value = np.maximum(variance, np.minimum(ranked, self.values**2))
        values = float(np.sum(along * per_value))
        return max(inner / N_SIMULATIONS, values)


def mean_error_energy(weights, noise):
    """Expected ``||D e e^T D||_F**2`` for the private mean's noise ``e``.

    Parameters
    ----------
    weights : ndarray of shape (d,)
        The metric's scales ``h``.
    noise : AdditiveNoise
        The mean's noise (independent coordinates).

    Returns
    -------
    energy : float
        ``E (sum_i h_i**2 e_i**2)**2 = v**2 ((sum h**2)**2 + (k - 1) sum h**4)``
        with ``v`` the variance and ``k`` the kurtosis of a coordinate.
    """
    squares = np.asarray(weights, dtype=float) ** 2
    kurtosis = 3.0 if noise.law == "gaussian" else 6.0
    variance = noise.std**2
    return variance**2 * (
        float(np.sum(squares)) ** 2 + (kurtosis - 1.0) * float(np.sum(squares**2))
    )


def weighted_norm2(matrix, weights):
    """``||D A D||_F**2`` with ``D = diag(weights)``."""
    weights = np.asarray(weights, dtype=float)
    return float(np.sum((matrix * np.outer(weights, weights)) ** 2))


def shrinkage_factor(raw, weights, energy):
    """The positive-part James-Stein factor ``max(0, 1 - energy / ||raw||_W**2)``.

    Parameters
    ----------
    raw : ndarray of shape (d, d)
        The release.
    weights : ndarray of shape (d,)
        The metric's scales.
    energy : float
        The predicted error energy ``kappa`` (public).

    Returns
    -------
    factor : float
        In ``[0, 1]``: 1 without noise, 0 when the release lies within the
        noise bulk (then the zero matrix is the estimate).
    """
    if energy <= 0.0:
        return 1.0
    norm2 = weighted_norm2(raw, weights)
    if not norm2 > energy:
        return 0.0
    return 1.0 - energy / norm2


def signal_to_noise_from_factor(factor):
    """``sqrt(s / (1 - s))``: the estimated signal over noise norm.

    With ``s = 1 - kappa / ||Y||**2``, ``s / (1 - s) = (||Y||**2 - kappa) /
    kappa``, the estimated energy of the signal over that of the noise; the
    factor is the Wiener gain ``snr**2 / (1 + snr**2)``.
    """
    if factor >= 1.0:
        return math.inf
    return math.sqrt(factor / (1.0 - factor))


def _order_statistic_squares(d, law, scale, nonnegative, rng, n_draws=256):
    """Mean squares of the sorted (largest first) ``d`` noise draws."""
    if law == "gaussian":
        draws = rng.normal(0.0, scale, size=(n_draws, d))
    else:
        draws = rng.laplace(0.0, scale, size=(n_draws, d))
    draws = -np.sort(-draws, axis=1)
    if nonnegative:
        draws = np.maximum(draws, 0.0)
    return np.mean(draws**2, axis=0)
