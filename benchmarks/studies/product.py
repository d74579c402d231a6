"""Private product distributions over {0,1}^d: Gaussian mechanism against PPDE.

Total variation between the true ``Ber(p)`` and the released ``Ber(q)``
(``probabilities_`` of ``ProductBernoulli(rho=0.5)``), bounded exactly on
both sides through the Bhattacharyya coefficient ``BC``:
``1 - BC <= TV <= sqrt(1 - BC^2)``. Methods: gaussian (the default), ppde
(Kamath, Li, Singhal and Ullman (2019), Algorithm 7, with the private
orientation step), both with ``orientation="known"`` on the sparse
instances (every marginal at most 1/2), and non-private (``epsilon=inf``,
the empirical marginals with the same floor). Instances: log-uniform
(``d = 1000``, ``p_j`` log-uniform in ``[d^-1.5, 1/2]``, 30% flipped to
``1 - p_j``) and sparse (``p_j = 2 / d`` but ten at 0.4). Below ppde's public
pre-check, and on sparse CSR rows (``d >= 5000``, which the estimator does
not take), the mechanism is called directly with the estimator's generator
and post-processing, which is what ``fit`` computes; "ppde below share":
the share of such fits under the pre-check.
"""

import math
import time
import warnings

import numpy as np
from scipy import sparse

from dpcov.distributions._ppde import (
    bernoulli_tv_bounds,
    naive_product_release,
    ppde_min_samples,
    ppde_release,
)
from dpcov.distributions._product import ProductBernoulli, default_min_probability

from ..harness import line_figure
from ._gaussian import ListedStudy, listed

RHO = 0.5
#: instance -> (d, kind, seed of its marginals, row storage, sizes n)
INSTANCES = {
    "log-uniform d=1000": (1000, "log-uniform", 1, "dense", [50_000, 200_000, 10**6]),
    "sparse d=1000": (1000, "sparse", 2, "dense", [50_000, 200_000, 10**6]),
    "sparse d=5000": (5000, "sparse", 3, "csr", [100_000, 500_000, 2 * 10**6]),
    "sparse d=20000": (20000, "sparse", 4, "csr", [300_000, 2 * 10**6, 10**7]),
    "sparse d=50000": (50000, "sparse", 5, "csr", [10**7, 3 * 10**7]),
}


def marginals(d, kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "sparse":
        p = np.full(d, 2.0 / d)
        p[rng.choice(d, 10, replace=False)] = 0.4
        return p
    p = np.exp(rng.uniform(math.log(d**-1.5), math.log(0.5), d))
    flip = rng.choice(d, int(round(0.3 * d)), replace=False)
    p[flip] = 1.0 - p[flip]
    return p


def _data(cell, r):
    """``n`` iid rows of ``Ber(p)``, built in O(number of ones)."""
    d, kind, seed, storage, _ = INSTANCES[cell["instance"]]
    p, n = marginals(d, kind, seed), cell["n"]
    rng = np.random.default_rng([seed, n, r])  # the old script's stream
    # Column j: one uniform per row where min(p_j, 1 - p_j) > 0.05, else the
    # number of ones and then that many distinct rows; exactly Bernoulli.
    rows = [
        np.flatnonzero(rng.random(n) < q)
        if q > 0.05
        else rng.choice(n, rng.binomial(n, q), replace=False)
        for q in np.minimum(p, 1.0 - p)
    ]
    counts = np.array([row.size for row in rows])
    if storage == "csr":  # sparse instances only: no column is complemented
        indptr = np.concatenate([[0], np.cumsum(counts)])
        indices = np.concatenate(rows).astype(np.int32)
        ones = np.ones(indices.size, dtype=bool)
        return p, sparse.csc_array((ones, indices, indptr), shape=(n, d)).tocsr()
    X = np.zeros((n, d), dtype=bool)
    X[np.concatenate(rows), np.repeat(np.arange(d), counts)] = True
    return p, X ^ (p > 0.5)


def _method(name, orientation="private"):
    def method(data, cell, r):
        p, X = data
        if orientation == "known" and "sparse" not in cell["instance"]:
            return dict.fromkeys(["lower", "upper", "s"], np.nan)  # p_j > 1/2 there
        private = name != "non-private"
        budget = {"rho": RHO, "method": name, "orientation": orientation}
        est = ProductBernoulli(
            **(budget if private else {"epsilon": np.inf}), random_state=1000 * r + 7
        )
        n_min = ppde_min_samples(X.shape[1], rho=RHO, orientation=orientation)
        below = name == "ppde" and X.shape[0] < n_min
        start = time.perf_counter()
        if sparse.issparse(X) or below:
            # What fit computes: the same release and generator, then the
            # estimator's clipping.
            rng, rho = np.random.default_rng(1000 * r + 7), RHO if private else np.inf
            if name == "ppde":
                release = ppde_release(
                    X, rho=rho, rng=rng, orientation=orientation, beta=est.beta
                )
            else:
                release = naive_product_release(X, rho=rho, rng=rng)
            floor = default_min_probability(X.shape[0])
            top = 0.5 if orientation == "known" else 1.0 - floor
            q = np.clip(release.marginals, floor, top)
        else:
            with warnings.catch_warnings():  # seeded on purpose
                warnings.simplefilter("ignore")
                q = est.fit(X).probabilities_
        seconds = time.perf_counter() - start
        lower, upper = bernoulli_tv_bounds(p, q)
        out = {"lower": lower, "upper": upper, "s": seconds}
        return dict(out, **{"below share": float(below)} if name == "ppde" else {})

    return method


_CELLS = [{"instance": k, "n": n} for k, v in INSTANCES.items() for n in v[-1]]


METHODS = {
    "gaussian": _method("gaussian"),
    "ppde": _method("ppde"),
    "gaussian (known)": _method("gaussian", "known"),
    "ppde (known)": _method("ppde", "known"),
    "non-private": _method("non-private"),
}


def _figure(rows):
    return line_figure(
        rows,
        x="n",
        series={m: f"{m} upper" for m in METHODS},
        panel=lambda r: r["instance"],
        ylabel="total variation, upper bound",
        logx=True,
        logy=True,
    )


STUDY = ListedStudy(
    name="product",
    title=__doc__.splitlines()[0],
    caption="Shares of ppde's fits below its public pre-check",
    grid=listed(_CELLS, ["instance", "n"]),
    zipped=True,
    data=_data,
    methods=METHODS,
    parts={
        "upper": "Total variation to the true product distribution, upper bound",
        "lower": "Total variation, lower bound",
        "s": "Fit time (s)",
    },
    repeats=3,
    summary="median",
    quick={"instance": ["log-uniform d=1000"], "n": [50_000], "repeats": 2},
    docs="docs/user_guide/_bench_product.rst",
    figure=_figure,
    image="docs/_static/bench_product.png",
)
