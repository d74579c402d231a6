"""
==========================================
Fitting on data that does not fit in RAM
==========================================

dpcov's covariance estimators read the rows chunk by chunk. With a public
``data_norm`` a fit is one pass: each chunk of about 8 MiB is clipped and
added to the ``d x d`` Gram matrix (one BLAS call) and to the sum of the rows,
from which the private mean and the centred Gram matrix follow. The input is
never copied as a whole nor written to, and no per-row vector is kept. So a
fit on a :class:`numpy.memmap`, for instance an ``.npy`` file opened with
``np.load(path, mmap_mode="r")``, needs memory for the ``d x d`` result and a
few chunks, not for the data: the operating system pages the file in and out
as the pass goes. A :class:`dask.array.Array` is accepted as well: Dask then
computes the same sums, block by block, on a laptop's threads or a cluster's
workers (this needs the optional extra ``dpcov[dask]``).

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
import warnings

import dask
import dask.array as da
import numpy as np
from joblib import Parallel, delayed

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance
from dpcov.decomposition import PCA
from dpcov.exceptions import SeededNoiseWarning

# Seeded for reproducible results: silence the warning that each seeded fit
# gives (SeededNoiseWarning, by its category only); a release uses
# random_state=None.
warnings.simplefilter("ignore", SeededNoiseWarning)

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
# The peak is a few chunks (a chunk holds about 8 MiB of float64 rows; a
# chunk is copied only where rows must be clipped or centred), independent of
# ``n``. ``data_norm=None`` (the private radius) and
# :class:`~dpcov.covariance.AdaptiveCovariance` (its threshold search) need
# statistics of the row norms; they are counts in public bins, summed chunk by
# chunk, so they too cost no memory per row, only extra passes over the file.
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
print(f"AdaptiveCovariance: peak allocation {peak / 2**20:.1f} MiB")

# %%
# The same fit with Dask
# ----------------------
#
# A :class:`dask.array.Array` of blocks of whole rows hands the passes to
# Dask. The array must be lazy: ``da.from_array`` on a NumPy array (a memmap
# included) copies it into the task graph, i.e. into memory. Data stored as
# Zarr or HDF5 (``da.from_zarr``, ``da.from_array`` on an ``h5py`` dataset) is
# lazy; here a small reader builds one task per block of the ``.npy`` file.
# Then every block computes its clipped Gram matrix and
# sum, Dask adds them up (a tree reduction), and only then does the estimator
# draw its noise, once, in this process. With the same ``random_state`` the
# release is the in-memory one, up to the order in which floating-point
# numbers were added. Here Dask's threaded scheduler runs the blocks on this
# machine's cores (each block's BLAS call single-threaded); with a
# ``dask.distributed.Client`` connected, the same code runs on a cluster's
# workers, and a Dask array loaded from Zarr, HDF5 or Parquet never needs to
# fit on one machine.


def read_rows(path, start, stop):
    return np.array(np.load(path, mmap_mode="r")[start:stop])


X_dask = da.concatenate(
    [
        da.from_delayed(
            dask.delayed(read_rows)(path, start, min(start + block, n_samples)),
            shape=(min(start + block, n_samples) - start, n_features),
            dtype=np.float64,
        )
        for start in range(0, n_samples, block)
    ]
)
lazy = GaussianCovariance(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0)
lazy.fit(X_dask)
gap = np.linalg.norm(lazy.covariance_ - estimator.covariance_)
print(f"{X_dask.numblocks[0]} blocks; distance to the memmap fit: {gap:.1e}")

# %%
# :class:`dpcov.decomposition.PCA` accepts Dask arrays too, and its
# ``transform`` stays lazy (a Dask array of projections, block by block).
pca = PCA(n_components=3, data_norm=1.0, random_state=0).fit(X_dask)
projected = pca.transform(X_dask)
print(type(projected).__name__, projected.shape, projected.dtype)


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
    # (A worker process starts with the default warning filters.)
    warnings.simplefilter("ignore", SeededNoiseWarning)
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
