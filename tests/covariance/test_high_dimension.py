"""From SPECTRAL_FROM features on: one eigendecomposition per fit, reused."""

import contextlib
import pickle
import threading
import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.base import clone
from sklearn.covariance import log_likelihood

from dpcov.covariance import (
    AdaptiveCovariance,
    EigenSamplingCovariance,
    GaussianCovariance,
    SeparateCovariance,
)
from dpcov.decomposition import PCA
from dpcov.mechanisms._projection import (
    PARTIAL_UP_TO,
    SPECTRAL_FROM,
    LazySpectrum,
    deferred_eigenvectors,
    spectrum_of,
)
from dpcov.utils._eigen_calls import count_eigendecompositions

D = SPECTRAL_FROM


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3000, D)) / np.sqrt(np.arange(1, D + 1))


def _fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with count_eigendecompositions() as calls:
            estimator.fit(X)
    return calls


# (estimator, eigendecompositions with all vectors, without, partial):
# GaussCov's release; SeparateCov's noisy matrix and the exact moment's
# eigenvalues (its algorithm's two spectra); AdaptiveCov runs one of them at
# the end. PCA takes the release's eigenvalues and only the top vectors it
# keeps (a partial eigensolver), all of them when it keeps more than a third.
CASES = [
    (lambda: GaussianCovariance(random_state=0), {(1, 0, 0)}),
    (lambda: GaussianCovariance(delta=0, random_state=0), {(1, 0, 0)}),
    (lambda: GaussianCovariance(projection="feasible", random_state=0), {(1, 0, 0)}),
    (lambda: SeparateCovariance(random_state=0), {(1, 1, 0)}),
    (lambda: SeparateCovariance(rho=100.0, random_state=0), {(1, 1, 0)}),
    (lambda: AdaptiveCovariance(rho=0.001, random_state=0), {(1, 0, 0), (1, 1, 0)}),
    (lambda: PCA(n_components=3, random_state=0), "pca"),
    (lambda: PCA(n_components=6, random_state=0), "pca"),
    (lambda: PCA(n_components=7, random_state=0), "pca"),
    (lambda: PCA(n_components="mle", random_state=0), "pca"),
    (lambda: PCA(n_components=0.5, random_state=0), "pca"),
]


@pytest.mark.parametrize("make, counts", CASES)
def test_one_eigendecomposition_per_fit(rows, make, counts):
    estimator = make()
    calls = _fit(estimator, rows)
    full = sum(call.vectors and not call.partial for call in calls)
    partial = sum(call.vectors and call.partial for call in calls)
    without = len(calls) - full - partial
    assert all(call.size == D for call in calls)
    if counts == "pca":
        # Keeping at most PARTIAL_UP_TO of the axes (an integer known before
        # the fit): the release's eigenvalues (and SeparateCov's exact
        # moment's), then the kept vectors alone; otherwise its covariance's
        # own count.
        k = estimator.n_components
        if isinstance(k, int) and k <= PARTIAL_UP_TO * D:
            counts = {(0, 1, 1), (0, 2, 1)}
        else:
            counts = {(1, 0, 0), (1, 1, 0)}
    assert (full, without, partial) in counts


def test_the_count_sees_pinvh_and_small_fits_keep_their_own():
    # The spy counts scikit-learn's pinvh; below SPECTRAL_FROM a fit runs
    # several (the bootstrap's), as before.
    X = np.random.default_rng(1).standard_normal((500, 8))
    with count_eigendecompositions() as calls:
        linalg.pinvh(np.eye(3))
    assert len(calls) == 1 and calls[0].vectors
    assert len(_fit(GaussianCovariance(random_state=0), X)) > 2


@pytest.mark.parametrize("cls", [GaussianCovariance, SeparateCovariance])
def test_precision_and_score_from_the_spectrum(rows, cls):
    # precision_, get_precision and score are pinvh's on the matrices the
    # fit releases, within 1e-10.
    est = cls(epsilon=8.0, eigenvalue_floor="auto", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(rows)
    expected = linalg.pinvh(est.covariance_)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(est.precision_, expected, atol=1e-10 * scale)
    np.testing.assert_allclose(est.get_precision(), expected, atol=1e-10 * scale)
    no_store = cls(epsilon=8.0, store_precision=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        no_store.fit(rows)
    assert no_store.precision_ is None
    np.testing.assert_allclose(
        no_store.get_precision(), linalg.pinvh(no_store.covariance_), atol=1e-10 * scale
    )
    # score: the model with eigenvalues raised to the noise level.
    spectrum = est._spectrum
    model = (spectrum.vectors * est._score_values) @ spectrum.vectors.T
    test = rows[:500] - est.location_
    expected_score = log_likelihood(test.T @ test / 500, linalg.pinvh(model))
    assert est.score(rows[:500]) == pytest.approx(expected_score, rel=1e-10)


def test_separate_release_matrix_is_formed_only_when_asked(rows):
    # SeparateCov's release is its spectrum; with store_raw the matrix is
    # formed from it, and covariance_ is its clamp to [0, data_norm**2].
    est = SeparateCovariance(
        data_norm=3.0,
        assume_centered=True,
        store_raw=True,
        shrinkage=None,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(rows)
    raw = est.raw_covariance_
    np.testing.assert_array_equal(raw, raw.T)
    values, vectors = np.linalg.eigh(raw)
    clamped = (vectors * np.clip(values, 0.0, 9.0)) @ vectors.T
    assert np.linalg.norm(est.covariance_ - clamped) <= 1e-10 * np.linalg.norm(clamped)


def test_pca_axes_are_the_release_eigenvectors(rows):
    # PCA reads the covariance estimator's eigendecomposition: its components
    # are eigenvectors of covariance_ with explained_variance_ its values.
    pca = PCA(n_components=5, epsilon=8.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca.fit(rows)
    covariance = pca.covariance_estimator_.covariance_
    along = np.einsum("ij,jk,ik->i", pca.components_, covariance, pca.components_)
    n = rows.shape[0]
    np.testing.assert_allclose(pca.explained_variance_, along * n / (n - 1), rtol=1e-9)
    np.testing.assert_allclose(
        covariance @ pca.components_.T,
        pca.components_.T * along,
        atol=1e-9 * np.abs(covariance).max(),
    )
    assert np.all(np.diff(pca.explained_variance_) <= 0)


def test_eigen_sampling_with_every_direction_releases_its_basis():
    # With k = d the sampled basis is the release's eigendecomposition: no
    # eigendecomposition after the sampler's own.
    X = np.random.default_rng(2).standard_normal((400, D)) * 0.1
    est = EigenSamplingCovariance(epsilon=50.0, data_norm=3.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    spectrum = est._spectrum
    np.testing.assert_allclose(
        spectrum.vectors.T @ spectrum.vectors, np.eye(D), atol=1e-8
    )
    np.testing.assert_allclose(
        spectrum.matrix(), est.covariance_, atol=1e-12 * np.abs(est.covariance_).max()
    )


@pytest.mark.parametrize(
    "params",
    [
        {"n_components": 6},
        {"n_components": 1, "delta": 0.0},
        {"n_components": 5, "data_norm": 10.0, "assume_centered": True},
        {"n_components": 5, "covariance": GaussianCovariance()},
        {"n_components": 3, "covariance": GaussianCovariance(), "bounds": (-4, 4)},
    ],
    ids=["adaptive", "pure", "separate", "gauss", "gauss-box"],
)
def test_pca_with_deferred_eigenvectors_is_the_eager_fit(rows, params, monkeypatch):
    # PCA defers its release's eigenvectors (the top ones from a partial
    # eigensolver; covariance_ and precision_ formed at their first read):
    # the same fit as with every eigenvector computed, up to rounding.
    import dpcov.decomposition._pca as pca_module

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return PCA(random_state=0, **params).fit(rows)

    deferred = fit()
    inner = deferred.covariance_estimator_
    # (With a box, D C D's eigenvectors are other ones: every matrix is
    # formed in the fit, as before.)
    deferred_matrices = "bounds" not in params
    assert ("covariance_" not in vars(inner)) is deferred_matrices
    monkeypatch.setattr(pca_module, "deferred_eigenvectors", contextlib.nullcontext)
    eager = fit()
    assert deferred.n_components_ == eager.n_components_
    np.testing.assert_allclose(deferred.components_, eager.components_, atol=1e-10)
    np.testing.assert_allclose(
        deferred.explained_variance_, eager.explained_variance_, rtol=1e-12
    )
    assert deferred.noise_variance_ == pytest.approx(eager.noise_variance_, rel=1e-12)
    for name in ("covariance_", "precision_"):
        expected = getattr(eager.covariance_estimator_, name)
        np.testing.assert_allclose(
            getattr(inner, name), expected, atol=1e-12 * np.abs(expected).max()
        )
    assert "covariance_" in vars(inner)  # formed once, then kept
    assert deferred.score(rows[:300]) == pytest.approx(eager.score(rows[:300]))


def test_deferred_matrices_survive_pickling_and_refits(rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PCA(n_components=3, random_state=0).fit(rows)
        inner = pca.covariance_estimator_
        copy = pickle.loads(pickle.dumps(inner))  # before the first read
        np.testing.assert_array_equal(copy.covariance_, inner.covariance_)
        # A refit outside PCA forms its matrices at once; a deferred fit
        # after it drops them (none of the earlier fit's is read).
        inner.fit(rows)
        assert "covariance_" in vars(inner)
        eager = clone(inner).set_params(random_state=1).fit(rows).covariance_
        with deferred_eigenvectors():
            inner.set_params(random_state=1).fit(rows)
        assert "covariance_" not in vars(inner)
        np.testing.assert_allclose(
            inner.covariance_, eager, atol=1e-12 * np.abs(eager).max()
        )
    with pytest.raises(AttributeError, match="has no attribute 'other_'"):
        inner.other_  # noqa: B018


@pytest.mark.parametrize("m", [0, 1, 6, 7, 40, 128])
def test_top_eigenvectors_span_the_full_decomposition_s(m):
    # LazySpectrum.top: the eigenvectors of the m largest eigenvalues, from
    # a partial solver up to PARTIAL_UP_TO of d, from all of them beyond.
    matrix = np.random.default_rng(3).standard_normal((D, D))
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    with deferred_eigenvectors():
        spectrum = spectrum_of(matrix)
    assert isinstance(spectrum, LazySpectrum)
    np.testing.assert_allclose(spectrum.values, values, atol=1e-12)
    top = spectrum.top(m)
    assert top.shape == (D, m)
    expected = vectors[:, D - m :]
    np.testing.assert_allclose(top @ top.T, expected @ expected.T, atol=1e-10)
    np.testing.assert_allclose(np.abs(top.T @ expected), np.eye(m), atol=1e-8)
    # Read whole, the eigenvectors are Spectrum.of's, bit for bit.
    np.testing.assert_array_equal(spectrum.vectors, vectors)


def test_pca_keeping_many_axes_computes_its_covariance_whole(rows):
    # Beyond PARTIAL_UP_TO of the axes (or a number decided after the fit)
    # the release's eigenvectors are not deferred.
    for k in (7, "mle", 0.9):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inner = PCA(n_components=k, random_state=0).fit(rows).covariance_estimator_
        assert "covariance_" in vars(inner)


def test_deferred_matrices_are_formed_once_under_threads(rows):
    # Two threads reading covariance_ at once both get the one matrix.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inner = PCA(n_components=3, random_state=0).fit(rows).covariance_estimator_
    barrier, results = threading.Barrier(2), []

    def read():
        barrier.wait()
        results.append(inner.covariance_)

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and results[0] is results[1] is inner.covariance_


def test_an_edited_raw_release_does_not_move_the_deferred_covariance(rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PCA(
            n_components=3,
            covariance=GaussianCovariance(store_raw=True),
            random_state=0,
        ).fit(rows)
    inner = pca.covariance_estimator_
    expected = clone(inner).fit(rows).covariance_
    inner.raw_covariance_[...] = 0.0
    np.testing.assert_allclose(
        inner.covariance_, expected, atol=1e-12 * np.abs(expected).max()
    )


@pytest.mark.parametrize("cls", [GaussianCovariance, SeparateCovariance])
def test_precision_is_formed_at_its_first_read(rows, cls):
    # From SPECTRAL_FROM features on, precision_ (the spectrum with inverted
    # values) is formed when first read, not in the fit: the same matrix as
    # pinvh's on covariance_; store_precision=False records None.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(epsilon=8.0, random_state=0).fit(rows)
        no_store = cls(epsilon=8.0, store_precision=False, random_state=0).fit(rows)
    assert "precision_" not in vars(est) and "covariance_" in vars(est)
    expected = linalg.pinvh(est.covariance_)
    precision = est.precision_
    assert vars(est)["precision_"] is precision is est.precision_
    np.testing.assert_allclose(precision, expected, atol=1e-10 * np.abs(expected).max())
    assert vars(no_store)["precision_"] is None
