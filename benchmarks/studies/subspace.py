"""Private subspace error against the dimension: ApproximateSubspace vs PCA.

Spectral error ``||P_hat - P||_2`` of the released rank-``k`` projector (the
sine of the largest principal angle, computed as ``||U_hat - (U_hat U^T) U||_2``
to keep tiny angles) as ``d`` grows, at ``n = 4000``, ``k = 3``,
``epsilon = 1``, ``delta = 1e-6``. Rows ``Z Q^T + gamma E`` (``Q`` a random
orthonormal basis, new per repetition; ``gamma = 1e-9``, the eigen-gap
ratio). ApproximateSubspace with its defaults; its NoHeavyCell (the private
"bottom") is a failure: ``error`` is over the successes, ``failures as 1``
counts a failure as error 1. PCA (Adaptive: the default covariance; Gauss:
GaussianCovariance) with the public row-norm bound ``R`` of Laurent and
Massart's chi-square tail (``beta = 1e-3``): 5.09 at every ``d``. ``s``: fit
seconds. At the largest ``d`` fewer repetitions run (``repeats_max_d``,
``pca_repeats_max_d``), and PCA (Gauss) only up to ``gauss_max_d``.
"""

import math
import time
import warnings
from functools import cache

import numpy as np
from sklearn.decomposition import PCA as SkPCA

from dpcov.covariance import GaussianCovariance
from dpcov.decomposition import PCA, ApproximateSubspace
from dpcov.exceptions import NoHeavyCell

from ..harness import Study, line_figure, rst_table
from ._spectral import old_seed

N, K, GAMMA, EPSILON, DELTA = 4000, 3, 1e-9, 1.0, 1e-6


def norm_bound(k, d, gamma=GAMMA, beta=1e-3):
    """Each row exceeds it with probability at most ``2 beta``."""
    L = math.log(1.0 / beta)

    def root(j):
        return math.sqrt(j + 2.0 * math.sqrt(j * L) + 2.0 * L)

    return root(k) + gamma * root(d)


def _data(cell, r):
    @cache  # drawn only if a method runs at this repetition
    def draw():
        rng = np.random.default_rng(old_seed(r) + cell["d"])
        basis = np.linalg.qr(rng.normal(size=(cell["d"], K)))[0].T
        X = rng.normal(size=(N, K)) @ basis + GAMMA * rng.normal(size=(N, cell["d"]))
        return X, basis

    return draw


def _runs(cell, r, method):
    """Whether ``method`` runs at repetition ``r`` of this cell."""
    if method == "PCA (Gauss)" and cell["d"] > cell["gauss_max_d"]:
        return False
    if cell["d"] < cell["reduced_d"]:
        return True
    limit = cell["pca_repeats_max_d"] if method.startswith("PCA") else np.inf
    return r < min(limit, cell["repeats_max_d"])


def _fit(name, fit):
    def method(data, cell, r):
        if not _runs(cell, r, name):
            return {
                "error": np.nan,
                "failures as 1": np.nan,
                "success share": np.nan,
                "s": np.nan,
            }
        X, basis = data()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded fits, on purpose
            components, extra = fit(X, cell, old_seed(r))
        seconds = time.perf_counter() - start
        if components is None:
            error = np.nan
        else:
            U = np.asarray(components, dtype=np.float64)
            error = float(np.linalg.norm(U - (U @ basis.T) @ basis, 2))
        fail1 = 1.0 if components is None else error
        ok = float(components is not None)
        return {
            "error": error,
            "failures as 1": fail1,
            "success share": ok,
            "s": seconds,
            **extra,
        }

    return method


def _approximate(X, cell, seed):
    est = ApproximateSubspace(
        n_components=K, epsilon=EPSILON, delta=DELTA, random_state=seed
    )
    try:
        est.fit(X)
    except NoHeavyCell:
        return None, {}
    return est.components_, {"eigengap": est.eigengap_}


def _pca(covariance):
    def fit(X, cell, seed):
        extra = {} if covariance is None else {"covariance": covariance()}
        R = norm_bound(K, cell["d"])
        est = PCA(
            K, epsilon=EPSILON, delta=DELTA, data_norm=R, random_state=seed, **extra
        )
        return est.fit(X).components_, {}

    return fit


class _SubspaceStudy(Study):
    def table(self, rows, grid, repeats):
        """One row per dimension and estimator, as the published table."""
        out = []
        for row in rows:
            for m in self.methods:
                runs = np.isfinite(row["runs"][f"{m} s"]).sum()
                cells = {
                    k: row.get(f"{m} {k}") for k in ["error", "failures as 1", "s"]
                }
                gap = row.get(f"{m} eigengap", (np.nan,))[0]
                share = row[f"{m} success share"]
                out.append(
                    dict(
                        cells,
                        d=row["d"],
                        estimator=m,
                        runs=runs,
                        success=share,
                        eigengap=gap,
                    )
                )
        head = super().table(rows, grid, repeats).split("\n\n")[0]
        columns = [
            "d",
            "estimator",
            "runs",
            "success",
            "error",
            "failures as 1",
            "s",
            "eigengap",
        ]
        return head + "\n\n" + rst_table([o for o in out if o["runs"]], columns)


def _figure(rows):
    # Medians with their 95% intervals: the private estimators on a linear
    # scale, then all of them on a log scale with the non-private floor.
    private = ["ApproximateSubspace", "PCA (Adaptive)", "PCA (Gauss)"]
    lines = []
    for row in rows:
        cells = {m: row[f"{m} error"] for m in [*private, "non-private"]}
        lines.append({"d": row["d"], "panel": "private estimators", **cells})
        lines[-1].pop("non-private")
        lines.append({"d": row["d"], "panel": "log scale, non-private too", **cells})
    figure = line_figure(
        lines,
        x="d",
        series={
            "ApproximateSubspace (successful runs)": "ApproximateSubspace",
            **{m: m for m in private[1:]},
            "non-private": "non-private",
        },
        panel=lambda r: r["panel"],
        xlabel="dimension d",
        ylabel="||P_hat - P||_2 (median, 95% interval)",
        logx=True,
        logy=True,
        reference=(1.0, "error 1: no information"),
        columns=2,
    )
    figure.axes[0].set_yscale("linear")
    figure.axes[0].set_ylim(0.0, 1.1)
    figure.axes[1].legend(fontsize="small")
    return figure


STUDY = _SubspaceStudy(
    name="subspace",
    title=__doc__.splitlines()[0],
    caption=f"Projection error, n = {N}, k = {K}, epsilon = 1, delta = 1e-6, "
    "gamma = 1e-9",
    grid={"d": [100, 1000, 10000]},
    data=_data,
    methods={
        "ApproximateSubspace": _fit("ApproximateSubspace", _approximate),
        "PCA (Adaptive)": _fit("PCA (Adaptive)", _pca(None)),
        "PCA (Gauss)": _fit("PCA (Gauss)", _pca(GaussianCovariance)),
        "non-private": _fit(
            "non-private", lambda X, c, s: (SkPCA(K).fit(X).components_, {})
        ),
    },
    repeats=10,
    summary="median",
    options={
        "reduced_d": 10000,
        "repeats_max_d": 3,
        "pca_repeats_max_d": 1,
        "gauss_max_d": 1000,
    },
    quick={"d": [100], "repeats": 2},
    docs="docs/user_guide/_bench_subspace.rst",
    figure=_figure,
    image="docs/_static/bench_subspace.png",
)
