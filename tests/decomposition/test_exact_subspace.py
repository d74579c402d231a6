"""Tests for dpcov.decomposition.ExactSubspace (Singhal and Steinke, exact case)."""

import math

import numpy as np
import pytest
from scipy import sparse, stats
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from dpcov.accounting import ApproxDP
from dpcov.decomposition import ExactSubspace, NoStableSubspace
from dpcov.decomposition._exact_subspace import (
    enumerate_scores,
    majority_search,
    search_trials,
    subspace_score,
)
from dpcov.mechanisms import stability_test
from dpcov.utils._exact import IntegerSpan, integer_rows


def _planted(n_inliers, n_outliers, d=8, k=2, seed=0):
    # Integer rows: inliers are integer combinations of an integer basis of a
    # random k-subspace (general position with high probability), outliers are
    # random integer vectors; exactly representable, so exact arithmetic sees
    # the structure.
    rng = np.random.default_rng(seed)
    basis = rng.integers(-5, 6, size=(k, d))
    inliers = rng.integers(-50, 51, size=(n_inliers, k)) @ basis
    outliers = rng.integers(-50, 51, size=(n_outliers, d))
    X = np.vstack([outliers, inliers]).astype(float)
    return X, basis


def _objects(X):
    return np.array(integer_rows(X), dtype=object).reshape(X.shape)


def _same_span(est, basis):
    q = np.linalg.qr(basis.T.astype(float))[0]
    return np.allclose(est.get_projection(), q @ q.T, atol=1e-9)


def test_score_sanity():
    # d=8, k=2, n=30 with 3 outliers; score(S*) = n - l - (k - 1)
    # = 26 and every other span scores at most 1.
    X, basis = _planted(27, 3)
    scores = enumerate_scores(_objects(X), 2)
    star = IntegerSpan.from_rows(basis.tolist()).key
    assert scores[star][1] == 26
    assert max(q for key, (_, q) in scores.items() if key != star) <= 1


@pytest.mark.parametrize("seed", range(10))
def test_success_threshold(seed):
    # At eps=1, delta=1e-6 (B_2 = 27.33): n=70 gives gap 65 above
    # 2 B_2 + 2 = 56.7, so the answer is always S*. Majority at n=70:
    # v = 66 - 35 = 31 above 1 + 2 B_1 (B_1 = 14.2 at the test's 0.9 delta),
    # so always S*.
    X70, basis = _planted(67, 3, seed=seed)
    for selection in ("gap", "majority"):
        est = ExactSubspace(
            2, selection=selection, assume_centered=True, random_state=seed
        ).fit(X70)
        assert _same_span(est, basis)


def test_below_threshold_release_rate():
    # n=30 (gap 25 < tau_A = 29.33) is not "always bottom": the release
    # needs Z > 4.33, of probability
    # (e^{-4.33/2} - e^{-A/2}) / (2 (1 - e^{-A/2})) = 5.7% under TLap(2, 1,
    # 1e-6). Only gaps <= 2 are always bottom (next test). Check the rate.
    X30, _ = _planted(27, 3)
    scores = sorted((q for _, q in enumerate_scores(_objects(X30), 2).values()))
    assert scores[-1] - max(scores[-2], 0) == 25
    scale, bound = 2.0, 2.0 * math.log1p(math.expm1(1.0) / 2e-6)
    z = 2.0 + bound - 25.0
    p = (math.exp(-z / scale) - math.exp(-bound / scale)) / (
        2 * (1 - math.exp(-bound / scale))
    )
    rng = np.random.default_rng(0)
    n_runs = 40_000
    hits = sum(
        stability_test(rng, 25.0, sensitivity=2.0, epsilon=1.0, delta=1e-6)
        for _ in range(n_runs)
    )
    assert stats.binomtest(hits, n_runs, p).pvalue > 1e-4


def _two_lines(a, b):
    # k=1 in R^2: a rows on the line (1, 2), b rows on (3, -1), rest elsewhere.
    rows = [(i, 2 * i) for i in range(1, a + 1)] + [
        (3 * i, -i) for i in range(1, b + 1)
    ]
    return np.array(rows, dtype=float)


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["gap", "majority"])
def test_neighbour_release_probabilities(selection):
    # Through the estimator's selection step: a dataset at the edge
    # and its neighbour (one row moved between the two lines).
    # gap (Delta = 2): scores are the line counts, gap 3 = 5 - 2 releases with
    # probability delta / (1 + e^{eps/2}); the neighbour (4, 3) has gap 1 and
    # never releases. majority (Delta = 1): 7 of 10 rows on one line is
    # v = 7 - 5 = 2, released with probability exactly delta_test = 0.9 delta
    # (the search misses with probability below delta / 10 / (1 + e), far
    # below the test's resolution);
    # the neighbour has v = 1 and never releases.
    epsilon, delta, n_runs = 1.0, 0.01, 20_000
    est = ExactSubspace(1, epsilon=epsilon, delta=delta, selection=selection)
    budget = ApproxDP(epsilon, delta)
    if selection == "gap":
        X, X_nb = _two_lines(5, 2), _two_lines(4, 3)
        p = delta / (1 + math.exp(epsilon / 2))
    else:
        others = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        X = np.vstack([_two_lines(7, 0), others])
        X_nb = np.vstack([_two_lines(6, 0), others, [[5.0, 1.0]]])
        p = 0.9 * delta

    def releases(data, seed):
        integers = _objects(data)
        rng = np.random.default_rng(seed)
        if selection == "gap":
            runs = (est._select_gap(integers, 1, budget, rng)[1] for _ in range(n_runs))
        else:
            runs = (
                est._select_majority(integers, 1, budget, rng)[1] for _ in range(n_runs)
            )
        return sum(runs)

    hits = releases(X, 0)
    assert stats.binomtest(hits, n_runs, p).pvalue > 1e-4
    assert releases(X_nb, 1) == 0


def test_score_sensitivity_on_neighbours():
    # Replacing a row moves every score by at most 1 and the gap
    # g = q1 - max(q2, 0) by at most 2, including rows moved into or out of
    # a heavy hyperplane (small coordinates make many coincidences).
    rng = np.random.default_rng(0)
    for _ in range(25):
        X = rng.integers(-1, 2, size=(10, 3)).astype(float)
        X_nb = X.copy()
        X_nb[rng.integers(10)] = (
            X[rng.integers(10)] if rng.random() < 0.5 else rng.integers(-1, 2, 3)
        )
        A, B = _objects(X), _objects(X_nb)
        sa, sb = enumerate_scores(A, 2), enumerate_scores(B, 2)
        for key in set(sa) | set(sb):
            span = (sa.get(key) or sb.get(key))[0]
            ca, ma = subspace_score(A, span)
            cb, mb = subspace_score(B, span)
            assert abs((ca - ma) - (cb - mb)) <= 1

        def gap(scores):
            q = sorted((s for _, s in scores.values()), reverse=True) + [0, 0]
            return q[0] - max(q[1], 0)

        assert abs(gap(sa) - gap(sb)) <= 2


@pytest.mark.slow
def test_search_failure_rate():
    # k=3, a bit over half the rows in S*; R trials all miss with
    # probability at most (1 - 2^-k)^R. Take R with bound 0.2 and count misses.
    X, basis = _planted(56, 44, d=6, k=3, seed=1)
    integers = _objects(X)
    star = IntegerSpan.from_rows(basis.tolist()).key
    trials = search_trials(3, 0.2)
    rng = np.random.default_rng(0)
    misses = 0
    for _ in range(1000):
        span, _ = majority_search(integers, 3, rng.integers(100, size=(trials, 3)))
        misses += span is None or span.key != star
    # One-sided binomial test against the bound.
    assert stats.binomtest(misses, 1000, 0.2, alternative="greater").pvalue > 1e-4


@pytest.mark.parametrize("seed", range(5))
def test_planted_recovery_with_pairs_and_outliers(seed):
    # Affine data (offset by a public-unknown shift) in a 3-subspace of R^10,
    # 5 outliers; with pairs, 200 rows give 100 differences, above the
    # certain-success bound 4*5 + 4 B_1 + 4 = 81 (B_1 = 14.2 at 0.9 delta).
    X, basis = _planted(195, 5, d=10, k=3, seed=seed)
    X = X + 7.0
    est = ExactSubspace(3, n_outliers=5, random_state=seed).fit(X)
    assert _same_span(est, basis)
    assert est.required_samples(5, 3) <= 200
    assert est.guarantee_ == ApproxDP(1.0, 1e-6)
    assert set(est.budget_split_) == {"search", "selection"}
    Xc = X - 7.0
    np.testing.assert_allclose(
        est.inverse_transform(est.transform(Xc))[5:], Xc[5:], atol=1e-9
    )


def test_float_data_off_the_subspace_is_bottom():
    # Z @ B computed in floating point is not exactly in a subspace: the
    # exact test sees general position and answers bottom; the error message
    # only states public quantities (the same for two different datasets).
    rng = np.random.default_rng(0)
    messages = set()
    for seed in range(2):
        B = np.random.default_rng(seed).normal(size=(2, 6))
        X = rng.normal(size=(200, 2)) @ B
        with pytest.raises(NoStableSubspace) as info:
            ExactSubspace(2, random_state=0).fit(X)
        messages.add(str(info.value))
    assert len(messages) == 1


def test_public_prechecks_and_bad_input():
    X, _ = _planted(60, 0)
    with pytest.raises(ValueError, match="delta"):
        ExactSubspace(2, delta=0.0).fit(X)
    with pytest.raises(ValueError, match="below the"):
        ExactSubspace(2, n_outliers=10).fit(X)
    with pytest.raises(ValueError, match="at most n_features"):
        ExactSubspace(9).fit(X)
    with pytest.raises(ValueError, match="at least"):
        ExactSubspace(2, assume_centered=False).fit(X[:4])
    with pytest.raises(ValueError, match="beyond the exact search"):
        ExactSubspace(6).fit(np.zeros((400, 8)) + 1.0)
    with pytest.raises(ValueError, match='selection="gap" enumerates'):
        ExactSubspace(3, selection="gap").fit(np.ones((300, 8)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ExactSubspace(2).fit(X_nan)
    with pytest.raises(TypeError, match="[Ss]parse"):
        ExactSubspace(2).fit(sparse.csr_matrix(X))


def test_pipeline_and_search():
    X, basis = _planted(300, 0, d=6, k=2)
    y = X @ np.arange(6.0)
    pipe = make_pipeline(ExactSubspace(2, random_state=0), LinearRegression())
    assert pipe.fit(X, y).score(X, y) == pytest.approx(1.0)
    search = GridSearchCV(
        ExactSubspace(2, random_state=0), {"epsilon": [0.5, 1.0]}, cv=2
    ).fit(X)
    assert search.best_estimator_.score(X) == pytest.approx(1.0)


@pytest.mark.parametrize("assume_centered", [True, False])
@pytest.mark.parametrize(
    "extreme",
    [
        [1e307] + [0.0] * 9,
        [1e308, -1e308] * 5,
        [1e300] * 10,
        [-1e308] * 10,
        [1e-308, 0.0, 5e-324] + [0.0] * 7,
    ],
)
def test_extreme_outliers(assume_centered, extreme):
    # Outliers of any finite size are lines like any other (their pair
    # differences overflow, without a warning; warnings are errors here):
    # the planted subspace is still released, on both neighbours.
    X, basis = _planted(195, 5, d=10, k=3, seed=0)
    for position in (0, 2, 4):
        X_prime = X.copy()
        X_prime[position] = extreme
        est = ExactSubspace(3, assume_centered=assume_centered, random_state=0)
        assert _same_span(est.fit(X_prime), basis)
        assert np.all(np.isfinite(est.components_))


def test_public_prechecks_come_before_arithmetic(monkeypatch):
    # A refusal on public grounds happens before the rows are differenced.
    import dpcov.decomposition._exact_subspace as module

    def fail(X):
        raise AssertionError("the rows were read")

    monkeypatch.setattr(module, "pair_differences", fail)
    X, _ = _planted(60, 0)
    with pytest.raises(ValueError, match="below the"):
        ExactSubspace(2, n_outliers=10).fit(X)
    with pytest.raises(ValueError, match="at least"):
        ExactSubspace(2).fit(X[:5])
