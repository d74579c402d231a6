"""Bad input at every public entry point: a clear error, and nothing from the data.

The privacy model counts every message as a release, and scikit-learn's,
NumPy's and pandas' validation messages print arrays and cells. Every entry
point of every estimator (fit, fit_transform, transform, inverse_transform,
score, score_samples, mahalanobis) is fed the inputs below, under warnings
recorded, with distinctive values (1234.5678, "SSN-123-45-6789",
"Patient-Alice-0") in the data. For each: the documented outcome (a
ValueError or TypeError, or acceptance), no distinctive value anywhere in the
message or the formatted traceback (chained exceptions included), no warning,
nothing recorded by the accountant and no half-fitted estimator after a
failed fit.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import traceback
import warnings
from functools import cache

import numpy as np
import pytest
from scipy import sparse

import dpcov
from dpcov.accounting import BudgetAccountant
from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    NuclearLaplaceCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA, ApproximateSubspace, ExactSubspace
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.exceptions import NoiseDominatedWarning, NoPrivateResult
from dpcov.impute import SimpleImputer
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import StandardScaler

N_FEATURES = 3
VALUE = 1234.5678
SECRET = "SSN-123-45-6789"
NAME = "Patient-Alice-0"
# Any rendering of the distinctive values: repr, numpy's fixed and scientific
# formats, truncated cells.
TOKENS = ("1234.5", "1234.6", "1.2345", "1.23457", "SSN", "123-45", "Alice")

ESTIMATORS = {
    "GaussianCovariance": lambda: GaussianCovariance(data_norm=10.0),
    "SeparateCovariance": lambda: SeparateCovariance(data_norm=10.0),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(data_norm=10.0),
    "EigenSamplingCovariance": lambda: EigenSamplingCovariance(data_norm=10.0),
    "NuclearLaplaceCovariance": lambda: NuclearLaplaceCovariance(data_norm=10.0),
    "PCA": lambda: PCA(n_components=2, data_norm=10.0),
    # The whole space (n_components=None) at epsilon=inf: deterministic, so an
    # accepted input always fits.
    "ExactSubspace": lambda: ExactSubspace(epsilon=np.inf, assume_centered=True),
    "ApproximateSubspace": lambda: ApproximateSubspace(
        epsilon=np.inf, n_blocks=2, assume_centered=True
    ),
    "MultivariateGaussian-coinpress": lambda: MultivariateGaussian(),
    "MultivariateGaussian-klsu": lambda: MultivariateGaussian(
        method="klsu", min_variance=1.0, max_variance=10.0
    ),
    "ProductBernoulli": lambda: ProductBernoulli(binarize=0.0),
    "StandardScaler": lambda: StandardScaler(bounds=(-10.0, 10.0)),
    # Private ranges need two rows at epsilon=inf (thousands at epsilon=1).
    "StandardScaler-private": lambda: StandardScaler(bounds="private", epsilon=np.inf),
    "SimpleImputer": lambda: SimpleImputer(bounds=(-10.0, 10.0)),
    "SimpleImputer-private": lambda: SimpleImputer(epsilon=np.inf),
    "SimpleImputer-median": lambda: SimpleImputer(
        strategy="median", bounds=(-10.0, 10.0)
    ),
    "SimpleImputer-constant": lambda: SimpleImputer(strategy="constant"),
    "LinearRegression": lambda: LinearRegression(
        bounds=(-10.0, 10.0), target_bounds=(-10.0, 10.0)
    ),
    "Ridge": lambda: Ridge(bounds=(-10.0, 10.0), target_bounds=(-10.0, 10.0)),
    # Its private radius needs hundreds of rows at epsilon=1; two at inf.
    "LinearDiscriminantAnalysis": lambda: LinearDiscriminantAnalysis(
        epsilon=np.inf, data_norm=10.0, classes=[0, 1]
    ),
    "PrivatePipeline": lambda: PrivatePipeline(
        [
            ("impute", SimpleImputer(bounds=(-10.0, 10.0))),
            ("scale", StandardScaler()),
            ("pca", PCA(n_components=2)),
        ],
        epsilon=1.0,
    ),
    # A pipeline that ends in a model: every step's checks of public values
    # and targets run before any step does.
    "PrivatePipeline-lda": lambda: PrivatePipeline(
        [
            ("pca", PCA(n_components=2, data_norm=10.0)),
            ("lda", LinearDiscriminantAnalysis(data_norm=10.0, classes=[0, 1])),
        ],
        epsilon=np.inf,
    ),
}

# The entry points that read rows, besides fit.
ROW_METHODS = {
    "GaussianCovariance": ("score", "mahalanobis"),
    "SeparateCovariance": ("score", "mahalanobis"),
    "AdaptiveCovariance": ("score", "mahalanobis"),
    "EigenSamplingCovariance": ("score", "mahalanobis"),
    "NuclearLaplaceCovariance": ("score", "mahalanobis"),
    "PCA": ("fit_transform", "transform", "score", "score_samples"),
    "ExactSubspace": ("transform", "score"),
    "ApproximateSubspace": ("transform", "score"),
    "MultivariateGaussian-coinpress": ("score", "score_samples"),
    "MultivariateGaussian-klsu": ("score", "score_samples"),
    "ProductBernoulli": ("score", "score_samples"),
    # inverse_transform reads rows of the feature space, like transform.
    "StandardScaler": ("fit_transform", "transform", "inverse_transform"),
    "StandardScaler-private": ("fit_transform", "transform", "inverse_transform"),
    "SimpleImputer": ("fit_transform", "transform"),
    "SimpleImputer-private": ("fit_transform", "transform"),
    "SimpleImputer-median": ("fit_transform", "transform"),
    "PrivatePipeline": ("fit_transform", "transform", "score"),
    "PrivatePipeline-lda": (
        "predict",
        "predict_proba",
        "predict_log_proba",
        "decision_function",
    ),
    "SimpleImputer-constant": ("fit_transform", "transform"),
    "LinearRegression": ("predict",),
    "Ridge": ("predict",),
    "LinearDiscriminantAnalysis": (
        "predict",
        "predict_proba",
        "predict_log_proba",
        "decision_function",
        "transform",
    ),
}
# The models that fit (X, y): y is a valid target, X the input under test.
SUPERVISED = (
    "LinearRegression",
    "Ridge",
    "LinearDiscriminantAnalysis",
    "PrivatePipeline-lda",
)
# Entries an accepted fit records (a pipeline: one per private step).
RECORDS = {"PrivatePipeline": 3, "PrivatePipeline-lda": 2}
# The imputer takes NaN as a missing cell (dense input; sparse is refused).
NAN_ACCEPTED = (
    "SimpleImputer",
    "SimpleImputer-private",
    "SimpleImputer-median",
    "SimpleImputer-constant",
    "PrivatePipeline",
)
# inverse_transform reads coordinates: n_components_ columns.
COORDINATE_METHODS = ("PCA", "ExactSubspace", "ApproximateSubspace")
# The entry points that accept SciPy sparse rows (the covariance estimators'
# fit and PCA's, by sparse products; PCA's projections; the linear models).
# The others refuse them with a TypeError that says to convert.
SPARSE_ACCEPTED = {
    "LinearRegression": ("fit", "predict"),
    "Ridge": ("fit", "predict"),
    "GaussianCovariance": ("fit",),
    "SeparateCovariance": ("fit",),
    "AdaptiveCovariance": ("fit",),
    "EigenSamplingCovariance": ("fit",),
    "NuclearLaplaceCovariance": ("fit",),
    "PCA": ("fit", "fit_transform", "transform", "inverse_transform"),
    # Its first step is PCA, which reads them; what PCA hands on is dense.
    "PrivatePipeline-lda": (
        "fit",
        "predict",
        "predict_proba",
        "predict_log_proba",
        "decision_function",
    ),
}
SPARSE_INPUTS = ("sparse", "sparse CSC")


def _rows(n_samples=40, n_features=N_FEATURES):
    # Every cell near VALUE, so that any echo of the data shows a token.
    steps = np.arange(n_samples * n_features).reshape(n_samples, n_features)
    return VALUE + 1e-4 * steps


def _string_cell(X):
    X = X.astype(object)
    X[1, 1] = SECRET
    return X


def _dataframe_with_text(X):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["name"] = [f"Patient-Alice-{i}" for i in range(X.shape[0])]
    return frame.iloc[:, 1:]  # keep the number of columns


def _with(X, row, value):
    X = X.copy()
    X[row, 1] = value
    return X


def _extreme(X):
    # Finite but extreme rows: overflow in a square must not show.
    X = X.copy()
    X[0] = 1e308
    X[1] = -1e308
    X[2] = [1e307, 0.0, -1e300][: X.shape[1]] + [0.0] * (X.shape[1] - 3)
    X[3] = 1e300
    return X


def _ragged(X):
    rows = X.tolist()
    rows[1] = rows[1][:-1]
    return rows


def _huge_int(X):
    X = X.astype(object)
    X[1, 1] = 10**400
    return X


def _with_a_date(X):
    # A list whose rows hold one NumPy date among numbers (an object array).
    rows = X.tolist()
    rows[1][1] = np.datetime64(1000, "s")
    return rows


def _object_durations(X):
    rows = X.astype(object)
    rows[:, 0] = [np.timedelta64(int(v), "s") for v in 1000 * X[:, 0]]
    return rows


def _structured_dates(X):
    dates = np.zeros(X.shape, dtype=[("when", "datetime64[s]")])
    dates["when"] = (1000 * X).astype("datetime64[s]")
    return dates


# name -> (make input from rows of the right width, expected outcome);
# "error": ValueError or TypeError; "accept": runs; "either": either of the
# two (a public rule on the number of rows decides).
INPUTS = {
    "1-D": (lambda X: X[:, 0], "error"),
    "3-D": (lambda X: X[:, :, np.newaxis], "error"),
    "empty": (lambda X: X[:0], "error"),
    "one row": (lambda X: X[:1], "either"),
    "string cell": (_string_cell, "error"),
    "object column of numbers": (lambda X: X.astype(object), "accept"),
    "DataFrame with a text column": (_dataframe_with_text, "error"),
    "NaN": (lambda X: _with(X, 1, np.nan), "error"),
    "inf": (lambda X: _with(X, 1, np.inf), "error"),
    "complex": (lambda X: X + 1j, "error"),
    # NumPy would turn these into counts of time units since the epoch.
    "dates": (lambda X: (1000 * X).astype("datetime64[s]"), "error"),
    "durations": (lambda X: (1000 * X).astype("timedelta64[ms]"), "error"),
    "list of dates": (lambda X: list((1000 * X).astype("datetime64[s]")), "error"),
    "a date among numbers": (_with_a_date, "error"),
    "object durations": (_object_durations, "error"),
    "structured dates": (_structured_dates, "error"),
    "bool": (lambda X: X > VALUE + 1e-3, "accept"),
    # Refused, except by the entry points in SPARSE_ACCEPTED.
    "sparse": (sparse.csr_matrix, "error"),
    "sparse CSC": (sparse.csc_matrix, "error"),
    "sparse with NaN": (lambda X: sparse.csr_matrix(_with(X, 1, np.nan)), "error"),
    "list of lists": (lambda X: X.tolist(), "accept"),
    "ragged list": (_ragged, "error"),
    "python int beyond float64": (_huge_int, "error"),
    "float16": (lambda X: X.astype(np.float16), "accept"),
    "entries 1e300 to 1e308": (_extreme, "accept"),
}


def _expected(name, method, input_name):
    expected = INPUTS[input_name][1]
    if input_name in SPARSE_INPUTS and method in SPARSE_ACCEPTED.get(name, ()):
        return "accept"
    if input_name == "NaN" and name in NAN_ACCEPTED:
        return "accept"
    return expected


def _fit_data(name):
    rng = np.random.default_rng(0)
    return rng.normal(size=(400, N_FEATURES))


def _target_for(X):
    # A valid target of as many rows as X has (the models' y): the bad
    # input under test is X.
    try:
        n_samples = X.shape[0]
    except (AttributeError, IndexError):
        n_samples = len(X)
    return np.zeros(n_samples)


@cache
def _fitted(name):
    X = _fit_data(name)
    if name in SUPERVISED:
        return ESTIMATORS[name]().fit(X, (X[:, 0] > 0).astype(int))
    return ESTIMATORS[name]().fit(X)


def _supervised(estimator):
    # A model, or a pipeline that ends in one.
    last = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return type(last).__name__ in SUPERVISED


def _call(estimator, method, X):
    if method in ("fit", "fit_transform") and _supervised(estimator):
        return getattr(estimator, method)(X, _target_for(X))
    return getattr(estimator, method)(X)


def _outcome(estimator, method, X):
    """(exception or None, formatted traceback, warnings) of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _call(estimator, method, X)
        except Exception as exc:  # noqa: BLE001 - the test inspects any error
            return exc, "".join(traceback.format_exception(exc)), caught
    return None, "", caught


def _assert_no_data(text):
    for token in TOKENS:
        assert token not in text, f"{token!r} leaked into:\n{text}"


def _assert_outcome(expected, error, text, caught, method):
    # scikit-learn's warning that a DataFrame meets an estimator fitted on an
    # array names no data (column names are the user's), and a
    # NoiseDominatedWarning is post-processing of the release (its text is
    # checked for data below); nothing else may warn.
    hints = [w for w in caught if w.category is NoiseDominatedWarning]
    for hint in hints:
        _assert_no_data(str(hint.message))
    caught = [
        w
        for w in caught
        if "feature names" not in str(w.message)
        and w.category is not NoiseDominatedWarning
    ]
    assert not caught, [str(w.message) for w in caught]
    _assert_no_data(text)
    if error is not None:
        # Chained exceptions would carry the original text.
        assert error.__context__ is None or isinstance(error, NoPrivateResult)
        assert error.__cause__ is None
    if expected == "error":
        assert isinstance(error, ValueError | TypeError), text
        assert str(error)
    elif expected == "accept":
        # A stability-based learner may answer "no result" on any data: a
        # private outcome, not an input error.
        assert error is None or isinstance(error, NoPrivateResult), text
    else:
        assert error is None or isinstance(error, ValueError), text


def _fit_cases():
    for name in ESTIMATORS:
        for input_name in INPUTS:
            yield pytest.param(name, input_name, id=f"{name}-fit-{input_name}")


@pytest.mark.parametrize("name, input_name", list(_fit_cases()))
def test_fit_bad_input(name, input_name):
    make = INPUTS[input_name][0]
    expected = _expected(name, "fit", input_name)
    X = make(_rows())
    accountant = BudgetAccountant()
    estimator = ESTIMATORS[name]().set_params(accountant=accountant)
    error, text, caught = _outcome(estimator, "fit", X)
    _assert_outcome(expected, error, text, caught, "fit")
    if error is None or isinstance(error, NoPrivateResult):
        # One entry per private step (a pipeline's steps record theirs).
        assert len(accountant) == RECORDS.get(name, 1)
    else:
        # Refused before anything private ran: nothing recorded, and the
        # estimator is left as it was (unfitted). A pipeline runs its steps'
        # checks that need no row before any step.
        assert len(accountant) == 0
        assert not [key for key in vars(estimator) if key.endswith("_")]


def _hardened_fit_cases():
    for name in ESTIMATORS:
        if ESTIMATORS[name]()._supports_hardened_noise():
            for input_name in INPUTS:
                yield pytest.param(name, input_name, id=f"{name}-fit-{input_name}")


@pytest.mark.parametrize("name, input_name", list(_hardened_fit_cases()))
def test_fit_bad_input_under_secure_noise(name, input_name):
    # The same outcomes with the exact discrete samplers (secure_noise): the
    # estimators that have them validate, refuse and record as before.
    with dpcov.config_context(secure_noise=True):
        test_fit_bad_input(name, input_name)


def _method_cases():
    for name, methods in ROW_METHODS.items():
        for method in methods:
            for input_name in [*INPUTS, "wrong n_features"]:
                yield pytest.param(
                    name, method, input_name, id=f"{name}-{method}-{input_name}"
                )


@pytest.mark.parametrize("name, method, input_name", list(_method_cases()))
def test_method_bad_input(name, method, input_name):
    if input_name == "wrong n_features":
        make, expected = (lambda X: X[:, :-1]), "error"
    else:
        make, expected = INPUTS[input_name][0], _expected(name, method, input_name)
    if method == "fit_transform" and input_name == "wrong n_features":
        expected = "accept"  # a new fit: any width
    X = make(_rows())
    estimator = copy.deepcopy(_fitted(name))
    error, text, caught = _outcome(estimator, method, X)
    _assert_outcome(expected, error, text, caught, method)


@pytest.mark.parametrize("name", COORDINATE_METHODS)
@pytest.mark.parametrize("input_name", [*INPUTS, "wrong n_features"])
def test_inverse_transform_bad_input(name, input_name):
    estimator = copy.deepcopy(_fitted(name))
    width = estimator.n_components_
    if input_name == "wrong n_features":
        make, expected = (lambda X: X[:, :-1]), "error"
    else:
        make = INPUTS[input_name][0]
        expected = _expected(name, "inverse_transform", input_name)
    X = make(_rows(n_features=width))
    error, text, caught = _outcome(estimator, "inverse_transform", X)
    _assert_outcome(expected, error, text, caught, "inverse_transform")


def test_messages_say_what_is_wrong():
    # The messages replace the data by public facts: shape, column, dtype.
    estimator = SeparateCovariance(data_norm=1.0)
    X = _rows()
    with pytest.raises(
        ValueError, match=r"Expected 2D array, got 1D array of shape \(40,\)"
    ):
        estimator.fit(X[:, 0])
    with pytest.raises(
        ValueError, match=r"column 1 \(of 3\) holds values that are not"
    ):
        estimator.fit(_string_cell(X))
    with pytest.raises(ValueError, match="contains NaN"):
        estimator.fit(_with(X, 1, np.nan))
    # (Checked in the first pass: one message, whichever entry it meets.)
    with pytest.raises(ValueError, match="contains NaN or infinity"):
        estimator.fit(_with(X, 1, np.inf))
    with pytest.raises(TypeError, match="Sparse data"):
        MultivariateGaussian().fit(sparse.csr_matrix(X))
    with pytest.raises(TypeError, match="Sparse data"):
        _fitted("PCA").score(sparse.csr_matrix(X))
    with pytest.raises(ValueError, match="contains NaN"):
        estimator.fit(sparse.csr_matrix(_with(X, 1, np.nan)))
    with pytest.raises(ValueError, match="Complex data not supported"):
        estimator.fit(X + 1j)
    with pytest.raises(ValueError, match="minimum of 4 is required"):
        MultivariateGaussian().fit(X[:3])


def test_dataframe_column_named_by_its_header():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_rows(), columns=["age", "income", "visits"])
    frame["patient"] = [f"Patient-Alice-{i}" for i in range(len(frame))]
    with pytest.raises(ValueError, match=r"column 3 \('patient'\)") as info:
        SeparateCovariance(data_norm=1.0).fit(frame)
    _assert_no_data("".join(traceback.format_exception(info.value)))


def test_failed_refit_keeps_the_earlier_fit():
    # A refit that fails leaves the earlier fit in place, all of it.
    estimator = SeparateCovariance(data_norm=10.0, random_state=0)
    estimator.fit(_fit_data("SeparateCovariance"))
    before = {key: copy.deepcopy(value) for key, value in vars(estimator).items()}
    with pytest.raises(ValueError):
        estimator.fit(np.ones((5, N_FEATURES + 2)) * np.nan)
    assert vars(estimator).keys() == before.keys()
    np.testing.assert_array_equal(estimator.covariance_, before["covariance_"])
    assert estimator.n_features_in_ == N_FEATURES


@pytest.mark.parametrize("name", ["MultivariateGaussian-coinpress", "ProductBernoulli"])
@pytest.mark.parametrize("n_samples", [0, -3, 2.5, True, "10"])
def test_sample_refuses_bad_n_samples(name, n_samples):
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        _fitted(name).sample(n_samples, random_state=0)


@pytest.mark.parametrize(
    "column, message",
    [
        (lambda pd, n: pd.Categorical(["SSN-123"] * n), "not numbers"),
        (lambda pd, n: pd.date_range("2020-01-01", periods=n), "not numbers"),
        (lambda pd, n: pd.to_timedelta(range(n), unit="s"), "not numbers"),
        (lambda pd, n: pd.array(["SSN-123"] * n, dtype="string"), "not numbers"),
        (lambda pd, n: pd.array([1] * (n - 1) + [None], dtype="Int64"), "NaN"),
        (lambda pd, n: [1.0] * (n - 1) + ["SSN-123"], "not numbers"),
    ],
    ids=[
        "category",
        "datetime",
        "duration",
        "string",
        "nullable int with NA",
        "mixed object",
    ],
)
def test_dataframe_column_kinds(column, message):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_rows(), columns=["a", "b", "c"])
    frame["d"] = column(pd, len(frame))
    with pytest.raises((ValueError, TypeError), match=message) as info:
        SeparateCovariance(data_norm=1.0).fit(frame)
    _assert_no_data("".join(traceback.format_exception(info.value)))
    if message == "not numbers":
        assert "column 3 ('d')" in str(info.value)


def test_non_finite_refusals_name_the_private_imputer():
    # Every refusal of NaN or infinity carries the same advice
    # (dpcov.utils._input_messages.NON_FINITE_HINT), dense, sparse or Dask.
    from dpcov.utils._input_messages import NON_FINITE_HINT

    X = _with(_rows(), 1, np.nan)
    for data in (X, sparse.csr_matrix(X)):
        with pytest.raises(ValueError) as info:
            GaussianCovariance(data_norm=1.0).fit(data)
        assert NON_FINITE_HINT in str(info.value)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError) as info:
        GaussianCovariance(data_norm=1.0).fit(da.from_array(X, chunks=10))
    assert NON_FINITE_HINT in str(info.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize(
    "config", [{}, {"data_norm": 2.0}, {"bounds": "private", "epsilon": 50.0}]
)
@pytest.mark.parametrize("Estimator", [GaussianCovariance, AdaptiveCovariance, PCA])
def test_entries_checked_in_the_first_pass_before_anything_is_spent(
    Estimator, config, bad, monkeypatch
):
    # In memory as on Dask, the covariance estimators (and PCA on them) check
    # NaN and infinity chunk by chunk in their first pass, not in a read of
    # their own; the refusal names the estimator the user called and comes
    # before the fit is recorded. A bad entry in the last of 8 chunks.
    from dpcov.utils._gram import _blocks

    monkeypatch.setattr(_blocks, "CHUNK_BYTES", 500 * 3 * 8)
    X = np.random.default_rng(0).uniform(-1, 1, size=(4000, 3))
    X[-1, 2] = bad
    accountant = BudgetAccountant(epsilon=100.0, delta=1e-3)
    estimator = Estimator(accountant=accountant, **config)
    message = f"contains NaN or infinity: {Estimator.__name__}.fit needs finite"
    with pytest.raises(ValueError, match=message):
        estimator.fit(X)
    assert accountant.ledger == []
    assert not hasattr(estimator, "guarantee_")


def test_a_first_pass_refusal_survives_pickling_and_assume_finite():
    # Under joblib's processes the refusal is pickled: it keeps its entry
    # point. scikit-learn's assume_finite=True does not let NaN through.
    import pickle

    import sklearn

    X = _with(_rows(), 1, np.nan)
    with pytest.raises(ValueError) as info:
        GaussianCovariance(data_norm=1.0).fit(X)
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value)
    assert "GaussianCovariance.fit" in str(again)
    with sklearn.config_context(assume_finite=True):
        for estimator in (
            StandardScaler(bounds=(-5.0, 5.0)),
            PCA(n_components=1, data_norm=1.0),
        ):
            with pytest.raises(ValueError, match="contains NaN"):
                estimator.fit(X)
