"""The nuclear-Laplace profile samplers as first written, one draw at a time.

References for the batched samplers of ``dpcov.mechanisms._nuclear``: the
exact sampler draws one Wishart proposal and one uniform per step; the Gibbs
sampler evaluates the log-conditional once per point, as a sum of logs, and
reads its uniforms one at a time.
"""

import math

import numpy as np


def _log_conditional(x, others):
    with np.errstate(divide="ignore"):
        return float(np.sum(np.log(np.abs(x - others)) + np.log(x + others)) - x)


def profile_exact(rng, d):
    while True:
        g = rng.standard_normal((d + 1, d))
        w = np.linalg.eigvalsh(g.T @ g)[::-1]
        s = w / w.sum()
        i, j = np.triu_indices(d, k=1)
        if math.log1p(-rng.random()) < np.sum(np.log(d * (s[i] + s[j]) / 2.0)):
            return s


def profile_gibbs(rng, d, n_sweeps, start):
    sigma = np.array(start, dtype=float)
    width = float(d)
    for _ in range(n_sweeps):
        for k in range(d):
            x0 = sigma[k]
            others = np.delete(sigma, k)
            low = sigma[k + 1] if k + 1 < d else 0.0
            high = sigma[k - 1] if k > 0 else math.inf
            level = _log_conditional(x0, others) + math.log1p(-rng.random())
            if math.isinf(high):
                left = x0 - width * rng.random()
                right = left + width
                while left > low and _log_conditional(left, others) > level:
                    left -= width
                left = max(left, low)
                while _log_conditional(right, others) > level:
                    right += width
            else:
                left, right = low, high
            while True:
                x = left + (right - left) * rng.random()
                if _log_conditional(x, others) > level:
                    sigma[k] = x
                    break
                if x < x0:
                    left = x
                else:
                    right = x
    return sigma / sigma.sum()
