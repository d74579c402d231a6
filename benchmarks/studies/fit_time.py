"""Fit time of the private covariance estimators and PCA against scikit-learn.

Every estimator is fitted once per round, in a shuffled order, on the same
unit-norm rows (every row on the clipping radius, the worst case for the
clip), beside the floor of every fit, one ``X.T @ X`` (NumPy's ``syrk``).
x reference: the ratio to scikit-learn's estimator for the same job
(``EmpiricalCovariance(assume_centered=True)`` for the covariance estimators,
given ``data_norm=1`` and ``assume_centered=True``; ``PCA(n_components=10)``
for dpcov's PCA at its defaults). reads: dpcov's passes over the rows in one
fit; with the option ``passes`` their times, in the order they run. x read
floor: the ratio of the medians to the floor of a fit with that many reads,
one ``X.T @ X`` plus one row-norm read (``np.einsum("ij,ij->i", X, X)``,
timed in the same rounds) for each read before the Gram pass, and at least
one (the rows' norms, which every fit computes to clip them). peak MiB: the
``tracemalloc`` peak of one fit, the working memory on top of the input.
``blas_threads`` caps the BLAS threads of both libraries. Each call starts
0.25 s after the last one ended, so that none runs beside the previous call's
spinning BLAS threads (``time_calls``'s ``settle``).
"""

import time

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SklearnPCA

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA

from ._speed import SpeedStudy, unit_rows, warm_up

NORM_READ = "row norms (einsum)"

GIVEN = dict(data_norm=1.0, assume_centered=True, random_state=0)
FLOOR = "X.T @ X"
COVARIANCE = {
    "EmpiricalCovariance (sklearn)": lambda: EmpiricalCovariance(assume_centered=True),
    "GaussianCovariance": lambda: GaussianCovariance(**GIVEN),
    "SeparateCovariance": lambda: SeparateCovariance(**GIVEN),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(**GIVEN),
}
DECOMPOSITION = {
    "PCA (sklearn)": lambda: SklearnPCA(n_components=10),
    "PCA (dpcov, defaults)": lambda: PCA(n_components=10, random_state=0),
}
STEPS = ("gram", "total", "square_norm", "norm_sums", "final_clip", "bins")


def _calls(cell):
    X = unit_rows(cell["n"], cell["d"])
    makes = {}
    if cell["only"] != "pca":
        makes.update(COVARIANCE)
    if cell["only"] != "covariance":
        makes.update(DECOMPOSITION)
    calls = {FLOOR: lambda: X.T @ X, NORM_READ: lambda: np.einsum("ij,ij->i", X, X)}
    calls.update({name: (lambda m=m: m().fit(X)) for name, m in makes.items()})
    warm = {name: (lambda m=m: m().fit(X[:20_000])) for name, m in makes.items()}
    return warm_up(calls, warm)


def _reference(name):
    if name.endswith("Covariance"):
        return "EmpiricalCovariance (sklearn)"
    return "PCA (sklearn)" if name.startswith("PCA (dpcov") else None


def _passes(cell, name, call):
    """Each chunked pass of one fit (a call that reads no row is not one)."""
    if "sklearn" in name or name in (FLOOR, NORM_READ):
        return {}
    from dpcov.covariance import _adaptive, _base

    log, original = [], _base.row_statistics

    def timed(X, **kwargs):
        start = time.perf_counter()
        out = original(X, **kwargs)
        asked = [k for k in STEPS if kwargs.get(k) not in (None, False)]
        if not asked and kwargs.get("check_finite"):
            asked = ["check_finite"]
        if asked:
            log.append(f"{'+'.join(asked)} {time.perf_counter() - start:.3f}")
        return out

    _base.row_statistics = _adaptive.row_statistics = timed
    try:
        call()
    finally:
        _base.row_statistics = _adaptive.row_statistics = original
    out = {"reads": len(log)}
    if cell["passes"]:
        out["passes"] = ", ".join(log)
    return out


class FitTimeStudy(SpeedStudy):
    def table(self, rows, grid, repeats):
        # Each fit against the floor of its reads, from the same cell's rows.
        for row in rows:
            if not row.get("reads"):
                continue
            cell = [
                other
                for other in rows
                if all(other.get(k) == row.get(k) for k in grid)
                and other.get("call") in (FLOOR, NORM_READ)
            ]
            times = {other["call"]: other["median s"] for other in cell}
            if len(times) == 2:
                norm_reads = max(row["reads"] - 1, 1)
                floor = times[FLOOR] + norm_reads * times[NORM_READ]
                row["x read floor"] = row["median s"] / floor
        return super().table(rows, grid, repeats)


STUDY = FitTimeStudy(
    name="fit_time",
    title=__doc__.splitlines()[0],
    caption="Fit time against scikit-learn and one X.T @ X, unit-norm rows",
    grid={"n": [1_000_000], "d": [100]},
    options={"only": None, "blas_threads": None, "passes": False},
    calls=_calls,
    baseline=FLOOR,
    reference=_reference,
    extra=_passes,
    memory=True,
    repeats=15,
    settle=0.25,
    quick={"n": [2_000], "d": [10], "repeats": 2},
)
