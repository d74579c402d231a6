"""Shared helpers of the sampler tests: a seeded CSPRNG, two goodness-of-fit checks."""

import math
import random

import numpy as np
from scipy import stats

#: Standard errors a sample mean may stray from its expectation (a 5-sigma
#: two-sided band: about 6e-7 false alarms per check).
Z_SCORE = 5.0


class SeededSource:
    """The interface of :mod:`secrets` that the samplers use, seeded."""

    def __init__(self, seed):
        self._random = random.Random(seed)

    def token_bytes(self, n):
        return self._random.randbytes(n)

    def randbelow(self, n):
        return self._random.randrange(n)

    def SystemRandom(self):
        return self._random


def chi_square_pvalue(draws, pmf, min_expected=5.0):
    # Chi-square goodness of fit: one cell per value with at least 5 expected
    # draws, and one pooled cell for each tail. A tail of probability 0 (the
    # run counts below 1) is no cell: a draw there is impossible under the
    # law, so it fails the test outright (p-value 0).
    draws = np.asarray(draws, dtype=np.int64)
    n = draws.size
    support = np.arange(-400, 401)
    probabilities = pmf(support)
    kept = support[probabilities * n >= min_expected]
    lo, hi = kept[0], kept[-1]
    observed = [np.count_nonzero(draws < lo)]
    observed += [np.count_nonzero(draws == z) for z in kept]
    observed += [np.count_nonzero(draws > hi)]
    expected = np.concatenate(
        [
            [probabilities[support < lo].sum()],
            pmf(kept),
            [probabilities[support > hi].sum()],
        ]
    )
    observed, possible = np.array(observed), expected > 0
    if observed[~possible].any():
        return 0.0
    expected = n * expected[possible] / expected.sum()
    return stats.chisquare(observed[possible], expected).pvalue


def assert_mean_close(values, expected):
    """Sample mean within Z_SCORE standard errors of ``expected``."""
    se = values.std(ddof=1) / math.sqrt(values.size)
    assert abs(values.mean() - expected) <= Z_SCORE * se, (values.mean(), expected, se)
