"""Pure-DP covariance by nuclear-norm K-norm noise (d'Orsi and Novikov, 2025)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from functools import partial
from numbers import Integral

import numpy as np

from ..accounting import PureDP, split_budget
from ..exceptions import ApproximateSamplerWarning
from ..mechanisms import calibrate_additive, project_feasible, sample_nuclear_laplace
from ..mechanisms._nuclear import EXACT_MAX_DIM, default_sweeps
from ..mechanisms._sensitivity import (
    rank_one_monotone_sensitivity,
    rank_one_nuclear_distance,
)
from ..utils._docstrings import fill_doc
from ..utils._sklearn_compat import Interval
from ..utils._warnings import warn
from ._base import BasePrivateCovariance, Release

#: Share of the budget spent on the private trace when ``project=True``.
TRACE_SHARE = 0.5

# E||s||^2 is about 1.7 / d for the normalised singular-value profile
# (d E||s||^2 = 3/2 at d = 2 in closed form; 1.63-1.69 for d = 3 to 100 in
# dpcov's simulations of the exact and Gibbs samplers).
_PROFILE_SQUARED_NORM = 1.7


def nuclear_rate(epsilon, *, n_samples, radius):
    """Rate ``kappa`` of the nuclear-Laplace noise for a second moment.

    Replacing a row ``y`` by ``y'`` changes ``Y^T Y / n`` by
    ``(y y^T - y' y'^T) / n``, of nuclear norm at most ``2 R**2 / n`` (a
    difference of two rank-one PSD matrices of trace at most ``R**2``; tight
    for orthogonal rows). The K-norm mechanism with density proportional to
    ``exp(-kappa ||W||_*)`` is epsilon-DP for ``kappa = epsilon n / (2 R**2)``.

    Parameters
    ----------
    epsilon : float
        Pure-DP budget.
    n_samples : int
        ``n``.
    radius : float
        Row-norm bound ``R``.

    Returns
    -------
    kappa : float
        ``epsilon n / (2 R**2)``.
    """
    return epsilon * n_samples / rank_one_nuclear_distance(radius**2)


def nuclear_release(
    second_moment,
    *,
    n_samples,
    radius,
    budget,
    rng,
    project=False,
    exact_max_dim=EXACT_MAX_DIM,
    n_sweeps=None,
):
    """Nuclear-Laplace mechanism (and its nuclear-ball projection).

    Parameters
    ----------
    second_moment : ndarray of shape (d, d)
        ``Y.T @ Y / n`` of rows of norm at most ``radius``.
    n_samples : int
        ``n``.
    radius : float
        Row-norm bound ``R``.
    budget : PureDP or ZCDP
        Budget of this release; a zCDP budget ``rho`` runs the (pure)
        mechanism at ``epsilon = sqrt(2 rho)``, which is ``rho``-zCDP.
    rng : numpy.random.Generator
        Source of randomness.
    project : bool, default=False
        Algorithm 2: half of the budget releases the trace (Laplace, L1
        sensitivity ``R**2 / n``), clipped to ``[0, R**2]``; the symmetrised
        noisy matrix is projected onto ``{S >= 0, tr S <= t}``.
    exact_max_dim : int, default=8
        Largest ``d`` sampled exactly.
    n_sweeps : int, default=None
        Gibbs sweeps beyond ``exact_max_dim``.

    Returns
    -------
    release : Release
        The symmetrised noisy matrix (projected when ``project``).
    """
    d = second_moment.shape[0]
    shares = (
        {"trace": TRACE_SHARE, "noise": 1 - TRACE_SHARE} if project else {"noise": 1.0}
    )
    split = split_budget(budget, shares)
    epsilon = split["noise"].pure_epsilon()
    kappa = nuclear_rate(epsilon, n_samples=n_samples, radius=radius)
    noise, exact = sample_nuclear_laplace(
        rng, d, kappa, exact_max_dim=exact_max_dim, n_sweeps=n_sweeps
    )
    # sym(Sigma + W) = Sigma + (W + W^T)/2: an orthogonal projection onto a
    # subspace containing Sigma (post-processing; no Schatten error grows).
    raw = second_moment + (noise + noise.T) / 2.0
    attributes = {"exact_sampler_": exact, "noise_rate_": kappa}
    if project:
        # The trace (1/n) sum |y|^2: sensitivity R^2/n.
        unit = rank_one_monotone_sensitivity(radius**2, n_samples)
        trace_noise = calibrate_additive(
            PureDP(split["trace"].pure_epsilon()),
            l2_sensitivity=unit,
            l1_sensitivity=unit,
        )
        trace = float(trace_noise.add(np.trace(second_moment), rng))
        trace_bound = min(max(trace, 0.0), radius**2)
        raw = project_feasible(raw, trace_bound)
        attributes["trace_bound_"] = trace_bound
    if math.isinf(kappa):
        noise_std = 0.0
    else:
        # Per-entry s.d. of W, E||W||_F^2 / d^2 = (d^2 + 1) E||s||^2 / kappa^2,
        # halved in variance off the diagonal by the symmetrisation.
        noise_std = math.sqrt(_PROFILE_SQUARED_NORM * (d * d + 1) / (2 * d)) / kappa
    return Release(
        raw=raw,
        radius=radius,
        noise_std=noise_std,
        split=split,
        attributes=attributes,
        simulate=partial(
            nuclear_release,
            n_samples=n_samples,
            radius=radius,
            budget=budget,
            project=project,
            exact_max_dim=exact_max_dim,
            n_sweeps=n_sweeps,
        ),
        # Without the trace projection the noise does not depend on the input.
        additive=not project,
    )


@fill_doc
class NuclearLaplaceCovariance(BasePrivateCovariance):
    """Pure-DP covariance by the nuclear-norm mechanism (d'Orsi and Novikov, 2025).

    Releases the (clipped) empirical second moment plus a noise matrix ``W``
    with density proportional to ``exp(-kappa ||W||_*)`` on real ``d x d``
    matrices, symmetrised [1]_: the K-norm mechanism of Hardt and Talwar for
    the nuclear norm, in which the second moment has sensitivity
    ``2 R**2 / n``. Its error is ``O(d**(1 + 1/p) R**2 / (epsilon n))`` in
    every Schatten-p norm (spectral ``d / (epsilon n)``, Frobenius
    ``d**1.5 / (epsilon n)``), against LapCov's ``d**2 / (epsilon n)`` in
    Frobenius norm. With ``project=True`` (Algorithm 2) half of the budget
    releases the trace and the noisy matrix is projected onto the PSD matrices
    of at most that trace, which helps when the trace is small (few rows).

    The guarantee is pure ``epsilon``-DP with ``delta=0`` (the default),
    with respect to replacing one row, given rows clipped to ``data_norm_``:
    exactly when the noise profile is sampled exactly (``n_features <=
    exact_max_dim``), and up to the total-variation error of a Gibbs chain
    otherwise (a warning says so; ``exact_sampler_`` records it). With
    ``delta > 0`` or ``rho`` set, the mechanism runs at the pure
    ``epsilon' = sqrt(2 rho)`` that is rho-zCDP, which is usually smaller than
    ``epsilon``: use ``delta=0``.

    Read more in the :ref:`User Guide <nuclear>`.

    Parameters
    ----------
    {epsilon}
    delta : float, default=0.0
        The mechanism is pure DP; keep 0. A positive ``delta`` converts
        (``epsilon``, ``delta``) to zCDP and runs the mechanism at the pure
        epsilon that rho allows (see above).
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
    project : bool, default=False
        Algorithm 2 of [1]_: spend half of the budget on a private trace
        ``t`` (Laplace, sensitivity ``R**2 / n``, clipped to ``[0, R**2]``)
        and project the symmetrised noisy matrix onto
        ``{{S >= 0, tr S <= t}}`` (a convex set containing the covariance
        when ``t >= tr``). The eigenvalue floor is applied after this
        projection and can raise the trace above ``t``, by at most
        ``n_features`` times the floor: set ``eigenvalue_floor=0`` for the
        projection of [1]_ alone.
    exact_max_dim : int, default=8
        Largest ``n_features`` for which the normalised singular-value profile
        of the noise is sampled exactly (rejection; about 750 proposals at
        d = 8, growing like ``exp(d**2)``). Beyond it a Gibbs sampler is used
        and a warning is issued.
    n_sweeps : int, default=None
        Gibbs sweeps per release; ``None`` uses ``max(200, 20 d)``, at least
        14 times the integrated autocorrelation times measured up to d = 100.

    Attributes
    ----------
    {covariance_attributes}
    exact_sampler_ : bool
        Whether the noise was sampled exactly (else by Gibbs sampling). When
        False, ``guarantee_`` states the guarantee of the exact mechanism,
        which this release meets only up to the chain's total-variation
        error.
    noise_rate_ : float
        The rate ``kappa = epsilon n / (2 R**2)`` of the noise. ``R`` is the
        bound on the processed rows: ``data_norm`` when it is given and
        ``assume_centered=True``; otherwise it involves the private radius
        ``data_norm_`` or the norm of the private mean ``location_``, so
        ``noise_rate_`` is a function of public values and of those releases
        (post-processing), not a public value.
    trace_bound_ : float
        The private trace bound ``t`` (only with ``project=True``).

    See Also
    --------
    GaussianCovariance : LapCov, Laplace noise on every entry.
    SeparateCovariance : SeparateLapCov.

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one); ``n_samples`` is
    public (with ``groups``, read persons for rows; with
    ``neighbours="add_remove"``, ``n`` is the released count).
    ``W`` factorises as ``R U diag(s) V^T`` with ``R = ||W||_*``
    Gamma(``d**2``, ``1/kappa``), ``U, V`` Haar and the profile ``s`` of
    density ``prod_{{i<j}} |s_i**2 - s_j**2|`` on the simplex (d'Orsi and
    Novikov 2025, Lemma 4.3); see :func:`dpcov.mechanisms.sample_nuclear_laplace`.
    The density ratio on neighbours is
    ``exp(kappa (||Y - S'||_* - ||Y - S||_*)) <= exp(kappa ||S - S'||_*)
    <= exp(epsilon)``.

    References
    ----------
    .. [1] d'Orsi, T. and Novikov, G. "On Purely Private Covariance
       Estimation". arXiv:2510.26717, Algorithms 1 and 2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.covariance import NuclearLaplaceCovariance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)) * [1.0, 0.5, 0.1]
    >>> X /= np.linalg.norm(X, axis=1).max()
    >>> est = NuclearLaplaceCovariance(epsilon=1.0, data_norm=1.0,
    ...                                assume_centered=True, random_state=0).fit(X)
    >>> est.guarantee_, est.exact_sampler_
    (PureDP(epsilon=1.0), True)
    """

    _parameter_constraints: dict = {
        **BasePrivateCovariance._parameter_constraints,
        "project": ["boolean"],
        "exact_max_dim": [Interval(Integral, 1, None, closed="left")],
        "n_sweeps": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
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
        project=False,
        exact_max_dim=EXACT_MAX_DIM,
        n_sweeps=None,
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
        self.project = project
        self.exact_max_dim = exact_max_dim
        self.n_sweeps = n_sweeps

    def _mechanism(self, second_moment, *, n_samples, radius, budget, rng):
        d = second_moment.shape[0]
        if d > self.exact_max_dim:
            sweeps = default_sweeps(d) if self.n_sweeps is None else self.n_sweeps
            warn(
                f"n_features={d} > exact_max_dim={self.exact_max_dim}: the noise "
                f"profile is sampled by a Gibbs chain ({sweeps} sweeps), so the "
                "release is pure DP only up to the chain's total-variation error.",
                ApproximateSamplerWarning,
            )
        return nuclear_release(
            second_moment,
            n_samples=n_samples,
            radius=radius,
            budget=budget,
            rng=rng,
            project=self.project,
            exact_max_dim=self.exact_max_dim,
            n_sweeps=self.n_sweeps,
        )
