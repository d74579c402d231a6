"""Gaussian rows with Zipf-distributed norms (Dong, Liang and Yi, 2022, Sec. 7.1)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_random_state


def make_zipf_norms(
    n_samples=50_000, n_features=200, *, n_buckets=4, skew=3.0, random_state=None
):
    """Generate the synthetic data of Dong, Liang and Yi (2022), Section 7.1.

    Rows are drawn as ``z @ A`` with ``z ~ N(0, I)`` and ``A`` a matrix of
    Uniform(0, 1) entries (the generator of Amin et al., 2019), centred by
    their column means, then rescaled so that their norms follow a Zipf law:
    the rows are split, in generation order, into ``n_buckets`` blocks with
    sizes proportional to ``k**-skew`` (``k = 1..N``), and every row of block
    ``k`` gets norm ``2**(k - N)``. The largest block has the smallest norm;
    ``n_buckets=1`` gives unit-norm rows (trace 1).

    Parameters
    ----------
    n_samples : int, default=50_000
        Number of rows ``n``.
    n_features : int, default=200
        Dimension ``d``.
    n_buckets : int, default=4
        Number ``N`` of norm buckets.
    skew : float, default=3.0
        Zipf exponent ``s``.
    random_state : int, RandomState instance or None, default=None
        Seed of the generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows with norms at most 1.

    References
    ----------
    .. [1] Dong, W., Liang, Y. and Yi, K. "Differentially Private Covariance
       Revisited". NeurIPS 2022, Section 7.1. https://arxiv.org/abs/2205.14324.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcov.datasets import make_zipf_norms
    >>> X = make_zipf_norms(1000, 5, n_buckets=2, random_state=0)
    >>> np.unique(np.round(np.linalg.norm(X, axis=1), 6))
    array([0.5, 1. ])
    """
    rng = check_random_state(random_state)
    z = rng.standard_normal((n_samples, n_features))
    a = rng.uniform(size=(n_features, n_features))
    X = z @ a
    X -= X.mean(axis=0)
    weights = np.arange(1, n_buckets + 1, dtype=float) ** -skew
    edges = np.floor(n_samples * np.cumsum(weights) / weights.sum()).astype(int)
    edges = np.concatenate([[0], edges[:-1], [n_samples]])
    norms = np.empty(n_samples)
    for k in range(n_buckets):
        norms[edges[k] : edges[k + 1]] = 2.0 ** (k + 1 - n_buckets)
    X *= (norms / np.linalg.norm(X, axis=1))[:, np.newaxis]
    return X
