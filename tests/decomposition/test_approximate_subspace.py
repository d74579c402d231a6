"""Tests for dpcov.decomposition.ApproximateSubspace (Singhal and Steinke, Alg. 2-3)."""

import math
from unittest import mock

import numpy as np
import pytest
from scipy import sparse
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcov.accounting import ApproxDP
from dpcov.decomposition import ApproximateSubspace, NoHeavyCell
from dpcov.decomposition import _approximate_subspace as _subspace
from dpcov.decomposition._approximate_subspace import (
    block_projections,
    boost,
    default_n_blocks,
    predicted_error,
    split_blocks,
    subspace_distance,
)
from dpcov.mechanisms import _noise, stable_histogram_threshold
from dpcov.utils._pairs import pair_differences


def _gaussian(n, d, k, gamma, seed):
    # Planted subspace: random rotation, top-k eigenvalues 1, the rest gamma**2.
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    scales = np.r_[np.ones(k), np.full(d - k, gamma)]
    X = (rng.normal(size=(n, d)) * scales) @ Q.T
    return X, Q[:, :k].T


def test_default_blocks_and_prediction():
    # eps=1, delta=1e-6 gives tau = 27.2 and t = 36.
    assert stable_histogram_threshold(1.0, 1e-6) == pytest.approx(27.24, abs=0.01)
    assert default_n_blocks(1.0, 1e-6) == 36
    # alpha_hat = l (sqrt(d) + sqrt(q)) / (sqrt(12) (sqrt(q) - sqrt(k))).
    assert predicted_error(1.0, 100, 12, 3) == pytest.approx(
        (10 + math.sqrt(12)) / (math.sqrt(12) * (math.sqrt(12) - math.sqrt(3)))
    )


@pytest.mark.parametrize(
    "gamma, cell_scale, successes, median",
    # Calibration runs of the defaults (30 trials; d=100, k=3, m=20, t=40,
    # q=12, eps=1, delta=1e-6): success 29/30, 20/30, 27/30 and median errors
    # 0.027, 0.0068, 0.066, to be reproduced within +-30%.
    [(1e-6, 20.0, 29, 0.027), (1e-6, 5.0, 20, 0.0068), (1e-5, 5.0, 27, 0.066)],
)
def test_planted_subspace_table(gamma, cell_scale, successes, median):
    errors = []
    for seed in range(30):
        X, basis = _gaussian(800, 100, 3, gamma, seed)
        est = ApproximateSubspace(
            3,
            eigengap=gamma,
            cell_scale=cell_scale,
            n_blocks=40,
            n_reference=12,
            max_error=1.0,
            assume_centered=True,
            random_state=seed,
        )
        try:
            est.fit(X)
        except NoHeavyCell:
            continue
        errors.append(subspace_distance(est.components_, basis))
    # +-30% on the count, capped at 30 (within a binomial 99% interval too).
    assert 0.7 * successes <= len(errors) <= 30
    assert 0.7 * median <= np.median(errors) <= 1.3 * median
    # The prediction bounds the error (it is conservative by about 2x).
    assert np.median(errors) <= est.predicted_error_


def test_uninformative_width_is_refused_before_reading_data():
    # The calibration setting gamma=1e-5, c_l=50 (median error 0.67) has a
    # predicted error above 1: fit refuses publicly, even on garbage data.
    est = ApproximateSubspace(
        3,
        eigengap=1e-5,
        cell_scale=50.0,
        n_blocks=40,
        n_reference=12,
        max_error=1.0,
        assume_centered=True,
    )
    with pytest.raises(ValueError, match="predicted error"):
        est.fit(np.full((800, 100), np.inf).clip(-1e300, 1e300))


def test_locality_of_blocks():
    # Changing one row changes exactly one concatenated vector.
    rng = np.random.default_rng(0)
    X, _ = _gaussian(400, 20, 2, 1e-3, 0)
    order = rng.permutation(400)
    reference = rng.normal(size=(8, 20))
    for pairs in (False, True):
        m = (200 if pairs else 400) // 10
        base = block_projections(
            split_blocks(X, order, 1, 10, m, pairs=pairs)[0], reference, 2
        )
        for row in (0, 17, 399):
            X_nb = X.copy()
            X_nb[row] = rng.normal(size=20) * 5
            changed = block_projections(
                split_blocks(X_nb, order, 1, 10, m, pairs=pairs)[0], reference, 2
            )
            assert np.sum(np.any(base != changed, axis=1)) <= 1


def test_public_randomness_is_data_independent():
    # The reference points and offsets depend on the random_state only.
    X1, _ = _gaussian(2000, 30, 2, 1e-9, 0)
    X2, _ = _gaussian(2000, 30, 2, 1e-9, 1)
    a = ApproximateSubspace(2, random_state=5).fit(X1)
    b = ApproximateSubspace(2, random_state=5).fit(X2)
    np.testing.assert_array_equal(a.reference_points_, b.reference_points_)
    np.testing.assert_array_equal(a.grid_offsets_, b.grid_offsets_)
    assert a.reference_points_.shape == (1, 8, 30)


def _recorded_histogram_fit(data, seed):
    # One fit, recording the estimator's call of the stable histogram (its
    # items and arguments, and what it released) and the histogram's Laplace
    # draw (scale and values); and whether the fit's answer was bottom.
    calls, draws = [], []
    real_histogram, real_laplace = _subspace.stable_histogram, _noise.laplace

    def histogram(items, **kwargs):
        released = real_histogram(items, **kwargs)
        calls.append((np.copy(items), kwargs, released))
        return released

    def laplace(rng, scale, size=None):
        draw = real_laplace(rng, scale, size)
        draws.append((scale, np.copy(draw)))
        return draw

    est = ApproximateSubspace(1, n_blocks=30, assume_centered=True, random_state=seed)
    with (
        mock.patch.object(_subspace, "stable_histogram", histogram),
        mock.patch.object(_noise, "laplace", laplace),
    ):
        try:
            est.fit(data)
        except NoHeavyCell:
            bottom = True
        else:
            bottom = False
    (call,) = calls
    (draw,) = draws
    return call, draw, bottom


def test_histogram_noise_scale_through_the_estimator():
    # Exactly rank-1 data put every block in one cell; replacing one row by a
    # far orthogonal point moves one block out (the neighbour). With t=30
    # blocks the heaviest count is 30 (or 29) against tau = 1 + (2 / eps)
    # log(1 / (2 delta)) = 27.24: bottom happens with probability
    # P[Lap(2/eps) <= tau - c] = exp(-(c - tau) eps/2) / 2, i.e. 0.126 and
    # 0.208. Exact, fit by fit: the estimator histograms items of counts 30
    # (or 29 and 1) at its whole budget (eps, delta) = (1, 1e-6); the
    # histogram's noise is one Laplace draw per cell at scale 2 / eps; a
    # cell is released when its count plus its draw exceeds tau (above t/2 =
    # 15), and the answer is bottom exactly when none is. The Laplace
    # sampler's law and the histogram's release probabilities are tested in
    # tests/mechanisms; 3000 fits per neighbour tested the bottom
    # probabilities here before. A noise scale off by 2 (0.03 or 0.25) or a
    # threshold from log(2/delta) (0.5+) fails the checks of the scale or of
    # the released cells.
    rng = np.random.default_rng(0)
    u = np.linalg.qr(rng.normal(size=(10, 1)))[0][:, 0]
    X = rng.normal(size=(30 * 8, 1)) * u
    X_nb = X.copy()
    X_nb[0] = 50.0 * np.linalg.qr(np.c_[u, rng.normal(size=10)])[0][:, 1]
    eps, delta = 1.0, 1e-6
    tau = 1 + (2 / eps) * math.log(1 / (2 * delta))
    assert tau > 30 / 2
    answers = set()
    for data, count in ((X, [30]), (X_nb, [1, 29])):
        for seed in range(30):
            call, draw, bottom = _recorded_histogram_fit(data, seed)
            items, kwargs, (released, noisy_released) = call
            assert kwargs["epsilon"] == eps and kwargs["delta"] == delta
            assert kwargs.get("noise", "laplace") == "laplace"
            cells, counts = np.unique(items, axis=0, return_counts=True)
            assert sorted(counts) == count
            scale, noise = draw
            assert scale == pytest.approx(2 / eps, rel=1e-12)
            noisy = counts + noise
            kept = noisy > tau
            np.testing.assert_array_equal(np.sort(noisy_released), np.sort(noisy[kept]))
            assert bottom == (not kept.any())
            answers.add(bottom)
        p = 0.5 * math.exp(-(count[-1] - tau) * eps / 2)
        assert p == pytest.approx(0.126 if count[-1] == 30 else 0.208, abs=1e-3)
    assert answers == {True, False}  # both outcomes were checked
    # The ratio of the bottom probabilities is within e^eps (eps-DP part).
    assert 0.208 / 0.126 < math.e


def test_boost_selects_a_run_close_to_the_majority():
    # Boosting: with 40% of the runs replaced by random projectors the selected
    # run is within 3 alpha of the truth; with most runs bad, none is chosen.
    rng = np.random.default_rng(0)
    d, k, alpha = 30, 2, 0.05
    truth = np.linalg.qr(rng.normal(size=(d, k)))[0].T

    def near():
        out = np.linalg.qr((truth + 0.004 * rng.normal(size=(k, d))).T)[0].T
        assert subspace_distance(out, truth) <= alpha
        return out

    def bad():
        return np.linalg.qr(rng.normal(size=(d, k)))[0].T

    for trial in range(50):
        outputs = [near() for _ in range(9)] + [bad() for _ in range(6)]
        outputs = [outputs[i] for i in rng.permutation(15)]
        if trial % 5 == 0:
            outputs[0] = None  # a bottom run
        chosen = boost(outputs, alpha)
        assert chosen is not None
        assert subspace_distance(outputs[chosen], truth) <= 3 * alpha
    assert boost([bad() for _ in range(8)] + [near() for _ in range(7)], alpha) is None


@pytest.mark.parametrize("seed", range(3))
def test_boosted_fit_with_mean_and_pairs(seed):
    X, basis = _gaussian(6000, 40, 2, 1e-9, seed)
    X = X + 100.0  # pairs remove the mean
    est = ApproximateSubspace(2, n_repeats=3, random_state=seed).fit(X)
    assert subspace_distance(est.components_, basis) <= 3 * est.predicted_error_
    assert est.budget_split_ == {"histogram": ApproxDP(1.0, 1e-6)}
    assert est.guarantee_ == ApproxDP(1.0, 1e-6)
    assert est.reference_points_.shape == (3, 8, 40)
    assert est.eigengap_ > 1e-9


def test_bad_input():
    X, _ = _gaussian(2000, 30, 2, 1e-9, 0)
    with pytest.raises(ValueError, match="delta"):
        ApproximateSubspace(2, delta=0.0).fit(X)
    with pytest.raises(ValueError, match="more than k"):
        ApproximateSubspace(2).fit(X[:100])
    with pytest.raises(ValueError, match="n_reference=2 must exceed"):
        ApproximateSubspace(2, n_reference=2).fit(X)
    with pytest.raises(ValueError, match="at most n_features"):
        ApproximateSubspace(31).fit(X)
    X_inf = X.copy()
    X_inf[3, 3] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ApproximateSubspace(2).fit(X_inf)
    with pytest.raises(TypeError, match="[Ss]parse"):
        ApproximateSubspace(2).fit(sparse.csr_matrix(X))


def test_pipeline_and_grid_search():
    X, basis = _gaussian(4000, 20, 2, 1e-9, 0)
    pipe = make_pipeline(FunctionTransformer(), ApproximateSubspace(2, random_state=0))
    assert pipe.fit_transform(X).shape == (4000, 2)
    search = GridSearchCV(
        ApproximateSubspace(2, random_state=0), {"max_error": [0.05, 0.1]}, cv=2
    ).fit(X)
    assert search.best_score_ > 0.99


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_split_blocks_uses_the_first_pairs_of_the_order(dtype):
    # The blocks are the first rows (or pair differences, in float64) of the
    # reordered data, exactly.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(103, 5)).astype(dtype)
    order = rng.permutation(103)
    rows = X[order].astype(np.float64)
    blocks = split_blocks(X, order, 2, 3, 8, pairs=True)
    np.testing.assert_array_equal(blocks.reshape(-1, 5), pair_differences(rows)[:48])
    blocks = split_blocks(X, order, 2, 3, 8, pairs=False)
    np.testing.assert_array_equal(blocks.reshape(-1, 5), rows[:48])
    assert blocks.dtype == np.float64


@pytest.mark.parametrize("m", [40, 12])
def test_block_projections_equal_the_blockwise_svd(m):
    # Tall blocks (m >= d) use the Gram matrix's eigenvectors, wide ones the
    # SVD; both project on each block's top-k right singular subspace. With
    # a singular-value gap of order 1 the subspaces agree to rounding.
    rng = np.random.default_rng(0)
    d, k = 20, 2
    blocks = rng.normal(size=(6, m, k)) @ (5 * rng.normal(size=(k, d)))
    blocks += rng.normal(size=(6, m, d))
    reference = rng.normal(size=(8, d))
    expected = []
    for block in blocks:
        _, _, vt = np.linalg.svd(block, full_matrices=False)
        top = vt[:k]
        expected.append((reference @ top.T @ top).ravel())
    np.testing.assert_allclose(
        block_projections(blocks, reference, k), np.array(expected), atol=1e-10
    )


def test_split_blocks_with_overflowing_pairs():
    # A block where a pair difference overflows is computed scaled by a power
    # of two (the same subspace), without a warning; the others are exact.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(48, 3))
    order = np.arange(48)
    X[5], X[4] = [1e308, -1e308, 1.0], [-1e308, 1e308, 0.0]
    blocks = split_blocks(X, order, 1, 4, 6, pairs=True)
    plain = pair_differences(X)[:24].reshape(1, 4, 6, 3)
    np.testing.assert_array_equal(blocks[0, 1:], plain[0, 1:])
    assert np.all(np.isfinite(blocks))
    k = 1024  # 2**1023 < 1e308 < 2**1024
    np.testing.assert_array_equal(
        blocks[0, 0], np.ldexp(X[1:12:2], -k) - np.ldexp(X[0:12:2], -k)
    )


@pytest.mark.parametrize("size", [1e300, 1e-300])
def test_block_projections_of_huge_and_tiny_blocks(size):
    # A block's subspace does not depend on its scale: blocks of entries near
    # 1e300 (whose Gram matrix overflows) or 1e-300 (underflows) project as
    # the same block at ordinary scale.
    rng = np.random.default_rng(0)
    d, k = 6, 2
    blocks = rng.normal(size=(3, 20, k)) @ (5 * rng.normal(size=(k, d)))
    blocks += rng.normal(size=(3, 20, d))
    reference = rng.normal(size=(8, d))
    expected = block_projections(blocks, reference, k)
    scaled = blocks.copy()
    scaled[1] *= size
    got = block_projections(scaled, reference, k)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("assume_centered", [True, False])
@pytest.mark.parametrize(
    "extreme, moderate",
    [
        ([1e307] + [0.0] * 9, [1e290] + [0.0] * 9),
        ([1e308, -1e308] * 5, [1e290, -1e290] * 5),
        ([1e300] * 10, [1e290] * 10),
        ([-1e308] * 10, [-1e290] * 10),
        ([1e-308, 5e-324] + [0.0] * 8, [1e-290, 0.0] + [0.0] * 8),
    ],
)
def test_extreme_row_releases_as_a_moderate_one(assume_centered, extreme, moderate):
    # The extreme row dominates its block as a large row of the same
    # direction does: the fits agree exactly, and raise no warning.
    X, _ = _gaussian(4000, 10, 2, 1e-9, 0)
    for position in (0, 1999, 3999):
        fits = []
        for row in (extreme, moderate):
            X_prime = X.copy()
            X_prime[position] = row
            est = ApproximateSubspace(
                2, assume_centered=assume_centered, random_state=0
            ).fit(X_prime)
            assert np.all(np.isfinite(est.components_))
            fits.append(est.components_)
        np.testing.assert_array_equal(fits[0], fits[1])
