"""
==========================================
Fitting on data that does not fit in RAM
==========================================

dpcov's covariance estimators read the rows chunk by chunk: one pass for the
private mean (none with ``assume_centered=True``) and one that clips and
centres each chunk of about 8 MiB and adds it to the ``d x d`` Gram matrix
with one BLAS call. The input is never copied as a whole nor written to. So
a fit on a :class:`numpy.memmap`, for instance an ``.npy`` file opened with
``np.load(path, mmap_mode="r")``, needs memory for the ``d x d`` result and a
few chunks, not for the data: the operating system pages the file in and out
as the passes go. Distributed back ends (Dask) are not supported yet; this is
what works today, with plain NumPy.

Privacy set-up: (epsilon=1, delta=1e-6)-DP with respect to replacing one row,
``data_norm=1`` a public bound on the row norms (the rows are generated with
norms well below 1; a real bound must come from public knowledge, never from
the data). Seeds are fixed so that the example is reproducible; a seeded
release is not private against anyone who knows the seed, so real releases use
``random_state=None``.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Write the data to disk, chunk by chunk
# --------------------------------------
#
# 500,000 rows of 20 features (76 MiB) keep this example fast; nothing below
# depends on the size, and the same code runs on files far larger than the
# memory. :func:`numpy.lib.format.open_memmap` creates an ``.npy`` file that
# we fill one block at a time, as a data-loading job would.
import os
import tempfile
import tracemalloc

import numpy as np
from joblib import Parallel, delayed

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance

n_samples, n_features = 500_000, 20
workdir = tempfile.TemporaryDirectory()
path = os.path.join(workdir.name, "rows.npy")

rng = np.random.default_rng(0)
scales = np.linspace(0.05, 0.25, n_features) / np.sqrt(n_features)
out = np.lib.format.open_memmap(
    path, mode="w+", dtype=np.float64, shape=(n_samples, n_features)
)
block = 100_000
for start in range(0, n_samples, block):
    stop = min(start + block, n_samples)
    out[start:stop] = rng.normal(size=(stop - start, n_features)) * scales
out.flush()
del out
print(f"file on disk: {os.path.getsize(path) / 2**20:.1f} MiB")

# %%
# Fit on the memory-mapped file
# -----------------------------
#
# ``np.load(..., mmap_mode="r")`` returns a read-only memmap without reading
# the file. scikit-learn's input validation keeps a float64 array as it is
# (no copy), and the estimator's pass reads it chunk by chunk. We measure the
# memory that Python and NumPy allocate during the fit with :mod:`tracemalloc`
# (the pages of the mapped file are not allocations: the operating system can
# drop them at any time, since they are backed by the file).
X = np.load(path, mmap_mode="r")
print(type(X).__name__, X.shape, X.dtype, "writeable:", X.flags.writeable)

estimator = GaussianCovariance(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0)
tracemalloc.start()
estimator.fit(X)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(f"peak allocation during fit: {peak / 2**20:.1f} MiB")
print(
    f"result: a {estimator.covariance_.shape} matrix, "
    f"{estimator.covariance_.nbytes / 2**10:.1f} KiB"
)
print("guarantee:", estimator.guarantee_)

# %%
# The peak is a few chunks (a chunk holds about 8 MiB of float64 rows; the
# centring step makes a centred copy of one chunk at a time), independent of
# ``n``. Two cases add a vector of ``n`` row norms (8 bytes a row, ``1/d`` of
# the data): ``data_norm=None`` (the private radius needs every row's norm)
# and :class:`~dpcov.covariance.AdaptiveCovariance` (its threshold search).
# Compare the private estimate with the exact covariance, computed here in the
# same chunked way so that it, too, never loads the file:
exact = np.zeros((n_features, n_features))
total = np.zeros(n_features)
for start in range(0, n_samples, block):
    chunk = X[start : start + block]
    exact += chunk.T @ chunk
    total += chunk.sum(axis=0)
mean = total / n_samples
exact = exact / n_samples - np.outer(mean, mean)
error = np.linalg.norm(estimator.covariance_ - exact)
print(f"Frobenius error {error:.2e} against a norm of {np.linalg.norm(exact):.2e}")

adaptive = AdaptiveCovariance(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0)
tracemalloc.start()
adaptive.fit(X)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(
    f"AdaptiveCovariance: peak allocation {peak / 2**20:.1f} MiB "
    f"(row norms: {n_samples * 8 / 2**20:.1f} MiB)"
)


# %%
# Independent fits in parallel
# ----------------------------
#
# Suppose the rows come from several sites, stored as consecutive blocks of
# the file, and each site wants its own covariance. The blocks are a public
# partition of the rows by position (not by their values), so replacing one
# row changes one block only: by parallel composition the whole set of
# releases is (1, 1e-6)-DP, the guarantee of one fit, not of four fits
# composed (which would be 4 rho-zCDP). The fits are independent, so
# they can run in parallel with :mod:`joblib`; a memmap is passed to the
# worker processes as a reference to the file, not copied.
#
# (Fitting one estimator per block is not a way to speed up a single
# estimate: each block's noise is calibrated to its own number of rows, so an
# average of the blocks' estimates is noisier than one fit on all rows.)
def fit_block(X, start, stop, seed):
    return GaussianCovariance(
        epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=seed
    ).fit(X[start:stop])


bounds = np.linspace(0, n_samples, 5).astype(int)
sites = Parallel(n_jobs=2)(
    delayed(fit_block)(X, start, stop, seed)
    for seed, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True))
)
for i, site in enumerate(sites):
    print(f"site {i}: trace {np.trace(site.covariance_):.4f}, {site.guarantee_}")

# %%
# The same pattern scales to files much larger than memory; remove the
# temporary file when done.
del X
workdir.cleanup()
