"""Public maps inside private composites: a declared step that learns nothing.

A private pipeline or search may run a step that is not private only if that
step is a *public map*: each output row a fixed function of its input row,
chosen without looking at the data. :class:`PublicTransformer` is how a user
declares one (a :class:`~sklearn.preprocessing.FunctionTransformer` of a
public function, say), and how :class:`~dpcov.pipeline.PrivatePipeline` and
:class:`~dpcov.model_selection.PrivateSearchCV` run the transforms that read
only the shape of their input (:class:`~sklearn.preprocessing.PolynomialFeatures`)
and transformers frozen after a fit on public data
(:class:`~sklearn.frozen.FrozenEstimator`). It enforces the two things a
private composite needs of such a step:

* **Its fit reads no row.** The wrapped transformer is fitted on one row of
  zeros of the input's width (public), never on the rows: a transform that
  reads only the shape is then fitted exactly as on the rows, and a
  transformer that would learn from them learns nothing.
* **Its output is decided by each row alone, and is always a finite row.**
  The transform runs with every warning and floating-point error silenced
  (a warning that only extreme rows trigger is a side channel); a block on
  which it raises is split in halves until each row that raises stands
  alone, and such a row becomes the fixed fallback, a row of zeros; NaN
  becomes 0 and infinities the largest floats. So one row's value can
  change its own output row only, never whether the composite fits, which
  error it raises, or what it warns.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    PolynomialFeatures,
)
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..base import is_private
from ..utils._input import validate_rows
from ..utils._sklearn_compat import HasMethods, _fit_context

__all__ = [
    "SHAPE_ONLY_TRANSFORMS",
    "PublicTransformer",
    "check_public_map",
    "finite_output",
    "learner_message",
]

#: scikit-learn transforms whose fit reads only the shape of its input and
#: whose transform maps each row on its own, with their parameters public:
#: a private composite runs them as public maps (in a PublicTransformer).
SHAPE_ONLY_TRANSFORMS = (PolynomialFeatures, Normalizer, Binarizer)

#: scikit-learn estimators that learn from their rows, with the dpcov
#: estimator that learns the same thing privately.
PRIVATE_COUNTERPARTS = {
    "StandardScaler": "dpcov.preprocessing.StandardScaler",
    "MinMaxScaler": "dpcov.preprocessing.BoundsScaler (public ranges)",
    "MaxAbsScaler": "dpcov.preprocessing.BoundsScaler (public ranges)",
    "RobustScaler": "dpcov.preprocessing.StandardScaler",
    "SimpleImputer": "dpcov.impute.SimpleImputer",
    "PCA": "dpcov.decomposition.PCA",
    "IncrementalPCA": "dpcov.decomposition.PCA",
    "TruncatedSVD": "dpcov.decomposition.PCA",
    "EmpiricalCovariance": "dpcov.covariance.SeparateCovariance",
    "ShrunkCovariance": "dpcov.covariance.SeparateCovariance",
    "LedoitWolf": "dpcov.covariance.SeparateCovariance",
    "OAS": "dpcov.covariance.SeparateCovariance",
    "MinCovDet": "dpcov.covariance.AdaptiveCovariance",
    "LinearDiscriminantAnalysis": (
        "dpcov.discriminant_analysis.LinearDiscriminantAnalysis"
    ),
    "LinearRegression": "dpcov.linear_model.LinearRegression",
    "Ridge": "dpcov.linear_model.Ridge",
    "BernoulliNB": "dpcov.distributions.ProductBernoulli",
}


def learner_message(step, where):
    """Why a step that learns from rows cannot run in a private composite.

    Parameters
    ----------
    step : estimator instance
        The step.
    where : str
        Where it is (``"step 'scale' of PrivatePipeline"``).

    Returns
    -------
    message : str
        Names the step, its dpcov counterpart where one exists, and the ways
        to run a public map.
    """
    name = type(step).__name__
    counterpart = PRIVATE_COUNTERPARTS.get(name)
    if isinstance(step, FunctionTransformer):
        advice = (
            "its function is arbitrary code: declare it a public map with "
            "dpcov.preprocessing.PublicTransformer(FunctionTransformer(...)) "
            "if each output row is a fixed function of its input row"
        )
    elif counterpart is not None:
        advice = f"use its private counterpart, {counterpart}"
    else:
        advice = (
            "it has no dpcov counterpart: fit it on public data and pass it "
            "frozen (sklearn.frozen.FrozenEstimator), or, if it is a fixed map "
            "of each row, declare it with dpcov.preprocessing.PublicTransformer"
        )
    return (
        f"{where} is {name}, which is neither a private dpcov estimator nor a "
        f"declared public map: it would read the rows without any guarantee, "
        f"outside the composite's. {advice[0].upper()}{advice[1:]}."
    )


def check_public_map(transformer, *, where):
    """Refuse, in a :class:`PublicTransformer`, what cannot be a public map.

    A PublicTransformer fits what it wraps on a row of zeros. That is exact
    for a transformer that learns nothing from its rows (scikit-learn's
    ``requires_fit=False`` tag: a FunctionTransformer, Normalizer, Binarizer),
    for one that reads only their shape (:data:`SHAPE_ONLY_TRANSFORMS`) and
    for a :class:`~sklearn.frozen.FrozenEstimator` (fitted on public data);
    anything else would learn from the zeros and is refused.

    Parameters
    ----------
    transformer : estimator instance
        The wrapped transformer.
    where : str
        Named in the message.

    Raises
    ------
    ValueError
        For a private dpcov estimator (it spends a budget on its rows), or a
        transformer that learns from its rows.
    """
    if isinstance(transformer, FrozenEstimator) or type(transformer) in (
        SHAPE_ONLY_TRANSFORMS
    ):
        return
    name = type(transformer).__name__
    if is_private(transformer):
        raise ValueError(
            f"{where} wraps {name}, a private dpcov estimator: it reads its rows "
            "at a privacy cost. Make it a step of the pipeline itself."
        )
    if get_tags(transformer).requires_fit:
        counterpart = PRIVATE_COUNTERPARTS.get(name)
        advice = (
            f"use its private counterpart, {counterpart}"
            if counterpart is not None
            else "fit it on public data and wrap it frozen "
            "(sklearn.frozen.FrozenEstimator)"
        )
        raise ValueError(
            f"{where} wraps {name}, which learns from its rows; fitted on the "
            f"public placeholder (a row of zeros) it would learn nothing: "
            f"{advice}."
        )


def finite_output(values):
    """Rows as finite floats: NaN as 0, infinities as the largest floats.

    Parameters
    ----------
    values : array-like or sparse matrix of shape (n_samples, n_features)
        Rows of any numeric dtype.

    Returns
    -------
    rows : ndarray or CSR matrix
        A new float array (float32 kept, anything else float64), or a new
        CSR matrix whose stored entries are mapped (implicit zeros stay 0).
    """
    if sparse.issparse(values):
        rows = sparse.csr_matrix(values, copy=True)
        if rows.dtype not in (np.float32, np.float64):
            rows = rows.astype(np.float64)
        big = np.finfo(rows.dtype).max
        np.nan_to_num(rows.data, copy=False, nan=0.0, posinf=big, neginf=-big)
        return rows
    rows = np.asarray(values)
    if rows.dtype not in (np.float32, np.float64):
        rows = rows.astype(np.float64)
    big = np.finfo(rows.dtype).max
    return np.nan_to_num(rows, copy=True, nan=0.0, posinf=big, neginf=-big)


def _placeholder(X, n_features):
    # One row of zeros with X's width and kind (public): what the wrapped
    # transformer is fitted on instead of the rows.
    dtype = getattr(X, "dtype", None)
    dtype = dtype if dtype in (np.float32, np.float64) else np.float64
    if sparse.issparse(X):
        return sparse.csr_matrix((1, n_features), dtype=dtype)
    return np.zeros((1, n_features), dtype=dtype)


def _as_rows(values):
    # A transform's output as an ndarray or a CSR matrix (a DataFrame's
    # values; sparse formats other than CSR converted).
    if sparse.issparse(values):
        return sparse.csr_matrix(values)
    if hasattr(values, "iloc"):
        values = values.to_numpy()
    return np.asarray(values)


def _stack(blocks):
    # Blocks of one format and dtype (PublicTransformer._conform).
    if sparse.issparse(blocks[0]):
        return sparse.vstack(blocks, format="csr")
    return np.vstack(blocks)


class PublicTransformer(TransformerMixin, BaseEstimator):
    """Declare a transformer a public map, to run it inside a private composite.

    A :class:`~dpcov.pipeline.PrivatePipeline` or a
    :class:`~dpcov.model_selection.PrivateSearchCV` candidate may hold, besides
    private dpcov steps, public maps: steps whose output row is a fixed
    function of their input row, chosen without looking at the data. Wrap
    such a step in this class to declare it (mandatory for a
    :class:`~sklearn.preprocessing.FunctionTransformer`, whose function is
    arbitrary code); the composites wrap the few scikit-learn transforms that
    read only their input's shape, and :class:`~sklearn.frozen.FrozenEstimator`,
    themselves.

    The declaration is the user's: the wrapped transform must compute each
    output row from its input row alone (no statistic of the rows it is
    given). What the wrapper enforces:

    * ``fit`` fits a clone of ``transformer`` on one row of zeros of the
      input's width, never on the rows (with ``check_inverse`` off for a
      :class:`~sklearn.preprocessing.FunctionTransformer`, whose check reads
      rows and warns on some of them only);
    * ``transform`` runs with every warning and floating-point error
      silenced; a block on which the transform raises is halved until each
      row that raises is alone, and such a row maps to a row of zeros; the
      output's NaN become 0 and its infinities the largest floats.

    So the composite's outcome (a fit or a refusal, and its warnings) does
    not depend on any row's values through this step. It costs no privacy.

    Read more in the :ref:`User Guide <privacy_model>`.

    Parameters
    ----------
    transformer : estimator instance
        A transformer (``fit`` and ``transform``) whose map is public. A
        private dpcov estimator, or a scikit-learn estimator that learns from
        its rows (a scaler, an imputer, PCA), is refused: fitted on a row of
        zeros it would learn nothing; use its dpcov counterpart.

    Attributes
    ----------
    transformer_ : estimator instance
        The clone of ``transformer`` fitted on a row of zeros.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X` has
        feature names that are all strings.
    n_features_out_ : int
        Number of output features (from the row of zeros).

    See Also
    --------
    dpcov.pipeline.PrivatePipeline : Runs public maps between private steps.
    sklearn.frozen.FrozenEstimator : A transformer fitted on public data.

    Notes
    -----
    Replacing one input row replaces one output row, so a private step
    fitted on the output keeps its guarantee with respect to the input rows.
    A row on which the transform raises maps to zeros, and an overflow to
    the largest float: the following private step clips every row to its own
    geometry, as it would any row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> from dpcov.preprocessing import PublicTransformer
    >>> X = np.array([[0.0, 1.0], [-2.0, 3.0]])
    >>> PublicTransformer(FunctionTransformer(np.log1p)).fit_transform(X)
    array([[0.        , 0.69314718],
           [0.        , 1.38629436]])
    """

    _parameter_constraints: dict = {"transformer": [HasMethods(["fit", "transform"])]}

    def __init__(self, transformer):
        self.transformer = transformer

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the wrapped transformer on one row of zeros of X's width.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Only its width, its column names and whether it is sparse are read
            (and its dtype and shape checked).
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted transformer.
        """
        check_public_map(self.transformer, where=type(self).__name__)
        X = self._validate(X, reset=True, method="fit")
        transformer = clone(self.transformer)
        if isinstance(transformer, FunctionTransformer):
            transformer.set_params(check_inverse=False)
        placeholder = _placeholder(X, self.n_features_in_)
        # Fitted on a public placeholder: whatever the transformer learns, it
        # learns from no row (its errors there are about public values).
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            transformer.fit(placeholder, None)
            out = _as_rows(transformer.transform(placeholder))
        if out.ndim != 2 or out.shape[0] != 1:
            raise ValueError(
                f"{type(transformer).__name__} must map each row to one row: on "
                f"one row of {self.n_features_in_} features it gave an output of "
                f"shape {out.shape}."
            )
        self.transformer_ = transformer
        self.n_features_out_ = int(out.shape[1])
        # The output's format and dtype, from the placeholder (public): every
        # block, and the fallback row, is given them, so no row decides them.
        self._sparse_output = sparse.issparse(out)
        self._output_dtype = (
            out.dtype if out.dtype in (np.float32, np.float64) else np.float64
        )
        return self

    def transform(self, X):
        """Apply the public map to each row, silently, to finite rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        X_tr : ndarray or CSR matrix of shape (n_samples, n_features_out_)
            The mapped rows, finite; a row on which the map raises (or gives
            another width) is a row of zeros.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False, method="transform")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return finite_output(_stack(self._map(X, 0, X.shape[0])))

    def _validate(self, X, *, reset, method):
        # The rows' shape, numeric dtype and width (messages free of data);
        # NaN and infinities are mapped, not refused: rows handed on by a
        # step before may hold them on some data only.
        return validate_rows(
            self,
            X,
            reset=reset,
            dtype=None,
            accept_sparse="csr",
            defer_finite=True,
            method=method,
        )

    def _map(self, X, start, stop):
        # The outputs of rows start:stop, as a list of blocks: the whole block
        # if the map succeeds on it, else its halves (a single row that fails
        # is the fallback row).
        # (Validation refuses empty X, and halves are never empty.)
        try:
            out = self._conform(self.transformer_.transform(X[start:stop]))
        except Exception:  # noqa: BLE001 - any failure: halve, then fall back
            out = None
        if out is not None and out.shape == (stop - start, self.n_features_out_):
            return [out]
        if stop - start == 1:
            return [self._fallback_row()]
        middle = (start + stop) // 2
        return self._map(X, start, middle) + self._map(X, middle, stop)

    def _conform(self, values):
        # A block of output in the format and dtype fixed at fit (a complex
        # or non-numeric block fails, as a raising map does).
        rows = _as_rows(values)
        if rows.dtype.kind not in "biuf":
            raise TypeError("not a real-valued output")
        if self._sparse_output:
            return sparse.csr_matrix(rows).astype(self._output_dtype)
        if sparse.issparse(rows):
            rows = rows.toarray()
        return np.asarray(rows, dtype=self._output_dtype)

    def _fallback_row(self):
        # The row a failing input row maps to: zeros, in the output's format
        # and dtype.
        shape = (1, self.n_features_out_)
        if self._sparse_output:
            return sparse.csr_matrix(shape, dtype=self._output_dtype)
        return np.zeros(shape, dtype=self._output_dtype)

    def _can_name_features(self):
        return hasattr(self.transformer, "get_feature_names_out")

    @available_if(_can_name_features)
    def get_feature_names_out(self, input_features=None):
        """Output feature names, as the wrapped transformer names them.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names.

        Returns
        -------
        feature_names_out : ndarray of str objects
            The wrapped transformer's output names.
        """
        check_is_fitted(self)
        if input_features is None and hasattr(self, "feature_names_in_"):
            input_features = self.feature_names_in_
        return self.transformer_.get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The map is applied to whatever rows come (a row it cannot map is
        # the fallback row); sparse rows stay sparse where the map keeps them.
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags
