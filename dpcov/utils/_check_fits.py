"""The rows, targets and fits that dpcov's estimator checks run on.

The checks of :mod:`dpcov.utils.estimator_checks` fit each estimator on rows
made here (Gaussian rows, rows in a subspace or binary rows, as the estimator
declares), with targets for a model, and compare fits by their public fitted
arrays.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.utils import get_tags

from ._sklearn_compat import _num_samples


def privacy_of(estimator):
    """The privacy tags a dpcov estimator declares (``get_tags(est).privacy``).

    Read through scikit-learn's tags (a :class:`dpcov.base.PrivacyTags`), as
    this layer sits below the estimators' base class.

    Parameters
    ----------
    estimator : estimator instance
        A private dpcov estimator, pipeline or search.

    Returns
    -------
    tags : dpcov.base.PrivacyTags
        Its declarations (guarantee forms, binary input, deterministic
        release, default score).
    """
    return get_tags(estimator).privacy


def _data(n_samples=20_000, n_features=4, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)) * np.linspace(1.0, 0.3, n_features)
    return scale * X / np.linalg.norm(X, axis=1).max()


def _check_data(estimator, n_samples, scale=1.0):
    # Estimators that only answer on structured data (the stability-based
    # subspace learners declare ``_approx_dp_only``) get rows exactly in a
    # 2-dimensional subspace of R^4, integer-valued so that exact arithmetic
    # sees the structure; estimators of distributions over {0, 1}^d
    # (``_binary_input``) get random binary rows, whatever the scale; the
    # others get Gaussian rows.
    privacy = privacy_of(estimator)
    if privacy.binary_input:
        rng = np.random.default_rng(0)
        return (rng.random((n_samples, 4)) < [0.5, 0.3, 0.1, 0.02]).astype(float)
    if privacy.guarantee != "approx_dp":
        return _data(n_samples, scale=scale)
    rng = np.random.default_rng(0)
    basis = rng.integers(-3, 4, size=(2, 4))
    return scale * (rng.integers(-9, 10, size=(n_samples, 2)) @ basis).astype(float)


def _targets(estimator, n_samples):
    """Targets for a model's fit (None for the others).

    A classifier (or a pipeline that ends in one) gets its public
    ``classes`` in turn; a regressor values spread inside its public
    ``target_bounds``. Neither reads the rows.
    """
    model = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    params = model.get_params(deep=False)
    if is_classifier(model):
        classes = np.asarray(params["classes"])
        return classes[np.arange(n_samples) % classes.size]
    if is_regressor(model):
        low, high = (float(v) for v in np.ravel(params["target_bounds"])[:2])
        rng = np.random.default_rng(1)
        return (
            low / 2
            + high / 2
            + (high / 2 - low / 2) * rng.uniform(-0.5, 0.5, n_samples)
        )
    return None


def _fit(estimator, X):
    """``estimator.fit(X)``, with targets for a model (:func:`_targets`)."""
    # (Rows that fail on any read get one target: the fit must refuse
    # before it reads either.)
    y = _targets(estimator, 1 if isinstance(X, _Unreadable) else _num_samples(X))
    return estimator.fit(X) if y is None else estimator.fit(X, y)


def _fitted_output(estimator):
    # Every public fitted array, concatenated: what a seed must reproduce (a
    # pipeline's: its steps' in turn).
    arrays = [
        np.ravel(value)
        for key, value in sorted(vars(estimator).items())
        if key.endswith("_")
        and not key.startswith("_")
        and isinstance(value, np.ndarray)
    ]
    for _, step in getattr(estimator, "steps", []):
        if hasattr(step, "get_params"):
            arrays.append(_fitted_output(step))
    return np.concatenate(arrays)


class _Unreadable:
    # Input that fails the test as soon as anything reads it.
    def __array__(self, *args, **kwargs):
        raise AssertionError("fit read the data before consulting its accountant")

    def __len__(self):
        raise AssertionError("fit read the data before consulting its accountant")

    @property
    def shape(self):
        raise AssertionError("fit read the data before consulting its accountant")
