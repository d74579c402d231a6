"""Iterative eigenvector sampling (Amin et al. 2019; "EMCov" in Dong, Liang and Yi)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from dataclasses import dataclass
from functools import partial
from numbers import Integral, Real

import numpy as np

from ..accounting import PureDP, split_budget
from ..mechanisms import (
    bounded_range_epsilon,
    calibrate_additive,
    exponential_scale,
    sample_eigenvectors,
)
from ..mechanisms._projection import SPECTRAL_FROM, Spectrum, symmetric_eigvalsh
from ..mechanisms._sensitivity import (
    eigenvalue_sensitivities,
    rank_one_monotone_sensitivity,
)
from ..utils._docstrings import fill_doc
from ..utils._sklearn_compat import Interval, StrOptions
from ._base import BasePrivateCovariance, Release

#: Share of the mechanism's budget spent on the eigenvalues (Amin et al. 2019:
#: eps0 = eps/2).
EIGENVALUE_SHARE = 0.5


def direction_exponent(budget, *, radius, exponent="tight"):
    """Exponent of one eigenvector step for the score ``u^T (Y^T Y) u``.

    The score of a unit vector ``u`` is ``sum_i (u^T y_i)**2``; each term lies
    in ``[0, R**2]``, so replacing a row moves it by at most ``R**2`` (its
    sensitivity; Amin et al. (2019) state 2 for ``R = 1``, which is loose).

    Parameters
    ----------
    budget : PureDP or ZCDP
        Budget of the step.
    radius : float
        Row-norm bound ``R``.
    exponent : {"tight", "paper"}, default="tight"
        "tight": the exponential mechanism at its proved scale,
        ``epsilon / (2 R**2)``, with ``epsilon = sqrt(8 rho)`` under zCDP
        (bounded range). "paper": the ``epsilon / (4 R**2)`` of Amin et al.
        (2019), Algorithm 1, and, under zCDP, the ``epsilon = sqrt(2 rho)`` of
        Dong, Liang and Yi (2022), Appendix A; a quarter of the tight
        exponent under zCDP, half under pure DP.

    Returns
    -------
    c : float
        The exponent: the step samples ``u`` with density proportional to
        ``exp(c u^T (Y^T Y) u)``.
    """
    # Each term (u^T y_i)**2 lies in [0, R**2]: the score's sensitivity R**2.
    sensitivity = rank_one_monotone_sensitivity(radius**2)
    if isinstance(budget, PureDP):
        epsilon = budget.epsilon
    elif exponent == "tight":
        epsilon = bounded_range_epsilon(budget.rho)
    else:
        epsilon = math.sqrt(2.0 * budget.rho)
    if exponent == "paper":
        sensitivity = 2.0 * sensitivity
    return exponential_scale(sensitivity, epsilon)


def direction_shares(eigenvalues, *, noise, n_features, allocation, beta, pure):
    """Fraction of the eigenvector budget each sampled direction gets.

    Parameters
    ----------
    eigenvalues : ndarray of shape (m,)
        Released (private) eigenvalues paired with the sampled directions.
    noise : AdditiveNoise
        The eigenvalue noise (public scale).
    n_features : int
        ``d``.
    allocation : {"uniform", "adaptive"}
        "uniform": equal shares. "adaptive": the rule of Amin et al. (2019);
        step ``i``'s error term is ``w_i / epsilon_i`` with
        ``w_i = lambda_i + tau`` (``tau`` a ``1 - beta`` bound on the
        eigenvalue noise), minimised under a fixed total by ``epsilon_i``
        proportional to ``sqrt(w_i)`` (pure DP) or ``rho_i`` proportional to
        ``w_i**(2/3)`` (zCDP, where ``epsilon_i ~ sqrt(rho_i)``).
    beta : float
        Failure probability of ``tau``.
    pure : bool
        Whether the budget is pure DP.

    Returns
    -------
    shares : ndarray of shape (m,)
        Non-negative, summing to 1. A function of private values only.
    """
    m = eigenvalues.size
    if allocation == "uniform" or noise.scale == 0.0:
        return np.full(m, 1.0 / m)
    log_term = math.log(2.0 * n_features / beta)
    if noise.law == "laplace":
        tau = noise.scale * log_term
    else:
        tau = noise.scale * math.sqrt(2.0 * log_term)
    weights = (np.maximum(eigenvalues, 0.0) + tau) ** (0.5 if pure else 2.0 / 3.0)
    return weights / weights.sum()


def _direction_scales(
    split,
    eigenvalues,
    *,
    value_noise,
    n_features,
    n_samples,
    radius,
    allocation,
    exponent,
    beta,
):
    # Each sampled direction's share of the eigenvector budget and the scale
    # of its exponential mechanism on u^T second_moment u (n times the
    # exponent of the score u^T (Y^T Y) u); none when no direction is sampled.
    if eigenvalues.size == 0:
        return np.empty(0), []
    vector_budget = split["eigenvectors"]
    pure = isinstance(vector_budget, PureDP)
    step_shares = direction_shares(
        eigenvalues,
        noise=value_noise,
        n_features=n_features,
        allocation=allocation,
        beta=beta,
        pure=pure,
    )
    infinite = math.isinf(vector_budget.epsilon if pure else vector_budget.rho)
    # The directions compose sequentially: split so that their budgets
    # add up to at most the eigenvector share, exactly.
    step_budgets = split_budget(
        vector_budget, {str(i): share for i, share in enumerate(step_shares)}
    )
    return step_shares, [
        math.inf
        if infinite
        else n_samples * direction_exponent(step, radius=radius, exponent=exponent)
        for step in step_budgets.values()
    ]


def _paired_values(noisy, k, bound):
    """The released eigenvalues from their noisy statistic (rows: draws).

    Post-processing: each eigenvalue (and the tail sum) of a second moment
    of rows of norm <= R lies in ``[0, R**2]``; they are paired with the
    directions by rank, largest first. Returns the top ``k`` and the tail
    sum (empty when ``k = d``).
    """
    top = np.clip(-np.sort(-noisy[..., :k], axis=-1), 0.0, bound)
    return top, np.clip(noisy[..., k:].sum(axis=-1), 0.0, bound)


@dataclass(frozen=True)
class SampledLaw:
    """The public law of a release of sampled eigenvectors, for its shrinkage.

    Parameters
    ----------
    value_noise : AdditiveNoise
        The noise on the eigenvalue statistic.
    scales : ndarray of shape (n_sampled,)
        The exponent of each direction's exponential mechanism on
        ``u^T second_moment u`` (a function of the released eigenvalues and
        the budget: public).
    n_components : int
        ``k``; with ``k < d`` the other eigenvalues are released as their
        sum and share its mean.
    n_features : int
        ``d``.
    bound : float
        ``R**2``: the released values are clipped to ``[0, R**2]``.
    """

    value_noise: object
    scales: np.ndarray
    n_components: int
    n_features: int
    bound: float

    @property
    def n_statistics(self):
        """Number of noisy values per release: ``k``, plus the tail sum."""
        return self.n_components + int(self.n_components < self.n_features)

    def released_values(self, truth, draws):
        """The released eigenvalues, in the order of the directions drawn.

        Parameters
        ----------
        truth : ndarray of shape (d,)
            The second moment's eigenvalues, decreasing.
        draws : ndarray of shape (m, n_statistics)
            Draws of the value noise.

        Returns
        -------
        values : ndarray of shape (m, d)
            The top ``k`` values, then the tail's mean repeated ``d - k``
            times.
        """
        d, k = truth.shape[0], self.n_components
        statistic = truth if k == d else np.append(truth[:k], truth[k:].sum())
        top, tail = _paired_values(statistic + draws, k, self.bound)
        if k == d:
            return top
        return np.hstack([top, np.repeat(tail[:, None] / (d - k), d - k, axis=1)])


def eigen_sampling_release(
    second_moment,
    *,
    n_samples,
    radius,
    budget,
    rng,
    n_components=None,
    allocation="adaptive",
    exponent="tight",
    beta=0.1,
):
    """Iterative eigenvector sampling on an exact second moment.

    Half of the budget releases the eigenvalues with additive noise; the other
    half is split between the eigenvector steps (exponential mechanisms on
    the orthogonal complement of the directions drawn before). With all ``d``
    directions the last is determined by the others and costs nothing.

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
    n_components : int, default=None
        Number ``k`` of directions; ``None`` samples all ``d``. With ``k < d``
        the eigenvalue release is the top ``k`` eigenvalues and the sum of the
        others (the same sensitivities: summing coordinates of the eigenvalue
        change, whose removal and addition parts are non-negative, keeps both
        bounds).
    allocation : {"adaptive", "uniform"}, default="adaptive"
        Split of the eigenvector budget, see :func:`direction_shares`.
    exponent : {"tight", "paper"}, default="tight"
        See :func:`direction_exponent`.
    beta : float, default=0.1
        Failure probability used by the adaptive allocation.

    Returns
    -------
    release : Release
        ``Theta diag(lambda) Theta.T`` (plus ``s (I - Theta Theta.T)`` with
        ``s`` the mean of the other eigenvalues when ``k < d``); the
        attributes hold the directions, eigenvalues and shares.
    """
    d = second_moment.shape[0]
    k = d if n_components is None else int(n_components)
    n_sampled = d - 1 if k == d else k
    shares = {"eigenvalues": EIGENVALUE_SHARE, "eigenvectors": 1 - EIGENVALUE_SHARE}
    if n_sampled == 0:
        shares = {"eigenvalues": 1.0}
    split = split_budget(budget, shares)

    # Eigenvalues: the sorted vector (or its top k and the sum of the rest).
    values = symmetric_eigvalsh(second_moment)[::-1]
    statistic = values if k == d else np.append(values[:k], values[k:].sum())
    l2, l1 = eigenvalue_sensitivities(radius, n_samples)
    value_noise = calibrate_additive(
        split["eigenvalues"], l2_sensitivity=l2, l1_sensitivity=l1
    )
    noisy = value_noise.add(statistic, rng)
    bound = radius**2
    top, tail = _paired_values(noisy, k, bound)
    tail = float(tail) if k < d else 0.0

    step_shares, scales = _direction_scales(
        split,
        top[:n_sampled],
        value_noise=value_noise,
        n_features=d,
        n_samples=n_samples,
        radius=radius,
        allocation=allocation,
        exponent=exponent,
        beta=beta,
    )
    # The score is u^T (Y^T Y) u = n u^T second_moment u.
    # With k = d the last direction (the only one when d = 1) is free.
    directions = sample_eigenvectors(rng, second_moment, scales, complete=k == d)
    raw = (directions * top) @ directions.T
    residual = tail / (d - k) if k < d else 0.0
    if k < d:
        raw += residual * (np.eye(d) - directions @ directions.T)
    spectral = k == d and d >= SPECTRAL_FROM  # its spectrum: the sampled basis
    return Release(
        raw=(raw + raw.T) / 2.0,
        spectrum=Spectrum(top[::-1], directions[:, ::-1]) if spectral else None,
        radius=radius,
        noise_std=value_noise.std,
        split=split,
        simulate=partial(
            eigen_sampling_release,
            n_samples=n_samples,
            radius=radius,
            budget=budget,
            n_components=n_components,
            allocation=allocation,
            exponent=exponent,
            beta=beta,
        ),
        value_noise=value_noise,
        sampled=SampledLaw(value_noise, np.asarray(scales, dtype=float), k, d, bound),
        # Released eigenvalues are noisy draws: on data without signal their
        # maximum is about sqrt(2 log(2d)) standard deviations.
        noise_level=value_noise.std * math.sqrt(2.0 * math.log(2.0 * d)),
        attributes={
            "components_": directions.T,
            "eigenvalues_": top,
            "residual_variance_": residual,
            "eigenvector_shares_": np.asarray(step_shares, dtype=float),
        },
    )


@fill_doc
class EigenSamplingCovariance(BasePrivateCovariance):
    """Private covariance by iterative eigenvector sampling (Amin et al., 2019).

    Releases the eigenvalues of the (clipped) empirical second moment with
    additive noise, then samples its eigenvectors one at a time by the
    exponential mechanism on the unit sphere of the orthogonal complement of
    those already drawn [1]_; each draw is an exact sample of a Bingham law
    (rejection from an angular central Gaussian envelope, [2]_). With
    ``delta=0`` the eigenvalues get Laplace noise and the fit is pure
    ``epsilon``-DP; with ``delta > 0`` (or ``rho`` set) they get Gaussian noise
    and the fit is rho-zCDP, hence (``epsilon``, ``delta``)-DP [3]_.
    Guarantees are with respect to replacing one row, given that rows are
    clipped to ``data_norm_``.

    Its error adapts to the spectrum: directions of large eigenvalues are
    found accurately even when the small ones are drowned in noise. It suits
    low-dimensional data and strongly structured spectra, and it gives
    :class:`~dpcov.decomposition.PCA` a mode that spends the budget on the top
    ``n_components`` directions only.

    Read more in the :ref:`User Guide <eigen_sampling>`.

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
    n_components : int, default=None
        Number ``k`` of eigenvectors to sample; ``None`` samples all of them.
        With ``k < n_features`` the other eigenvalues are released as their
        sum, and ``covariance_`` is the top-``k`` part plus their mean times
        the projection onto the complement (the probabilistic-PCA form).
    allocation : {{"adaptive", "uniform"}}, default="adaptive"
        Split of the eigenvector budget between the sampled directions:
        equal, or larger for larger released eigenvalues (the rule of Amin et
        al., ``epsilon_i`` proportional to ``sqrt(lambda_i + tau)``; under
        zCDP the same error bound is minimised by ``rho_i`` proportional to
        ``(lambda_i + tau)**(2/3)``). The split is a function of the private
        eigenvalues, so it costs nothing.
    exponent : {{"tight", "paper"}}, default="tight"
        Scale of the exponential mechanism. "tight" uses the proved
        sensitivity ``R**2`` of the score (``exp(epsilon_i q / (2 R**2))``) and,
        under zCDP, the bounded-range conversion ``epsilon_i = sqrt(8 rho_i)``.
        "paper" reproduces Amin et al. (2019), Algorithm 1
        (``exp(epsilon_i q / (4 R**2))``), and Dong, Liang and Yi (2022),
        Appendix A (``epsilon_i = sqrt(2 rho_i)``); it is private too, with
        more noise than it needs. Use it to reproduce the papers' figures;
        dpcov defaults to the proved tight scale.
    beta : float, default=0.1
        Failure probability of the eigenvalue-noise bound ``tau`` used by the
        adaptive allocation. Accuracy only.

    Attributes
    ----------
    {covariance_attributes}
    components_ : ndarray of shape (n_components, n_features)
        The sampled directions (orthonormal rows), in the order drawn, i.e. by
        decreasing released eigenvalue. Signs are arbitrary. With
        ``bounds``, this and the next two attributes are in the box's unit
        coordinates (``covariance_`` is in the original units).
    eigenvalues_ : ndarray of shape (n_components,)
        Released eigenvalues paired with ``components_`` (noisy, sorted,
        clipped to ``[0, R**2]``), before the projection and floor.
    residual_variance_ : float
        Mean of the other eigenvalues (released as their sum); 0 when every
        eigenvector is sampled.
    eigenvector_shares_ : ndarray of shape (n_sampled,)
        Fraction of the eigenvector budget each sampled direction got
        (``n_features - 1`` directions when all are requested: the last is
        free).
    n_components_ : int
        Number of directions.

    See Also
    --------
    sklearn.covariance.EmpiricalCovariance : The non-private estimator.
    SeparateCovariance : Eigenvectors from a noisy matrix instead.
    dpcov.decomposition.PCA : Private PCA on any private covariance.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public (with ``groups``, read persons for rows; with
    ``neighbours="add_remove"``, ``n`` is the released count).
    With rows of norm at most ``R`` and the mechanism's budget ``B``:

    - eigenvalues, ``B/2``: L2 sensitivity ``sqrt(2) R**2 / n`` (Dong, Liang
      and Yi 2022, Lemma 8), Gaussian standard deviation
      ``sqrt(2) R**2 / (n sqrt(rho))``; under pure DP, L1 sensitivity
      ``2 R**2 / n`` (Lemma 12), Laplace scale ``4 R**2 / (n epsilon)``;
    - eigenvectors, ``B/2``, split between the sampled directions: the score
      ``u^T Y^T Y u`` has sensitivity ``R**2`` (each row adds
      ``(u^T y)**2 in [0, R**2]``), so sampling with density proportional to
      ``exp(epsilon_i u^T Y^T Y u / (2 R**2))`` is ``epsilon_i``-DP
      (McSherry-Talwar) and ``epsilon_i**2 / 8``-zCDP (bounded range, [4]_).
      Amin et al. (2019), Algorithm 1, state sensitivity 2 and sample
      ``exp(epsilon_i q / 4)``: half the exponent needed
      (``exponent="paper"``).

    The steps compose adaptively (each step's complement depends only on
    earlier outputs). The private radius and mean, when requested, take
    ``1/8`` of the whole budget each before the mechanism.

    Cost: ``O(n d**2)`` for the Gram matrix and ``O(d**4)`` for the sampling
    (one ``O(q**3)`` eigendecomposition per step, and about ``sqrt(e q / 2)``
    proposals of ``O(q)`` each).

    References
    ----------
    .. [1] Amin, K., Dick, T., Kulesza, A., Munoz Medina, A. and
       Vassilvitskii, S. "Differentially Private Covariance Estimation".
       NeurIPS 2019, Algorithm 1. https://papers.nips.cc/paper/9567.
    .. [2] Kent, J. T., Ganeiber, A. M. and Mardia, K. V. "A New Unified
       Approach for the Simulation of a Wide Class of Directional
       Distributions". Journal of Computational and Graphical Statistics
       27(2), 2018.
    .. [3] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022, Appendix A.
       https://arxiv.org/abs/2205.14324.
    .. [4] Cesar, M. and Rogers, R. "Bounding, Concentrating, and Truncating:
       Unifying Privacy Loss Composition for Data Analytics". ALT 2021.
       https://arxiv.org/abs/2004.07223.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import EigenSamplingCovariance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) * [1.0, 0.5, 0.1]
    >>> X /= np.linalg.norm(X, axis=1).max()
    >>> est = EigenSamplingCovariance(epsilon=1.0, delta=0.0, data_norm=1.0,
    ...                               assume_centered=True, random_state=0).fit(X)
    >>> est.guarantee_
    PureDP(epsilon=1.0)
    >>> est.components_.shape
    (3, 3)
    """

    _parameter_constraints: dict = {
        **BasePrivateCovariance._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "allocation": [StrOptions({"adaptive", "uniform"})],
        "exponent": [StrOptions({"tight", "paper"})],
        "beta": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        data_norm=None,
        bounds=None,
        max_rows_per_group=None,
        neighbours="replace",
        assume_centered=False,
        projection="clamp",
        eigenvalue_floor=0.0,
        shrinkage="auto",
        store_precision=True,
        store_raw=False,
        accountant=None,
        random_state=None,
        n_components=None,
        allocation="adaptive",
        exponent="tight",
        beta=0.1,
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            rho=rho,
            data_norm=data_norm,
            bounds=bounds,
            max_rows_per_group=max_rows_per_group,
            neighbours=neighbours,
            assume_centered=assume_centered,
            projection=projection,
            eigenvalue_floor=eigenvalue_floor,
            shrinkage=shrinkage,
            store_precision=store_precision,
            store_raw=store_raw,
            accountant=accountant,
            random_state=random_state,
        )
        self.n_components = n_components
        self.allocation = allocation
        self.exponent = exponent
        self.beta = beta

    def _check_public(self, n_samples, n_features):
        if self.n_components is not None and self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} must be at most "
                f"n_features={n_features}."
            )

    def _mechanism(self, second_moment, *, n_samples, radius, budget, rng):
        release = eigen_sampling_release(
            second_moment,
            n_samples=n_samples,
            radius=radius,
            budget=budget,
            rng=rng,
            n_components=self.n_components,
            allocation=self.allocation,
            exponent=self.exponent,
            beta=self.beta,
        )
        release.attributes["n_components_"] = release.attributes["components_"].shape[0]
        return release
