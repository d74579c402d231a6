"""Fit time of eigenvector sampling (Amin et al., 2019): dpcov vs IBM diffprivlib.

The whole pure-DP fit that samples all ``d`` eigenvectors, ``data_norm = 1``
on centred rows: EigenSamplingCovariance (``ES``) against diffprivlib's
``covariance_eig``, and PCA on ``EigenSamplingCovariance()`` against
diffprivlib's ``PCA(centered=True)``. Isotropic rows: standard normal;
structured: ``N(0, diag(s))``, ``s`` geometric from 1 to 1e-3, randomly
rotated; rows scaled to a largest norm of 1, the same on both sides. Each
library runs in a worker process of its own environment (``--set
diffprivlib=PYTHON``, the interpreter of an environment with diffprivlib;
without it those columns are ``-``) that makes the data, warms up, then
times ``fit`` alone; the rounds alternate ours and theirs. A round's time
is the mean of as many fits as ``least`` seconds hold (at least one; round
``r``'s fits take ``random_state`` 1000 r, 1000 r + 1, ...), so that
millisecond fits are not timed one by one at the clock's and the
scheduler's resolution. Times are means over rounds in seconds (the
samplers' run time is random, heavy-tailed where rejection sampling is
slow, and a mean is what a user pays on average); ``speed-up``:
diffprivlib's mean over ours, with its delta-method standard error over
rounds; a fit past ``timeout`` seconds is stopped and shows as
``>timeout`` (a lower bound). Run it with one BLAS thread
(``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1``): the workers inherit it.
"""

import json
import select
import subprocess
import sys

import numpy as np

from ..harness import Study, ratio_se, rst_table

# argv: lib kind n d epsilon data_seed. Prints {"checksum"} when ready, then
# for each stdin line "what round least" one line {"seconds"} (the mean time
# of the fits run until `least` seconds had passed, at least one) or {"error"}.
WORKER = r"""
import json, sys, time, warnings
import numpy as np

lib, kind, n, d, eps, seed = sys.argv[1:7]
n, d, eps, seed = int(n), int(d), float(eps), int(seed)
warnings.simplefilter("ignore")

def make_data(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if kind == "structured":
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        X = (X * np.sqrt(np.geomspace(1.0, 1e-3, d))) @ (q * np.sign(np.diag(r))).T
    return X / np.linalg.norm(X, axis=1).max()

if lib == "dpcov":
    from dpcov.covariance import EigenSamplingCovariance as ES
    from dpcov.decomposition import PCA
    def fit(what, X, rs):
        common = dict(epsilon=eps, delta=0.0, data_norm=1.0, assume_centered=True)
        if what == "covariance":
            ES(**common, random_state=rs).fit(X)
        else:
            PCA(None, **common, covariance=ES(), random_state=rs).fit(X)
else:
    from diffprivlib.models import PCA
    from diffprivlib.models.utils import covariance_eig
    def fit(what, X, rs):
        if what == "covariance":
            covariance_eig(X, epsilon=eps, norm=1.0, random_state=rs)
        else:
            PCA(None, epsilon=eps, data_norm=1.0, centered=True, random_state=rs).fit(X)

X = make_data(kind, n, d, seed)
for what in ("covariance", "PCA"):  # warm-up: imports, first calls
    fit(what, make_data("isotropic", 200, d, seed + 1), 0)
print(json.dumps({"checksum": float(X.sum())}), flush=True)
for line in sys.stdin:
    what, rs, least = line.split()
    try:  # fits with random_state 1000 rs + i until `least` seconds have passed
        fits, start = 0, time.perf_counter()
        while not fits or time.perf_counter() - start < float(least):
            fit(what, X, 1000 * int(rs) + fits)
            fits += 1
        out = {"seconds": (time.perf_counter() - start) / fits, "fits": fits}
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out), flush=True)
"""
WHATS = {"covariance": ("ES", "covariance_eig"), "PCA": ("PCA", "dpl PCA")}


class Worker:
    """One library's worker process for one cell, timing fits on request."""

    def __init__(self, python, lib, cell):
        args = [lib, cell["kind"], cell["n"], cell["d"], cell["epsilon"], cell["seed"]]
        self.timeout, self.least = cell["timeout"], cell["least"]
        self.proc = subprocess.Popen(
            [python, "-c", WORKER, *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.ready = self._read()

    def _read(self):
        if not select.select([self.proc.stdout], [], [], self.timeout)[0]:
            self.close()
            return {"timeout": True}
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().strip().splitlines()
            return {"error": err[-1] if err else f"exit {self.proc.wait()}"}
        return json.loads(line)

    def fit(self, what, round_):
        if self.proc.poll() is not None:
            return {"error": "worker not running"}
        self.proc.stdin.write(f"{what} {round_} {self.least}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def time_cell(cell, rounds):
    """Interleaved rounds of the four fits of one cell: name -> times."""
    pythons = {"dpcov": sys.executable, "diffprivlib": cell["diffprivlib"]}
    pythons = {lib: py for lib, py in pythons.items() if py}
    workers = {lib: Worker(py, lib, cell) for lib, py in pythons.items()}
    sums = [w.ready.get("checksum") for w in workers.values()]
    if len(sums) == 2 and None not in sums and not np.isclose(*sums, rtol=1e-9):
        raise RuntimeError(f"the two environments made different data: {sums}")
    times = {(lib, what): [] for lib in workers for what in WHATS}
    dead = {key: "checksum" not in workers[key[0]].ready for key in times}
    for lib, worker in workers.items():
        if "checksum" not in worker.ready:
            print(f"{lib} worker did not start: {worker.ready}", file=sys.stderr)
    for r in range(rounds):
        order = list(workers) if r % 2 == 0 else list(workers)[::-1]
        for what in WHATS:
            for lib in order:
                if dead[lib, what]:
                    continue
                out = workers[lib].fit(what, r)
                if "seconds" in out:
                    times[lib, what].append(out["seconds"])
                    continue
                dead[lib, what] = True
                print(f"{lib} {what} at {cell}: {out}", file=sys.stderr)
                if out.get("timeout"):  # a lower bound; a new worker for the rest
                    times[lib, what].append(np.inf)
                    workers[lib] = Worker(pythons[lib], lib, cell)
    for worker in workers.values():
        worker.close()
    return times


def _shown(seconds, timeout):
    return f">{timeout:g}" if seconds == np.inf else seconds


class _SpeedStudy(Study):
    def execute(self, grid, options, repeats, n_jobs=1):
        rows = []
        for cell in self.cells(grid):
            cell = dict(cell, **options)
            times = time_cell(cell, repeats)
            row = {k: cell[k] for k in grid}
            for what, (ours, theirs) in WHATS.items():
                mine = np.array(times["dpcov", what])
                other = np.array(times.get(("diffprivlib", what)) or [np.nan])
                row[f"{ours} s"] = mine.mean()
                row[f"{theirs} s"] = _shown(other.mean(), cell["timeout"])
                if np.isinf(other).any():  # a lower bound
                    ratio = cell["timeout"] / mine.mean()
                    row[f"{ours} speed-up"] = f">{ratio:.3g}"
                elif other.size == mine.size:
                    ratio, se = ratio_se(other, mine)
                    row[f"{ours} speed-up"] = f"{ratio:.3g} ± {se:.2g}"
                else:
                    row[f"{ours} speed-up"] = None
            rows.append(row)
        head = (
            f"{self.caption} (mean time per fit over {repeats} interleaved rounds;"
            " speed-up: the ratio of the means, ± its standard error over rounds)."
        )
        columns = [*grid, *[k for k in rows[0] if k not in grid]] if rows else []
        return rows, head + "\n\n" + rst_table(rows, columns)


STUDY = _SpeedStudy(
    name="eigen_speed",
    title=__doc__.splitlines()[0],
    caption="Fit time (s), dpcov vs diffprivlib",
    grid={
        "kind": ["isotropic", "structured"],
        "n": [10_000, 100_000],
        "d": [10, 50, 100, 200],
        "epsilon": [0.1, 1.0, 10.0],
    },
    keep=lambda c: (
        c["n"] == 10_000
        or (c["kind"] == "structured" and c["d"] == 100 and c["epsilon"] == 1.0)
    ),
    repeats=5,
    options={"diffprivlib": None, "timeout": 300.0, "least": 1.0, "seed": 0},
    quick={
        "kind": ["isotropic"],
        "n": [10_000],
        "d": [10],
        "epsilon": [1.0],
        "repeats": 2,
        "least": 0.05,
    },
    docs="docs/user_guide/_bench_eigen_speed.rst",
)
