"""The exponential mechanism over a finite set: law, neighbours, edge cases."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcov.mechanisms import exponential_mechanism, exponential_probabilities


def test_probabilities_by_hand():
    # P(j) ~ exp(eps s_j / (2 sensitivity)): scores 0, 0, -2 at eps = 1 give
    # weights 1, 1, e^-1; sensitivity 2 halves the exponent.
    p = exponential_probabilities([0.0, 0.0, -2.0], epsilon=1.0)
    w = np.array([1.0, 1.0, math.exp(-1.0)])
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-15)
    p2 = exponential_probabilities([0.0, 0.0, -2.0], epsilon=1.0, sensitivity=2.0)
    w2 = np.array([1.0, 1.0, math.exp(-0.5)])
    np.testing.assert_allclose(p2, w2 / w2.sum(), rtol=1e-15)
    # Shifting every score changes nothing; huge gaps do not overflow.
    np.testing.assert_allclose(
        exponential_probabilities([1e6, 1e6, 1e6 - 2.0], epsilon=1.0), p, rtol=1e-9
    )
    assert exponential_probabilities([0.0, -1e9], epsilon=1.0).tolist() == [1.0, 0.0]


def test_draws_follow_the_closed_form(global_random_seed):
    # 20000 draws against the closed form, chi-square at level 1e-4; a mechanism
    # at twice or half the epsilon moves the law by far more (p-value ~ 0).
    scores = np.array([0.0, -1.0, -3.0, -0.5, -6.0])
    rng = np.random.default_rng(global_random_seed)
    draws = [exponential_mechanism(scores, epsilon=0.8, rng=rng) for _ in range(20_000)]
    expected = exponential_probabilities(scores, epsilon=0.8) * len(draws)
    observed = np.bincount(draws, minlength=scores.size)
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    wrong = exponential_probabilities(scores, epsilon=1.6) * len(draws)
    assert stats.chisquare(observed, wrong).pvalue < 1e-10


def test_neighbouring_scores_move_each_probability_by_at_most_e_to_the_epsilon(
    global_random_seed,
):
    # Scores that differ by at most the sensitivity in every coordinate (in
    # either direction, not monotone): every log-ratio is at most epsilon.
    rng = np.random.default_rng(global_random_seed)
    for _ in range(200):
        s = rng.normal(scale=3.0, size=8)
        t = s + rng.uniform(-1.0, 1.0, size=8)
        p = exponential_probabilities(s, epsilon=0.7)
        q = exponential_probabilities(t, epsilon=0.7)
        assert np.abs(np.log(p / q)).max() <= 0.7 + 1e-12


def test_infinite_epsilon_picks_a_maximiser(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    scores = [1.0, 3.0, 3.0, -2.0]
    np.testing.assert_array_equal(
        exponential_probabilities(scores, epsilon=math.inf), [0.0, 0.5, 0.5, 0.0]
    )
    picks = {
        exponential_mechanism(scores, epsilon=math.inf, rng=rng) for _ in range(50)
    }
    assert picks == {1, 2}


@pytest.mark.parametrize("scores", [[], [[0.0, 1.0]], [0.0, np.nan], [np.inf, 0.0]])
def test_bad_scores_are_refused(scores):
    with pytest.raises(ValueError, match="finite"):
        exponential_mechanism(scores, epsilon=1.0, rng=np.random.default_rng(0))
