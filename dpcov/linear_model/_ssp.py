"""Least squares by sufficient statistics perturbation (SSP and AdaSSP).

Least squares needs only ``X^T X`` and ``X^T y``. With every row clipped to a
public box (features) and range (target), both have bounded sensitivity, and
releasing them with additive noise and solving is post-processing of the
release (Vu and Slavkovic, 2009; Dwork, Talwar, Thakurta and Zhang, 2014).
AdaSSP (Wang, 2018, Algorithm 2) adds a ridge chosen privately: the smallest
that makes the noisy ``X^T X`` positive definite with high probability, from a
private lower bound on the smallest eigenvalue of ``X^T X``.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from abc import ABCMeta, abstractmethod
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_is_fitted

from .._config import config_context
from ..accounting import compose
from ..base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    ErrorBarsMixin,
    PrivateEstimatorMixin,
    warn_if_noise_dominated,
)
from ..mechanisms import _noise, calibrate_additive
from ..mechanisms._sensitivity import ssp_sensitivities
from ..utils._docstrings import fill_doc
from ..utils._error_bars import BLOCK_BYTES, N_DRAWS, bootstrap_bars
from ..utils._geometry import plan_geometry, release_ranges
from ..utils._gram import CHUNK_BYTES
from ..utils._gram._units import (
    UnitRows,
    check_group_parameters,
    check_unit_input,
    persons_in_messages,
)
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._private_count import (
    UNBINDING_COUNT,
    release_count,
    split_count,
)
from ..utils._private_ranges import check_bounds_without_rows, ranges_first_pass
from ..utils._random import spawn_generators
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_params_always,
)
from ..utils.validation import check_bounds, to_unit_box, unit_box

__all__ = ["LinearRegression", "Ridge", "adassp_ridge", "ssp_noise"]

#: AdaSSP's shares of the statistics' budget: the smallest eigenvalue, the
#: Gram matrix, the cross products.
ADASSP_SHARES = {"lambda_min": 0.1, "gram": 0.45, "cross": 0.45}
#: SSP's shares with a public ridge.
SSP_SHARES = {"gram": 0.5, "cross": 0.5}
#: Failure probability of AdaSSP's two high-probability bounds.
ADASSP_BETA = 0.05


def ssp_noise(split, n_columns):
    """Calibrated noise of each released statistic.

    The rows are ``u = (z, 1)``, ``z`` in the
    unit box ``[-1, 1]^d``, so ``||u||**2 <= B**2 = n_columns``, and the
    target ``t`` in ``[-1, 1]``. Replacing one row changes ``U^T U`` by
    ``u' u'^T - u u^T`` (Frobenius norm at most ``sqrt(2) B**2``; see
    :func:`~dpcov.mechanisms._sensitivity.ssp_sensitivities`), its
    smallest eigenvalue by at most ``B**2`` (Weyl's inequality), and
    ``U^T t`` by ``u' t' - u t`` (L2 norm at most ``2 B``, L1 at most
    ``2 sqrt(n_columns) B``). Adding or removing one row moves them by
    ``u u^T`` (at most ``B**2``), at most ``B**2`` and ``u t`` (at most
    ``B``, L1 ``sqrt(n_columns) B``): the same noise bounds both relations.

    Parameters
    ----------
    split : dict of str to ZCDP or PureDP
        The budgets of ``"gram"``, ``"cross"`` and, for AdaSSP,
        ``"lambda_min"``.
    n_columns : int
        Columns of ``U``: the features, plus one for the intercept.

    Returns
    -------
    noise : dict of str to AdditiveNoise
        The noise of each statistic (Gaussian under zCDP, Laplace under pure
        DP).
    """
    return {
        name: calibrate_additive(split[name], l2_sensitivity=l2, l1_sensitivity=l1)
        for name, (l2, l1) in ssp_sensitivities(n_columns).items()
        if name in split
    }


def _tail(noise, beta):
    # A bound that one coordinate of the noise exceeds with probability beta.
    if noise.law == "gaussian":
        return noise.scale * math.sqrt(2.0 * math.log(1.0 / beta))
    return noise.scale * math.log(1.0 / beta)


def adassp_ridge(lambda_min, noise, n_columns, beta=ADASSP_BETA):
    """AdaSSP's ridge, from the private smallest eigenvalue (Wang, 2018).

    ``lambda = max(0, b - lambda_lower)``: ``b`` bounds the spectral norm of
    the symmetric noise added to ``U^T U`` with probability ``1 - beta``
    (``s (2 sqrt(m) + t)`` for ``m`` columns, noise standard deviation ``s``
    per entry and ``t`` the one-sided tail of ``beta``), and
    ``lambda_lower = max(0, lambda_min~ - tail)`` is a lower bound on the
    smallest eigenvalue of ``U^T U`` with probability ``1 - beta``. The
    noisy ``U^T U + lambda I`` is then positive definite and the ridge no
    larger than the noise needs. Post-processing of the private
    ``lambda_min~``.

    Parameters
    ----------
    lambda_min : float
        The released (noisy) smallest eigenvalue of ``U^T U``.
    noise : dict of str to AdditiveNoise
        :func:`ssp_noise`'s.
    n_columns : int
        Columns of ``U``.
    beta : float, default=0.05
        Failure probability of each bound.

    Returns
    -------
    ridge : float
        Non-negative.
    """
    lower = max(0.0, lambda_min - _tail(noise["lambda_min"], beta))
    spread = noise["gram"].std * (2.0 * math.sqrt(n_columns)) + _tail(
        noise["gram"], beta
    )
    return max(0.0, spread - lower)


def _unit_statistics(X, y, box, target_box, units=None):
    # One chunked pass: U^T U, U^T t over the rows u = (z, 1) of the box's
    # unit coordinates and the target's t, all clipped. With units (a
    # UnitRows: the kept rows, person after person, each weighing 1 / k_p):
    # the sums of each person's averaged terms.
    n_samples, n_features = X.shape
    if isinstance(units, UnitRows):
        rows_read, weights = units.rows, units.mean_weights
    else:
        rows_read, weights, units = np.arange(n_samples), None, None
    columns = n_features + 1
    gram = np.zeros((columns, columns))
    cross = np.zeros(columns)
    step = max(1, CHUNK_BYTES // (8 * (columns + 1)))
    for start in range(0, rows_read.size, step):
        index = rows_read[start : start + step]
        rows = X[index] if units is not None else X[start : start + step]
        rows = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows)
        z = to_unit_box(rows, *box)
        z = np.hstack([z, np.ones((z.shape[0], 1))])
        t = to_unit_box(y[index], *target_box)
        if weights is not None:
            w = weights[start : start + step]
            t = t * w
            z_weighted = z * np.sqrt(w)[:, np.newaxis]
            gram += z_weighted.T @ z_weighted
        else:
            gram += z.T @ z
        cross += z.T @ t
    return gram, cross


def _solve(gram, cross, penalty):
    # (gram + diag(penalty)) theta = cross; least squares when singular.
    matrix = gram + np.diag(penalty)
    try:
        return linalg.solve(matrix, cross, assume_a="sym", check_finite=False)
    except (linalg.LinAlgError, ValueError):
        return linalg.lstsq(matrix, cross, check_finite=False)[0]


#: Seed of the prediction noise's bootstrap: its draws are not a release's.
SIMULATION_SEED = 0
#: The samplers of the public laws the bootstraps draw.
_LAWS = {"gaussian": _noise.gaussian, "laplace": _noise.laplace}


def prediction_noise(released, noise, penalty_of):
    """The noise in the model's predictions, and the spread of their signal.

    Post-processing of the released statistics and the public noise only
    (in the target's unit coordinates). The released ``U^T U`` and ``U^T t``
    stand for the truth: a parametric bootstrap (Efron and Tibshirani, 1993,
    Ch. 6) reruns the release on them, with draws of its public noise from a
    fixed generator (AdaSSP's smallest eigenvalue too, so that the ridge
    adapts as the release's did), solves again, and averages ``delta^T M
    delta`` over the draws, ``delta`` the change of the coefficients and
    ``M`` the released second moment of the rows ``u`` (the released ``U^T
    U`` over its own intercept entry, the noisy count of rows, with
    negative eigenvalues set to 0): the predicted excess squared error of
    the predictions. The spread of the predictions, ``theta^T (M - m m^T)
    theta`` with ``m`` the mean row, holds that noise too: its own share,
    the draws' mean ``delta^T (M - m m^T) delta``, is taken off.

    Parameters
    ----------
    released : dict
        ``"gram"``, ``"cross"`` (and for AdaSSP ``"lambda_min"``), the noisy
        statistics.
    noise : dict of str to AdditiveNoise
        :func:`ssp_noise`'s.
    penalty_of : callable
        The ridge on each coefficient from released statistics (the fit's
        own rule).

    Returns
    -------
    excess, signal : float
        ``inf`` and 0 where the release is not finite, or where its count
        of rows (the intercept entry) is within twice its noise's standard
        deviation of zero.
    """
    gram, cross = released["gram"], released["cross"]
    if not (np.all(np.isfinite(gram)) and np.all(np.isfinite(cross))):
        return math.inf, 0.0
    count = float(gram[-1, -1])
    if not count > 2.0 * noise["gram"].std:
        # The release cannot tell its own number of rows from its noise:
        # no second moment to weigh the predictions with, no figure.
        return math.inf, 0.0
    values, vectors = np.linalg.eigh((gram + gram.T) / (2.0 * count))
    moment = (vectors * np.maximum(values, 0.0)) @ vectors.T
    mean = moment[:, -1]
    spread_matrix = moment - np.outer(mean, mean)
    theta = _solve(gram, cross, penalty_of(released))
    rng = np.random.default_rng(SIMULATION_SEED)
    size = gram.shape[0]
    draws = int(min(16, max(2, math.ceil(128 / size))))
    lowest = None
    if "lambda_min" in noise:
        lowest = float(linalg.eigvalsh(gram, subset_by_index=[0, 0])[0])
    excess, noise_spread = [], []
    with config_context(secure_noise=False):
        # Draws of the public laws (simulations, not releases).
        for _ in range(draws):
            draw = {
                "gram": gram
                + _noise.symmetric_matrix(
                    rng, size, noise["gram"].scale, noise["gram"].law
                ),
                "cross": cross
                + _LAWS[noise["cross"].law](rng, noise["cross"].scale, size),
            }
            if lowest is not None:
                law = noise["lambda_min"]
                draw["lambda_min"] = lowest + _LAWS[law.law](rng, law.scale)
            delta = _solve(draw["gram"], draw["cross"], penalty_of(draw)) - theta
            excess.append(float(delta @ moment @ delta))
            noise_spread.append(float(delta @ spread_matrix @ delta))
    spread = float(theta @ spread_matrix @ theta)
    return float(np.mean(excess)), max(spread - float(np.mean(noise_spread)), 0.0)


def coefficient_draws(released, noise, penalty):
    """Draws of the unit-coordinate coefficients around the release's statistics.

    The parametric bootstrap of :func:`prediction_noise` at the fit's own
    ridge ``penalty`` (held fixed: the error bars cover the ridge solution
    of the clipped rows at it): draws of the public noise on ``U^T U`` and
    ``U^T t`` from the fixed generator, each solved, in batches of at most
    :data:`~dpcov.utils._error_bars.BLOCK_BYTES` of matrices. ``N_DRAWS``
    draws up to 64 columns, fewer beyond (at least 400: a 5% quantile's
    Monte Carlo error is then about 1% of coverage), since each costs a
    solve of ``(d + 1)**3 / 3`` flops.

    Parameters
    ----------
    released : dict
        ``"gram"`` and ``"cross"``, the noisy statistics.
    noise : dict of str to AdditiveNoise
        :func:`ssp_noise`'s.
    penalty : ndarray of shape (n_columns,)
        The fit's ridge on each column.

    Returns
    -------
    draws : ndarray of shape (n_draws, n_columns)
    """
    gram, cross = released["gram"], released["cross"]
    size = gram.shape[0]
    n_draws = min(N_DRAWS, max(400, N_DRAWS * 64 // size))
    per_batch = max(1, min(256, BLOCK_BYTES // (8 * size * size)))
    rng = np.random.default_rng(SIMULATION_SEED)
    rows, cols = np.triu_indices(size)
    off = rows != cols
    draws = []
    with config_context(secure_noise=False):
        for start in range(0, n_draws, per_batch):
            batch = min(per_batch, n_draws - start)
            law = noise["gram"]
            upper = _LAWS[law.law](rng, law.scale, (batch, rows.size))
            matrices = np.broadcast_to(gram + np.diag(penalty), (batch, size, size))
            matrices = matrices.copy()
            matrices[:, rows, cols] += upper
            matrices[:, cols[off], rows[off]] += upper[:, off]
            law = noise["cross"]
            right = cross + _LAWS[law.law](rng, law.scale, (batch, size))
            draws.append(_batch_solve(matrices, right))
    return np.concatenate(draws)


def _batch_solve(matrices, right):
    # Each system solved; least squares for a singular one (as _solve).
    try:
        return np.linalg.solve(matrices, right[..., np.newaxis])[..., 0]
    except np.linalg.LinAlgError:
        return np.array(
            [
                _solve(matrix, vector, np.zeros(vector.shape[0]))
                for matrix, vector in zip(matrices, right, strict=True)
            ]
        )


def _check_target_bounds(target_bounds):
    # The target's public range as floats (lower < upper, finite).
    if target_bounds is None:
        raise ValueError(
            "target_bounds=(lower, upper) is required: a public range of the "
            "target, known without looking at the data (a target outside it is "
            "refused)."
        )
    try:
        lower, upper = check_bounds(target_bounds, 1)
    except ValueError as exc:
        raise ValueError(f"target_bounds: {str(exc).replace('bounds: ', '')}") from None
    return lower, upper


class _BaseSSP(
    ErrorBarsMixin,
    PrivateEstimatorMixin,
    RegressorMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Shared fit of the SSP regressors (see :class:`LinearRegression`)."""

    _hardened_noise = True
    _default_score = "neg_squared_error"

    _parameter_constraints: dict = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "bounds": ["array-like", StrOptions({"private"}), None],
        "target_bounds": ["array-like", None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "neighbours": [StrOptions({"replace", "add_remove"})],
    }

    @abstractmethod
    def _shares(self):
        """The shares of the statistics' budget (see ``ssp_noise``)."""

    @abstractmethod
    def _penalty(self, released, noise, half, n_columns):
        """The ridge on each column of ``U`` (unit coordinates)."""

    def _check_before_spending(self, n_samples, y, *, n_features=None, n_rows=None):
        """The fit's checks of public values and targets, before any release.

        The parameters, ``target_bounds``, ``bounds`` (a public box's values;
        with ``"private"``, the units one feature's ranges need), the budget
        and the targets (numbers, one per row, each within
        ``target_bounds``). ``n_samples`` counts the units (persons, with
        ``n_rows`` then the number of rows).
        :class:`~dpcov.pipeline.PrivatePipeline` calls it before any of its
        steps runs, so that a refusal here spends nothing there either. No
        message names a target.

        Returns
        -------
        target_box, budget, y
        """
        check_params_always(self)
        target_box = _check_target_bounds(self.target_bounds)
        budget = self._check_budget()
        check_bounds_without_rows(
            self.bounds, n_samples, budget, name=type(self).__name__
        )
        rows = n_samples if n_rows is None else n_rows
        y = _validate_target(type(self).__name__, y, rows, target_box)
        return target_box, budget, y

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None):
        """Fit the private least-squares coefficients.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows; each feature is clipped to its range in
            ``bounds`` (``X`` itself is not modified).
        y : array-like of shape (n_samples,)
            Targets, each within ``target_bounds``.
        groups : array-like of shape (n_samples,), default=None
            The person of each row, with ``max_rows_per_group`` set (see
            :ref:`privacy_units`); in memory (a NumPy array or a SciPy
            sparse matrix).

        Returns
        -------
        self : object
            The fitted regressor.
        """
        check_params_always(self)
        name = type(self).__name__
        check_group_parameters(groups, self.max_rows_per_group, name=name)
        if self.bounds is None:
            raise ValueError(
                f"{type(self).__name__} needs bounds=(lower, upper), public ranges "
                "of the features, or bounds='private' (found privately with a "
                "quarter of the budget)."
            )
        # The public values before the rows (checked again, with the targets,
        # below).
        _check_target_bounds(self.target_bounds)
        self._check_budget()
        X = validate_rows(self, X, accept_sparse="csr")
        n_samples, n_features = X.shape
        n_units = n_samples
        if groups is not None:
            # The persons are the units (their number is public under
            # replace-one-person neighbours, the rows' is not).
            check_unit_input(X, groups, name=name)
            n_units = np.unique(groups).size
        # Under add/remove only the private ranges read a count, released
        # once the fit is recorded: the checks before read none.
        ranges_count = self.neighbours == "add_remove" and isinstance(self.bounds, str)
        if ranges_count:
            n_units = UNBINDING_COUNT
        with persons_in_messages(groups is not None):
            target_box, budget, y = self._check_before_spending(
                n_units, y, n_rows=n_samples
            )
        rng = self._noise_generator(budget)
        units = X
        if groups is not None:
            # At most k rows of each person, at random (a person's terms
            # are averaged, its counts weighted: see UnitRows).
            (order,) = spawn_generators(rng, 1)
            units = UnitRows.select(
                X, groups, self.max_rows_per_group, order, name=name
            )
        geometry, split = self._release_geometry(
            units, budget, n_units, rng, ranges_count=ranges_count
        )
        box = geometry.box
        n_columns = n_features + 1
        gram, cross = _unit_statistics(X, y, box, target_box, units)
        noise = ssp_noise(split, n_columns)
        released = {}
        if "lambda_min" in noise:
            smallest = float(linalg.eigvalsh(gram, subset_by_index=[0, 0])[0])
            released["lambda_min"] = float(noise["lambda_min"].add(smallest, rng))
        released["gram"] = noise["gram"].add_symmetric(gram, rng)
        released["cross"] = noise["cross"].add(cross, rng)
        half = geometry.half_widths
        penalty = self._penalty(released, noise, half, n_columns)
        theta = _solve(released["gram"], released["cross"], penalty)
        self._record(theta, box, target_box, penalty, split)
        self._record_noise(released, noise, half, n_columns, target_box)
        self._statistics_noise = (released, noise, penalty, box, target_box)
        return self

    def _error_bars(self, alpha):
        # coef_ and intercept_ from draws of the unit coefficients, mapped to
        # the original units as _record maps the release (a linear map).
        released, noise, penalty, box, target_box = self._statistics_noise
        theta = _solve(released["gram"], released["cross"], penalty)
        draws = coefficient_draws(released, noise, penalty)
        value, draws = (
            np.vstack(_original_units(t.reshape(theta.shape[0], -1), box, target_box))
            for t in (theta, draws.T)
        )
        low, high = bootstrap_bars(value[:, 0], draws.T, alpha)
        return {
            "coef_": (low[:-1], high[:-1]),
            "intercept_": (float(low[-1]), float(high[-1])),
        }

    def _record_noise(self, released, noise, half, n_columns, target_box):
        # The predictions' noise figure (post-processing; see
        # prediction_noise), in the target's units, and the warning.
        excess, signal = prediction_noise(
            released,
            noise,
            lambda statistics: self._penalty(statistics, noise, half, n_columns),
        )
        target_half = unit_box(*target_box)[1][0]
        self.predicted_error_ = float(target_half * math.sqrt(max(excess, 0.0)))
        self.signal_to_noise_ = (
            math.inf if excess <= 0.0 else math.sqrt(signal / excess)
        )
        warn_if_noise_dominated(
            self,
            self.signal_to_noise_,
            what="prediction",
            remedy=(
                "Its predictions are predicted no better than the intercept "
                "alone. Use a larger budget, more rows, tighter public "
                "bounds, or fewer features."
            ),
        )

    def _release_geometry(self, units, budget, n_units, rng, *, ranges_count):
        # The geometry step, and the budget spent: the box (public, or the
        # private ranges with a quarter of the budget) and the statistics'
        # shares of the rest. With ranges_count (add/remove, private ranges)
        # the plan is made at n_units (a count no minimum binds) before, and
        # at a noisy count of the units (1/16 of the budget) after, the fit
        # is recorded. Returns (geometry, split), the split of every step.
        persons = isinstance(units, UnitRows)
        plan_budget = split_count(budget)[1] if ranges_count else budget
        shares, n_features = self._shares(), units.shape[1]
        with persons_in_messages(persons):
            geometry, split = plan_geometry(
                plan_budget, n_units, n_features, bounds=self.bounds, shares=shares
            )
        first = None if geometry.ranges is None else ranges_first_pass(units)
        self._spend_budget(budget)  # everything above used public values only
        if ranges_count:
            count = split_count(budget)[0]
            _, released = release_count(units, count, rng)
            with persons_in_messages(persons, released=True):
                geometry, split = plan_geometry(
                    plan_budget, released, n_features, bounds=self.bounds, shares=shares
                )
            geometry = replace(geometry, split={"count": count, **geometry.split})
        if geometry.ranges is not None:
            geometry = release_ranges(geometry, units, first, rng=rng)
        return geometry, {**geometry.split, **split}

    def _record(self, theta, box, target_box, penalty, split):
        coef, intercept = _original_units(theta, box, target_box)
        n_features = coef.shape[0]
        self.coef_ = coef
        self.intercept_ = float(intercept)
        self.bounds_ = box
        self.target_bounds_ = (float(target_box[0][0]), float(target_box[1][0]))
        self.ridge_ = float(np.max(penalty[:n_features])) if n_features else 0.0
        self._record_privacy(compose(split.values()), split)

    def predict(self, X):
        """Predict targets: ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows (not clipped: post-processing of the release).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, accept_sparse="csr", method="predict")
        # Extreme rows overflow silently (a warning would single them out).
        with quiet_float_errors():
            return np.asarray(X @ self.coef_).reshape(-1) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _original_units(theta, box, target_box):
    # Unit coefficients (d + 1, ...) back to the original units: t = z .
    # theta_z + theta_0 with z = (x - c) / h and y = c_y + h_y t.
    center, half = unit_box(*box)
    target_center, target_half = unit_box(*target_box)
    n_features = center.shape[0]
    scale = (target_half[0] / half).reshape((-1,) + (1,) * (theta.ndim - 1))
    coef = scale * theta[:n_features]
    intercept = target_center[0] + target_half[0] * theta[n_features] - center @ coef
    return coef, intercept


def _validate_target(name, y, n_samples, target_box=None):
    # A 1-D numeric finite target of n_samples values; the messages name no
    # value (NumPy's conversion errors may quote one: raised outside them).
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    problem = None
    try:
        target = np.asarray(y)
        if target.dtype.kind == "c":
            problem = "y must be real-valued"
        elif target.dtype.kind in "mM":
            # (NumPy would make them counts of time units since the epoch.)
            problem = "y holds dates or durations: convert them to numbers first"
        else:
            target = target.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        problem = "y holds values that are not numbers"
    if problem is None:
        if target.ndim == 2 and target.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; "
                "it is read as one.",
                DataConversionWarning,
                stacklevel=3,
            )
            target = target.reshape(-1)
        if target.ndim != 1:
            # (No count: the rows' number is private over persons and under
            # add/remove neighbours.)
            problem = f"y should be a 1d array, got {target.ndim} dimensions"
            if target.ndim == 2:
                problem = f"y should be a 1d array, got {target.shape[1]} columns"
        elif target.shape[0] != n_samples:
            problem = "X and y have different numbers of rows"
        elif not np.all(np.isfinite(target)):
            problem = "y contains NaN or infinity (targets must be finite)"
        elif target_box is not None and not np.all(
            (target >= target_box[0][0]) & (target <= target_box[1][0])
        ):
            # Outside the domain, as NaN is: the refusal tells that such a
            # row exists (the documented price), and names no value.
            problem = (
                "y holds a target outside target_bounds (refused: widen "
                "target_bounds, or clip the targets to it before fitting)"
            )
    if problem is not None:
        raise ValueError(f"{name}.fit: {problem}.")
    return target


@fill_doc
class LinearRegression(_BaseSSP):
    """Private least squares by AdaSSP (sufficient statistics perturbation).

    A drop-in for :class:`sklearn.linear_model.LinearRegression` given public
    ranges of the features (``bounds``) and of the target
    (``target_bounds``). Each feature is clipped to its range and mapped to
    ``[-1, 1]``, the target likewise; ``U^T U`` and ``U^T t`` (``U`` the
    mapped rows with a column of ones for the intercept, ``t`` the mapped
    target) are released with additive noise (an intercept is always fitted,
    not penalised), and the coefficients solve the
    noisy normal equations with a ridge chosen privately: AdaSSP (Wang 2018,
    Algorithm 2), which releases the smallest eigenvalue of ``U^T U`` and
    takes the smallest ridge that makes the noisy system positive definite
    with high probability (:func:`adassp_ridge`). The fit is rho-zCDP (hence
    (``epsilon``, ``delta``)-DP) with ``delta > 0`` or ``rho``, and pure
    ``epsilon``-DP (Laplace noise) with ``delta=0``, with respect to
    replacing one row (features and target), and to adding or removing one
    with ``neighbours="add_remove"`` (a person with ``groups``).

    Read more in the :ref:`User Guide <linear_models>`.

    Parameters
    ----------
    {epsilon}
    {delta}
    {rho}
    bounds : tuple (lower, upper) or "private"
        Public ranges of the features (scalars or arrays of shape
        ``(n_features,)``); ``"private"`` finds them privately with a
        quarter of the budget (see :ref:`private_ranges`). Required.
    target_bounds : tuple (lower, upper)
        Public range of the target (two scalars). Required. A target outside
        it is refused with a ValueError (outside the domain, as NaN is: the
        error tells that such a row exists, and names no value); clip the
        targets to it first to keep such rows.
    {max_rows_per_group_ssp}
    {neighbours_ssp}
    {accountant}
    {random_state}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients in the original units.
    intercept_ : float
        Intercept in the original units.
    ridge_ : float
        The ridge added to the noisy ``U^T U`` (unit coordinates; released).
    bounds_ : tuple of ndarray
        The feature ranges used (public, or the private ranges).
    target_bounds_ : tuple of float
        The target's range.
    {prediction_noise_attributes}
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The guarantee of the fit.
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of the guarantee.
    delta_spent_ : float
        Delta of the guarantee.
    rho_spent_ : float
        The zCDP parameter of the guarantee.
    budget_split_ : dict of str to PureDP or ZCDP
        ``"bounds"`` (with private ranges), ``"lambda_min"``, ``"gram"``,
        ``"cross"``; they compose to ``guarantee_``.
    noise_sampler_ : str
        The sampler of the fit's noise.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    Ridge : The same with a public ridge (no eigenvalue released).
    sklearn.linear_model.LinearRegression : The non-private estimator.

    Notes
    -----
    The statistics' budget is split 0.1 (smallest eigenvalue), 0.45 (Gram
    matrix), 0.45 (cross products). Objective perturbation (Kifer, Smith and
    Thakurta, 2012) reaches similar accuracy on well-conditioned problems
    but needs a strongly convex loss and an exact minimiser; SSP's release
    is two statistics, and any solver on them is post-processing. Wang
    (2018) found AdaSSP at least as accurate as objective perturbation on
    nearly all of the UCI regression tables he compared.

    References
    ----------
    .. [1] Wang, Y.-X. "Revisiting differentially private linear
       regression: optimal and adaptive prediction & estimation in unbounded
       domain". UAI 2018. https://arxiv.org/abs/1803.02596.
    .. [2] Vu, D. and Slavkovic, A. "Differential privacy for clinical trial
       data: preliminary evaluations". ICDM Workshops 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 3.0 + rng.normal(0, 0.1, 20000)
    >>> model = LinearRegression(epsilon=1.0, bounds=(-1.0, 1.0),
    ...                          target_bounds=(-5.0, 10.0), random_state=0)
    >>> round(model.fit(X, y).score(X, y), 2)
    0.99
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        bounds=None,
        target_bounds=None,
        max_rows_per_group=None,
        neighbours="replace",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds = bounds
        self.target_bounds = target_bounds
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.accountant = accountant
        self.random_state = random_state

    def _shares(self):
        return dict(ADASSP_SHARES)

    def _penalty(self, released, noise, half, n_columns):
        ridge = adassp_ridge(released["lambda_min"], noise, n_columns)
        penalty = np.full(n_columns, ridge)
        penalty[-1] = 0.0  # the intercept is not penalised
        return penalty


@fill_doc
class Ridge(_BaseSSP):
    """Private ridge regression by sufficient statistics perturbation.

    :class:`LinearRegression`'s release with a public ridge ``alpha`` in
    place of AdaSSP's private one: the whole statistics' budget goes to
    ``U^T U`` and ``U^T t`` (half each). ``alpha`` penalises the
    coefficients in the original units, as scikit-learn's
    :class:`~sklearn.linear_model.Ridge` does (the intercept is not
    penalised): ``alpha / h_j**2`` on coefficient ``j`` in unit coordinates
    (``ridge_`` is the largest). The noise is added on top, and a noisy
    ``U^T U`` whose smallest eigenvalue falls below the noise's spectral
    norm (about ``2 sqrt(d + 1)`` times its standard deviation per entry,
    ``(d + 1) / sqrt(rho / 2)`` under zCDP) makes the solution unstable: the
    unit-coordinate ridge should be at least that, or use
    :class:`LinearRegression`, which chooses it privately. Same guarantee as
    :class:`LinearRegression`.

    Read more in the :ref:`User Guide <linear_models>`.

    Parameters
    ----------
    alpha : float, default=1.0
        Public ridge penalty, in the original units (``alpha ||coef||**2``).
    {epsilon}
    {delta}
    {rho}
    bounds : tuple (lower, upper) or "private"
        Public ranges of the features, or ``"private"``. Required.
    target_bounds : tuple (lower, upper)
        Public range of the target. Required.
    {max_rows_per_group_ssp}
    {neighbours_ssp}
    {accountant}
    {random_state}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients in the original units.
    intercept_ : float
        Intercept in the original units.
    ridge_ : float
        The largest ridge on a coefficient in unit coordinates
        (``alpha / h_j**2`` for half-width ``h_j``).
    bounds_ : tuple of ndarray
        The feature ranges used.
    target_bounds_ : tuple of float
        The target's range.
    {prediction_noise_attributes}
    guarantee_ : dpcov.accounting.PureDP or dpcov.accounting.ZCDP
        The guarantee of the fit.
    privacy_unit_ : {"row", "person"}
        Whom the guarantee protects: a row, or a person (a fit with
        ``groups`` and ``max_rows_per_group``; see :ref:`privacy_units`).
    neighbours_ : {"replace", "add_remove"}
        The neighbouring relation the guarantee holds under (an
        ``"add_remove"`` fit holds under replacement too).
    epsilon_spent_ : float
        Epsilon of the guarantee.
    delta_spent_ : float
        Delta of the guarantee.
    rho_spent_ : float
        The zCDP parameter of the guarantee.
    budget_split_ : dict of str to PureDP or ZCDP
        ``"bounds"`` (with private ranges), ``"gram"``, ``"cross"``.
    noise_sampler_ : str
        The sampler of the fit's noise.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    LinearRegression : The ridge chosen privately (AdaSSP).
    sklearn.linear_model.Ridge : The non-private estimator.

    References
    ----------
    .. [1] Wang, Y.-X. "Revisiting differentially private linear
       regression". UAI 2018. https://arxiv.org/abs/1803.02596.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.1, 20000)
    >>> model = Ridge(alpha=10.0, epsilon=1.0, bounds=(-1.0, 1.0),
    ...               target_bounds=(-5.0, 5.0), random_state=0)
    >>> np.round(model.fit(X, y).coef_, 1)
    array([ 1. , -2. ,  0.5])
    """

    _parameter_constraints: dict = {
        **_BaseSSP._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        epsilon=1.0,
        delta=1e-6,
        rho=None,
        bounds=None,
        target_bounds=None,
        max_rows_per_group=None,
        neighbours="replace",
        accountant=None,
        random_state=None,
    ):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds = bounds
        self.target_bounds = target_bounds
        self.max_rows_per_group = max_rows_per_group
        self.neighbours = neighbours
        self.accountant = accountant
        self.random_state = random_state

    def _shares(self):
        return dict(SSP_SHARES)

    def _penalty(self, released, noise, half, n_columns):
        # alpha ||beta||**2 in original units is alpha sum theta_j**2 / h_j**2
        # in unit coordinates (the target's scale cancels).
        penalty = np.zeros(n_columns)
        penalty[: half.shape[0]] = self.alpha / half**2
        return penalty
