"""SeparateCov: eigenvectors and eigenvalues privatised separately.

Dong, Liang and Yi (2022), "Differentially private covariance revisited",
Algorithm 2 ("trace-sensitive") and its pure-DP version (Section 6).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from functools import partial

import numpy as np

from ..accounting import split_budget
from ..mechanisms import calibrate_additive
from ..mechanisms._projection import (
    SPECTRAL_FROM,
    spectrum_of,
    symmetric_eigh,
    symmetric_eigvalsh,
)
from ..mechanisms._sensitivity import eigenvalue_sensitivities
from ..utils._docstrings import fill_doc
from ._base import BasePrivateCovariance, Release
from ._gauss import gauss_noise


def separate_noise(budget, *, n_samples, n_features, radius):
    """Budget halves and calibrated noises of SeparateCov / SeparateLapCov.

    Parameters
    ----------
    budget : ZCDP or PureDP
        Budget of the release.
    n_samples : int
        ``n``.
    n_features : int
        ``d``.
    radius : float
        Row-norm bound ``R``.

    Returns
    -------
    halves : dict
        ``{"eigenvectors": budget / 2, "eigenvalues": budget / 2}``.
    vector_noise : AdditiveNoise
        GaussCov's (LapCov's) noise at half the budget.
    value_noise : AdditiveNoise
        Noise on the sorted eigenvalues at half the budget: standard deviation
        ``sqrt(2) R**2 / (n sqrt(rho))``, or Laplace scale
        ``4 R**2 / (n epsilon)``.
    """
    halves = split_budget(budget, {"eigenvectors": 0.5, "eigenvalues": 0.5})
    vector_noise = gauss_noise(
        halves["eigenvectors"],
        n_samples=n_samples,
        n_features=n_features,
        radius=radius,
    )
    l2, l1 = eigenvalue_sensitivities(radius, n_samples)
    value_noise = calibrate_additive(
        halves["eigenvalues"], l2_sensitivity=l2, l1_sensitivity=l1
    )
    return halves, vector_noise, value_noise


def separate_release(second_moment, *, n_samples, radius, budget, rng):
    """SeparateCov (zCDP) or SeparateLapCov (pure DP) on an exact second moment.

    Half the budget releases the eigenvalues (sorted, with additive noise);
    half releases a noisy matrix (GaussCov/LapCov) whose eigenvectors are
    taken. The i-th largest noisy eigenvalue is paired with the eigenvector of
    the i-th largest (algebraic) eigenvalue of the noisy matrix, as in the
    paper (Algorithm 2); the reference code's SVD pairing, which flips the sign
    of directions with negative noisy eigenvalues, is not reproduced.

    Parameters
    ----------
    second_moment : ndarray of shape (d, d)
        ``Y.T @ Y / n`` of rows of norm at most ``radius``.
    n_samples : int
        ``n``.
    radius : float
        Row-norm bound ``R``.
    budget : ZCDP or PureDP
        Budget of this release.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    release : Release
        ``P diag(lambda_noisy) P.T``.
    """
    halves, vector_noise, value_noise = separate_noise(
        budget, n_samples=n_samples, n_features=second_moment.shape[0], radius=radius
    )
    d = second_moment.shape[0]
    noisy = vector_noise.add_symmetric(second_moment, rng)
    if d >= SPECTRAL_FROM:
        # The release is its spectrum: the noisy matrix's eigenvectors (one
        # eigendecomposition, or the top ones PCA reads: spectrum_of) with
        # the sorted noisy eigenvalues; the matrix is formed only if asked
        # for.
        values = symmetric_eigvalsh(second_moment)
        noisy_values = np.sort(value_noise.add(values[::-1], rng))
        spectrum, raw = spectrum_of(noisy, noisy_values), None
        del noisy
    else:
        _, vectors = symmetric_eigh(noisy)
        vectors = vectors[:, ::-1]
        values = symmetric_eigvalsh(second_moment)[::-1]
        noisy_values = np.sort(value_noise.add(values, rng))[::-1]
        spectrum, raw = None, (vectors * noisy_values) @ vectors.T
    return Release(
        raw=raw,
        spectrum=spectrum,
        entry_noise=vector_noise,
        radius=radius,
        noise_std=value_noise.std,
        split=halves,
        # On data without signal the released eigenvalues are the d noise
        # draws: their maximum is about sqrt(2 log(2d)) standard deviations.
        noise_level=value_noise.std * math.sqrt(2.0 * math.log(2.0 * len(values))),
        simulate=partial(
            separate_release, n_samples=n_samples, radius=radius, budget=budget
        ),
        value_noise=value_noise,
    )


@fill_doc
class SeparateCovariance(BasePrivateCovariance):
    """Trace-sensitive private covariance (SeparateCov / SeparateLapCov).

    Privatises the eigenvalues and the eigenvectors of the (clipped) empirical
    second moment separately, with half of the budget each [1]_: the sorted
    eigenvalues get additive noise, the eigenvectors are those of a noisy copy
    of the matrix. With ``delta > 0`` (or ``rho`` set) both noises are Gaussian
    and the fit is rho-zCDP, hence (``epsilon``, ``delta``)-DP; with
    ``delta=0`` both are Laplace and the fit is pure ``epsilon``-DP. With a
    public norm bound (``data_norm`` or ``bounds``) every part of the fit is
    Gaussian, so asked for (``epsilon``, ``delta``) it is one Gaussian
    mechanism, calibrated on its exact curve (Balle and Wang, 2018):
    ``mu``-GDP (``guarantee_`` a :class:`~dpcov.accounting.GaussianDP`).
    With a private radius instead (no bound given), asked for (``epsilon``,
    ``delta``), it runs at the largest rho whose Gaussian steps and radius
    search stay (``epsilon``, ``delta``)-DP on their composed privacy loss
    distribution (``guarantee_`` a :class:`~dpcov.accounting.ProfileDP`).
    Guarantees are with respect to replacing one row, given that rows are
    clipped to ``data_norm_``.

    Its Frobenius error, ``O(d**0.25 sqrt(tr(Sigma)) / (sqrt(n) rho**0.25) +
    sqrt(d) / (n sqrt(rho)))`` under zCDP, scales with the trace of the
    covariance; it beats :class:`GaussianCovariance` when the trace is small
    or the dimension large.

    Read more in the :ref:`User Guide <covariance>`.

    Parameters
    ----------
    {epsilon}
    {delta}
    {rho}
    {data_norm}
    {bounds}
    {max_rows_per_group}
    {neighbours}
    {assume_centered}
    {projection}
    {eigenvalue_floor}
    {shrinkage}
    {store_precision}
    {store_raw}
    {accountant}
    {random_state}

    Attributes
    ----------
    {covariance_attributes}

    See Also
    --------
    sklearn.covariance.EmpiricalCovariance : The non-private estimator.
    GaussianCovariance : Noise on every entry.
    AdaptiveCovariance : Chooses a clipping threshold and a mechanism privately.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public (with ``groups``, read persons for rows; with
    ``neighbours="add_remove"``, ``n`` is the released count).
    With rows of norm at most ``R``:

    - eigenvectors: the noisy matrix of :class:`GaussianCovariance` at half the
      budget (Gaussian standard deviation ``sqrt(2) R**2 / (n sqrt(rho))``);
    - eigenvalues: L2 sensitivity ``sqrt(2) R**2 / n`` (Dong, Liang and Yi
      2022, Lemma 8), Gaussian standard deviation
      ``sqrt(2) R**2 / (n sqrt(rho))``; under pure DP, L1 sensitivity
      ``2 R**2 / n`` (Lemma 12), Laplace scale ``4 R**2 / (n epsilon)``.

    Budget split (whole budget B): private radius B/8 when ``data_norm`` is
    None; private mean B/8 when ``assume_centered`` is False; the remainder is
    halved between eigenvectors and eigenvalues.

    References
    ----------
    .. [1] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022, Algorithm 2 and Section 6.
       https://arxiv.org/abs/2205.14324.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import SeparateCovariance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) * [1.0, 0.5, 0.1]
    >>> X /= np.linalg.norm(X, axis=1).max()
    >>> est = SeparateCovariance(epsilon=1.0, delta=0.0, data_norm=1.0,
    ...                          assume_centered=True, random_state=0).fit(X)
    >>> est.guarantee_
    PureDP(epsilon=1.0)
    >>> sorted(est.budget_split_)
    ['eigenvalues', 'eigenvectors']
    """

    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True
    # Gaussian noise only (an (epsilon, delta) fit with a public norm bound
    # runs on the exact Gaussian curve).
    _gaussian_release = True
    _mechanism = staticmethod(separate_release)
