"""Bounded per-row validation scores, for a private search to rank candidates.

A private search scores each candidate on held-out rows and adds noise to the
score; the noise is calibrated to the score's sensitivity, so the score must
be a mean of per-row values in a range known without reading the rows. The
range may depend on the fitted model (a release) and on public values, never
on the rows scored: replacing one of ``m`` rows then moves the mean by at
most ``(high - low) / m``.

Each family of dpcov estimators has a default score:

* classifiers (fitted with targets): the accuracy, 1 per held-out row
  predicted right, in [0, 1];
* regressors: minus the squared error of prediction and target, both
  clipped to the model's target range, in ``[-(high - low)**2, 0]`` (R^2 is
  not a mean of per-row scores);

* PCA: the probabilistic PCA model's log-likelihood of each held-out row
  (Tipping and Bishop, 1999), the rows centred on ``mean_`` and clipped to
  the norm ``r`` of the fit's geometry (the box's farthest corner from
  ``mean_``, or ``data_norm_ + ||mean_||``), in ``[c - r**2 / (2
  lambda_min), c]`` for ``c = -(d log(2 pi) + log det C) / 2`` and ``C`` the
  model's covariance. Unlike the captured energy, it does not always prefer
  more components: one whose released variance is noise costs likelihood;
* subspaces (``components_``): the fraction of each row's energy about
  ``mean_`` that the components capture, in [0, 1];
* Bernoulli products (``probabilities_``): the row's log-likelihood, in
  ``[sum log min(p, 1-p), sum log max(p, 1-p)]`` (the probabilities are kept
  away from 0 and 1 by the estimator);
* covariances and Gaussians (``covariance_``): with rows ``y`` centred at the
  model's location and clipped to a public norm ``r``, ``2 y^T C y -
  ||C||_F^2``. Its mean over the rows is ``||S||_F^2 - ||C - S||_F^2`` with
  ``S`` the rows' second moment: ranking by it ranks by the Frobenius error
  ``||C - S||_F``, the error that Dong, Liang and Yi (2022) and Amin et al.
  (2019) measure. Its range is ``2 r^2 [min(lambda_min, 0), max(lambda_max,
  0)] - ||C||_F^2``.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from scipy import sparse

from ..base import is_private, privacy_tags
from ..pipeline import PrivatePipeline
from ..utils._gram import _clip
from ..utils._input import quiet_float_errors

__all__ = ["bounded_scores", "score_bounds"]


def _final(estimator):
    # The estimator that scores, and how to compute the rows it sees: a
    # pipeline's last step sees the rows transformed by the fitted earlier
    # steps (a row-wise map fixed by releases: post-processing), mapped into
    # range between steps by a PrivatePipeline (as its fit hands them on).
    steps = getattr(estimator, "steps", None)
    if steps is not None and len(steps) > 1:
        if isinstance(estimator, PrivatePipeline):
            return estimator[-1], estimator._last_step_rows
        return estimator[-1], estimator[:-1].transform
    if steps is not None:
        return estimator[-1], None
    return estimator, None


def _dense(X):
    if sparse.issparse(X):
        return X.toarray()
    return np.asarray(X, dtype=np.float64)


def _captured_fraction(model, X):
    rows = _dense(X) - np.asarray(getattr(model, "mean_", 0.0), dtype=np.float64)
    # Each row scaled to norm 1 (the fraction does not change; no square
    # overflows); a zero row has nothing to capture and scores 1.
    rows, _ = _clip(rows, 1.0, owned=True)
    largest = np.abs(rows).max(axis=1)
    rows = rows / np.where(largest > 0, largest, 1.0)[:, np.newaxis]
    total = np.einsum("ij,ij->i", rows, rows)
    coords = rows @ np.asarray(model.components_, dtype=np.float64).T
    captured = np.einsum("ij,ij->i", coords, coords)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(total > 0, captured / total, 1.0)
    return np.clip(fraction, 0.0, 1.0), (0.0, 1.0)


def _pca_log_likelihood(model, X):
    # The probabilistic PCA model's log-likelihood of each held-out row
    # (Tipping and Bishop, 1999), rows centred on mean_ and clipped to the
    # public (or released) norm r of the fit's geometry: the quadratic term
    # lies in [0, r**2 / lambda_min], so the score is bounded by the model.
    # More components are not always better: a component whose released
    # variance is noise costs likelihood on held-out rows.
    mean = np.asarray(model.mean_, dtype=np.float64)
    if getattr(model, "bounds_", None) is not None:
        lower, upper = model.bounds_
        far = np.maximum(np.abs(lower - mean), np.abs(upper - mean))
        radius = float(np.linalg.norm(far))
    else:
        radius = float(model.data_norm_ + np.linalg.norm(mean))
    # The model's covariance from its parts (scikit-learn's get_covariance
    # rescales whitened components once more: scikit-learn issue #13898).
    components = np.asarray(model.components_, dtype=np.float64)
    noise = float(model.noise_variance_)
    spread = np.maximum(np.asarray(model.explained_variance_, float) - noise, 0.0)
    covariance = (components.T * spread) @ components + noise * np.eye(mean.size)
    if not np.all(np.isfinite(covariance)):
        # A model with no finite variance (a PCA of one released unit): the
        # worst score, with no eigendecomposition to fail.
        return np.full(_dense(X).shape[0], -np.inf), (-np.inf, -np.inf)
    values, vectors = np.linalg.eigh((covariance + covariance.T) / 2.0)
    if not values.min() > 0.0 or not math.isfinite(radius):
        return np.full(_dense(X).shape[0], -np.inf), (-np.inf, -np.inf)
    constant = -0.5 * (values.size * math.log(2.0 * math.pi) + np.sum(np.log(values)))
    with quiet_float_errors():
        rows, _ = _clip(_dense(X) - mean, radius, owned=True)
        quadratic = np.sum((rows @ vectors) ** 2 / values, axis=1)
        low = constant - 0.5 * radius**2 / float(values.min())
    return constant - 0.5 * quadratic, (float(low), float(constant))


def _product_range(model):
    p = np.asarray(model.probabilities_, dtype=np.float64)
    low = float(np.sum(np.log(np.minimum(p, 1.0 - p))))
    high = float(np.sum(np.log(np.maximum(p, 1.0 - p))))
    return low, high


def _product_log_likelihood(model, X):
    values = np.asarray(model.score_samples(X), dtype=np.float64)
    return values, _product_range(model)


def _frobenius(model, X, score_norm):
    location = getattr(model, "location_", None)
    if location is None:
        location = getattr(model, "mean_", 0.0)
    covariance = np.asarray(model.covariance_, dtype=np.float64)
    covariance = (covariance + covariance.T) / 2.0
    if not np.all(np.isfinite(covariance)):
        return np.full(_dense(X).shape[0], -np.inf), (-np.inf, -np.inf)
    with quiet_float_errors():
        rows, _ = _clip(_dense(X) - location, score_norm, owned=True)
        quadratic = np.einsum("ij,jk,ik->i", rows, covariance, rows)
    frobenius = float(np.sum(np.square(covariance)))
    values = np.linalg.eigvalsh(covariance)
    low = 2.0 * score_norm**2 * min(float(values[0]), 0.0) - frobenius
    high = 2.0 * score_norm**2 * max(float(values[-1]), 0.0) - frobenius
    return 2.0 * quadratic - frobenius, (low, high)


def _accuracy(estimator, X, y):
    # 1 for a row predicted right, 0 otherwise.
    predicted = np.asarray(estimator.predict(X))
    return (predicted == np.asarray(y)).astype(np.float64), (0.0, 1.0)


def _as_numbers(y):
    # Targets as floats; a value that is not a number scores the worst (the
    # search checked them before spending: this is for direct calls) and no
    # conversion error, which may quote the value, escapes.
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    out = np.empty(len(y))
    for i, value in enumerate(y):
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            out[i] = np.nan
    return out


def _negative_squared_error(estimator, X, y):
    # -(prediction - target)**2, both clipped to the model's public (or
    # released) target range: in [-(high - low)**2, 0].
    model, _ = _final(estimator)
    bounds = getattr(model, "target_bounds_", None)
    if bounds is None:
        raise ValueError(
            "scoring='neg_squared_error' needs a model with target_bounds_ (a "
            "dpcov regressor): its range bounds the per-row error."
        )
    low, high = (float(v) for v in bounds)
    with quiet_float_errors():
        predicted = np.clip(
            np.asarray(estimator.predict(X), dtype=np.float64), low, high
        )
        target = np.clip(_as_numbers(y), low, high)
        values = -np.square(predicted - target)
    return values, (-((high - low) ** 2), 0.0)


def score_kind(estimator):
    """Which default score applies to a (pipeline of a) dpcov estimator.

    Each family declares its bounded score in its privacy tags
    (:attr:`dpcov.base.PrivacyTags.default_score`).

    Returns
    -------
    kind : {"accuracy", "neg_squared_error", "pca_log_likelihood", \
            "captured_fraction", "log_likelihood", "frobenius"} or None
        None when no default applies (pass ``scoring`` and ``score_range``).
    """
    model, _ = _final(estimator)
    # Declared by the family (the fitted attributes do not exist before fit).
    return privacy_tags(model).default_score if is_private(model) else None


def score_bounds(estimator, *, scoring=None, score_range=None, score_norm=None):
    """The public range of a fitted estimator's per-row scores, read from no row.

    What :func:`bounded_scores` returns as ``score_range``, from the fitted
    model and public values only, whatever the held-out rows, even none: a
    held-out score's noise under add/remove neighbours is calibrated to it
    before the rows are counted.

    Parameters
    ----------
    estimator : fitted estimator
        A dpcov estimator or a pipeline ending in one.
    scoring, score_range, score_norm
        As in :func:`bounded_scores`.

    Returns
    -------
    score_range : (float, float)
        ``(low, high)``; ``(-inf, -inf)`` for a release too extreme for
        float64 arithmetic (its score is the worst).
    """
    if callable(scoring):
        low, high = score_range
        return float(low), float(high)
    kind = scoring if scoring is not None else score_kind(estimator)
    model, _ = _final(estimator)
    if kind in ("accuracy", "captured_fraction"):
        return 0.0, 1.0
    if kind == "neg_squared_error":
        low, high = (float(v) for v in model.target_bounds_)
        return -((high - low) ** 2), 0.0
    if kind == "log_likelihood":
        low, high = _product_range(model)
    else:
        # The model's own range functions, on no row of its width.
        empty = np.zeros((0, model.n_features_in_))
        if kind == "pca_log_likelihood":
            _, (low, high) = _pca_log_likelihood(model, empty)
        else:
            _, (low, high) = _frobenius(model, empty, score_norm)
    if not (math.isfinite(low) and math.isfinite(high)):
        return -math.inf, -math.inf
    return low, high


def bounded_scores(
    estimator, X, y=None, *, scoring=None, score_range=None, score_norm=None
):
    """Per-row scores of a fitted estimator and their public range.

    Parameters
    ----------
    estimator : fitted estimator
        A dpcov estimator or a pipeline ending in one.
    X : array-like of shape (n_samples, n_features)
        The held-out rows.
    y : array-like of shape (n_samples,), default=None
        Their targets, for supervised scores.
    scoring : callable, "accuracy", "neg_squared_error" or None, default=None
        ``scoring(estimator, X)`` (``scoring(estimator, X, y)`` with ``y``)
        returning one score per row; ``"accuracy"`` (1 per row predicted
        right, in [0, 1]); ``"neg_squared_error"`` (minus the squared error
        of prediction and target, both clipped to the model's
        ``target_bounds_``); None uses the estimator family's default
        (module docstring; accuracy for a dpcov classifier, the squared
        error for a dpcov regressor).
    score_range : (float, float) or None, default=None
        The public range of ``scoring``'s values; they are clipped to it
        (a NaN scores ``low``).
    score_norm : float or None, default=None
        The public norm the rows are clipped to for the covariance score.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Per-row scores, each in ``[low, high]``.
    score_range : (float, float)
        ``(low, high)``, from the fitted model and public values only.
    """
    if callable(scoring):
        low, high = score_range
        values = scoring(estimator, X) if y is None else scoring(estimator, X, y)
        values = np.asarray(values, dtype=np.float64)
        values = np.where(np.isnan(values), low, values)
        return np.clip(values, low, high), (float(low), float(high))
    kind = scoring if scoring is not None else score_kind(estimator)
    if kind in ("accuracy", "neg_squared_error"):
        if y is None:
            raise ValueError(
                f"the {kind} score needs targets: fit the search with fit(X, y)."
            )
        score = _accuracy if kind == "accuracy" else _negative_squared_error
        values, (low, high) = score(estimator, X, y)
        values = np.where(np.isnan(values), low, values)
        return np.clip(values, low, high), (low, high)
    model, head = _final(estimator)
    if head is not None:
        X = head(X)
    if kind == "pca_log_likelihood":
        values, (low, high) = _pca_log_likelihood(model, X)
    elif kind == "captured_fraction":
        values, (low, high) = _captured_fraction(model, X)
    elif kind == "log_likelihood":
        values, (low, high) = _product_log_likelihood(model, X)
    else:
        values, (low, high) = _frobenius(model, X, score_norm)
    if not (math.isfinite(low) and math.isfinite(high)):
        # A release too extreme for float64 arithmetic: its score is the
        # worst, with no noise needed (a constant has no sensitivity).
        return np.full(np.shape(values)[0], -np.inf), (-np.inf, -np.inf)
    values = np.where(np.isnan(values), low, values)
    return np.clip(values, low, high), (low, high)
