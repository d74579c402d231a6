"""Shrinkage of a private covariance estimate toward zero, from public noise scales.

A private release is farther from the truth than the zero matrix (relative
error 1) when its noise dominates. The rule here multiplies the post-processed
estimate ``P`` by

    s = max(0, 1 - kappa / ||P||_W**2),

the positive-part James-Stein factor, where ``||A||_W = ||D A D||_F`` is the
Frobenius norm in the units the user sees (``D = diag(h)``: the half-widths of
the public box, or ones) and ``kappa`` estimates ``||P||_W**2 - <P, C>_W``:
the best factor ``<P, C>_W / ||P||_W**2`` is then ``1 - kappa / ||P||_W**2``.
For an additive Gaussian release ``Y = C + E`` (no projection),
``E <Y, Y - C> = E ||E||**2`` by Stein's identity, and the factor with
``kappa = E ||E||**2 - 2 max_k Var(E_k)`` has lower risk than ``Y`` for every
``C`` (Bock 1975; Baranchik 1964 for the positive part).

Here ``kappa`` comes from a parametric bootstrap (Efron and Tibshirani 1993,
Ch. 6) that covers every mechanism and the projection after it: the
mechanism is run again, with its public parameters and a fixed generator, on a
public surrogate ``S`` of the truth (the estimate itself) plus the outer
product of a draw of the private mean's noise (centring on a noisy mean adds
it to the second moment), its output is post-processed as the release was,
and ``kappa`` is the mean of ``<P*, P* - S>_W`` over the draws. Everything it
reads is the release and public values, so it is post-processing; its draws
are not the release's noise and say nothing about the data.

A test against pure noise weighs the factor. In the user's units the noise
concentrates on the few entries of the widest features, so the energy of an
estimate of pure noise has few effective degrees of freedom: it exceeds its
mean often, and by a lot, and a release kept on such an excess is hundreds of
times worse than the zero matrix. Where a mechanism run is cheap (noise on
entries: GaussCov, SeparateCov, AdaptiveCov), :data:`NULL_DRAWS` estimates
of pure noise (the mechanism at truth zero) give its mean ``m`` and
variance ``v``, before post-processing, as the release ``R`` is tested
(at truth zero the projection piles noise onto every diagonal entry, far
more than where a strong signal sits, so a projected null would hide a
signal on the widest features); elsewhere the bootstrap's own draws at
truth zero, post-processed, test ``P``. Their upper :data:`TEST_LEVEL`
quantile ``q`` is that of the scaled chi-square with the same two moments
(Satterthwaite 1946; Box 1954), and the factor is

    s = w max(0, 1 - kappa' / ||P||_W**2),
    w = clip((||R||_W**2 / q - 1) / RAMP, 0, 1),

with ``kappa'`` the largest of ``kappa``, the draws' mean squared error
``||P* - S||_W**2`` where the caller passes it (the same quantity without
``kappa``'s cross term) and ``m`` (exact at truth zero, where the bootstrap
at a noisy surrogate underestimates it). The weight ``w`` is 0 up to the
quantile and rises to 1 at ``(1 + RAMP) q``: pure noise passes with
probability :data:`TEST_LEVEL`, and then mostly just above ``q``, with a
small factor, so a cell of pure noise keeps a small share of it even when
the noise is hundreds of times the signal. For the spectral mechanisms the estimate must
also exceed :func:`aligned_noise_energy`. A factor of :data:`KEEP_ABOVE` or
more is not applied (see :func:`applied_factor`).

References
----------
Satterthwaite, F. E. "An approximate distribution of estimates of variance
components". Biometrics Bulletin 2(6), 1946.
Box, G. E. P. "Some theorems on quadratic forms applied in the study of
analysis of variance problems, I". Annals of Mathematical Statistics 25(2),
1954.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from scipy import special

from .._config import config_context
from ..mechanisms._projection import symmetric_eigh
from ..utils._error_bars import noise_draws

#: Seed of the bootstrap's generator: its draws are not a release's noise.
SIMULATION_SEED = 0
#: Factors at or above it are not applied (the estimate is kept as released).
KEEP_ABOVE = 0.5
#: Estimates of pure noise drawn for the test (a 2% quantile needs the
#: spread of the energy, not only its mean).
NULL_DRAWS = 64
#: Draws after which a release far above them stops drawing (see
#: :func:`null_energies`).
FIRST_DRAWS = 16
#: How far above the first draws' mean energy a release must be to stop.
CLEAR_MARGIN = 32.0
#: Probability that an estimate of pure noise passes the test.
TEST_LEVEL = 0.02
#: The test's weight rises from 0 at the quantile ``q`` to 1 at
#: ``(1 + RAMP) q``.
RAMP = 1.0


def n_simulations(n_features):
    """Bootstrap draws for ``d`` features: 16 up to ``d = 8``, 2 from ``d = 64``.

    The spread of ``<P*, P* - S>`` relative to its mean falls like ``1 / d``
    for additive noise (``d**2 / 2`` free entries), so larger matrices need
    fewer draws, and each costs a few eigendecompositions.
    """
    return int(min(16, max(2, math.ceil(128 / n_features))))


def bootstrap_energy(
    simulate,
    postprocess,
    surrogate,
    weights,
    *,
    mean_noise=None,
    radius=None,
    additive=False,
):
    """Bootstrap estimates of the noise's share of a post-processed estimate.

    Parameters
    ----------
    simulate : callable
        ``simulate(second_moment, rng=rng)`` returns a
        :class:`~dpcov.covariance._base.Release` of the mechanism, with the
        public parameters of the release.
    postprocess : callable
        Maps a noisy matrix to the estimate, as for the release.
    surrogate : ndarray of shape (d, d)
        The public stand-in ``S`` for the truth (in the mechanism's
        coordinates): the estimate itself.
    weights : ndarray of shape (d,)
        The metric's scales ``h``.
    mean_noise : AdditiveNoise, default=None
        The private mean's noise, when the rows were centred on it.
    radius : float, default=None
        Norm bound of the rows the mechanism saw: a centring error is at
        most that long.
    additive : bool, default=False
        Whether the mechanism adds noise independent of its input: then the
        draw at truth zero reuses the noise of the draw at ``S`` (common
        random numbers, one mechanism run per draw instead of two).

    Returns
    -------
    kappa : float
        The mean of ``<P*, P* - S>_W`` over draws ``P*`` of the estimate at
        truth ``S`` (at least 0).
    null : ndarray of shape (n_draws,)
        ``||P0*||_W**2`` over draws ``P0*`` of the estimate at truth zero:
        the energy of an estimate of pure noise.
    error : float
        The mean of ``||P* - S||_W**2``: the bootstrap's mean squared error
        of the estimate at truth ``S`` (without ``kappa``'s term ``<S, P* -
        S>``, of mean about zero and, the generator being fixed, the same
        draw in every fit: on a strong signal it dominates ``kappa``'s
        spread).
    """
    d = surrogate.shape[0]
    outer = np.outer(weights, weights) ** 2
    rng = np.random.default_rng(SIMULATION_SEED)
    # The samplers' rejection steps branch on exact values: rounding the
    # surrogate to float32 keeps last-bit differences of the release (the
    # order of a sum) from becoming different draws.
    surrogate = surrogate.astype(np.float32).astype(np.float64)

    inner, null, error = [], [], []
    with config_context(secure_noise=False):
        for _ in range(n_simulations(d)):
            second_moment = surrogate + centring_error(mean_noise, radius, d, rng)
            raw = simulate(second_moment, rng=rng).noisy_matrix()
            sample = postprocess(raw)
            inner.append(float(np.sum(outer * sample * (sample - surrogate))))
            error.append(float(np.sum(outer * (sample - surrogate) ** 2)))
            if additive:
                noise = raw - second_moment + centring_error(mean_noise, radius, d, rng)
                null.append(float(np.sum(outer * postprocess(noise) ** 2)))
            else:
                null.append(
                    _pure_noise_energy(
                        simulate, postprocess, outer, mean_noise, radius, rng
                    )
                )
    kappa = max(float(np.mean(inner)), 0.0)
    return kappa, np.asarray(null), float(np.mean(error))


def centring_error(mean_noise, radius, n_features, rng):
    """The outer product of a draw of the private mean's error, at most ``radius`` long.

    Zero without a private mean (``mean_noise`` None): centring on a noisy
    mean adds this outer product to the second moment.
    """
    if mean_noise is None:
        return np.zeros((n_features, n_features))
    delta = mean_noise.add(np.zeros(n_features), rng)
    norm = float(np.linalg.norm(delta))
    if radius is not None and norm > radius:
        delta *= radius / norm
    return np.outer(delta, delta)


def null_energies(
    simulate,
    postprocess,
    weights,
    *,
    mean_noise=None,
    radius=None,
    n_draws=NULL_DRAWS,
    energy=None,
):
    """``||P0*||_W**2`` of ``n_draws`` estimates of pure noise.

    The mechanism is run at truth zero (plus a draw of the centring error)
    with its public parameters and a fixed generator, and its output
    passed through ``postprocess``: one mechanism run per draw.

    Parameters
    ----------
    simulate, postprocess, mean_noise, radius
        As for :func:`bootstrap_energy`.
    weights : ndarray of shape (d,)
        The metric's scales ``h`` (``||D A D||_F``).
    n_draws : int, default=NULL_DRAWS
    energy : float, default=None
        The estimate's own energy. Where, after :data:`FIRST_DRAWS` draws,
        it is at least :data:`CLEAR_MARGIN` times the draws' mean energy and
        twice their quantile (the test passes with weight 1 by a wide
        margin), the draws stop there: a strong signal costs a quarter of
        the draws.

    Returns
    -------
    null : ndarray of shape (n_draws,) or (FIRST_DRAWS,)
    """
    weights = np.asarray(weights, dtype=float)
    outer = np.outer(weights, weights) ** 2
    rng = np.random.default_rng(SIMULATION_SEED + 1)
    null = np.empty(n_draws)
    with config_context(secure_noise=False):
        for k in range(n_draws):
            if k == FIRST_DRAWS and energy is not None and _clear(null[:k], energy):
                return null[:k]
            null[k] = _pure_noise_energy(
                simulate, postprocess, outer, mean_noise, radius, rng
            )
    return null


def _pure_noise_energy(simulate, postprocess, outer, mean_noise, radius, rng):
    # ||P0*||_W**2 of one estimate of pure noise: the mechanism at truth zero
    # plus a draw of the centring error, post-processed (outer: the metric's
    # squared weights h_i**2 h_j**2).
    centring = centring_error(mean_noise, radius, outer.shape[0], rng)
    noise = postprocess(simulate(centring, rng=rng).noisy_matrix())
    return float(np.sum(outer * noise**2))


def _clear(null, energy):
    # The energy far above the first draws' mean and quantile.
    mean, std = null.mean(), null.std(ddof=1)
    return energy >= max(CLEAR_MARGIN * mean, 2.0 * null_quantile(mean, std))


def aligned_noise_energy(estimate, weights, value_noise, spectrum=None):
    """Energy the estimate would have if its eigenvalues were pure noise.

    A spectral release pairs sorted noisy eigenvalues with directions that
    follow the data, so its noise sits on the directions the metric weighs
    most, where a bootstrap at truth zero (random directions) puts little.
    On directions without signal the ``k``-th released value is the ``k``-th
    largest of ``d`` noise draws: with ``m_k`` its mean square (from draws of
    the public law, fixed generator) and ``q_k = v_k^T D**2 v_k`` for the
    estimate's ``k``-th direction, the energy is ``sum_k q_k**2 m_k`` over
    the directions the projection kept (positive values).

    Parameters
    ----------
    estimate : ndarray of shape (d, d)
        The post-processed spectral estimate.
    weights : ndarray of shape (d,)
        The metric's scales.
    value_noise : AdditiveNoise
        The law and scale of the noise on each eigenvalue.
    spectrum : Spectrum or LazySpectrum, default=None
        The estimate's eigendecomposition, when known (``estimate`` is then
        not read; under equal weights, nor are its eigenvectors: each ``q_k``
        is then the weight squared).

    Returns
    -------
    energy : float
    """
    weights = np.asarray(weights, dtype=float)
    if spectrum is None:
        values, vectors = symmetric_eigh(estimate, host=np.linalg.eigh)
        along = weights**2 @ vectors**2
    elif np.all(weights == weights[0]):
        values = spectrum.values
        along = np.full(values.shape[0], weights[0] ** 2)
    else:
        values = spectrum.values
        along = weights**2 @ spectrum.vectors**2
    d = values.shape[0]
    values, along = values[::-1], along[::-1]
    draws = noise_draws(value_noise, (256, d))
    ranked = np.mean(np.sort(draws, axis=1)[:, ::-1] ** 2, axis=0)
    kept = values > 0
    return float(np.sum(along[kept] ** 2 * ranked[kept]))


def weighted_norm2(matrix, weights):
    """``||D A D||_F**2`` with ``D = diag(weights)``."""
    weights = np.asarray(weights, dtype=float)
    return float(np.sum((matrix * np.outer(weights, weights)) ** 2))


def shrinkage_factor(estimate, weights, energy, null=None, aligned=0.0):
    """The positive-part James-Stein factor, after a test against pure noise.

    Parameters
    ----------
    estimate : ndarray of shape (d, d)
        The post-processed estimate ``P``.
    weights : ndarray of shape (d,)
        The metric's scales.
    energy : float
        ``kappa``, the estimate of ``||P||_W**2 - <P, C>_W`` (public).
    null : ndarray, default=None
        Energies ``||P0*||_W**2`` of estimates of pure noise.
    aligned : float, default=0.0
        For a spectral release, :func:`aligned_noise_energy`: the estimate
        must also exceed it to be kept.

    Returns
    -------
    factor : float
        In ``[0, 1]``: 1 without noise; otherwise ``w max(0, 1 - kappa' /
        ||P||_W**2)``, ``kappa'`` the larger of ``kappa`` and the mean of
        ``null``, ``w`` the test's weight (:func:`evidence_weight`; 1 without
        ``null``).
    """
    norm2 = weighted_norm2(estimate, weights)
    if null is not None and len(null) > 1:
        return factor_from_energies(
            norm2, energy, float(np.mean(null)), float(np.std(null, ddof=1)), aligned
        )
    return factor_from_energies(norm2, energy, aligned=aligned)


def null_quantile(null_mean, null_std, level=TEST_LEVEL):
    """The upper ``level`` quantile of the energy of estimates of pure noise.

    That of the scaled chi-square ``m chi2_k / k`` with the energy's mean
    ``m`` and standard deviation (``k = 2 m**2 / std**2``; Satterthwaite
    1946, Box 1954): a weighted sum of squared noise entries, whose few
    heavy weights leave few effective degrees of freedom.
    """
    if not null_std > 0.0:
        return null_mean
    dof = 2.0 * (null_mean / null_std) ** 2
    return null_mean * 2.0 * float(special.gammaincinv(dof / 2.0, 1.0 - level)) / dof


def evidence_weight(norm2, quantile):
    """The test's weight: 0 up to ``quantile``, 1 from ``(1 + RAMP) quantile``.

    Linear in ``||P||_W**2`` between. A hard test would keep pure noise
    that passes it whole; passing mostly just above the quantile, it gets a
    small weight.
    """
    if not quantile > 0.0:
        return 1.0
    return min(max((norm2 / quantile - 1.0) / RAMP, 0.0), 1.0)


def factor_from_energies(norm2, energy, null_mean=None, null_std=None, aligned=0.0):
    """:func:`shrinkage_factor` from ``||P||_W**2``, ``kappa`` and the null's energies.

    Parameters
    ----------
    norm2 : float
        ``||P||_W**2``.
    energy : float
        ``kappa``.
    null_mean, null_std : float, default=None
        Mean and standard deviation of the energy of estimates of pure
        noise (None: no test against pure noise).
    aligned : float, default=0.0
        See :func:`shrinkage_factor`.

    Returns
    -------
    factor : float
    """
    weight = 1.0
    if null_mean is not None:
        if energy <= 0.0 and null_mean <= 0.0:
            return 1.0  # no noise
        weight = evidence_weight(norm2, null_quantile(null_mean, null_std))
        # At truth zero the best factor is 0 and E <P, P - C> = E ||P||**2,
        # the mean energy of estimates of pure noise: the bootstrap at the
        # surrogate (itself mostly noise there) misses it.
        energy = max(energy, null_mean)
    elif energy <= 0.0:
        return 1.0
    if not (weight > 0.0 and norm2 > aligned):
        return 0.0
    return weight * signal_share(norm2, energy, 0.0)


def signal_share(norm2, energy, null_mean):
    """``max(0, 1 - kappa' / ||P||_W**2)``: the estimated signal share of the energy.

    ``kappa'`` is the larger of ``kappa`` (``energy``) and the mean energy
    of estimates of pure noise; the James-Stein factor without the test's
    weight (:func:`factor_from_energies`), which weighs the evidence for
    keeping the release, not the share of its energy that is signal.
    """
    if not norm2 > 0.0:
        return 0.0
    return max(0.0, 1.0 - max(float(energy), float(null_mean)) / norm2)


def predicted_noise_energy(energy, null_mean, factor):
    """The predicted ``E ||P - C||_W**2`` of a release kept as released.

    Two bootstraps bracket it. ``energy`` is the mean squared error of the
    estimate at truth ``S``, the surrogate (see :func:`bootstrap_energy`;
    in closed form ``kappa``, which estimates ``||P||_W**2 - <P, C>_W``,
    that is ``||P - C||_W**2`` on average for an unbiased ``P``): right where
    the signal dominates, it overshoots where ``S`` is mostly noise (the
    projection then keeps noise a truth near zero would have it remove).
    ``null_mean`` is the mean energy of estimates of pure noise, the error at
    truth zero: right where the noise dominates. They are weighed by
    ``factor`` ``s``, the estimated signal share of the energy
    (:func:`signal_share`, the Wiener gain ``snr**2 / (1 + snr**2)``)::

        s max(energy, null_mean) + (1 - s) null_mean

    Public values and the release only. Measured against the actual error
    on three tables (``python -m benchmarks run shrinkage``); the rule was
    chosen there against ``energy`` alone, ``null_mean`` alone and their
    larger: on the 90 cell-settings with ``shrinkage=None`` (30 fits each)
    its root mean square is within [2/3, 3/2] of the actual one in 82% of
    them, against 77%, 77% and 79%.
    """
    null_mean = 0.0 if null_mean is None else float(null_mean)
    share = min(max(float(factor), 0.0), 1.0)
    return share * max(float(energy), null_mean) + (1.0 - share) * null_mean


def applied_factor(factor):
    """The factor applied: 1 (the estimate as released) from :data:`KEEP_ABOVE`.

    Below it, the factor (the test's weight included) as it is. The
    bootstrap's ``kappa`` is biased where the error depends on the truth
    (measured: five times the actual value on a well-estimated table for
    SeparateCov; clipping's bias, AdaptiveCov's, is itself toward zero) and
    the factor's own noise costs a well-estimated release more than it
    saves; below ``KEEP_ABOVE`` (estimated signal-to-noise below 1, or a
    test passed narrowly, where the zero matrix competes) the factor is
    applied.
    """
    return 1.0 if factor >= KEEP_ABOVE else factor


def signal_to_noise_from_factor(factor):
    """``sqrt(s / (1 - s))``: the estimated signal over noise norm.

    With ``s = 1 - kappa / ||P||**2``, ``s / (1 - s) = (||P||**2 - kappa) /
    kappa``, the estimated energy of the signal over that of the noise; the
    factor is the Wiener gain ``snr**2 / (1 + snr**2)``.
    """
    if factor >= 1.0:
        return math.inf
    return math.sqrt(factor / (1.0 - factor))
