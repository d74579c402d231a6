"""Private PCA on top of any private covariance estimator."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import math
import warnings
from contextlib import nullcontext
from functools import partial
from numbers import Integral

import numpy as np
from scipy.special import gammaln
from sklearn import decomposition as sklearn_decomposition
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..accounting import BudgetAccountant
from ..base import (
    PRIVACY_RECORD,
    PrivateEstimatorMixin,
    is_private,
    warn_if_noise_dominated,
    warn_if_seeded,
)
from ..covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
)
from ..covariance._base import FIT_INPUTS, BasePrivateCovariance, device_algebra
from ..exceptions import NoiseDominatedWarning, SeededNoiseWarning
from ..mechanisms._projection import (
    PARTIAL_UP_TO,
    deferred_eigenvectors,
    symmetric_eigh,
)
from ..utils._array_api import (
    as_host,
    check_fitted_namespace,
    fitted_to_namespace,
    namespace_of,
    to_namespace,
)
from ..utils._docstrings import fill_doc
from ..utils._gram import is_dask_array, rows_in_blocks
from ..utils._gram._units import (
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._input_messages import NonFiniteInput
from ..utils._private_ranges import check_bounds_without_rows
from ..utils._sklearn_compat import (
    Interval,
    RealNotInt,
    StrOptions,
    _BasePCA,
    _fit_context,
    check_params_always,
)
from ..utils._threads import small_matrix_blas

#: Parameters that PCA sets on its covariance estimator (its budget and geometry).
DELEGATED_PARAMS = (
    "epsilon",
    "delta",
    "rho",
    "data_norm",
    "bounds",
    "max_rows_per_group",
    "neighbours",
    "assume_centered",
    "random_state",
)


#: scikit-learn's solver parameters: accepted and validated as scikit-learn's
#: PCA does, with no effect (the private fit eigendecomposes the released
#: d x d covariance; see the docstring).
SOLVER_PARAMS = (
    "copy",
    "svd_solver",
    "tol",
    "iterated_power",
    "n_oversamples",
    "power_iteration_normalizer",
)


def _minka_log_likelihoods(spectrum, n_samples):
    """Minka's (2000) log-likelihood of each number of components.

    The Laplace approximation of the evidence of probabilistic PCA with
    ``k`` components, for ``k = 1, ..., d - 1`` (Minka 2000), as
    scikit-learn's ``n_components="mle"`` computes it, vectorised: ``O(d**2)``
    array operations instead of ``O(d**3)`` Python ones.

    Parameters
    ----------
    spectrum : ndarray of shape (d,)
        Variances, in decreasing order.
    n_samples : int
        Number of rows.

    Returns
    -------
    ll : ndarray of shape (d,)
        ``ll[k]`` is the log-likelihood of ``k`` components; ``-inf`` for
        ``k = 0``, for a ``k`` whose ``k``-th variance is below 1e-15 (as in
        scikit-learn) and for a ``k`` where the approximation is undefined
        (two equal variances among those it compares, e.g. noisy
        eigenvalues at the public floor; scikit-learn's code raises there).
    """
    s = np.asarray(spectrum, dtype=np.float64)
    d = s.shape[0]
    ll = np.full(d, -np.inf)
    if d < 2:
        return ll
    n = float(n_samples)
    tiny = 1e-15
    ranks = np.arange(1, d)
    dims = d - ranks + 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # The uniform prior on the k-frame (one over the area of the Stiefel
        # manifold) ...
        pu = -ranks * math.log(2.0) + np.cumsum(
            gammaln(dims / 2.0) - math.log(math.pi) * dims / 2.0
        )
        # ... the likelihood of the k variances and of their mean v beyond k ...
        pl = -np.cumsum(np.log(s))[:-1] * n / 2.0
        v = np.maximum(tiny, np.cumsum(s[::-1])[::-1][1:] / (d - ranks))
        pv = -np.log(v) * n * (d - ranks) / 2.0
        m = d * ranks - ranks * (ranks + 1.0) / 2.0
        pp = math.log(2.0 * math.pi) * (m + ranks) / 2.0
        # ... and the Hessian's determinant: for i < k and j > i, the log of
        # (s_i - s_j) (1 / s'_j - 1 / s_i) + log n, with s'_j = v for j >= k.
        inverse = 1.0 / s
        below = np.array([np.log(s[i] - s[i + 1 :]).sum() for i in range(d - 1)])
        among = np.array([np.log(inverse[j] - inverse[:j]).sum() for j in range(d - 1)])
        beyond = np.array(
            [(d - k) * np.log(1.0 / v[k - 1] - inverse[:k]).sum() for k in ranks]
        )
        pairs = ranks * (d - 1.0) - ranks * (ranks - 1.0) / 2.0
        pa = np.cumsum(below) + np.cumsum(among) + beyond + pairs * math.log(n)
        ll[1:] = pu + pl + pv + pp - pa / 2.0 - ranks * math.log(n) / 2.0
    ll[1:][s[:-1] < tiny] = -np.inf
    ll[~np.isfinite(ll)] = -np.inf
    return ll


def _canonical_ties(values, components, rtol=1e-9):
    """Each run of tied ``values`` gets a canonical basis of its span.

    ``values`` are in decreasing order and ``components`` (rows, orthonormal)
    their axes. A run of equal values (within ``rtol`` of the largest in
    absolute value) has an eigenspace, not axes: its rows become a basis
    computed from the span's projector only (:func:`_span_basis`).
    Post-processing of the release.
    """
    for start, stop in _tied_runs(values, values.size, rtol):
        block = components[start:stop]
        components[start:stop] = _span_basis(block.T @ block, stop - start)
    return components


def _tied_runs(values, until, rtol=1e-9):
    """``(start, stop)`` of each run of two or more tied values before ``until``.

    A run starts before ``until``; its values are within ``rtol`` times the
    largest absolute value of its first.
    """
    scale = max(float(np.max(np.abs(values), initial=0.0)), np.finfo(float).tiny)
    start, size = 0, values.size
    while start < until:
        stop = start + 1
        while stop < size and abs(values[stop] - values[start]) <= rtol * scale:
            stop += 1
        if stop - start > 1:
            yield start, stop
        start = stop


def _canonical_ties_top(values, vectors, m, rtol=1e-9):
    """The first ``m`` rows of :func:`_canonical_ties`, in ``O(d**2 m)``.

    ``values`` decrease and ``vectors`` holds their axes as columns. A run of
    tied values that reaches into the first ``m`` gets the same canonical
    basis as :func:`_span_basis` (up to rounding), but only its first
    vectors, computed from the run's basis ``B`` without forming its
    projector ``P = B B.T``: column ``j`` of the residual projector after
    the basis vectors ``b_t`` chosen so far is ``B B[j] - sum_t b_t b_t[j]``,
    of squared norm ``P_jj - sum_t b_t[j]**2``.
    """
    components = np.array(vectors[:, :m].T)
    for start, stop in _tied_runs(values, m, rtol):
        block = vectors[:, start:stop]
        remaining = np.sum(block**2, axis=1)
        chosen = []
        for i in range(start, min(stop, m)):
            norms = np.sqrt(np.maximum(remaining, 0.0))
            j = int(np.flatnonzero(norms >= (1.0 - 1e-6) * norms.max())[0])
            column = block @ block[j]
            for basis in chosen:
                column -= basis * basis[j]
            basis = column / norms[j]
            chosen.append(basis)
            remaining -= basis**2
            components[i] = basis
    return components


def _sign_convention(components):
    # scikit-learn's (svd_flip's): each component's largest entry in absolute
    # value positive; of entries within 1e-6 of the largest, the first, so
    # that rounding does not flip the sign (unless an entry sits at that
    # margin's edge).
    magnitudes = np.abs(components)
    near = magnitudes >= (1.0 - 1e-6) * magnitudes.max(axis=1, keepdims=True)
    leading = components[np.arange(components.shape[0]), np.argmax(near, axis=1)]
    return components * np.where(leading < 0, -1.0, 1.0)[:, np.newaxis]


def _span_basis(projector, rank):
    # Gram-Schmidt on the projector's columns, each step taking the first
    # column (in coordinate order) whose residual norm is within 1e-6 of the
    # largest: a choice rounding does not flip unless a norm sits at that
    # margin's edge (a pivoted QR's flips whenever norms tie, as for a
    # projector onto the whole space).
    residual = np.array(projector, dtype=np.float64)
    basis = np.empty((rank, residual.shape[0]))
    for i in range(rank):
        norms = np.linalg.norm(residual, axis=0)
        j = int(np.flatnonzero(norms >= (1.0 - 1e-6) * norms.max())[0])
        basis[i] = residual[:, j] / norms[j]
        residual -= np.outer(basis[i], basis[i] @ residual)
    return basis


def _remaining_variance(spectrum, k, max_components, n_features):
    # The mean variance beyond the k kept components (post-processing).
    values, _, total = spectrum
    if k >= max_components:
        return 0.0
    if values.size == n_features:
        # scikit-learn's noise variance: the mean variance of the
        # components after the k kept, up to min(n_samples, n_features).
        return float(values[k:max_components].mean())
    # "top_k" releases the others' sum only: their mean.
    return (total - values[:k].sum()) / (n_features - k)


def _default_params(estimator):
    signature = inspect.signature(type(estimator).__init__)
    return {
        name: signature.parameters[name].default
        for name in DELEGATED_PARAMS
        if name in signature.parameters
    }


#: The fitted arrays that an array of another namespace gets back in it.
_FITTED_ARRAYS = (
    "components_",
    "explained_variance_",
    "explained_variance_ratio_",
    "singular_values_",
    "mean_",
)


def _namespace(X):
    """The namespace of X's arrays: X's own, or NumPy."""
    namespace = namespace_of(X)
    return np if namespace is None else namespace[0]


def _numpy_dtype(dtype, xp):
    """The NumPy dtype of a floating dtype of namespace ``xp``."""
    return np.dtype(np.float32 if dtype == xp.float32 else np.float64)


@fill_doc
class PCA(PrivateEstimatorMixin, _BasePCA):
    """Differentially private principal component analysis.

    A drop-in for :class:`sklearn.decomposition.PCA`: the principal axes are
    the eigenvectors of a private covariance estimate, so ``components_``,
    ``explained_variance_`` and everything derived from them are private
    releases. The covariance comes from any of dpcov's private covariance
    estimators (``covariance``), which also releases the private mean used to
    centre the data, or, with ``covariance="top_k"``, from iterative
    eigenvector sampling restricted to the top ``n_components`` directions,
    which spends the eigenvector budget on those ``k`` directions only [1]_.

    The guarantee is the covariance estimator's: pure ``epsilon``-DP with
    ``delta=0``, rho-zCDP (hence (``epsilon``, ``delta``)-DP) otherwise, with
    respect to replacing one row, given rows clipped to ``data_norm_``.
    ``transform``, ``inverse_transform`` and ``score`` only use the released
    attributes (and the data they are given).

    Read more in the :ref:`User Guide <pca>`.

    Parameters
    ----------
    n_components : int, float, "mle" or None, default=None
        Number of components to keep. ``None`` keeps ``min(n_samples,
        n_features)``, as scikit-learn's full solver does (``n_samples`` is
        public under replace-one neighbours). An int ``k`` keeps the top
        ``k``, at most ``min(n_samples, n_features)``. A float in (0, 1) keeps
        the fewest components whose explained-variance ratio in the *noisy*
        released spectrum reaches it. ``"mle"`` chooses the number by Minka's
        (2000) maximum-likelihood method [2]_ applied to the *noisy* released
        spectrum (``explained_variance_`` of all components); it needs
        ``n_samples >= n_features``, as in scikit-learn. Both choices are
        post-processing of the release (no extra budget); where the noise
        dominates, the spectrum they read is mostly noise (see
        ``signal_to_noise_``). Neither is available with
        ``covariance="top_k"``, which must know ``k`` before it samples.
    {epsilon}
    {delta}
    {rho}
    {data_norm}
    {bounds}
    {max_rows_per_group}
    {neighbours}
    covariance : estimator instance, "top_k" or None, default=None
        The private covariance estimator to build on, e.g.
        ``SeparateCovariance(projection="feasible")``. PCA clones it and sets
        its ``epsilon``, ``delta``, ``rho``, ``data_norm``,
        ``assume_centered`` and ``random_state`` to its own; those must be
        left at their defaults on the estimator passed (set them on PCA).
        ``None`` uses ``AdaptiveCovariance(eigenvalue_floor="auto")``
        (AdaptiveCov under zCDP, ``delta > 0`` or ``rho`` set; AdaptiveLapCov
        under pure DP, ``delta=0``): the most accurate for principal
        subspaces, or within noise of it, at 24 of 25 zCDP points and 13 of
        15 pure-DP points of the benchmark in the user guide, with the
        smallest worst-case loss (0.02 of captured variance). "top_k" uses
        ``EigenSamplingCovariance(n_components=k, eigenvalue_floor="auto")``.
        The "auto" floor (the public noise level) keeps ``noise_variance_``
        positive, so ``score`` is finite and can rank candidates in a search;
        it does not change the components.
    copy : bool, default=True
        Accepted for compatibility with scikit-learn; no effect. The fit
        never modifies ``X`` (it reads it in chunks and clips copies), so
        ``copy=False`` changes nothing.
    whiten : bool, default=False
        If True, ``transform`` divides the projections by the square root of
        the (private) explained variances, as in scikit-learn. They are the
        noisy spectrum's: when the release is dominated by noise
        (``signal_to_noise_ < 1``) the whitened outputs do not have unit
        variance on the data (they can be far below 1).
    svd_solver : {"auto", "full", "covariance_eigh", "arpack", "randomized"}, \
            default="auto"
        Accepted for compatibility with scikit-learn; no effect. The private
        fit always eigendecomposes the released ``n_features x n_features``
        covariance (what scikit-learn's "covariance_eigh" does with the exact
        one). scikit-learn's other solvers factor ``X`` itself ("full") or
        approximate its top singular vectors ("arpack", "randomized") to avoid
        forming that matrix; here the matrix is what the mechanism releases,
        so they have nothing to act on, and every ``n_components`` setting
        works with every value (with "arpack", scikit-learn keeps one
        component fewer for ``n_components=None`` and refuses floats and
        "mle"; here ``None`` keeps ``min(n_samples, n_features)``).
    tol : float, default=0.0
        Tolerance of scikit-learn's "arpack" solver; accepted, no effect.
    iterated_power : int or "auto", default="auto"
        Power iterations of scikit-learn's "randomized" solver; accepted, no
        effect.
    n_oversamples : int, default=10
        Oversampling of scikit-learn's "randomized" solver; accepted, no
        effect.
    power_iteration_normalizer : {"auto", "QR", "LU", "none"}, default="auto"
        Power-iteration normalizer of scikit-learn's "randomized" solver;
        accepted, no effect.
    assume_centered : bool, default=False
        If False, a private mean (1/8 of the budget, see the covariance
        estimators) is released as ``mean_`` and the data are centred about
        it. If True, the data are taken as centred and ``mean_`` is zero.
    {accountant}
    {random_state}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private principal axes (orthonormal rows), by decreasing explained
        variance. Signs are arbitrary.
    explained_variance_ : ndarray of shape (n_components,)
        Private variance along each axis, with scikit-learn's ``n - 1``
        denominator (the eigenvalues of the private covariance times
        ``n / (n - 1)``; NaN for a single sample, as in scikit-learn).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_`` over the private total variance.
    singular_values_ : ndarray of shape (n_components,)
        ``sqrt(explained_variance_ * (n_samples - 1))``, as in scikit-learn
        (the square roots of ``n_samples`` times the private eigenvalues).
    mean_ : ndarray of shape (n_features,)
        Private mean (zero when ``assume_centered=True``).
    n_components_ : int
        Number of components kept (chosen from the noisy spectrum for a float
        or "mle" ``n_components``).
    n_samples_ : int or None
        Number of rows (public under replace-one neighbours); under
        ``neighbours="add_remove"`` the released count of rows; None when
        fitted over persons (``groups``), where no count is stated.
    noise_variance_ : float
        Mean of the private variances of the components after the kept ones,
        up to ``min(n_samples, n_features)`` (the probabilistic PCA noise
        variance, as in scikit-learn), 0 when ``min(n_samples, n_features)``
        are kept.
    covariance_estimator_ : estimator
        The fitted private covariance estimator.
    data_norm_ : float
        Row-norm bound used: ``data_norm``, or the private radius; with
        ``bounds``, ``sqrt(n_features)`` in the box's unit coordinates.
    bounds_ : tuple of ndarray of shape (n_features,) or None
        The validated ``(lower, upper)`` when ``bounds`` is given, else None.
    noise_level_ : float
        The covariance estimator's public noise scale (see
        :class:`~dpcov.covariance.GaussianCovariance`).
    signal_to_noise_ : float
        The covariance estimator's signal-to-noise figure, from the release
        and public values only; below 1 ``fit`` warns with
        :class:`~dpcov.exceptions.NoiseDominatedWarning`, and the spectrum
        that a float ``n_components`` and ``whiten`` use is mostly noise.
    guarantee_ : dpcov.accounting.PureDP, ZCDP, GaussianDP or ProfileDP
        The guarantee of the fit: the covariance estimator's
        (``GaussianDP`` for GaussianCovariance or SeparateCovariance with a
        public norm bound, ``ProfileDP`` for AdaptiveCovariance, the
        default, or any of the three with a private radius, asked for
        (epsilon, delta); see :ref:`exact_curve`).
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of the guarantee (of the implied (epsilon, delta)-DP, on the
        exact curve for ``GaussianDP``).
    delta_spent_ : float
        Delta of the guarantee.
    rho_spent_ : float
        The zCDP parameter of the guarantee (``mu**2 / 2`` for
        ``GaussianDP``, its parts' sum for ``ProfileDP``).
    budget_split_ : dict of str to PureDP or ZCDP
        Budget of each step of the fit.
    noise_sampler_ : str
        The sampler of the fit's noise: ``"numpy"`` (floating point) or
        ``"discrete"`` (exact, under ``dpcov.set_config(secure_noise=True)``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.decomposition.PCA : The non-private estimator.
    dpcov.covariance.EigenSamplingCovariance : Eigenvectors by the
        exponential mechanism.

    Notes
    -----
    The private covariance estimate is post-processed into principal axes by
    an eigendecomposition, which costs no privacy. The budget is split as in
    the covariance estimator: 1/8 for the private radius when ``data_norm``
    is None, 1/8 for the private mean unless ``assume_centered``, the rest for
    the covariance (with "top_k": half for the top ``k`` eigenvalues and the
    sum of the others, half for the ``k`` directions).

    The neighbouring relation is replacing one row (by default), so
    ``n_samples`` is public: ``n_components=None`` keeps
    ``min(n_samples, n_features)`` and an
    int ``n_components`` above it is refused, as in scikit-learn. With one
    sample the fit runs, as scikit-learn's does, and ``explained_variance_``
    (an ``n - 1`` denominator) is NaN. Under ``neighbours="add_remove"`` the
    number of rows is private: an int ``n_components`` is checked against
    ``n_features`` only, and ``n`` is the covariance estimator's released
    count (``n_samples_``). With ``groups`` the samples are the persons.

    ``fit``, ``fit_transform``, ``transform`` and ``inverse_transform``
    accept SciPy sparse matrices (CSR or CSC), as scikit-learn's PCA does.
    The fit never densifies ``X``: the covariance estimator computes the
    clipped Gram matrix with sparse products (see its ``fit``), and
    ``transform`` computes ``X @ components_.T - mean_ @ components_.T``.

    References
    ----------
    .. [1] Amin, K., Dick, T., Kulesza, A., Munoz Medina, A. and
       Vassilvitskii, S. "Differentially Private Covariance Estimation".
       NeurIPS 2019. https://papers.nips.cc/paper/9567.
    .. [2] Minka, T. P. "Automatic choice of dimensionality for PCA".
       NIPS 2000, 598-604.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.decomposition import PCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 5)) @ np.diag([3.0, 1.0, 0.3, 0.2, 0.1])
    >>> pca = PCA(n_components=2, epsilon=1.0, data_norm=10.0,
    ...           random_state=0).fit(X)
    >>> pca.components_.shape
    (2, 5)
    >>> pca.transform(X[:3]).shape
    (3, 2)
    """

    _default_score = "pca_log_likelihood"

    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            StrOptions({"mle"}),
            None,
        ],
        # The budget and geometry PCA delegates are validated as the covariance
        # estimators validate them.
        **{
            name: BasePrivateCovariance._parameter_constraints[name]
            for name in DELEGATED_PARAMS
        },
        "covariance": [BasePrivateCovariance, StrOptions({"top_k"}), None],
        # scikit-learn's own constraints (the parameters have no effect here).
        **{
            name: sklearn_decomposition.PCA._parameter_constraints[name]
            for name in SOLVER_PARAMS
        },
        "whiten": ["boolean"],
        "accountant": [BudgetAccountant, None],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        data_norm=None,
        bounds=None,
        max_rows_per_group=None,
        neighbours="replace",
        covariance=None,
        copy=True,
        whiten=False,
        svd_solver="auto",
        tol=0.0,
        iterated_power="auto",
        n_oversamples=10,
        power_iteration_normalizer="auto",
        assume_centered=False,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.data_norm = data_norm
        self.bounds = bounds
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.covariance = covariance
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.assume_centered = assume_centered
        self.accountant = accountant
        self.random_state = random_state

    def _supports_hardened_noise(self):
        # The inner estimator's (the default ones, GaussCov and AdaptiveCov,
        # have exact samplers; "top_k" samples eigenvectors from a Bingham law).
        if isinstance(self.covariance, str):
            return False
        if self.covariance is None:
            return True
        covariance = self.covariance
        return is_private(covariance) and covariance._supports_hardened_noise()

    def _gaussian_only(self):
        # The covariance estimator's (GaussCov or SeparateCov with a public
        # norm bound).
        inner = self._with_geometry()
        return inner is not None and inner._gaussian_only()

    def _profile_shares(self):
        # The covariance estimator's (AdaptiveCovariance by default).
        inner = self._with_geometry()
        return None if inner is None else inner._profile_shares()

    def _with_geometry(self):
        # The covariance estimator (AdaptiveCovariance by default) with the
        # geometry, neighbours and centring PCA sets on it, for the public
        # questions of privacy_cost; None for "top_k".
        covariance = self.covariance
        if covariance is None:
            covariance = AdaptiveCovariance()
        if not isinstance(covariance, BasePrivateCovariance):
            return None
        return self._configured(clone(covariance))

    def _covariance_estimator(self, max_components):
        if self.covariance == "top_k":
            k = max_components if self.n_components is None else self.n_components
            estimator = EigenSamplingCovariance(n_components=k, eigenvalue_floor="auto")
        elif self.covariance is None:
            # The benchmark's pick (user guide): AdaptiveCov under zCDP and
            # pure DP alike (its private clipping threshold removes the noise
            # a loose norm bound and centring add).
            estimator = AdaptiveCovariance(eigenvalue_floor="auto")
        else:
            estimator = clone(self.covariance)
            changed = [
                name
                for name, default in _default_params(estimator).items()
                if estimator.get_params()[name] is not default
                and estimator.get_params()[name] != default
            ]
            if estimator.get_params().get("accountant") is not None:
                changed.append("accountant")
            if changed:
                raise ValueError(
                    f"covariance={type(estimator).__name__}(...) sets {changed}; "
                    "PCA sets the budget and geometry of its covariance "
                    "estimator: pass these parameters to PCA instead."
                )
        return self._configured(estimator)

    def _configured(self, estimator):
        # The covariance estimator with PCA's budget, geometry, unit,
        # neighbours, centring and seed.
        return estimator.set_params(
            epsilon=self.epsilon,
            delta=self.delta,
            rho=self.rho,
            data_norm=self.data_norm,
            bounds=self.bounds,
            max_rows_per_group=self.max_rows_per_group,
            neighbours=self.neighbours,
            assume_centered=self.assume_centered,
            random_state=self.random_state,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the private principal axes to X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. Rows are clipped to ``data_norm`` (or the private
            radius) after centring; ``X`` itself is not modified. A Dask array
            is reduced by Dask without loading it, a SciPy sparse matrix (CSR
            or CSC) without densifying it (see the covariance estimators'
            ``fit``).
        y : Ignored
            Not used, present for API consistency by convention.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set (see
            the covariance estimators' ``fit``).

        Returns
        -------
        self : object
            Returns the instance itself.
        """
        self._fit(X, groups)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, *, groups=None):
        """Fit the private principal axes to X and project X on them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : Ignored
            Not used, present for API consistency by convention.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Projections of the rows of X (whitened if ``whiten``).
        """
        X = self._fit(X, groups)
        if is_dask_array(X):
            return self.transform(X)
        with quiet_float_errors():
            return self._transform(X, xp=_namespace(X), x_is_centered=False)

    def transform(self, X):
        """Project X on the private principal axes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data. A Dask array gives a lazy Dask array, block by block; a
            SciPy sparse matrix (CSR or CSC) is projected as
            ``X @ components_.T - mean_ @ components_.T``, without densifying
            it.

        Returns
        -------
        X_new : ndarray or dask.array.Array of shape (n_samples, n_components)
            Projections of the rows of X (whitened if ``whiten``).
        """
        check_is_fitted(self)
        X = validate_rows(
            self,
            X,
            reset=False,
            accept_dask=True,
            accept_sparse=("csr", "csc"),
            method="transform",
            accept_array_api=True,
        )
        check_fitted_namespace(self, self.components_, X, "transform")
        if not is_dask_array(X):
            with quiet_float_errors():
                return self._transform(X, xp=_namespace(X), x_is_centered=False)
        X = rows_in_blocks(X)
        # Each block as scikit-learn's PCA projects an in-memory array (the
        # unwrapped projection: set_output applies to the whole result).
        project = partial(self._transform, xp=np, x_is_centered=False)
        dtype = project(np.zeros((1, X.shape[1]), dtype=X.dtype)).dtype
        return X.map_blocks(
            project, chunks=(X.chunks[0], (self.n_components_,)), dtype=dtype
        )

    def _fit(self, X, groups=None):
        # The budget is checked against the accountant before the data are
        # read. The inner covariance estimator (PCA's one release) records it,
        # under PCA's name, after its own public checks.
        check_params_always(self)
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        budget = self._check_budget()
        # NaN and infinity are refused by the covariance estimator's first
        # pass (no read of their own), under PCA's name. An array of another
        # namespace is read where it lives (see the covariance estimators).
        X = validate_rows(self, X, **FIT_INPUTS)
        # PCA's seed is its covariance estimator's: PCA says so, once.
        warn_if_seeded(self, budget)
        n_samples, n_features = X.shape
        if groups is not None:
            # Over persons: the persons are PCA's samples (their number is
            # public under replace-one-person neighbours; the rows' is not).
            check_unit_input(X, groups, name=name)
            n_samples = np.unique(groups).size
        released = self.neighbours == "add_remove"
        if released:
            # The number of units is private: checked against the features
            # alone here, then the released count is PCA's number of samples.
            n_samples = n_features
        with persons_in_messages(groups is not None):
            max_components = self._check_n_components(n_samples, n_features)
        estimator = self._release_covariance(X, max_components, groups)
        if released:
            n_samples = estimator.released_count_
        values, axes, total = self._spectrum(estimator, n_features, X)
        # scikit-learn's n - 1 denominator (undefined for one sample: NaN, as
        # scikit-learn's 0 / 0).
        ddof = n_samples / (n_samples - 1) if n_samples > 1 else np.nan
        k = self._n_components_kept(
            (values, None, total), ddof, n_samples, max_components
        )
        spectrum = values, axes(k), total
        rest = _remaining_variance(spectrum, k, max_components, n_features)
        namespace = namespace_of(X)
        dtype = X.dtype if namespace is None else _numpy_dtype(X.dtype, namespace[0])
        self._record_fit(estimator, dtype, spectrum, k, ddof, rest, n_samples)
        if groups is not None:
            self.n_samples_ = None  # no count over persons
        if namespace is not None:
            # The fitted arrays go back to the input's namespace and device.
            fitted_to_namespace(self, _FITTED_ARRAYS, namespace)
        warn_if_noise_dominated(self, self.signal_to_noise_, what="covariance release")
        return X

    def _check_before_spending(
        self, n_samples, y=None, *, n_features=None, n_rows=None
    ):
        """The fit's checks of public values that need no row, before any release.

        The parameters, the budget, ``bounds`` (a public box's values; with
        ``"private"``, the rows one feature's ranges need), an integer
        ``n_components`` against the number of rows, and the covariance
        estimator's own checks (with ``n_features``, the width of the rows
        as the first step of a pipeline: the rows its private radius needs).
        :class:`~dpcov.pipeline.PrivatePipeline` calls it before any of its
        steps runs, so that a refusal here spends nothing there either (the
        rest is checked by ``fit``, against the rows' width).
        """
        check_params_always(self)
        budget = self._check_budget()
        check_bounds_without_rows(
            self.bounds, n_samples, budget, name=type(self).__name__
        )
        k = self.n_components
        if isinstance(k, Integral) and k > n_samples:
            raise ValueError(
                f"n_components={k} must be between 1 and min(n_samples, "
                f"n_features); got {n_samples} sample{'' if n_samples == 1 else 's'}."
            )
        width = n_samples if n_features is None else min(n_samples, n_features)
        self._covariance_estimator(width)._check_before_spending(
            n_samples, n_features=n_features
        )

    def _check_n_components(self, n_samples, n_features):
        # Public checks of n_components against the shape; returns the
        # largest number of components.
        # n_samples is public (replace-one neighbours): scikit-learn's bound
        # on the number of components, and its rule for "mle", apply as is.
        max_components = min(n_samples, n_features)
        k = self.n_components
        if isinstance(k, Integral) and k > max_components:
            raise ValueError(
                f"n_components={k} must be between 1 and min(n_samples, "
                f"n_features)={max_components}."
            )
        if isinstance(k, str) and n_samples < n_features:
            raise ValueError(
                "n_components='mle' is only supported if n_samples >= n_features"
            )
        if self.covariance == "top_k" and not (k is None or isinstance(k, Integral)):
            raise ValueError(
                'covariance="top_k" needs an integer n_components (the number '
                f"of directions to sample), got {k!r}."
            )
        return max_components

    def _release_covariance(self, X, max_components, groups=None):
        # PCA's one release: the inner covariance estimator, fitted on X.
        estimator = self._covariance_estimator(max_components)
        if self.accountant is not None:
            estimator.set_params(accountant=self.accountant)
            estimator._accounting_label = type(self).__name__
        # The estimator's first pass checks the entries as it reads them; a
        # refusal names PCA.
        try:
            with warnings.catch_warnings():
                # PCA warns under its own name, at the user's call.
                warnings.simplefilter("ignore", NoiseDominatedWarning)
                warnings.simplefilter("ignore", SeededNoiseWarning)
                # PCA keeping few axes reads only the release's top
                # eigenvectors: they are computed as they are read (a
                # partial eigensolver), and its covariance_ at its first
                # read.
                with self._deferral(X.shape[1]):
                    estimator.fit(X, groups=groups)
        except NonFiniteInput as error:
            failed = error.named(f"{type(self).__name__}.fit")
        else:
            return estimator
        raise failed

    def _deferral(self, n_features):
        # The context of the covariance fit: its eigenvectors deferred where
        # PCA keeps at most PARTIAL_UP_TO of them (a number known before the
        # fit; a share of the variance or "mle" is decided after it).
        k = self.n_components
        if isinstance(k, Integral) and k <= PARTIAL_UP_TO * n_features:
            return deferred_eigenvectors()
        return nullcontext()

    def _spectrum(self, estimator, n_features, rows):
        # Post-processing of the release: its variances in decreasing order
        # (floored at 0), a function giving the axes of the first k, and its
        # total variance.
        spectrum = getattr(estimator, "_spectrum", None)
        if spectrum is not None and self.covariance != "top_k":
            # The estimator's eigendecomposition (from SPECTRAL_FROM features
            # on): the axes of the release before the shrinkage are its
            # vectors, ordered by the values before the shrinkage (a
            # non-decreasing map of them gives the values after it); only
            # the components kept are computed (spectrum.top: a partial
            # eigensolver where the eigenvectors were deferred), and get a
            # canonical basis.
            order = np.arange(n_features)[::-1]
            unshrunk = estimator._unshrunk_values[order]
            values = np.maximum(spectrum.values[order], 0.0)
            total = max(float(np.sum(spectrum.values)), 0.0)

            def axes(k):
                # The top k vectors, and those of a tied run reaching into
                # them (its canonical basis reads the whole run).
                needed = max([k, *(stop for _, stop in _tied_runs(unshrunk, k))])
                vectors = spectrum.top(needed)[:, ::-1]
                return _sign_convention(_canonical_ties_top(unshrunk, vectors, k))

            return values, axes, total
        covariance = as_host(estimator.covariance_)
        if self.covariance == "top_k" and estimator.bounds_ is None:
            # (With bounds the sampled directions are in the box's unit
            # coordinates; the axes in original units are those of
            # covariance_, below.)
            components = as_host(estimator.components_)
            values = np.einsum("ij,jk,ik->i", components, covariance, components)
            order = np.argsort(values)[::-1]
            components, values = components[order], values[order]
            components = _canonical_ties(values, np.array(components))
        else:
            # (d x d: single-threaded BLAS for d <= 1000, see utils._threads.)
            # The axes of the release before any shrinkage toward zero (the
            # same as covariance_'s, which may be the zero matrix and have
            # none); the variances along them are covariance_'s.
            with small_matrix_blas(n_features), device_algebra(rows):
                values, vectors = symmetric_eigh(
                    as_host(estimator._unshrunk_covariance), host=np.linalg.eigh
                )
            values, components = values[::-1], vectors[:, ::-1].T
            components = _canonical_ties(values, np.array(components))
            if estimator.shrinkage_ > 0:
                values = np.einsum("ij,jk,ik->i", components, covariance, components)
                # The shrunk release is a non-decreasing map of the one
                # before, so the order holds up to rounding: reordered only
                # where it does not (a rounding-level tie must not decide).
                scale = max(float(np.max(np.abs(values))), np.finfo(float).tiny)
                if np.any(np.diff(values) > 1e-9 * scale):
                    order = np.argsort(-values, kind="stable")
                    components, values = components[order], values[order]
        values = np.maximum(values, 0.0)
        total = max(float(np.trace(covariance)), 0.0)
        # The same components whichever eigendecomposition (host or device)
        # gave the axes: above, a canonical basis of each tied eigenvalue's
        # span (a release clamped at its bound has several eigenvalues equal
        # to it, and any basis of their span is theirs); here the signs.
        components = _sign_convention(np.array(components))
        return values, lambda k: components, total

    def _n_components_kept(self, spectrum, ddof, n_samples, max_components):
        # The number of components, from n_components and the noisy spectrum.
        values, _, total = spectrum
        k = self.n_components
        if k is None:
            k = max_components
        elif isinstance(k, str):
            # Minka's MLE on the noisy spectrum (post-processing).
            k = int(np.argmax(_minka_log_likelihoods(ddof * values, n_samples)))
        elif not isinstance(k, Integral):
            # Fewest components whose private ratio reaches k (post-processing).
            ratios = np.cumsum(values) / total if total > 0 else np.ones(values.size)
            k = int(min(np.searchsorted(ratios, k, side="left") + 1, max_components))
        return k

    def _record_fit(self, estimator, dtype, spectrum, k, ddof, rest, n_samples):
        # The fitted attributes: the kept part of the noisy spectrum, and the
        # inner estimator's release and record of its fit.
        values, components, total = spectrum
        self.components_ = components[:k].astype(dtype)
        self.explained_variance_ = (ddof * values[:k]).astype(dtype)
        self.explained_variance_ratio_ = (
            values[:k] / total if total > 0 else np.zeros(k)
        ).astype(dtype)
        # sqrt((n - 1) explained_variance_) = sqrt(n lambda).
        self.singular_values_ = np.sqrt(n_samples * values[:k]).astype(dtype)
        self.mean_ = as_host(estimator.location_).astype(dtype)
        self.noise_variance_ = float(ddof * rest) if rest > 0 else 0.0
        self.n_components_ = k
        self.n_samples_ = n_samples
        self.covariance_estimator_ = estimator
        self.data_norm_ = estimator.data_norm_
        self.bounds_ = estimator.bounds_
        self.noise_level_ = estimator.noise_level_
        self.signal_to_noise_ = estimator.signal_to_noise_
        for name in PRIVACY_RECORD:  # the covariance's fit is PCA's
            setattr(self, name, getattr(estimator, name))

    def inverse_transform(self, X):
        """Map projections back to the feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_components)
            Projections (whitened if ``whiten``), as :meth:`transform` gives.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_ + mean_`` (the components rescaled by the
            square roots of ``explained_variance_`` first if ``whiten``).
        """
        check_is_fitted(self)
        X = validate_rows(
            self,
            X,
            n_columns=self.n_components_,
            accept_sparse=("csr", "csc"),
            method="inverse_transform",
            accept_array_api=True,
        )
        check_fitted_namespace(self, self.components_, X, "inverse_transform")
        xp = _namespace(X)
        components = self.components_
        if self.whiten:
            components = xp.sqrt(self.explained_variance_[:, None]) * components
        with quiet_float_errors():
            return X @ components + self.mean_

    def score_samples(self, X):
        """Log-likelihood of each sample under the probabilistic PCA model.

        The model is ``N(mean_, get_covariance())``; when that covariance is
        singular (no variance left outside the components), the density is
        degenerate and every log-likelihood is ``-inf``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        ll : ndarray of shape (n_samples,)
            Log-likelihood of each sample under the fitted model.
        """
        check_is_fitted(self)
        X = validate_rows(
            self, X, reset=False, method="score_samples", accept_array_api=True
        )
        check_fitted_namespace(self, self.components_, X, "score_samples")
        # (An array of another namespace: computed on host copies, returned in
        # its namespace.)
        namespace = namespace_of(X)
        X = as_host(X)
        covariance = as_host(self.get_covariance()).astype(np.float64)
        values, vectors = np.linalg.eigh(covariance)
        if values.min() <= 0.0:
            log_like = np.full(X.shape[0], -np.inf)
        else:
            with quiet_float_errors():
                projected = (X - as_host(self.mean_)) @ vectors
                log_like = -0.5 * np.sum(projected**2 / values, axis=1)
            log_like -= 0.5 * (
                X.shape[1] * math.log(2.0 * np.pi) + np.sum(np.log(values))
            )
            # Rows too extreme for float64 arithmetic: a likelihood of zero.
            log_like = np.where(np.isnan(log_like), -np.inf, log_like)
        return log_like if namespace is None else to_namespace(log_like, *namespace)

    def score(self, X, y=None):
        """Average log-likelihood of the samples under the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        ll : float
            Mean of :meth:`score_samples`.
        """
        return float(np.mean(as_host(self.score_samples(X))))

    def _output_range(self):
        # ("data_norm", r): r bounds the norm of transform's output for rows
        # inside the fit's geometry, from public values and the release:
        # ||(x - mean_) @ components_.T|| <= ||x - mean_|| (orthonormal
        # rows), at most the farthest corner of the box from mean_, or
        # data_norm_ + ||mean_|| for rows of norm at most data_norm_;
        # whitening divides by the smallest released standard deviation.
        check_is_fitted(self)
        mean = as_host(self.mean_)
        if self.bounds_ is not None:
            lower, upper = (as_host(bound) for bound in self.bounds_)
            far = np.maximum(np.abs(lower - mean), np.abs(upper - mean))
            radius = float(np.linalg.norm(far))
        else:
            radius = float(self.data_norm_ + np.linalg.norm(mean))
        if self.whiten:
            smallest = float(np.min(as_host(self.explained_variance_)))
            if not smallest > 0:
                return None
            radius /= math.sqrt(smallest)
        return ("data_norm", radius) if math.isfinite(radius) else None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        # Arrays of other namespaces under array_api_dispatch.
        tags.array_api_support = True
        return tags
