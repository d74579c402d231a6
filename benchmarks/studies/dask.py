"""Out-of-core fits: a Dask array and a NumPy memmap of a file larger than RAM.

A float64 ``.npy`` file of ``n x d`` Gaussian rows (norms mostly below the
public bound ``data_norm=1``), written in slabs once (reused if present, at
the option ``path``), is fitted in a fresh process per estimator and backend
(option ``fresh_process``): ``dask``, a lazy Dask array with one task reading
each block of ``chunk_rows`` rows (``da.from_array`` of a memmap would copy
the file into memory), on Dask's threaded scheduler with ``threads``
workers; ``numpy memmap``, the file as a memmap read by dpcov's own chunked
pass. Beside them the floor, one Dask ``X.T @ X`` on the same lazy array
(each block's product on one BLAS thread, as dpcov's are). reads: blocks
loaded per block in a Dask fit; peak anon MiB: the fit's anonymous resident
memory (``RssAnon``, polled every 20 ms; the file's pages are the kernel's
page cache); gap: the relative Frobenius distance between the Dask and
memmap covariances (same ``random_state``). ``drop_caches`` empties the page
cache before each fit (root only), so that every read comes from the disk.
"""

import os
import tempfile
import threading

import numpy as np

from ._speed import SpeedStudy, _status_mib

FLOOR = "X.T @ X (one Dask product)"
FITS = {
    FLOOR: None,
    "GaussianCovariance(data_norm=1)": ("GaussianCovariance", {"data_norm": 1.0}),
    "GaussianCovariance() (defaults)": ("GaussianCovariance", {}),
    "SeparateCovariance() (defaults)": ("SeparateCovariance", {}),
    "AdaptiveCovariance(data_norm=1)": ("AdaptiveCovariance", {"data_norm": 1.0}),
    "AdaptiveCovariance() (defaults)": ("AdaptiveCovariance", {}),
    "PCA(n_components=10) (defaults)": ("PCA", {"n_components": 10}),
}
READS = []  # the blocks read by their tasks in this process


def _path(cell):
    name = f"dpcov-{cell['n']}x{cell['d']}.npy"
    return cell["path"] or os.path.join(tempfile.gettempdir(), name)


def write_data(path, n, d, slab=500_000):
    """Write ``n x d`` rows to a ``.npy`` file slab by slab (bounded memory)."""
    rng = np.random.default_rng(0)
    scales = np.linspace(0.2, 1.0, d) / np.sqrt(d) / 2.5
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    for start in range(0, n, slab):
        rows = min(slab, n - start)
        out[start : start + rows] = rng.standard_normal((rows, d)) * scales + 0.05
    out.flush()


def _read_rows(path, start, stop):
    READS.append(start)
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def lazy_rows(path, chunk_rows):
    """The ``.npy`` file as a lazy Dask array, one task reading each block."""
    import dask
    import dask.array as da

    n, d = np.load(path, mmap_mode="r").shape
    read = dask.delayed(_read_rows, pure=True)
    blocks = [
        da.from_delayed(
            read(path, i, min(i + chunk_rows, n)),
            shape=(min(i + chunk_rows, n) - i, d),
            dtype=np.float64,
        )
        for i in range(0, n, chunk_rows)
    ]
    return da.concatenate(blocks)


def _anon_peak(call):
    """``call()``'s result and the peak ``RssAnon`` (MiB) while it runs."""
    peak, stop = [_status_mib("RssAnon")], threading.Event()

    def poll():
        while not stop.wait(0.02):
            peak.append(_status_mib("RssAnon"))

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        out = call()
    finally:
        stop.set()
        thread.join()
    return out, max(*peak, _status_mib("RssAnon")) - peak[0]


def _calls(cell):
    import dask
    from threadpoolctl import threadpool_limits

    from dpcov import covariance, decomposition

    fit, backend, path = cell["fit"], cell["backend"], _path(cell)
    if FITS[fit] is None and backend != "dask":
        return {}
    if cell["drop_caches"]:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    state = cell["state"] = {}

    def run():
        X = np.load(path, mmap_mode="r")
        if backend == "dask":
            X = lazy_rows(path, cell["chunk_rows"])
        scheduler = dask.config.set(scheduler="threads", num_workers=cell["threads"])
        if FITS[fit] is None:
            with scheduler, threadpool_limits(limits=1, user_api="blas"):
                return (X.T @ X).compute() / X.shape[0]
        name, params = FITS[fit]
        cls = getattr(covariance, name, None) or getattr(decomposition, name)
        with scheduler:
            est = cls(**params, random_state=0).fit(X)
        return est.get_covariance() if name == "PCA" else est.covariance_

    def call():
        READS.clear()
        cov, state["peak anon MiB"] = _anon_peak(run)
        state["cov"] = np.asarray(cov).tolist()  # JSON from a fresh process
        blocks = -(-cell["n"] // cell["chunk_rows"])
        state["reads"] = len(READS) / blocks if READS else np.nan

    return {fit: call}


class DaskStudy(SpeedStudy):
    def execute(self, grid, options, repeats, n_jobs=1):
        path, n, d = _path(options), options["n"], options["d"]
        if not os.path.exists(path) or np.load(path, mmap_mode="r").shape != (n, d):
            write_data(path, n, d)
        rows, _ = super().execute(grid, options, repeats, n_jobs)
        floor = [r["median s"] for r in rows if r["fit"] == FLOOR and "median s" in r]
        covs = {}
        for row in rows:
            del row["call"]  # the fit's name again
            row["x X.T @ X"] = row.get("median s", np.nan) / (floor or [np.nan])[0]
            covs.setdefault(row["fit"], []).append(np.array(row.pop("cov", np.nan)))
        for row in rows:
            a, b = (covs[row["fit"]] + [None])[:2]
            if row["fit"] != FLOOR and b is not None and a.shape == b.shape:
                row["gap"] = float(np.linalg.norm(a - b) / np.linalg.norm(b))
        return rows, self.table(rows, grid, repeats)


STUDY = DaskStudy(
    name="dask",
    title=__doc__.splitlines()[0],
    caption="Fits of a file larger than RAM",
    grid={"fit": list(FITS), "backend": ["dask", "numpy memmap"]},
    options={
        "n": 20_000_000,
        "d": 100,
        "path": None,
        "chunk_rows": 250_000,
        "threads": os.cpu_count(),
        "drop_caches": False,
        "fresh_process": True,
    },
    calls=_calls,
    extra=lambda cell, name, call: cell["state"],
    repeats=1,
    # A local threaded scheduler, in this process.
    quick={"n": 2_000, "d": 10, "chunk_rows": 500, "fresh_process": False},
)
