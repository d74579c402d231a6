"""Fit time at high dimension against one Gram matrix and one eigendecomposition.

Rows ``N(0, diag(1/j))``, every estimator at its defaults (``epsilon=1``,
``delta=1e-6``: a private radius, a private mean, the default shrinkage and
projection). T_floor: one ``X.T @ X`` and one ``numpy.linalg.eigh`` of the
``d x d`` result, timed in the same rounds; x T_floor and x reference are
ratios of the best times (scikit-learn's ``EmpiricalCovariance`` for the
covariance estimators, its ``PCA(n_components=10)`` for dpcov's, whose solver
is named). eigh: the fit's symmetric eigendecompositions of a ``d x d``
matrix, with all vectors + without, and partial ones (the top vectors only;
:mod:`dpcov.utils._eigen_calls`). peak / d^2:
the peak of the memory a fit allocates beyond its input (``tracemalloc``:
NumPy's and SciPy's arrays, LAPACK's workspaces included), in ``d x d``
float64 matrices; each cell runs in a fresh process. ``blas_threads`` caps the BLAS
threads of every call (the criteria are stated for one).
"""

import warnings

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SklearnPCA

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.utils._eigen_calls import count_eigendecompositions

from ..harness import peak_mib, rst_table
from ._speed import SpeedStudy, warm_up

FLOOR = "T_floor"
CALLS = {
    "EmpiricalCovariance (sklearn)": lambda: EmpiricalCovariance(),
    "GaussianCovariance": lambda: GaussianCovariance(random_state=0),
    "SeparateCovariance": lambda: SeparateCovariance(random_state=0),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(random_state=0),
    "PCA (sklearn)": lambda: SklearnPCA(n_components=10, random_state=0),
    "PCA (dpcov)": lambda: PCA(n_components=10, random_state=0),
}


def rows_of(n, d, rng=0):
    """Rows ``N(0, diag(1/j))``, ``j = 1..d``."""
    X = np.random.default_rng(rng).standard_normal((n, d))
    X /= np.sqrt(np.arange(1, d + 1))
    return X


def _calls(cell):
    X = rows_of(cell["n"], cell["d"])

    def floor():
        np.linalg.eigh(X.T @ X)

    calls = {FLOOR: floor, "X.T @ X": lambda: X.T @ X}
    calls.update({name: (lambda m=m: m().fit(X)) for name, m in CALLS.items()})
    small = X[:2000, :64]
    return warm_up(
        calls, {name: (lambda m=m: m().fit(small)) for name, m in CALLS.items()}
    )


def _reference(name):
    if name.endswith("Covariance"):
        return "EmpiricalCovariance (sklearn)"
    return "PCA (sklearn)" if name == "PCA (dpcov)" else None


def _extra(cell, name, call):
    if name in (FLOOR, "X.T @ X"):
        return {}
    d = cell["d"]
    fitted = []

    def fit():
        fitted.append(call())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with count_eigendecompositions() as eighs:
            fit()
        peak = peak_mib(fit)
    vectors = sum(c.vectors and not c.partial for c in eighs if c.size == d)
    values = sum(not c.vectors for c in eighs if c.size == d)
    partial = sum(c.vectors and c.partial for c in eighs if c.size == d)
    eigh = f"{vectors} + {values}" + (f" + {partial} partial" if partial else "")
    out = {"eigh": eigh, "peak / d^2": peak * 2**20 / (8 * d * d)}
    solver = getattr(fitted[0], "_fit_svd_solver", None)
    if solver is not None:
        out["solver"] = solver
    return out


def _keep(cell):
    # The shapes: (60000, 784), (20000, 2000), (20000, 4096).
    return cell["n"] == (60_000 if cell["d"] == 784 else 20_000) or cell["d"] < 784


class HighDimStudy(SpeedStudy):
    def table(self, rows, grid, repeats):
        text = [
            f"Best of {repeats} interleaved rounds, in seconds; ratios of the best "
            "times.",
            "",
        ]
        for cell in self.cells(grid):
            sub = [r for r in rows if all(r[k] == cell[k] for k in grid)]
            best = {r["call"]: r["best s"] for r in sub}
            lines = []
            for r in sub:
                ref = _reference(r["call"])
                lines.append(
                    {
                        "call": r["call"],
                        "best s": f"{r['best s']:.3g}",
                        "x T_floor": f"{r['best s'] / best[FLOOR]:.2f}",
                        "x reference": (
                            f"{r['best s'] / best[ref]:.2f}" if ref in best else ""
                        ),
                        "eigh": r.get("eigh", ""),
                        "peak / d^2": (
                            f"{r['peak / d^2']:.1f}" if "peak / d^2" in r else ""
                        ),
                        "solver": r.get("solver", ""),
                    }
                )
            text += [f"**n = {cell['n']}, d = {cell['d']}**", ""]
            text.append(rst_table(lines, list(lines[0])))
            text.append("")
        return "\n".join(text)


STUDY = HighDimStudy(
    name="high_dim",
    title=__doc__.splitlines()[0],
    caption="Fit time at high dimension",
    grid={"n": [60_000, 20_000], "d": [784, 2000, 4096]},
    keep=_keep,
    options={"blas_threads": 1, "fresh_process": True},
    calls=_calls,
    baseline=FLOOR,
    reference=_reference,
    extra=_extra,
    repeats=3,
    docs="docs/user_guide/_bench_high_dim.rst",
    quick={"n": [20_000], "d": [130], "repeats": 1},
)
