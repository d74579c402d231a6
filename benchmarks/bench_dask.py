"""Out-of-core fits: a Dask array (and a NumPy memmap) larger than RAM allows.

    python benchmarks/bench_dask.py --n 20000000 --d 100 --path /tmp/dpcov-big.npy

writes a float64 ``.npy`` of ``n x d`` Gaussian rows (norms mostly below the
public bound ``data_norm = 1``) to ``--path`` in slabs (once; it is reused if
present), then fits, each in a fresh subprocess so that the peak memory is the
fit's own (anonymous resident memory, ``RssAnon``: the memmapped file's pages
are the kernel's page cache, not the process's working memory):

- ``dask``: a lazy Dask array of blocks of ``--chunk-rows`` rows, each read
  from the file by its own task (:func:`lazy_rows`; ``da.from_array`` of the
  memmap would copy the whole file into memory), with Dask's threaded
  scheduler (``--threads``, default all cores): the statistics are Dask
  reductions; each block runs dpcov's chunked pass with one BLAS thread;
- ``numpy memmap``: the same file as a NumPy memmap, read by dpcov's own
  chunked pass in this process (BLAS threads as configured);

for the estimators of ``FITS`` below, at their defaults (private radius,
private mean) and with ``data_norm`` given, and, as the floor of every fit,
one Dask ``X.T @ X`` on the same lazy array (``dask`` backend only). Input
of 2e7 x 100 float64 rows is 14.9 GiB on a machine with 24 GiB;
scikit-learn's EmpiricalCovariance would need a centred copy (another 14.9
GiB) and does not fit. Reports time, its ratio to the floor, the reads of
each block per fit (Dask backend: every block read by its task is counted),
peak anonymous memory and the relative Frobenius distance between the Dask
and memmap covariances (same ``random_state``: they should agree to
rounding). Writes ``--json``.

``--drop-caches`` empties the kernel's page cache before every cell (root
only: ``sync`` and ``/proc/sys/vm/drop_caches``), so that each read comes
from the disk. Without it a file smaller than the RAM is read from the page
cache after the first cell, and a read costs little beside the flops: the
regime where one read with binned sums (twice the flops of a Gram matrix)
loses to two plain reads.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

FLOOR = "X.T @ X (one Dask product)"
FITS = {
    FLOOR: None,
    "GaussianCovariance(data_norm=1)": "GaussianCovariance(data_norm=1.0)",
    "GaussianCovariance() (defaults)": "GaussianCovariance()",
    "SeparateCovariance() (defaults)": "SeparateCovariance()",
    "AdaptiveCovariance(data_norm=1)": "AdaptiveCovariance(data_norm=1.0)",
    "AdaptiveCovariance() (defaults)": "AdaptiveCovariance()",
    "PCA(n_components=10) (defaults)": "PCA(n_components=10)",
}
#: Blocks read by their tasks in this process (the reads of a fit).
READS = []


class AnonPeak:
    """Peak anonymous resident memory (``RssAnon``) of this process while open.

    ``ru_maxrss`` also counts the memmapped file's pages, which the kernel can
    drop at any time; ``RssAnon`` is the process's own working memory. Polled
    every 20 ms from a thread.
    """

    def __enter__(self):
        self.peak = self.base = _anon_kib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _anon_kib())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _anon_kib())


def _anon_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def _result_path(path, backend, name):
    # Where a cell leaves its covariance for the comparison (stable names).
    return f"{path}.{backend.split()[0]}.{list(FITS).index(name)}.cov.npy"


def _read_rows(path, start, stop):
    # One block, read from the file when a task needs it (and counted).
    READS.append(start)
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def lazy_rows(path, chunk_rows):
    """The ``.npy`` file as a lazy Dask array, one task reading each block.

    ``da.from_array`` on a NumPy array (a memmap included) copies it into the
    graph, i.e. into memory; a lazy source (Zarr, HDF5, or readers like this
    one) keeps only the blocks being reduced in memory.
    """
    import dask
    import dask.array as da

    n, d = np.load(path, mmap_mode="r").shape
    read = dask.delayed(_read_rows, pure=True)
    blocks = [
        da.from_delayed(
            read(path, start, min(start + chunk_rows, n)),
            shape=(min(start + chunk_rows, n) - start, d),
            dtype=np.float64,
        )
        for start in range(0, n, chunk_rows)
    ]
    return da.concatenate(blocks)


def write_data(path, n, d, slab=500_000):
    """Write ``n x d`` rows to a ``.npy`` file slab by slab (bounded memory)."""
    rng = np.random.default_rng(0)
    scales = np.linspace(0.2, 1.0, d) / np.sqrt(d) / 2.5
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    for start in range(0, n, slab):
        rows = min(slab, n - start)
        out[start : start + rows] = rng.standard_normal((rows, d)) * scales + 0.05
    out.flush()
    del out


def run_cell(path, backend, name, chunk_rows, threads):
    """Fit one estimator in this process; print one JSON line."""
    import dask
    from threadpoolctl import threadpool_limits

    from dpcov.covariance import (  # noqa: F401
        AdaptiveCovariance,
        GaussianCovariance,
        SeparateCovariance,
    )
    from dpcov.decomposition import PCA  # noqa: F401

    X = np.load(path, mmap_mode="r")
    n_blocks = -(-X.shape[0] // chunk_rows)
    # A literal from the table above, with a fixed seed.
    estimator = None
    if FITS[name] is not None:
        estimator = eval(FITS[name]).set_params(random_state=0)
    with AnonPeak() as memory:
        start = time.perf_counter()
        if backend == "dask":
            X = lazy_rows(path, chunk_rows)
            with dask.config.set(scheduler="threads", num_workers=threads):
                if estimator is None:
                    # The floor: Dask's own product, blocks summed in a tree,
                    # each block's product on one BLAS thread as dpcov's are
                    # (BLAS threads on top of Dask's oversubscribe the cores).
                    with threadpool_limits(limits=1, user_api="blas"):
                        gram = (X.T @ X).compute()
                else:
                    estimator.fit(X)
        else:
            estimator.fit(X)
        seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if estimator is None:
        covariance = gram / X.shape[0]
    elif hasattr(estimator, "components_"):
        covariance = estimator.get_covariance()
    else:
        covariance = estimator.covariance_
    np.save(_result_path(path, backend, name), covariance)
    print(
        json.dumps(
            {
                "backend": backend,
                "estimator": name,
                "seconds": seconds,
                "reads_per_block": len(READS) / n_blocks if READS else None,
                "peak_anon_mib": memory.peak / 1024,
                "anon_before_fit_mib": memory.base / 1024,
                "peak_rss_incl_file_pages_mib": rss / 1024,
            }
        )
    )


def drop_page_cache():
    """Empty the kernel's page cache (root only), so that reads hit the disk."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--path", default="/tmp/dpcov-big.npy")
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--backends", nargs="+", default=["dask", "numpy memmap"])
    parser.add_argument("--json", default="benchmarks/results/dask.json")
    parser.add_argument("--drop-caches", action="store_true")
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        run_cell(args.path, *args.cell, args.chunk_rows, args.threads)
        return

    path = Path(args.path)
    if not path.exists() or np.load(path, mmap_mode="r").shape != (args.n, args.d):
        start = time.perf_counter()
        write_data(path, args.n, args.d)
        print(f"wrote {path} in {time.perf_counter() - start:.0f} s")
    size = args.n * args.d * 8 / 2**30
    print(
        f"n={args.n} d={args.d} float64: {size:.1f} GiB on disk; dask blocks of "
        f"{args.chunk_rows} rows, {args.threads} threads"
    )
    header = f"{'estimator':40s}{'backend':>14s}{'time s':>9s}{'x X.T@X':>9s}"
    print(header + f"{'reads':>7s}{'peak anon MiB':>15s}{'(before fit)':>14s}")
    results = []
    floor = None
    for name in FITS:
        for backend in args.backends:
            if FITS[name] is None and backend != "dask":
                continue
            if args.drop_caches:
                drop_page_cache()
            out = subprocess.run(
                [sys.executable, __file__, "--path", str(path), "--cell", backend, name]
                + [
                    "--chunk-rows",
                    str(args.chunk_rows),
                    "--threads",
                    str(args.threads),
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            if FITS[name] is None:
                floor = row["seconds"]
            row["ratio_to_gram"] = None if floor is None else row["seconds"] / floor
            results.append(row)
            ratio = "" if floor is None else f"{row['ratio_to_gram']:.2f}"
            reads = row["reads_per_block"]
            print(
                f"{name:40s}{backend:>14s}{row['seconds']:9.1f}{ratio:>9s}"
                f"{'' if reads is None else f'{reads:g}':>7s}"
                f"{row['peak_anon_mib']:15.0f}{row['anon_before_fit_mib']:14.0f}"
            )
        if len(args.backends) == 2 and FITS[name] is not None:
            a, b = (np.load(_result_path(path, be, name)) for be in args.backends)
            gap = float(np.linalg.norm(a - b) / np.linalg.norm(b))
            print(f"{'':40s}relative gap dask vs memmap: {gap:.1e}")
            results[-1]["relative_gap"] = gap
    with open(args.json, "w") as f:
        json.dump({"args": vars(args), "gib": size, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
