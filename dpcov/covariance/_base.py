"""What every private covariance estimator shares: geometry, mean, post-processing.

A private covariance fit runs the same steps whatever the mechanism:

1. validate the data and the parameters (privacy parameters unconditionally);
2. plan on public values (:meth:`_plan`, through the geometry step
   :func:`~dpcov.utils._geometry.plan_geometry`: the geometry, the radius
   mechanism and the budget split): 1/8 for a private radius when
   ``data_norm`` and ``bounds`` are None (sparse vector; 3/16 for the
   exponential mechanism, below the sparse vector's minimum number of rows),
   1/8 for a private mean when ``assume_centered`` is False, the rest for the
   covariance mechanism;
3. resolve the row-norm bound (given, the box's ``sqrt(d)`` in unit
   coordinates with ``bounds``, or the private radius from a pass of norm
   counts) and clip to it (:meth:`_first_pass`, :meth:`_release_radius`);
4. release the private mean and centre about it (the sum and the Gram matrix
   of the clipped rows come from one chunked pass, or one Dask reduction;
   :meth:`_release_mean`);
5. run the mechanism (the subclass's :meth:`_release`) on the processed rows;
6. post-process the noisy matrix (projection and eigenvalue floor;
   :meth:`_postprocess_release`);
7. record the covariance attributes and the privacy spent (:meth:`_record`).
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.covariance import EmpiricalCovariance, log_likelihood
from sklearn.utils.validation import check_is_fitted

from .._config import get_config
from ..accounting import BudgetAccountant, ProfileDP, compose, zcdp_rho
from ..accounting._exact_curve import exact_rho
from ..base import ErrorBarsMixin, PrivateEstimatorMixin, warn_if_noise_dominated
from ..mechanisms import (
    DEFAULT_RADIUS_GRID,
    calibrate_additive,
    project_capped_simplex,
    project_feasible,
    project_l2_ball,
    project_psd,
    project_psd_bounded,
    radius_counts,
)
from ..mechanisms._projection import (
    SPECTRAL_FROM,
    LazySpectrum,
    Spectrum,
    eigh_with,
    spectrum_of,
    symmetric_eigh,
)
from ..mechanisms._sensitivity import ball_mean_sensitivities
from ..utils._array_api import (
    as_host,
    device_eigh,
    fitted_to_namespace,
    host_view,
    namespace_of,
    to_namespace,
)
from ..utils._error_bars import additive_bars
from ..utils._geometry import (
    Geometry,
    plan_geometry,
    release_radius,
    release_ranges,
)
from ..utils._gram import is_dask_array, kept_row_norms, row_statistics
from ..utils._gram._binned import binned_grams_fit
from ..utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._input_messages import NonFiniteInput
from ..utils._private_count import (
    COUNT_SHARE,
    UNBINDING_COUNT,
    release_count,
    split_count,
)
from ..utils._private_radius import EM_RADIUS_SHARE, RADIUS_SHARE
from ..utils._private_ranges import check_bounds_without_rows, ranges_first_pass
from ..utils._random import spawn_generators
from ..utils._sklearn_compat import (
    Interval,
    Options,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils._threads import small_matrix_blas
from ..utils.validation import unit_box
from ._shrinkage import (
    aligned_noise_energy,
    applied_factor,
    bootstrap_energy,
    evidence_weight,
    factor_from_energies,
    null_energies,
    null_quantile,
    predicted_noise_energy,
    shrinkage_factor,
    signal_share,
    signal_to_noise_from_factor,
    weighted_norm2,
)
from ._spectral_shrinkage import (
    Metric,
    entry_noise_kappa,
    entry_noise_null,
    sampled_kappa,
    spectral_kappa,
    spectral_null,
)

#: Share of the whole budget spent on the private mean when assume_centered is False.
MEAN_SHARE = 0.125


@dataclass
class Release:
    """What a covariance mechanism returns to the estimator.

    Parameters
    ----------
    raw : ndarray of shape (d, d)
        The noisy symmetric second-moment matrix (a private release).
    radius : float
        Norm bound of the rows the mechanism saw (after its own clipping).
    noise_std : float
        Standard deviation of the noise on each eigenvalue or entry (public);
        the "auto" eigenvalue floor.
    split : dict of str to PureDP or ZCDP
        The mechanism's own budget split; composes to its budget.
    noise_level : float or None
        Public scale of the largest eigenvalue the noise alone would give
        (the release on data without signal). None means the default for
        additive symmetric noise with independent upper-triangle entries of
        standard deviation ``noise_std``: ``2 sqrt(d) noise_std``, the edge
        of the semicircle law (an upper bound for small ``d``). A spike
        below about half of it leaves no outlier eigenvalue (the BBP
        transition), so a top eigenvalue below it is indistinguishable from
        noise.
    attributes : dict
        Extra fitted attributes (names ending in ``_``), all private outputs.
    simulate : callable or None
        The mechanism with the release's public parameters:
        ``simulate(second_moment, rng=rng)`` returns a new release. The
        shrinkage and the noise figure rerun it on a public surrogate (see
        :mod:`dpcov.covariance._shrinkage`); None leaves the release as it is.
    value_noise : AdditiveNoise or None
        For a spectral release (noisy eigenvalues paired with noisy
        eigenvectors), the noise on each eigenvalue: the shrinkage's test
        against pure noise then also uses
        :func:`~dpcov.covariance._shrinkage.aligned_noise_energy`.
    additive : bool
        Whether ``raw`` is its input plus noise independent of it (the
        bootstrap then reuses each draw's noise for its draw at truth zero).
    spectrum : Spectrum or None
        The eigendecomposition of ``raw``, when the mechanism has it (a
        spectral release): from :data:`SPECTRAL_FROM` features on, ``raw``
        may then be None, formed only if asked for (:meth:`noisy_matrix`).
    entry_noise : AdditiveNoise or None
        The noise on each upper-triangle entry of the matrix the release
        adds it to (GaussCov's; SeparateCov's matrix whose eigenvectors it
        takes): the closed-form shrinkage's noise model
        (:mod:`dpcov.covariance._spectral_shrinkage`).
    sampled : SampledLaw or None
        For sampled eigenvectors (Amin et al. 2019), the public law of the
        release: the shrinkage then takes its energies in closed form at
        every ``d`` (:func:`~dpcov.covariance._spectral_shrinkage.sampled_kappa`)
        instead of rerunning the sampler.
    """

    raw: np.ndarray
    radius: float
    noise_std: float
    split: dict
    noise_level: float = None
    attributes: dict = field(default_factory=dict)
    simulate: object = None
    value_noise: object = None
    additive: bool = False
    spectrum: Spectrum = None
    entry_noise: object = None
    sampled: object = None

    def default_noise_level(self, n_features):
        """``noise_level``, or its default for additive symmetric noise."""
        if self.noise_level is None:
            return 2.0 * np.sqrt(n_features) * self.noise_std
        return self.noise_level

    def noisy_matrix(self):
        """The noisy matrix: ``raw``, or formed from ``spectrum``."""
        return self.raw if self.raw is not None else self.spectrum.matrix()


@dataclass(frozen=True)
class FitPlan:
    """The public plan of a fit, fixed before any entry of the data is read.

    Every field is a function of public values only: the shape of the input,
    the parameters and the budget (until the private ranges are released
    into ``geometry.box``).

    Parameters
    ----------
    geometry : Geometry
        The geometry step's plan (:func:`~dpcov.utils._geometry.plan_geometry`
        under the ``"unbounded"`` radius policy): the box (``bounds``,
        checked, or the private ranges), the public row-norm bound
        (``data_norm``, or ``sqrt(d)`` in the box's unit coordinates; None
        when the fit finds it privately) and the private radius's mechanism.
    split : dict of str to PureDP or ZCDP
        The budget of each step: ``"count"`` under add/remove neighbours,
        ``"bounds"``, ``"radius"`` and ``"mean"`` when needed, then
        ``"covariance"`` (the mechanism's).
    released_count : int or None
        Under add/remove neighbours, the released number of units, which the
        plan was made with (``n_samples``).
    """

    geometry: Geometry
    split: dict
    released_count: int = None

    @property
    def n_samples(self):
        """Number of units: public under replace-one neighbours, else released."""
        return self.geometry.n_samples

    @property
    def n_features(self):
        """Dimension ``d``."""
        return self.geometry.n_features

    @property
    def box(self):
        """The box of the rows, or None."""
        return self.geometry.box

    @property
    def data_norm(self):
        """The public row-norm bound, or None (the private radius)."""
        return self.geometry.data_norm

    @property
    def find_radius(self):
        """Whether the fit finds its row-norm bound privately."""
        return self.geometry.find_radius


@dataclass(frozen=True)
class Estimate:
    """The post-processed release, in the units of the input.

    Parameters
    ----------
    location : ndarray of shape (n_features,)
        The private mean (zeros with ``assume_centered``).
    covariance : ndarray of shape (n_features, n_features)
        The projected covariance.
    score_covariance : ndarray of shape (n_features, n_features)
        The covariance with its eigenvalues raised to the noise level, for
        ``score``.
    raw : ndarray of shape (n_features, n_features)
        The mechanism's noisy matrix, before the projection.
    noise_level : float
        Public scale of the largest eigenvalue the noise alone would give.
    signal_to_noise : float
        Estimated norm of the signal over that of the noise, in the units of
        the input (see ``signal_to_noise_from_factor`` in ``_shrinkage``).
    shrinkage : float
        The shrinkage intensity applied (0: none, 1: the zero matrix).
    unshrunk : ndarray of shape (n_features, n_features)
        The projected release before the shrinkage (its eigenvectors are
        ``covariance``'s; PCA reads its axes from it, since the zero matrix
        has none). None with ``spectrum``.
    spectrum : Spectrum or None
        From :data:`SPECTRAL_FROM` features on, without a box: the
        eigendecomposition of ``covariance`` (then ``score_covariance`` and
        ``unshrunk`` are None: they are ``spectrum`` with the values
        ``max(values, score_floor)`` and ``unshrunk_values``).
    unshrunk_values : ndarray of shape (n_features,) or None
        With ``spectrum``: the eigenvalues before the shrinkage.
    score_floor : float or None
        With ``spectrum``: the score model's eigenvalue floor.
    noise_energy : float
        The predicted mean squared error of the release kept as released,
        ``E ||P - C||_W**2`` in the units of the input (0 without noise; NaN
        where no figure is computed).
    """

    location: np.ndarray
    covariance: np.ndarray
    score_covariance: np.ndarray
    raw: np.ndarray
    noise_level: float
    signal_to_noise: float
    shrinkage: float
    unshrunk: np.ndarray
    spectrum: Spectrum = None
    unshrunk_values: np.ndarray = None
    score_floor: float = None
    noise_energy: float = math.nan


def _unprocessed(raw):
    """The identity: the test's estimates of pure noise before post-processing."""
    return raw


def _bootstrap(release, postprocess, covariance, weights, mean_noise):
    """:func:`~dpcov.covariance._shrinkage.bootstrap_energy` of a release."""
    return bootstrap_energy(
        release.simulate,
        postprocess,
        covariance,
        weights,
        mean_noise=mean_noise,
        radius=release.radius,
        additive=release.additive,
    )


def _from_unit_box(estimate, geometry):
    """The estimate of rows in the box's unit coordinates, in original units."""
    if estimate.spectrum is not None:
        # D S D has other eigenvectors: the matrices are formed in unit
        # coordinates, and the spectrum is not carried over.
        spectrum = estimate.spectrum
        estimate = replace(
            estimate,
            score_covariance=spectrum.matrix(
                np.maximum(spectrum.values, estimate.score_floor)
            ),
            unshrunk=spectrum.matrix(estimate.unshrunk_values),
            spectrum=None,
            unshrunk_values=None,
            score_floor=None,
        )
    # Back to the original units (post-processing).
    return replace(
        estimate,
        location=geometry.from_unit(estimate.location),
        covariance=geometry.from_unit_scatter(estimate.covariance),
        score_covariance=geometry.from_unit_scatter(estimate.score_covariance),
        raw=None if estimate.raw is None else geometry.from_unit_scatter(estimate.raw),
        unshrunk=geometry.from_unit_scatter(estimate.unshrunk),
    )


def _stored_raw(release, spectrum):
    raw = release.noisy_matrix()
    return (
        raw.copy() if isinstance(spectrum, LazySpectrum) and raw is release.raw else raw
    )


#: The fitted matrices a spectral fit may form at their first read.
_DEFERRED_MATRICES = ("covariance_", "precision_")

#: What a covariance fit (and PCA's, on it) accepts: Dask arrays, CSR rows,
#: other namespaces' arrays; entries checked in its first pass.
FIT_INPUTS = dict(
    accept_dask=True, accept_sparse="csr", defer_finite=True, accept_array_api=True
)

#: The fitted arrays that an array of another namespace gets back in it.
_FITTED_ARRAYS = (
    "location_",
    "covariance_",
    "precision_",
    "raw_covariance_",
    "components_",
    "eigenvalues_",
    "eigenvector_shares_",
    # Private, for score and PCA: in the namespace too, as scikit-learn's
    # array API checks ask of every array a fit keeps.
    "_score_covariance",
    "_unshrunk_covariance",
)


def device_algebra(X):
    """A block in which a fit's ``d x d`` eigendecompositions run on X's device.

    Rows on another device (a GPU) whose namespace has float64: the
    eigendecompositions of the release's post-processing (projections, the
    shrinkage's bootstrap, the score model, PCA's axes) run there, through
    :func:`dpcov.mechanisms._projection.eigh_with`; their input and output
    cross once each (``O(d**2)`` numbers against the ``d**3`` flops). The
    noise is drawn on the host all the same. Anything else (NumPy, host
    memory, a float32-only device): the host's, unchanged.
    """
    namespace = namespace_of(X)
    if namespace is None or host_view(X) is not None:
        return nullcontext()
    eigh = device_eigh(*namespace)
    return nullcontext() if eigh is None else eigh_with(eigh)


@dataclass(frozen=True)
class CovarianceNoise:
    """The public laws of a covariance fit's additive releases (its error bars).

    Parameters
    ----------
    mean_noise : AdditiveNoise or None
        The private mean's noise (None with ``assume_centered``).
    data_norm : float
        The norm bound the mean was projected into.
    location : ndarray of shape (d,)
        The released noisy mean before its projection, in the mechanism's
        coordinates (zeros with ``assume_centered``).
    entry_noise : AdditiveNoise or None
        The noise of each entry of the raw matrix, when the release adds it
        to the second moment (GaussCov); None otherwise.
    center, half : ndarray of shape (d,) or None
        The box's centre and half-widths (None without a box).
    counted : bool
        Whether the sums were divided by a released count (add/remove).
    """

    mean_noise: object
    data_norm: float
    location: np.ndarray
    entry_noise: object
    center: np.ndarray = None
    half: np.ndarray = None
    counted: bool = False

    def bars(self, alpha, *, raw=None):
        """Intervals of ``location_`` and (given) ``raw_covariance_``.

        The location is the mean of the clipped rows plus noise, then
        projected into the norm ball (and the unit cube with a box): exact
        intervals from the noisy mean before the projection (they cover the
        mean, not the projected release). Each raw entry is the second
        moment of the centred, clipped rows plus noise of scale ``h_i h_j``
        (1 without a box): exact intervals.
        """
        bars = {}
        if self.mean_noise is not None:
            # The exact mean lies in the r-ball, so each coordinate in [-r,
            # r] (and in the cube with a box): the noisy mean's exact
            # interval, clipped there (under add/remove the sums are over a
            # released count, which may leave both: not clipped).
            bound = min(self.data_norm, 1.0 if self.half is not None else np.inf)
            limits = None if self.counted else (-bound, bound)
            low, high = additive_bars(
                self.location, self.mean_noise, alpha, limits=limits
            )
            if self.half is not None:
                low, high = (self.center + self.half * end for end in (low, high))
            bars["location_"] = (low, high)
        if raw is not None and self.entry_noise is not None:
            scale = 1.0 if self.half is None else np.outer(self.half, self.half)
            bars["raw_covariance_"] = additive_bars(
                raw, self.entry_noise, alpha, scale=scale
            )
        return bars


class BasePrivateCovariance(ErrorBarsMixin, PrivateEstimatorMixin, EmpiricalCovariance):
    """Base class of dpcov's private covariance estimators (not for direct use).

    Subclasses set ``_mechanism`` (a function of the exact second moment, like
    :func:`~dpcov.covariance._gauss.gauss_release`) or override
    :meth:`_release`.
    """

    _default_score = "frobenius"
    #: Whether the covariance release is Gaussian noise on its own (read by
    #: _gaussian_only; GaussCov and SeparateCov).
    _gaussian_release = False

    _parameter_constraints: dict = {
        **EmpiricalCovariance._parameter_constraints,
        # epsilon = inf (no noise) is allowed for testing against sklearn.
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "rho": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {np.inf}),
            None,
        ],
        # Squared norms must stay in float64's normal range.
        "data_norm": [Interval(Real, 1e-150, 1e150, closed="both"), None],
        # A pair (lower, upper); its entries are checked in fit (check_bounds).
        "bounds": ["array-like", StrOptions({"private"}), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "projection": [StrOptions({"clamp", "feasible", "psd"})],
        "eigenvalue_floor": [
            StrOptions({"auto"}),
            Interval(Real, 0, None, closed="left"),
        ],
        "shrinkage": [StrOptions({"auto"}), None],
        "store_raw": ["boolean"],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
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
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.data_norm = data_norm
        self.bounds = bounds
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.assume_centered = assume_centered
        self.projection = projection
        self.eigenvalue_floor = eigenvalue_floor
        self.shrinkage = shrinkage
        self.store_precision = store_precision
        self.store_raw = store_raw
        self.accountant = accountant
        self.random_state = random_state

    def _check_public(self, n_samples, n_features):
        """Subclasses' checks on public values, before the fit is recorded."""

    def _clipped_sums(self):
        """Sums over the clipped rows ``clip(x, data_norm)`` :meth:`_release` uses.

        The base class's mechanisms need the Gram matrix and, to centre it,
        the sum; the fit computes both in the pass that also releases the mean.
        """
        return {"gram": True, "total": not self.assume_centered}

    def _release(self, X, *, box, clip_norm, center, radius, budget, rng, sums):
        """Run the covariance mechanism on the processed rows of ``X``.

        The rows the mechanism must use are ``clip(box(x), clip_norm) -
        center`` (no box step when ``box`` is None, no centring when
        ``center`` is None); they have norm at most ``radius``.

        Parameters
        ----------
        X : ndarray or dask.array.Array of shape (n_samples, n_features)
            Validated input rows.
        box : tuple of (lower, upper) or None
            Public per-feature bounds: each feature is clipped to its range and
            the box mapped onto ``[-1, 1]^d`` first (see
            :func:`~dpcov.utils._gram.row_statistics`).
        clip_norm : float
            Row-norm bound applied before centring.
        center : ndarray of shape (n_features,) or None
            Private mean to subtract.
        radius : float
            Norm bound of the processed rows.
        budget : PureDP or ZCDP
            The mechanism's budget.
        rng : numpy.random.Generator
            Source of randomness.
        sums : RowStatistics
            The sums :meth:`_clipped_sums` asked for, over
            ``clip(box(x), clip_norm)``.

        Returns
        -------
        release : Release
            The noisy matrix and what the estimator records about it.
        """
        gram = sums.gram
        if center is not None:
            # sum (c - m)(c - m)^T = sum c c^T - s m^T - m s^T + n m m^T over
            # the clipped rows c with sum s: the centred Gram matrix from the
            # same pass. The rounding error, about 1e-16 n R^2, is far below
            # the noise the mechanisms add to n times the second moment.
            cross = np.outer(sums.total, center)
            gram = gram - cross - cross.T + sums.n_rows * np.outer(center, center)
        n_samples = X.shape[0]
        return self._mechanism(
            gram / n_samples, n_samples=n_samples, radius=radius, budget=budget, rng=rng
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the private covariance estimate to X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. Rows are clipped to ``data_norm`` (or the private
            radius); ``X`` itself is not modified. A Dask array is reduced by
            Dask, without loading it; the noise is drawn here, once, and the
            result equals the in-memory fit's for the same ``random_state``
            (up to the order of floating-point sums). A SciPy sparse matrix
            or array (CSR; CSC and the other formats are converted to CSR) is
            never densified as a whole: the Gram matrix and the sums come from
            sparse products, and the fit equals the dense fit's for the same
            ``random_state`` (up to rounding).
        y : Ignored
            Not used, present for API consistency by convention.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set: the
            privacy unit is then the person (see ``max_rows_per_group``).
            Group labels, row counts and the number of persons appear in no
            message and no attribute. In memory only (a NumPy array or a
            SciPy sparse matrix).

        Returns
        -------
        self : object
            Returns the instance itself.
        """
        # Declarative validation is skipped under skip_parameter_validation=True;
        # a private estimator validates its parameters regardless. The budget
        # is checked against the accountant before the data are read.
        check_params_always(self)
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        budget = self._check_budget()
        # The entries (NaN, infinity) are checked in the first pass, chunk by
        # chunk as it reads them, which comes before the fit is recorded and
        # before anything private is drawn: no read of its own.
        X = validate_rows(self, X, **FIT_INPUTS)
        lazy = is_dask_array(X)
        if groups is not None:
            check_unit_input(X, groups, name=name)
        n_features = X.shape[1]
        # The d x d linear algebra after the passes (eigendecompositions,
        # projections) runs single-threaded for d <= 1000; the passes keep
        # the BLAS's thread count (see dpcov.utils._threads).
        namespace = namespace_of(X)
        try:
            # (The passes share the rows' norms: the same numbers, read once.)
            kept = kept_row_norms(X, keep=self._reads_raw_norms_again())
            with small_matrix_blas(n_features), device_algebra(X), kept:
                self._fit_rows(X, budget=budget, lazy=lazy, groups=groups)
        except NonFiniteInput as error:
            # Raised outside the except block: nothing chained, and the
            # original's traceback (whose frames hold the rows and their
            # kept norms) is dropped with it.
            failed = error.named(f"{type(self).__name__}.fit")
        else:
            # An array of another namespace: the fitted arrays go back to it.
            if namespace is not None:
                fitted_to_namespace(self, _FITTED_ARRAYS, namespace)
                if self.bounds_ is not None:
                    self.bounds_ = tuple(
                        to_namespace(bound, *namespace) for bound in self.bounds_
                    )
            return self
        raise failed

    def _gaussian_only(self):
        """Whether every part of the fit is a Gaussian mechanism (public).

        The release (GaussCov's or SeparateCov's noise), the mean and, under
        add/remove, the count are; the private radius (a sparse vector or an
        exponential mechanism) and the private ranges are not. So a fit with
        ``data_norm`` or a public box, asked for (epsilon, delta), runs on
        the exact Gaussian curve (see ``privacy_cost``).
        """
        return self._gaussian_release and self._public_norm()

    def _public_norm(self):
        # A norm bound known before the fit: data_norm, or a public box.
        return self.data_norm is not None or (
            self.bounds is not None and not isinstance(self.bounds, str)
        )

    def _release_shares(self):
        """The release's steps as shares of its budget, by kind, or None.

        None (the default): the release is Gaussian noise only or not known
        here. AdaptiveCovariance's mixes Gaussian steps with an exponential
        mechanism (a bounded-range step).
        """
        return None

    def _release_kinds(self):
        # The release's steps as shares of its budget, by kind: Gaussian
        # noise only (GaussCov, SeparateCov), _release_shares's, or None.
        if self._gaussian_release:
            return {"gaussian": [1.0]}
        return self._release_shares()

    def _private_radius(self):
        # Whether the fit finds its row-norm bound privately (no bound given).
        return self.bounds is None and self.data_norm is None

    def _profile_shares(self):
        """The fit's steps as shares of its budget, by kind (public values).

        With a public norm bound or a private radius (not private ranges)
        the plan takes fixed shares: under add/remove the count (Gaussian)
        ``COUNT_SHARE`` first; of the rest, the private radius
        ``EM_RADIUS_SHARE`` (a bounded-range step: the exponential
        mechanism, or the sparse vector, pure DP at that share, whose range
        is twice its epsilon: the same share; see ``even_radius``), the mean
        (Gaussian) ``MEAN_SHARE`` unless ``assume_centered``, and the release
        what they leave, split by :meth:`_release_kinds`.
        ``_check_plan_shares`` checks the plan against them before anything
        is spent. With a private radius, None (the zCDP calibration) where
        the release's Gaussian noise would exceed that calibration's, in
        which the sparse vector takes its smaller share (``RADIUS_SHARE``):
        never more noise than through zCDP.
        """
        release = self._release_kinds()
        if release is None or not (self._public_norm() or self._private_radius()):
            return None
        rest = 1.0
        gaussian = []
        if self.neighbours == "add_remove":
            gaussian.append(COUNT_SHARE)
            rest -= COUNT_SHARE
        mean = 0.0 if self.assume_centered else MEAN_SHARE
        if mean:
            gaussian.append(rest * mean)
        shares = {"gaussian": gaussian, "pure": [], "bounded_range": []}
        left = rest * (1.0 - mean)
        if self._private_radius():
            shares["bounded_range"].append(rest * EM_RADIUS_SHARE)
            left = rest * (1.0 - EM_RADIUS_SHARE - mean)
        for kind, parts in release.items():
            shares[kind] = shares[kind] + [left * part for part in parts]
        before = rest * (1.0 - RADIUS_SHARE - mean)
        if self._private_radius() and not self._no_more_noise(shares, left, before):
            return None
        return shares

    def _no_more_noise(self, shares, left, before):
        # Whether the release's share ``left`` of the composed curve's rho
        # (its steps at ``shares``) is at least its share ``before`` of the
        # zCDP calibration's rho (each of its steps then has no more noise
        # than there); true for asks that do not run on the curve (rho,
        # pure DP, or invalid).
        epsilon, delta = self.epsilon, self.delta
        if self.rho is not None or not (
            isinstance(epsilon, Real) and isinstance(delta, Real)
        ):
            return True
        if not (0 < epsilon < math.inf and 0 < delta < 1):
            return True
        return (
            exact_rho(epsilon, delta, shares) * left
            >= zcdp_rho(epsilon, delta) * before
        )

    def _check_plan_shares(self, split, budget, *, released=False):
        """Stop a fit whose plan is not the one its calibration assumed.

        Before anything is spent: for a fit calibrated on its composed
        privacy loss distribution (``privacy_cost()`` a ProfileDP), the
        plan's steps (``split``, parts of ``budget``) must take the shares
        of :meth:`_profile_shares`, kind by kind, the private radius a
        bounded-range step at its share whichever its mechanism (the sparse
        vector, pure DP, has range twice its epsilon: the same share);
        otherwise a RuntimeError (a bug: the zCDP calibration holds for any
        split, this one not). ``released``: checked again after the count
        (add/remove), before anything else is released.
        """
        if not isinstance(getattr(self, "_fit_cost", None), ProfileDP):
            return
        shares = {"gaussian": [], "pure": [], "bounded_range": []}
        for name, part in split.items():
            share = part.rho / budget.rho
            if name == "covariance":
                for kind, parts in self._release_kinds().items():
                    shares[kind] += [share * p for p in parts]
            elif name in ("count", "mean"):
                shares["gaussian"].append(share)
            elif name == "radius":
                shares["bounded_range"].append(share)
            else:
                shares = None  # a step of another kind (ranges)
                break
        expected = self._profile_shares()
        same = shares is not None and all(
            len(shares[kind]) == len(expected[kind])
            and np.allclose(
                sorted(shares[kind]), sorted(expected[kind]), rtol=1e-12, atol=0
            )
            for kind in shares
        )
        if not same:
            done = "only the count was released" if released else "nothing was spent"
            raise RuntimeError(
                f"{type(self).__name__}: the plan's budget shares differ from "
                f"those its (epsilon, delta) calibration assumed; {done}. "
                "Please report this as a dpcov bug."
            )

    def _reads_raw_norms_again(self):
        """Whether more than one pass of the fit starts from the rows' norms.

        With a private radius: its counts, then the sums at it. (A box
        changes the rows before any norm is taken; a given ``data_norm``
        makes one pass.) Public parameters only.
        """
        return self._private_radius()

    def _fit_rows(self, X, *, budget, lazy, groups=None):
        """The fit, after the validation: plan, read, release, post-process, record.

        Each step is a method a subclass can replace on its own. The noise
        generator is consumed in this order: the private radius (when
        ``data_norm`` and ``bounds`` are None), the mean (unless
        ``assume_centered``), then the covariance mechanism. With ``groups``,
        a generator spawned from it first chooses each person's rows, and
        ``X`` becomes their :class:`~dpcov.utils._gram._units.UnitRows`: every
        step then sees persons where it saw rows (``X.shape[0]`` is the
        number of persons and the sums are over persons).
        """
        rng = self._noise_generator(budget)
        if groups is not None:
            (order,) = spawn_generators(rng, 1)
            X = UnitRows.select(
                X, groups, self.max_rows_per_group, order, name=type(self).__name__
            )
        if self.neighbours == "add_remove":
            X, plan, first = self._count_then_plan(X, budget, lazy=lazy, rng=rng)
        else:
            # Plan on public values, then read the data; nothing is drawn
            # before the fit is recorded (the budget spent).
            with persons_in_messages(isinstance(X, UnitRows)):
                plan = self._plan(X.shape, budget)
                self._check_public(plan.n_samples, plan.n_features)
            self._check_plan_shares(plan.split, budget)
            if plan.geometry.ranges is None:
                first = self._first_pass(X, plan, lazy=lazy)
                self._spend_budget(budget)  # every check above: public values
            else:
                # bounds="private": the first pass counts for the ranges (a
                # Dask array's entries are checked there); the ranges are
                # released first, then the fit goes on in their box.
                counts = ranges_first_pass(X, check_finite=True)
                self._spend_budget(budget)
                plan, first = self._in_private_ranges(X, plan, counts, lazy, rng)
        # Release the radius, the mean and the covariance, in this order.
        data_norm, sums = self._release_radius(X, plan, first, lazy=lazy, rng=rng)
        location, center, radius, noisy = self._release_mean(
            plan, data_norm, sums, rng=rng
        )
        release = self._release(
            X,
            box=plan.box,
            clip_norm=data_norm,
            center=center,
            radius=radius,
            budget=plan.split["covariance"],
            rng=rng,
            sums=sums,
        )
        # Post-process (free) and record.
        estimate = self._postprocess_release(
            release, plan, location=location, data_norm=data_norm
        )
        self._record(estimate, release, plan, data_norm=data_norm, noisy_mean=noisy)
        warn_if_noise_dominated(self, estimate.signal_to_noise)
        return self

    def _count_then_plan(self, X, budget, *, lazy, rng):
        """Under add/remove: the count released first, then the plan at it.

        The number of units is private. The checks that need no count (the
        parameters, a box's values, n_components against the features) and
        the first pass (entries checked; with ``bounds="private"``, the
        ranges' first counts) come first, on a plan at a count no minimum
        binds (the box, the norm bound and whether the radius or the ranges
        are private do not depend on the count); then the fit is recorded and
        a noisy count released, which everything after reads in place of the
        number of units (``X.shape[0]``), refusals included. Returns the rows
        wrapped to report the count, the plan and the first pass.
        """
        count, plan_budget = split_count(budget)
        unbound = self._plan((UNBINDING_COUNT, X.shape[1]), plan_budget)
        self._check_plan_shares({"count": count, **unbound.split}, budget)
        self._check_public(None, X.shape[1])
        if unbound.geometry.ranges is None:
            first = self._first_pass(X, unbound, lazy=lazy)
        else:
            counts = ranges_first_pass(X, check_finite=True)
        self._spend_budget(budget)
        X, released = release_count(X, count, rng)
        with persons_in_messages(isinstance(X, UnitRows), released=True):
            plan = self._plan(X.shape, plan_budget)
            self._check_public(plan.n_samples, plan.n_features)
        plan = replace(
            plan, split={"count": count, **plan.split}, released_count=released
        )
        # (The plan at the released count may take the other radius
        # mechanism: at the same share, checked again before its release.)
        self._check_plan_shares(plan.split, budget, released=True)
        if plan.geometry.ranges is not None:
            # The ranges' plan (the spread's scores) reads the released count.
            plan, first = self._in_private_ranges(X, plan, counts, lazy, rng)
        return X, plan, first

    def _in_private_ranges(self, X, plan, counts, lazy, rng):
        # The private ranges released from their first counts, and the first
        # pass in their box: (plan, first).
        geometry = release_ranges(plan.geometry, X, counts, rng=rng)
        plan = replace(plan, geometry=geometry)
        return plan, self._first_pass(X, plan, lazy=lazy)

    # Plan: public values only (the shape of X, the parameters, the budget).

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """The fit's checks of public values that need no row, before any release.

        The parameters, the budget and the geometry: with ``n_features`` (the
        width of the rows this estimator will read, as the first step of a
        :class:`~dpcov.pipeline.PrivatePipeline`), the whole public plan of
        the fit, so the rows a private radius or private ranges need;
        without it (a later step, which may receive its range from upstream),
        a public box's values and the rows ``bounds="private"`` needs for one
        feature. A refusal here spends nothing.
        """
        check_params_always(self)
        budget = self._check_budget()
        if n_features is not None:
            self._plan((n_samples, n_features), budget)
            return
        check_bounds_without_rows(
            self.bounds, n_samples, budget, name=type(self).__name__
        )

    def _plan(self, shape, budget):
        """The public plan of the fit: geometry, radius mechanism, budget split."""
        n_samples, n_features = shape
        # Budget split between steps. The radius and the mean are cheap to get
        # right (one count, one d-vector), the covariance is not: the geometry
        # step takes a quarter for the private ranges and 1/8 for the radius
        # (3/16 for the exponential radius), the mean 1/8, each only when
        # needed, all of the whole budget; zCDP and pure DP both compose
        # additively.
        shares = {} if self.assume_centered else {"mean": MEAN_SHARE}
        geometry, release = plan_geometry(
            budget,
            n_samples,
            n_features,
            bounds=self.bounds,
            data_norm=self.data_norm,
            shares={**shares, "covariance": None},
            radius="unbounded",
            # A fit on its composed curve: the radius's share whatever its
            # mechanism (see _profile_shares).
            even_radius=isinstance(getattr(self, "_fit_cost", None), ProfileDP),
            ranges_first=False,
        )
        return FitPlan(geometry=geometry, split={**geometry.split, **release})

    # Read: the data passes.

    def _radius_read_sums(self, n_features, *, lazy):
        """The sums the first read bins by norm when the radius is private.

        Binned on the radius grid, the sums over the rows clipped at the
        radius, whichever grid point it is, follow from the read that counts
        the norms (``dpcov.utils._gram._binned``). On a Dask array, where a
        read is the cost, everything is binned (one read), unless
        ``dpcov.set_config(binned_reads=False)``. In memory, where
        the flops are, nothing is (None: the counts only, then a second read
        at the radius): binned Gram matrices cost twice the flops of one,
        and even the binned sum alone took longer than a pass of counts and
        a pass of clipped sums together (0.084 s against 0.027 s + 0.043 s
        at n = 1e6, d = 100 on 2 cores).
        """
        if not (lazy and get_config()["binned_reads"]):
            return None
        wanted = {name: True for name, value in self._clipped_sums().items() if value}
        if "gram" in wanted and not binned_grams_fit(
            len(DEFAULT_RADIUS_GRID), n_features
        ):
            return None  # (beyond about d = 1000: a second read, bounded memory)
        return wanted

    def _first_pass(self, X, plan, *, lazy):
        """The pass before the budget is spent: norm counts, or every sum."""
        # The data passes. Each is one chunked (or Dask) reduction; with a
        # given data_norm the first computes everything the mean and the
        # mechanism need. With the private radius, the first counts the norms
        # on the radius grid, with the sums binned there when that saves a
        # read (_radius_read_sums). Nothing is released before the fit is
        # recorded.
        if plan.find_radius:
            binned = self._radius_read_sums(plan.n_features, lazy=lazy)
            if binned is None:
                return row_statistics(X, norm_sums=radius_counts, check_finite=True)
            return row_statistics(
                X, bins=DEFAULT_RADIUS_GRID, check_finite=True, **binned
            )
        return row_statistics(
            X,
            box=plan.box,
            clip_norm=plan.data_norm,
            check_finite=True,
            **self._clipped_sums(),
        )

    # Release: the radius, the mean, then the covariance (:meth:`_release`).

    def _release_radius(self, X, plan, first, *, lazy, rng):
        """The row-norm bound and the sums over the rows clipped to it.

        With a public bound, the first pass's sums; otherwise the private
        radius, from the first pass's norm counts, and the sums at it: from
        the first pass's binned sums, or a second pass.
        """
        if not plan.find_radius:
            return plan.data_norm, first
        counts = first.norm_sums
        if first.binned is not None:
            counts = first.binned.above_counts()
        data_norm = release_radius(plan.geometry, counts, rng=rng)
        if first.binned is not None:
            total, gram = first.binned.clipped(data_norm)
            return data_norm, replace(first, binned=None, total=total, gram=gram)
        # (Dask: the entries are checked again, in case the source changed.)
        sums = row_statistics(
            X, clip_norm=data_norm, check_finite=lazy, **self._clipped_sums()
        )
        return data_norm, sums

    def _release_mean(self, plan, data_norm, sums, *, rng):
        """The private mean, the centre to subtract (or None), the rows' new bound.

        And the noisy mean before its projection (zeros with
        ``assume_centered``), which the error bars read.
        """
        n_samples, n_features = plan.n_samples, plan.n_features
        if self.assume_centered:
            return np.zeros(n_features), None, data_norm, np.zeros(n_features)
        noise = self._mean_noise(plan, data_norm)
        # The exact mean lies in the r-ball (and, in unit coordinates, in
        # the cube [-1, 1]^d): projecting onto it is free and never
        # increases the error.
        noisy = noise.add(sums.total / n_samples, rng)
        location = project_l2_ball(noisy, data_norm)
        if plan.box is not None:
            location = np.clip(location, -1.0, 1.0)
        # |clip(x) - location| <= r + |location|: the centred rows' bound.
        radius = data_norm + float(np.linalg.norm(location))
        return location, location, radius, noisy

    def _mean_noise(self, plan, data_norm):
        """The private mean's calibrated noise (None with ``assume_centered``)."""
        if self.assume_centered:
            return None
        # Mean of rows of norm <= r, replace-one neighbours: L2 sensitivity
        # 2r/n, L1 sensitivity 2r sqrt(d)/n (|v|_1 <= sqrt(d) |v|_2).
        l2, l1 = ball_mean_sensitivities(data_norm, plan.n_samples, plan.n_features)
        return calibrate_additive(
            plan.split["mean"], l2_sensitivity=l2, l1_sensitivity=l1
        )

    # Post-process: free, on the release and public values only.

    def _postprocess_release(self, release, plan, *, location, data_norm):
        """The shrunk and projected covariance, the score model and the noise figure."""
        if plan.n_features >= SPECTRAL_FROM:
            return self._postprocess_spectrum(
                release, plan, location=location, data_norm=data_norm
            )
        bound = min(release.radius, data_norm) ** 2
        # Shrinkage toward zero and the noise figure, in the units of
        # covariance_ (the box's half-widths weigh entry (i, j) by h_i h_j),
        # from the release and public values only.
        weights = np.ones(plan.n_features)
        if plan.box is not None:
            weights = plan.geometry.half_widths

        def postprocess(raw):
            return self._postprocess(raw, bound=bound, noise_std=release.noise_std)

        covariance = postprocess(release.raw)
        factor, noise_energy = 1.0, 0.0 if release.noise_std == 0 else math.nan
        if release.noise_std > 0 and release.sampled is not None:
            # Sampled eigenvectors: closed forms on the estimate's spectrum
            # (the bootstrap would rerun the sampler).
            factor, noise_energy = self._spectral_factor(
                release,
                plan,
                Spectrum(*symmetric_eigh(covariance, host=np.linalg.eigh)),
                None,
                lambda values: self._projected_values(
                    values, bound=bound, noise_std=release.noise_std
                )[0],
                weights,
                data_norm,
                raw_values=None,
            )
        elif release.noise_std > 0 and release.simulate is not None:
            factor, noise_energy = self._bootstrap_test(
                release, postprocess, covariance, weights, data_norm, plan
            )
        applied = applied_factor(factor) if self.shrinkage == "auto" else 1.0
        unshrunk = covariance
        if applied < 1.0:
            covariance = postprocess(applied * covariance)
        # The model score() evaluates: the release with its eigenvalues raised
        # to the public noise level (below it the release cannot tell an
        # eigenvalue from zero), so that held-out log-likelihoods are finite
        # and a search can rank fits whatever eigenvalue_floor is.
        # Post-processing; covariance_ itself is left as released.
        values, vectors = symmetric_eigh(covariance, host=np.linalg.eigh)
        score_floor = min(release.noise_std, bound)
        score_covariance = (vectors * np.maximum(values, score_floor)) @ vectors.T
        noise_level = release.default_noise_level(plan.n_features)
        estimate = Estimate(
            location=location,
            covariance=covariance,
            score_covariance=score_covariance,
            raw=release.raw,
            noise_level=noise_level,
            signal_to_noise=signal_to_noise_from_factor(factor),
            shrinkage=1.0 - applied,
            unshrunk=unshrunk,
            noise_energy=noise_energy,
        )
        if plan.box is not None:
            estimate = _from_unit_box(estimate, plan.geometry)
        return estimate

    def _bootstrap_test(
        self, release, postprocess, covariance, weights, data_norm, plan
    ):
        """The bootstrap's factor and noise energy, below :data:`SPECTRAL_FROM`.

        Where a mechanism run is cheap (entry noise: GaussCov, SeparateCov,
        AdaptiveCov), :data:`~dpcov.covariance._shrinkage.NULL_DRAWS`
        estimates of pure noise, before post-processing, give the test of
        the release before post-processing its quantile, and the factor is
        the test's weight times the James-Stein factor of the estimate;
        otherwise the bootstrap's own draws at truth zero (one per draw),
        post-processed. The noise figure reads the bootstrap's own draws, as
        it was measured.
        """
        mean_noise = self._mean_noise(plan, data_norm)
        energy, null, error = _bootstrap(
            release, postprocess, covariance, weights, mean_noise
        )
        null_mean = float(np.mean(null))
        norm2 = weighted_norm2(covariance, weights)
        share = signal_share(norm2, energy, null_mean)
        noise_energy = predicted_noise_energy(error, null_mean, share)
        aligned = 0.0
        if release.value_noise is not None:
            aligned = aligned_noise_energy(covariance, weights, release.value_noise)
        # kappa's draws carry the cross term <S, P* - S> (of mean zero): where
        # it is low, their squared error is the larger estimate of the noise.
        kappa = max(energy, error)
        if release.entry_noise is None:
            factor = shrinkage_factor(covariance, weights, kappa, null, aligned)
            return factor, noise_energy
        # The test on the release before post-processing, against estimates
        # of pure noise before it too: at truth zero the projection piles
        # noise onto every diagonal entry (about sqrt(d) times its scale),
        # far more than it leaves where a strong signal sits, so a projected
        # null would hide a signal on the widest features.
        raw = release.noisy_matrix()
        raw_norm2 = weighted_norm2(raw, weights)
        raw_null = null_energies(
            release.simulate,
            _unprocessed,
            weights,
            mean_noise=mean_noise,
            radius=release.radius,
            energy=raw_norm2,
        )
        weight = evidence_weight(
            raw_norm2, null_quantile(raw_null.mean(), raw_null.std(ddof=1))
        )
        share = signal_share(norm2, kappa, null_mean) if norm2 > aligned else 0.0
        factor = weight * share
        return factor, noise_energy

    def _postprocess_spectrum(self, release, plan, *, location, data_norm):
        """:meth:`_postprocess_release` from one eigendecomposition of the release.

        From :data:`SPECTRAL_FROM` features on: the projection, the
        shrinkage (its energies in closed form,
        :mod:`dpcov.covariance._spectral_shrinkage`), the score model and
        (in :meth:`_record`) the precision all act on the eigenvalues of the
        release's one eigendecomposition (none when the mechanism releases
        its spectrum). A release without a closed form (the nuclear-norm
        noise) keeps the bootstrap, on the spectrum.
        """
        bound = min(release.radius, data_norm) ** 2
        weights = np.ones(plan.n_features)
        if plan.box is not None:
            weights = plan.geometry.half_widths
        spectrum = release.spectrum
        if spectrum is None:
            # (With a box every eigenvector is read, _from_unit_box: no
            # deferral, which would cost a values-only eigendecomposition.)
            spectrum = (
                Spectrum.of(release.raw)
                if plan.box is not None
                else spectrum_of(release.raw)
            )

        def project(values):
            return self._projected_values(
                values, bound=bound, noise_std=release.noise_std
            )[0]

        mapped, slopes = self._projected_values(
            spectrum.values, bound=bound, noise_std=release.noise_std
        )
        factor, noise_energy = 1.0, 0.0 if release.noise_std == 0 else math.nan
        if release.noise_std > 0 and release.simulate is not None:
            factor, noise_energy = self._spectral_factor(
                release,
                plan,
                spectrum.with_values(mapped),
                slopes,
                project,
                weights,
                data_norm,
                raw_values=spectrum.values,
            )
        applied = applied_factor(factor) if self.shrinkage == "auto" else 1.0
        values = mapped if applied == 1.0 else project(applied * mapped)
        covariance = None
        if plan.box is not None or not isinstance(spectrum, LazySpectrum):
            covariance = spectrum.matrix(values)
        # (else eigenvectors deferred: covariance_ is formed at its first
        # read; PCA reads only its top axes.)
        noise_level = release.default_noise_level(plan.n_features)
        estimate = Estimate(
            location=location,
            covariance=covariance,
            score_covariance=None,
            # (A copy where the deferred eigenvectors read the same array:
            # an edit of raw_covariance_ must not move covariance_.)
            raw=_stored_raw(release, spectrum) if self.store_raw else None,
            noise_level=noise_level,
            signal_to_noise=signal_to_noise_from_factor(factor),
            shrinkage=1.0 - applied,
            unshrunk=None,
            spectrum=spectrum.with_values(values),
            unshrunk_values=mapped,
            score_floor=min(release.noise_std, bound),
            noise_energy=noise_energy,
        )
        if plan.box is not None:
            estimate = _from_unit_box(estimate, plan.geometry)
        return estimate

    def _spectral_factor(
        self,
        release,
        plan,
        estimate,
        slopes,
        project,
        weights,
        data_norm,
        *,
        raw_values,
    ):
        """The shrinkage factor of :meth:`_postprocess_spectrum`, and the noise energy.

        ``estimate`` is the projected release's spectrum (mapped values on
        the release's eigenvectors), ``raw_values`` the release's own
        eigenvalues (for entry noise; ``slopes`` too). Returns the factor and
        :func:`~dpcov.covariance._shrinkage.predicted_noise_energy`.
        """
        mean_noise = self._mean_noise(plan, data_norm)
        if release.entry_noise is None and release.sampled is None:
            # No closed form (the nuclear-norm noise): the bootstrap.
            return self._bootstrap_factor(
                release, estimate, weights, data_norm, mean_noise
            )
        metric = Metric.of(estimate, weights)
        mapped = estimate.values
        centring = 0.0
        if mean_noise is not None:
            # E |delta|**2 of the mean's noise, at most the rows' radius squared.
            centring = min(plan.n_features * mean_noise.std**2, release.radius**2)
        noise = release.entry_noise
        if release.sampled is not None:
            energy = sampled_kappa(
                mapped, project, metric, law=release.sampled, centring=centring
            )
            null_mean, null_std = spectral_null(
                project,
                metric,
                value_noise=release.value_noise,
                centring=centring,
                law=release.sampled,
            )
            aligned = aligned_noise_energy(
                None, weights, release.value_noise, spectrum=estimate
            )
        elif release.value_noise is not None:
            energy = spectral_kappa(
                mapped,
                project,
                metric,
                value_noise=release.value_noise,
                vector_std=noise.std,
                centring=centring,
            )
            null_mean, null_std = spectral_null(
                project, metric, value_noise=release.value_noise, centring=centring
            )
            aligned = aligned_noise_energy(
                None, weights, release.value_noise, spectrum=estimate
            )
        else:
            energy = entry_noise_kappa(
                estimate.with_values(raw_values),
                mapped,
                slopes,
                metric,
                variance=noise.std**2,
                centring=centring,
            )
            null_mean, null_std = entry_noise_null(
                project, metric, std=noise.std, law=noise.law, centring=centring
            )
            aligned = 0.0
        norm2 = metric.pair_sum(mapped, mapped)
        factor = factor_from_energies(norm2, energy, null_mean, null_std, aligned)
        share = signal_share(norm2, energy, null_mean)
        return factor, predicted_noise_energy(energy, null_mean, share)

    def _bootstrap_factor(self, release, estimate, weights, data_norm, mean_noise):
        """The bootstrap's factor (:mod:`dpcov.covariance._shrinkage`) on a spectrum.

        Returns the factor and the predicted noise energy.
        """

        def postprocess(raw):
            return self._postprocess(
                raw,
                bound=min(release.radius, data_norm) ** 2,
                noise_std=release.noise_std,
            )

        covariance = estimate.matrix()
        energy, null, error = _bootstrap(
            release, postprocess, covariance, weights, mean_noise
        )
        aligned = 0.0
        if release.value_noise is not None:
            aligned = aligned_noise_energy(
                None, weights, release.value_noise, spectrum=estimate
            )
        factor = shrinkage_factor(covariance, weights, energy, null, aligned)
        share = signal_share(weighted_norm2(covariance, weights), energy, np.mean(null))
        return factor, predicted_noise_energy(error, np.mean(null), share)

    def _projected_values(self, values, *, bound, noise_std):
        """:meth:`_postprocess`'s projection on ascending eigenvalues, and its slopes.

        Returns the mapped values and ``d g_k / d lambda_k`` (the diagonal of
        the map's Jacobian: 1 where a value moves with its input, 0 where
        it is clamped; less ``1 / |active|`` on the active values when the
        trace cap binds). ``values`` may hold one spectrum per row.
        """
        floor = self._eigenvalue_floor(bound=bound, noise_std=noise_std)
        if self.projection == "feasible":
            if values.ndim == 2:
                rows = [
                    self._projected_values(row, bound=bound, noise_std=noise_std)
                    for row in values
                ]
                return np.array([m for m, _ in rows]), np.array([s for _, s in rows])
            cap = max(bound - values.shape[0] * floor, 0.0)
            mapped = floor + project_capped_simplex(values - floor, cap)
            slopes = (mapped > floor).astype(float)
            active = int(slopes.sum())
            if active and np.maximum(values - floor, 0.0).sum() > cap:
                slopes[slopes > 0] -= 1.0 / active
            return mapped, slopes
        upper = bound if self.projection == "clamp" else np.inf
        mapped = np.clip(values, floor, upper)
        slopes = ((values > floor) & (values < upper)).astype(float)
        return mapped, slopes

    # Record: the fitted attributes.

    def __getattr__(self, name):
        # covariance_ and precision_ not formed in the fit (from
        # SPECTRAL_FROM features on: precision_ always, covariance_ where
        # the eigenvectors were deferred, PCA's fit): formed at their first
        # read, from the release's spectrum, as the fit would have formed
        # them. Two threads reading at once both get the first one formed.
        state = self.__dict__
        if name in _DEFERRED_MATRICES and name in state:
            return state[name]
        spectrum = state.get("_spectrum")
        if spectrum is None or name not in _DEFERRED_MATRICES:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        if name == "covariance_":
            value = spectrum.matrix()
        else:
            value = spectrum.pseudo_inverse()
        return state.setdefault(name, value)

    def _record(self, estimate, release, plan, *, data_norm, noisy_mean):
        """Set the fitted attributes: the model, the geometry, the privacy spent."""
        self.location_ = estimate.location
        self._spectrum = estimate.spectrum
        if estimate.spectrum is None:
            self._set_covariance(estimate.covariance)
            self._score_covariance = (
                estimate.score_covariance + estimate.score_covariance.T
            ) / 2.0
            self._unshrunk_covariance = estimate.unshrunk
        else:
            # scikit-learn's _set_covariance, with the precision from the
            # spectrum (pinvh's cutoff) instead of a second
            # eigendecomposition, formed at its first read (a d x d product
            # a fit need not pay: 1.5 s at d = 4096, one thread), as is
            # covariance_ where the eigenvectors were deferred (PCA's fit).
            for name in _DEFERRED_MATRICES:
                self.__dict__.pop(name, None)  # (an earlier fit's)
            if estimate.covariance is not None:
                self.covariance_ = estimate.covariance
            if not self.store_precision:
                self.precision_ = None
            # The score model and the axes before shrinkage: the spectrum
            # with other values, formed when asked for.
            self._score_covariance = None
            self._unshrunk_covariance = None
            self._score_values = np.maximum(
                estimate.spectrum.values, estimate.score_floor
            )
            self._unshrunk_values = estimate.unshrunk_values
        if self.store_raw:
            self.raw_covariance_ = estimate.raw
        elif hasattr(self, "raw_covariance_"):
            del self.raw_covariance_  # from an earlier fit with store_raw=True
        self.data_norm_ = data_norm
        self.released_count_ = plan.released_count
        self.bounds_ = plan.box
        self._noise_laws = self._noise_model(release, plan, data_norm, noisy_mean)
        steps = {
            name: share for name, share in plan.split.items() if name != "covariance"
        }
        split = {**steps, **release.split}
        self._record_privacy(compose(split.values()), split)
        for name, value in release.attributes.items():
            setattr(self, name, value)
        self.noise_level_ = float(estimate.noise_level)
        self.shrinkage_ = float(estimate.shrinkage)
        self.signal_to_noise_ = float(estimate.signal_to_noise)
        # The release's predicted error; a shrunk release's error is that of
        # the shrinkage (the truth's norm, which no release can estimate).
        self.predicted_error_ = (
            math.sqrt(estimate.noise_energy) if self.shrinkage_ == 0.0 else math.nan
        )

    def _noise_model(self, release, plan, data_norm, noisy_mean):
        # The public laws of location_ and of an additive raw release.
        center = half = None
        if plan.box is not None:
            center, half = unit_box(*plan.box)
        return CovarianceNoise(
            self._mean_noise(plan, data_norm),
            data_norm,
            noisy_mean,
            release.entry_noise if release.additive else None,
            center,
            half,
            counted=self.neighbours == "add_remove",
        )

    def _error_bars(self, alpha):
        # location_ (unless assume_centered) and raw_covariance_ (stored,
        # and additive: GaussCov).
        raw = getattr(self, "raw_covariance_", None)
        return self._noise_laws.bars(alpha, raw=None if raw is None else as_host(raw))

    def score(self, X_test, y=None):
        """Log-likelihood of ``X_test`` under the private Gaussian estimate.

        The model is ``N(location_, S)``, where ``S`` is ``covariance_`` with
        its eigenvalues raised to the public standard deviation of the noise
        on an eigenvalue (or entry): below it the release cannot tell an
        eigenvalue from zero. So the score is finite even when
        ``covariance_`` is singular (with ``eigenvalue_floor=0``, often), and
        ``GridSearchCV`` can rank fits; with no noise (``epsilon=inf``)
        ``S = covariance_`` and the score is scikit-learn's. As in
        scikit-learn's :meth:`~sklearn.covariance.EmpiricalCovariance.score`,
        the value is computed from the empirical covariance of ``X_test``
        about ``location_`` (post-processing of the release, but a statistic
        of ``X_test``: scoring other private rows is a release about them).

        Parameters
        ----------
        X_test : array-like of shape (n_samples, n_features)
            Test rows.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        res : float
            The log-likelihood of ``X_test`` (``-inf`` when its rows are too
            extreme for float64 arithmetic).
        """
        check_is_fitted(self)
        X_test = as_host(
            validate_rows(
                self, X_test, reset=False, method="score", accept_array_api=True
            )
        )
        with quiet_float_errors():
            centred = X_test - as_host(self.location_)
            test_cov = centred.T @ centred / centred.shape[0]
            if self._spectrum is None:
                precision = linalg.pinvh(as_host(self._score_covariance))
            else:
                precision = self._spectrum.pseudo_inverse(self._score_values)
            res = log_likelihood(test_cov, precision)
        # Rows too extreme for float64 arithmetic: a likelihood of zero.
        return -np.inf if np.isnan(res) else res

    def mahalanobis(self, X):
        """Squared Mahalanobis distances of the rows of X to ``location_``.

        Uses ``precision_`` (or the pseudo-inverse of ``covariance_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows whose distances are computed.

        Returns
        -------
        dist : ndarray of shape (n_samples,)
            ``(x - location_)^T precision (x - location_)`` for each row
            (``inf`` for a row too extreme for float64 arithmetic).
        """
        check_is_fitted(self)
        X = validate_rows(
            self, X, reset=False, method="mahalanobis", accept_array_api=True
        )
        namespace = namespace_of(X)
        X = as_host(X)
        with quiet_float_errors():
            centred = X - as_host(self.location_)
            precision = as_host(self.get_precision())
            distances = np.einsum("ij,ij->i", centred @ precision, centred)
        # Rows too extreme for float64 arithmetic are infinitely far.
        distances = np.where(np.isnan(distances), np.inf, np.maximum(distances, 0.0))
        return distances if namespace is None else to_namespace(distances, *namespace)

    def get_precision(self):
        """The precision: ``precision_``, or the pseudo-inverse of ``covariance_``.

        Returns
        -------
        precision_ : array of shape (n_features, n_features)
            In the namespace of ``covariance_`` (the fit's input's).
        """
        check_is_fitted(self)
        if self.store_precision:
            return self.precision_
        namespace = namespace_of(self.covariance_)
        if self._spectrum is None:
            precision = linalg.pinvh(as_host(self.covariance_), check_finite=False)
        else:
            precision = self._spectrum.pseudo_inverse()
        return precision if namespace is None else to_namespace(precision, *namespace)

    def error_norm(self, comp_cov, norm="frobenius", scaling=True, squared=True):
        """The error between ``comp_cov`` and ``covariance_``, as scikit-learn's.

        Parameters
        ----------
        comp_cov : array-like of shape (n_features, n_features)
            The covariance to compare with.
        norm : {"frobenius", "spectral"}, default="frobenius"
            The norm of the difference.
        scaling : bool, default=True
            Divide the squared norm by ``n_features``.
        squared : bool, default=True
            The squared norm, or the norm.

        Returns
        -------
        result : float
            The error.
        """
        check_is_fitted(self)
        # scikit-learn's computation, on host copies.
        error = np.asarray(as_host(comp_cov), dtype=np.float64) - as_host(
            self.covariance_
        )
        if norm == "frobenius":
            squared_norm = float(np.sum(error**2))
        elif norm == "spectral":
            squared_norm = float(np.amax(linalg.svdvals(error.T @ error)))
        else:
            raise NotImplementedError(
                "Only spectral and frobenius norms are implemented"
            )
        if scaling:
            squared_norm = squared_norm / error.shape[0]
        return squared_norm if squared else float(np.sqrt(squared_norm))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # fit reads sparse rows through sparse products (score and
        # mahalanobis, as scikit-learn's, need dense rows).
        tags.input_tags.sparse = True
        # Arrays of other namespaces under array_api_dispatch.
        tags.array_api_support = True
        return tags

    def _eigenvalue_floor(self, *, bound, noise_std):
        """The projection set's lower bound: ``eigenvalue_floor``, at most ``bound``."""
        if self.eigenvalue_floor == "auto":
            return min(noise_std, bound)
        return min(float(self.eigenvalue_floor), bound)

    def _postprocess(self, raw, *, bound, noise_std):
        """Project the noisy matrix; the floor is the set's lower bound."""
        floor = self._eigenvalue_floor(bound=bound, noise_std=noise_std)
        if self.projection == "clamp":
            return project_psd_bounded(raw, bound, floor=floor)
        if self.projection == "feasible":
            return project_feasible(raw, bound, floor=floor)
        return project_psd(raw, floor=floor)
