"""PublicTransformer: a declared public map that reads no row and never fails."""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpcov.preprocessing import PublicTransformer, StandardScaler
from dpcov.preprocessing._public import finite_output


def _rows(n=200, d=2, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_fit_reads_no_row():
    # The wrapped clone is fitted on a row of zeros: whatever rows are given,
    # the fitted state is the same (a shape-only transform is fitted exactly
    # as on the rows).
    X = _rows()
    Y = X.copy()
    Y[0] = [1e300, -1e300]
    a = PublicTransformer(PolynomialFeatures(2)).fit(X)
    b = PublicTransformer(PolynomialFeatures(2)).fit(Y)
    assert np.array_equal(a.transformer_.powers_, b.transformer_.powers_)
    assert a.n_features_out_ == b.n_features_out_ == 6
    direct = PolynomialFeatures(2).fit(X)
    np.testing.assert_array_equal(a.transform(X), direct.transform(X))
    assert list(a.get_feature_names_out()) == list(direct.get_feature_names_out())


def test_check_inverse_is_off_and_nothing_warns():
    # FunctionTransformer.fit checks inverse_func on some rows and warns on
    # some data only; the wrapper fits with the check off, and its transform
    # is silent whatever the rows (log1p of -2 is NaN with a RuntimeWarning).
    X = _rows()
    X[0, 0] = -2.0
    wrapped = PublicTransformer(
        FunctionTransformer(np.log1p, inverse_func=np.square, check_inverse=True)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = wrapped.fit(X).transform(X)
    assert wrapped.transformer.check_inverse  # the parameter is unchanged
    assert not wrapped.transformer_.check_inverse
    assert np.all(np.isfinite(out))
    assert out[0, 0] == 0.0  # NaN -> 0


def _raises_on_big(X):
    # A public map that raises on some rows: any entry above 10.
    X = np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=float)
    if np.any(np.abs(X) > 10):
        raise ValueError("too big")
    return 2.0 * X


@pytest.mark.parametrize("as_sparse", [False, True])
def test_a_row_that_raises_is_the_fallback_row_and_the_others_are_mapped(as_sparse):
    # The block is halved until each row that raises is alone: every other
    # row gets the map's own value, exactly as row by row.
    X = _rows(n=37)
    X[[3, 20, 36]] = 100.0
    rows = sparse.csr_matrix(X) if as_sparse else X
    wrapped = PublicTransformer(
        FunctionTransformer(_raises_on_big, accept_sparse=True)
    ).fit(rows)
    out = wrapped.transform(rows)
    out = out.toarray() if sparse.issparse(out) else out
    expected = 2.0 * X
    expected[[3, 20, 36]] = 0.0
    np.testing.assert_array_equal(out, expected)


def test_overflow_is_silent_and_finite_dense_and_sparse():
    X = _rows()
    X[0] = [1e200, 0.0]
    for rows in (X, sparse.csr_matrix(X)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = PublicTransformer(PolynomialFeatures(2)).fit_transform(rows)
        values = out.data if sparse.issparse(out) else out
        assert np.all(np.isfinite(values))
        assert values.max() == np.finfo(np.float64).max


def test_a_frozen_transformer_is_kept_as_fitted():
    public = np.random.default_rng(1).normal(3.0, 2.0, size=(500, 2))
    frozen = FrozenEstimator(SkStandardScaler().fit(public))
    wrapped = PublicTransformer(frozen).fit(_rows())
    np.testing.assert_allclose(
        wrapped.transform(_rows()), frozen.transform(_rows()), rtol=1e-12
    )


def test_learners_and_private_steps_are_refused():
    with pytest.raises(ValueError, match="dpcov.preprocessing.StandardScaler"):
        PublicTransformer(SkStandardScaler()).fit(_rows())
    with pytest.raises(ValueError, match="private dpcov estimator"):
        PublicTransformer(StandardScaler(bounds=(-1.0, 1.0))).fit(_rows())


def test_width_is_public_and_checked():
    wrapped = PublicTransformer(PolynomialFeatures(2)).fit(_rows())
    with pytest.raises(ValueError, match="features"):
        wrapped.transform(_rows(d=3))
    with pytest.raises(ValueError, match="must map each row to one row"):
        PublicTransformer(FunctionTransformer(lambda X: X.ravel())).fit(_rows())


def test_finite_output_maps_non_finite_values():
    values = np.array([[np.nan, np.inf], [-np.inf, 1.0]])
    big = np.finfo(np.float64).max
    np.testing.assert_array_equal(finite_output(values), [[0.0, big], [-big, 1.0]])
    assert np.isnan(values[0, 0])  # the input is not written to
    mapped = finite_output(sparse.csr_matrix(values))
    np.testing.assert_array_equal(mapped.toarray(), [[0.0, big], [-big, 1.0]])
    assert finite_output(np.array([[1, 2]])).dtype == np.float64


def test_output_format_and_dtype_are_fixed_at_fit():
    # A block that fails and its fallback row take the format and dtype of
    # the placeholder's output: no row decides them (float32 stays float32,
    # sparse stays sparse).
    X = _rows(n=20).astype(np.float32)
    X[3] = 100.0
    wrapped = PublicTransformer(FunctionTransformer(_double_or_raise)).fit(X)
    assert wrapped.transform(X).dtype == np.float32
    assert wrapped.transform(X[4:]).dtype == np.float32
    rows = sparse.csr_matrix(X)
    out = PublicTransformer(
        FunctionTransformer(_sparse_or_raise, accept_sparse=True)
    ).fit_transform(rows)
    assert sparse.issparse(out) and out.dtype == np.float32


def _double_or_raise(X):
    # Keeps the input's dtype; raises on an entry above 10.
    if np.any(np.abs(X) > 10):
        raise ValueError("too big")
    return 2 * X


def _sparse_or_raise(X):
    if np.any(np.abs(X.toarray()) > 10):
        raise ValueError("too big")
    return X


def test_complex_or_text_output_is_the_fallback_and_silent():
    X = np.abs(_rows())
    X[0, 0] = -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = PublicTransformer(FunctionTransformer(np.emath.sqrt)).fit_transform(X)
    np.testing.assert_array_equal(out[0], [0.0, 0.0])
    np.testing.assert_allclose(out[1:], np.sqrt(X[1:]))


def test_coo_and_csc_rows_are_read():
    X = _rows()
    expected = PolynomialFeatures(2).fit_transform(X)
    for rows in (sparse.coo_matrix(X), sparse.csc_matrix(X)):
        out = PublicTransformer(PolynomialFeatures(2)).fit_transform(rows)
        np.testing.assert_allclose(out.toarray(), expected)


def test_only_maps_that_a_row_of_zeros_fits_exactly_are_wrapped():
    # Fitted on a row of zeros, a transformer that learns from its rows would
    # learn nothing (OneHotEncoder's categories, a discretizer's edges).
    from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder

    for learner in (OneHotEncoder(), KBinsDiscretizer()):
        with pytest.raises(ValueError, match="learns from its rows"):
            PublicTransformer(learner).fit(_rows())
    # A FrozenEstimator of a dpcov model fitted on public rows is a release.
    from dpcov.decomposition import PCA

    public = np.random.default_rng(1).normal(size=(5000, 2))
    frozen = FrozenEstimator(PCA(1, data_norm=5.0, random_state=0).fit(public))
    out = PublicTransformer(frozen).fit(_rows()).transform(_rows())
    np.testing.assert_allclose(out, frozen.transform(_rows()))
