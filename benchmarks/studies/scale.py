"""Fit time and peak memory at scale: dpcov's estimators against scikit-learn.

Each cell runs in a fresh process (option ``fresh_process``). Its ``X``:
Gaussian rows in a random rotation with variances geometric from 1 to 1e-2,
trace 1/4, the rare rows of norm above 1 scaled to norm 1 (so ``data_norm=1``
is a true public bound), written chunk by chunk to a ``.npy`` file and loaded
into RAM; when the input plus scikit-learn's centred copy would exceed
``ram_fraction`` of the RAM, scikit-learn is not run and dpcov fits the
memmapped file. Every estimator at its defaults (``epsilon=1``, centred,
private radius) and with ``data_norm=1`` ("given"), ``random_state=0``;
the noise samplers of NuclearLaplace and EigenSampling, whose cost grows with
``d`` but not ``n``, are left out for ``d > slow_max_d``. x reference: the
ratio to ``EmpiricalCovariance()`` or ``PCA(n_components=10)``. peak MiB:
``tracemalloc`` peak of one fit; RSS MiB: the process's peak RSS during a
first fit (before the timed rounds) minus the RSS before it; bound MiB:
``(8 d^2 c1 + c2 chunk)``, the ``O(d^2 + chunk d)`` working memory with
``c1`` d x d matrices and ``c2`` chunks of rows.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SkPCA

from dpcov import covariance
from dpcov.decomposition import PCA
from dpcov.utils._gram import CHUNK_BYTES

from ._speed import MiB, SpeedStudy, rss_peak_mib, warm_up

TRACE = 0.25  # E||x||^2 of the generated rows
SLOW = ("NuclearLaplaceCovariance", "EigenSamplingCovariance")
CLASSES = [
    covariance.GaussianCovariance,
    covariance.SeparateCovariance,
    covariance.AdaptiveCovariance,
    covariance.NuclearLaplaceCovariance,
    covariance.EigenSamplingCovariance,
]


def make_data(path, n, d, seed=0):
    """Write ``X`` to a ``.npy`` file chunk by chunk (bounded memory)."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    variances = np.geomspace(1.0, 1e-2, d)
    variances *= TRACE / variances.sum()
    transform = np.sqrt(variances)[:, np.newaxis] * rotation.T
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    step = max(1, 64 * MiB // (8 * d))
    for start in range(0, n, step):
        rows = rng.standard_normal((min(step, n - start), d)) @ transform
        norms = np.linalg.norm(rows, axis=1)
        over = norms > 1.0
        rows[over] /= norms[over, np.newaxis]
        X[start : start + rows.shape[0]] = rows
    X.flush()


def _estimators(cell):
    n, d = cell["n"], cell["d"]
    memmap = 16 * n * d > cell["ram_fraction"] * os.sysconf("SC_PAGE_SIZE") * (
        os.sysconf("SC_PHYS_PAGES")
    )
    makes = {} if memmap else {"sklearn EmpiricalCovariance": EmpiricalCovariance}
    for cls in CLASSES:
        if cls.__name__ in SLOW and d > cell["slow_max_d"]:
            continue
        makes[cls.__name__] = lambda c=cls: c(random_state=0)
        given = lambda c=cls: c(data_norm=1.0, random_state=0)  # noqa: E731
        makes[f"{cls.__name__} (given)"] = given
    k = min(10, d)
    if not memmap:
        makes["sklearn PCA"] = lambda: SkPCA(n_components=k)
    makes["PCA"] = lambda: PCA(n_components=k, random_state=0)
    makes["PCA (given)"] = lambda: PCA(n_components=k, data_norm=1.0, random_state=0)
    return makes, memmap


def _calls(cell):
    makes, memmap = _estimators(cell)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npy"
        make_data(path, cell["n"], cell["d"])
        # On Linux a memmap outlives its file's name.
        X = np.load(path, mmap_mode="r" if memmap else None)
    calls = {name: (lambda m=m: m().fit(X)) for name, m in makes.items()}
    warm = {
        name: (lambda m=m: m().fit(X[:20_000]))
        for name, m in makes.items()
        if not name.startswith(SLOW)
    }
    warm_up(calls, warm)
    # RSS before the timed rounds: later fits reuse what the allocator holds.
    cell["rss"] = {name: rss_peak_mib(call) for name, call in calls.items()}
    return calls


def _reference(name):
    if "PCA" in name:
        return "sklearn PCA"
    return "sklearn EmpiricalCovariance"


def _memory(cell, name, call):
    bound = 8 * cell["d"] ** 2 * cell["bound_c1"] + cell["bound_c2"] * CHUNK_BYTES
    return {"RSS MiB": cell["rss"][name], "bound MiB": bound / MiB}


STUDY = SpeedStudy(
    name="scale",
    title=__doc__.splitlines()[0],
    caption="Fit time and working memory against scikit-learn (epsilon = 1)",
    grid={"n": [100_000, 1_000_000, 5_000_000], "d": [10, 100, 500]},
    options={
        "fresh_process": True,
        "slow_max_d": 200,
        "ram_fraction": 0.8,
        "bound_c1": 8,
        "bound_c2": 4,
    },
    calls=_calls,
    reference=_reference,
    extra=_memory,
    memory=True,
    repeats=3,
    # In-process: a fresh interpreter costs seconds of imports.
    quick={"n": [2_000], "d": [5], "fresh_process": False, "slow_max_d": 0},
)
