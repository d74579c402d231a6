"""Shared transformer surface of the private subspace learners."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from ..accounting import BudgetAccountant
from ..base import PrivateEstimatorMixin, record_privacy
from ..utils._input import quiet_float_errors, validate_rows
from ..utils._sklearn_compat import Interval, Options, check_params_always


class BaseSubspace(
    PrivateEstimatorMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Transformer onto a private k-dimensional subspace through the origin.

    Subclasses set ``components_`` (orthonormal rows) and the privacy
    attributes in ``fit``.
    """

    # (epsilon, delta)-DP with delta > 0 only (read by dpcov's DP checks).
    _approx_dp_only = True
    _default_score = "captured_fraction"

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "assume_centered": ["boolean"],
        "accountant": [BudgetAccountant, None],
        "random_state": ["random_state", np.random.Generator],
    }

    def _start_fit(self, X):
        # Steps 1-3 of every fit: data, privacy parameters (even with
        # sklearn's validation off), generator; and the dimension k.
        # The budget is checked against the accountant before the data are
        # read; subclasses record it (_spend_budget) after their public checks.
        check_params_always(self)
        budget = self._check_budget()
        X = validate_rows(self, X)
        rng = self._noise_generator(budget)
        n_features = X.shape[1]
        k = n_features if self.n_components is None else self.n_components
        if k > n_features:
            raise ValueError(
                f"n_components={k} must be at most n_features={n_features}."
            )
        return X, budget, rng, k

    def _record(self, components, k, budget, split):
        self.components_ = components
        self.n_components_ = k
        record_privacy(self, budget, split, delta=self.delta)

    def transform(self, X):
        """Project X on the private subspace: ``X @ components_.T``.

        The subspace passes through the origin and no mean is subtracted (a
        mean would be a further release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Coordinates along ``components_``.
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, method="transform")
        with quiet_float_errors():
            return X @ self.components_.T.astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """Map coordinates back to points of the subspace.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Coordinates.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_``: the orthogonal projection of the original
            rows onto the subspace, when X came from :meth:`transform`.
        """
        check_is_fitted(self)
        X = validate_rows(
            self, X, n_columns=self.n_components_, method="inverse_transform"
        )
        with quiet_float_errors():
            return X @ self.components_.astype(X.dtype, copy=False)

    def get_projection(self):
        """The orthogonal projector onto the subspace.

        Returns
        -------
        P : ndarray of shape (n_features, n_features)
            ``components_.T @ components_`` (post-processing of the release).
        """
        check_is_fitted(self)
        return self.components_.T @ self.components_

    def score(self, X, y=None):
        """Fraction of the energy of X that the subspace captures.

        ``sum ||P x||**2 / sum ||x||**2`` over the rows of X (about the
        origin), in [0, 1], higher is better; for model selection on
        held-out data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        score : float
            The captured fraction (1.0 when X is all zeros).
        """
        check_is_fitted(self)
        X = validate_rows(self, X, reset=False, method="score")
        # The ratio does not change when X is scaled: divide by the largest
        # entry so that no square overflows, whatever the rows.
        largest = float(np.max(np.abs(X), initial=0.0))
        if largest == 0:
            return 1.0
        X = np.asarray(X, dtype=np.float64) / largest
        coords = X @ self.components_.T.astype(np.float64)
        total = float(np.sum(np.square(X)))
        return min(float(np.sum(np.square(coords))) / total, 1.0)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
