"""GaussCov and LapCov: noise on every covariance entry (Dong, Liang and Yi, 2022)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from functools import partial

from ..mechanisms import calibrate_additive
from ..mechanisms._sensitivity import second_moment_sensitivities
from ..utils._docstrings import fill_doc
from ._base import BasePrivateCovariance, Release


def gauss_noise(budget, *, n_samples, n_features, radius):
    """Calibrated noise of GaussCov (zCDP) or LapCov (pure DP).

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
    noise : AdditiveNoise
        Gaussian with standard deviation ``R**2 / (n sqrt(rho))``, or Laplace
        with scale ``sqrt(d (d + 3) / 2) R**2 / (n epsilon)``.
    """
    l2, l1 = second_moment_sensitivities(radius, n_samples, n_features)
    return calibrate_additive(budget, l2_sensitivity=l2, l1_sensitivity=l1)


def gauss_release(second_moment, *, n_samples, radius, budget, rng):
    """GaussCov (zCDP) or LapCov (pure DP) on an exact second-moment matrix.

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
        ``second_moment`` plus symmetric Gaussian noise of standard deviation
        ``R**2 / (n sqrt(rho))`` (zCDP), or symmetric Laplace noise of scale
        ``sqrt(d (d + 3) / 2) R**2 / (n epsilon)`` (pure DP), see
        :func:`gauss_noise`.
    """
    noise = gauss_noise(
        budget, n_samples=n_samples, n_features=second_moment.shape[0], radius=radius
    )
    return Release(
        raw=noise.add_symmetric(second_moment, rng),
        radius=radius,
        noise_std=noise.std,
        split={"covariance": budget},
        simulate=partial(
            gauss_release, n_samples=n_samples, radius=radius, budget=budget
        ),
        additive=True,
        entry_noise=noise,
    )


@fill_doc
class GaussianCovariance(BasePrivateCovariance):
    """Private covariance by noise on every entry (GaussCov / LapCov).

    Adds a symmetric noise matrix to the (clipped) empirical second moment
    [1]_. With ``delta > 0`` (or ``rho`` set) the noise is Gaussian with
    standard deviation ``R**2 / (n sqrt(rho))`` per upper-triangular entry and
    the fit is rho-zCDP, hence (``epsilon``, ``delta``)-DP; with ``delta=0`` it
    is Laplace with scale ``sqrt(d (d + 3) / 2) R**2 / (n epsilon)`` and the
    fit is pure ``epsilon``-DP. With a public norm bound (``data_norm`` or
    ``bounds``) every part of the fit is Gaussian, so asked for (``epsilon``,
    ``delta``) it is one Gaussian mechanism, calibrated on its exact curve
    (Balle and Wang, 2018): ``mu``-GDP (``guarantee_`` a
    :class:`~dpcov.accounting.GaussianDP`) with ``rho = mu**2 / 2``, 7% less
    noise at (1, 1e-6) than through zCDP. With a private radius instead (no
    bound given), asked for (``epsilon``, ``delta``), the fit runs at the
    largest rho whose Gaussian steps and radius search stay (``epsilon``,
    ``delta``)-DP on their composed privacy loss distribution
    (``guarantee_`` a :class:`~dpcov.accounting.ProfileDP`): 3-7% less noise
    at (1, 1e-6). ``R`` is the norm bound of the rows the
    mechanism sees (``data_norm_``, plus ``||location_||`` when centring).
    Guarantees are with respect to replacing one row, given that rows are
    clipped to ``data_norm_``.

    Its error, about ``d R**2 / (n sqrt(rho))`` in Frobenius norm, does not
    depend on the data; :class:`SeparateCovariance` is better when the trace of
    the covariance is small relative to ``R**2`` or ``d`` is large.

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
    SeparateCovariance : Trace-sensitive private covariance.
    AdaptiveCovariance : Tail-sensitive private covariance.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public (with ``groups``, read persons for rows; with
    ``neighbours="add_remove"``, ``n`` is the released count).
    The L2 sensitivity of the upper triangle of ``Y.T @ Y / n`` is
    ``sqrt(2) R**2 / n`` (tight for orthogonal rows); its L1 sensitivity is at
    most ``sqrt(d (d + 3) / 2) R**2 / n`` (Cauchy-Schwarz on the diagonal and
    off-diagonal entries separately, given the Frobenius bound), which is
    smaller than the ``sqrt(2) d R**2 / n`` of Dong, Liang and Yi (2022),
    Lemma 11, for every ``d``: about half the Laplace noise of the paper's
    LapCov.

    Budget split (whole budget B): private radius B/8 when ``data_norm`` is
    None; private mean B/8 when ``assume_centered`` is False; the noisy matrix
    gets the rest. ``projection="feasible"`` with ``assume_centered=True`` is
    the projection mechanism of Dong, Liang and Yi (2022), Appendix C.

    References
    ----------
    .. [1] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022, Sections 3.1 and 6. https://arxiv.org/abs/2205.14324.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import GaussianCovariance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) * [1.0, 0.5, 0.1]
    >>> X /= np.linalg.norm(X, axis=1).max()
    >>> est = GaussianCovariance(epsilon=1.0, delta=1e-6, data_norm=1.0,
    ...                          random_state=0).fit(X)
    >>> est.covariance_.shape
    (3, 3)
    >>> round(est.epsilon_spent_, 6), est.delta_spent_
    (1.0, 1e-06)
    """

    # Every mechanism has an exact sampler (secure_noise; read by _check_budget).
    _hardened_noise = True
    # Gaussian noise only (an (epsilon, delta) fit with a public norm bound
    # runs on the exact Gaussian curve).
    _gaussian_release = True
    _mechanism = staticmethod(gauss_release)
