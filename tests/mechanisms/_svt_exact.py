"""Exact output law of AboveThreshold, by quadrature (independent of dpcov)."""

import numpy as np
from scipy import integrate, stats


def above_threshold_law(queries, threshold, epsilon, sensitivity=1.0):
    """P(first query above the noisy threshold is k), k = 0..K (K: none).

    Textbook scales: threshold noise Laplace(2 Delta / eps), query noise
    Laplace(4 Delta / eps). Conditionally on the noisy threshold t, query i
    fires with probability 1 - F(t - q_i) independently.
    """
    t_law = stats.laplace(scale=2 * sensitivity / epsilon)
    q_law = stats.laplace(scale=4 * sensitivity / epsilon)
    queries = np.asarray(queries, dtype=float)

    def integrand(t, k):
        # Query i does not fire when q_i + nu_i <= threshold + t.
        below = q_law.cdf(threshold + t - queries)
        stay = np.prod(below[:k])
        fire = 1.0 if k == len(queries) else 1.0 - below[k]
        return t_law.pdf(t) * stay * fire

    return np.array(
        [
            integrate.quad(integrand, -np.inf, np.inf, args=(k,), limit=200)[0]
            for k in range(len(queries) + 1)
        ]
    )
