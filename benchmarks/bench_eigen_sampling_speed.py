"""Fit time of eigenvector sampling (Amin et al., 2019): dpcov vs IBM diffprivlib.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        python benchmarks/bench_eigen_sampling_speed.py --rounds 5

Both sides run the whole pure-DP fit that samples all ``d`` eigenvectors
(``d - 1`` Bingham draws) with ``data_norm=1`` on data that is already centred:

- dpcov: ``EigenSamplingCovariance(epsilon, delta=0, data_norm=1,
  assume_centered=True)`` and ``PCA(n_components=None, epsilon, delta=0,
  data_norm=1, assume_centered=True, covariance=EigenSamplingCovariance())``;
- diffprivlib: ``covariance_eig(X, epsilon, norm=1)`` and
  ``PCA(n_components=None, epsilon, data_norm=1, centered=True)``.

Data (``numpy.random.default_rng(seed)``, identical on both sides, checked by a
checksum): "isotropic", standard normal rows; "structured", rows from
``N(0, diag(s))`` with variances ``s_j`` geometric from 1 down to 1e-3 over the
``d`` coordinates, in a random rotation. Both are scaled so that the largest row
norm is 1. Grid: ``d`` in {10, 50, 100, 200} at ``n = 10000``, epsilon in
{0.1, 1, 10}, both kinds; and ``n = 100000``, ``d = 100``, structured,
epsilon = 1.

diffprivlib runs in its own virtual environment (``--diffprivlib-python``; if
that interpreter is missing its columns are left empty). Each side keeps one
worker process per cell (the same embedded worker script for both) that
generates the data, warms up on a slice (imports, first-call overheads) and
then times ``fit`` alone with ``time.perf_counter`` on request. For
``--rounds`` rounds the four fits alternate ours/theirs (the order flipped on
odd rounds); round ``r`` uses ``random_state=r`` on both sides. The table
reports medians and the ratio of medians theirs/ours; this shared VM moves
single timings by +-30%, hence the interleaving. A fit that takes longer than
``--timeout`` seconds is killed and recorded as ``>timeout`` (no further rounds
of it in that cell). Run with one BLAS thread (the variables above): the
worker processes inherit them.

Writes ``eigen_sampling_speed.json`` to ``--out`` (default
``benchmarks/results``) and, with ``--rst``, the user-guide include
``docs/user_guide/_bench_eigen_speed.rst``. ``--quick`` is a smoke run
(2 rounds, ``d`` up to 100, no ``n = 100000`` cell).
"""

import argparse
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
from _machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent
DIFFPRIVLIB_PYTHON = "/work/bench-envs/diffprivlib/bin/python"
KINDS = ["isotropic", "structured"]
EPSILONS = [0.1, 1.0, 10.0]
DIMENSIONS = [10, 50, 100, 200]
N = 10_000
BIG = dict(kind="structured", n=100_000, d=100, epsilon=1.0)
WHATS = ["covariance", "PCA"]  # ours: EigenSamplingCovariance / PCA; theirs: ...
THEIR_NAME = {"covariance": "covariance_eig", "PCA": "PCA"}

# Runs in either virtual environment: argv = lib kind n d epsilon data_seed.
# Prints one JSON line when ready ({"checksum"}), then for each line
# "what random_state" read from stdin one JSON line {"seconds"} or {"error"}.
WORKER = r"""
import json, sys, time, warnings
import numpy as np

lib, kind, n, d, eps, seed = sys.argv[1:7]
n, d, eps, seed = int(n), int(d), float(eps), int(seed)


def make_data(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if kind == "structured":
        variances = np.geomspace(1.0, 1e-3, d)
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        rotation = q * np.sign(np.diag(r))
        X = (X * np.sqrt(variances)) @ rotation.T
    X /= np.linalg.norm(X, axis=1).max()
    return X


if lib == "dpcov":
    from dpcov.covariance import EigenSamplingCovariance
    from dpcov.decomposition import PCA

    def fit(what, X, seed):
        if what == "covariance":
            EigenSamplingCovariance(
                epsilon=eps, delta=0.0, data_norm=1.0, assume_centered=True,
                random_state=seed,
            ).fit(X)
        else:
            PCA(
                n_components=None, epsilon=eps, delta=0.0, data_norm=1.0,
                assume_centered=True, covariance=EigenSamplingCovariance(),
                random_state=seed,
            ).fit(X)
else:
    from diffprivlib.models import PCA
    from diffprivlib.models.utils import covariance_eig

    def fit(what, X, seed):
        if what == "covariance":
            covariance_eig(X, epsilon=eps, norm=1.0, random_state=seed)
        else:
            PCA(
                n_components=None, epsilon=eps, data_norm=1.0, centered=True,
                random_state=seed,
            ).fit(X)


X = make_data(kind, n, d, seed)
seen = set()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    warm = make_data("isotropic", 200, d, seed + 1)  # cheap, any spectrum
    for what in ("covariance", "PCA"):  # warm-up: imports, first calls
        fit(what, warm, 0)
print(json.dumps({"checksum": float(X.sum()), "norm": float(
    np.linalg.norm(X, axis=1).max())}), flush=True)
for line in sys.stdin:
    what, rs = line.split()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            start = time.perf_counter()
            fit(what, X, int(rs))
            out = {"seconds": time.perf_counter() - start}
        except Exception as exc:
            out = {"error": f"{type(exc).__name__}: {exc}"}
    new = {f"{w.category.__name__}: {w.message}" for w in caught} - seen
    seen |= new
    if new:
        out["warnings"] = sorted(new)
    print(json.dumps(out), flush=True)
"""


class Worker:
    """One worker process (one library, one cell), timed fits on request."""

    def __init__(self, python, lib, cell, seed, timeout):
        self.timeout = timeout
        args = [lib, cell["kind"], cell["n"], cell["d"], cell["epsilon"], seed]
        self.proc = subprocess.Popen(
            [python, "-c", WORKER, *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            cwd=ROOT,
        )
        self.ready = self._read(timeout)

    def _read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.close()
            return {"timeout": True}
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().strip().splitlines()
            return {"error": err[-1] if err else f"exit {self.proc.wait()}"}
        return json.loads(line)

    def fit(self, what, random_state):
        if self.proc.poll() is not None:
            return {"error": "worker not running"}
        self.proc.stdin.write(f"{what} {random_state}\n")
        self.proc.stdin.flush()
        return self._read(self.timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_cell(cell, args, have_theirs):
    """Interleaved rounds of the four fits of one cell; returns the raw times."""
    pythons = {"ours": sys.executable}
    if have_theirs:
        pythons["theirs"] = args.diffprivlib_python
    libs = {"ours": "dpcov", "theirs": "diffprivlib"}
    workers = {
        side: Worker(py, libs[side], cell, args.seed, args.timeout)
        for side, py in pythons.items()
    }
    notes = []
    for side, worker in workers.items():
        if "checksum" not in worker.ready:
            notes.append(f"{side} worker failed to start: {worker.ready}")
    sums = [w.ready.get("checksum") for w in workers.values()]
    if len(sums) == 2 and None not in sums and not np.isclose(*sums, rtol=1e-9):
        notes.append(f"data differ between the environments: checksums {sums}")
    times = {(side, what): [] for side in workers for what in WHATS}
    dead = {key: "checksum" not in workers[key[0]].ready for key in times}
    for r in range(args.rounds):
        sides = list(workers) if r % 2 == 0 else list(workers)[::-1]
        for what in WHATS:
            for side in sides:
                key = (side, what)
                if dead[key]:
                    continue
                out = workers[side].fit(what, r)
                for w in out.get("warnings", []):
                    notes.append(f"{side} {what}: {w}")
                if "seconds" in out:
                    times[key].append(out["seconds"])
                    continue
                dead[key] = True
                if out.get("timeout"):
                    times[key].append(float("inf"))
                    notes.append(f"{side} {what}: timed out after {args.timeout} s")
                    # The worker is gone: restart it for the remaining fits.
                    workers[side] = Worker(
                        pythons[side], libs[side], cell, args.seed, args.timeout
                    )
                else:
                    notes.append(f"{side} {what}: {out.get('error')}")
    for worker in workers.values():
        worker.close()
    return times, notes


def summarise(cell, times, notes, timeout):
    row = dict(cell)
    for (side, what), values in times.items():
        if values:
            row[f"{side}_{what}_median_s"] = float(np.median(values))
            row[f"{side}_{what}_min_s"] = float(np.min(values))
            row[f"{side}_{what}_times_s"] = values
    for what in WHATS:
        ours = row.get(f"ours_{what}_median_s")
        theirs = row.get(f"theirs_{what}_median_s")
        if ours is not None and theirs is not None:
            # A timed-out fit gives a lower bound: timeout / ours.
            row[f"speedup_{what}"] = min(theirs, timeout) / ours
            row[f"speedup_{what}_is_lower_bound"] = not np.isfinite(theirs)
    row["notes"] = notes
    return row


def jsonable(value, timeout):
    """Replace the infinite times of timed-out fits by the string ">timeout"."""
    if isinstance(value, dict):
        return {k: jsonable(v, timeout) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v, timeout) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return f">{timeout:g}"
    return value


def fmt_time(value, timeout):
    if value is None:
        return "-"
    if not np.isfinite(value):
        return f">{timeout:g}"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def fmt_ratio(value, lower=False):
    if value is None:
        return "-"
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return ">" + text if lower else text


COLUMNS = [
    "data",
    "n",
    "d",
    "epsilon",
    "ours ES (s)",
    "covariance_eig (s)",
    "speed-up",
    "ours PCA (s)",
    "dpl PCA (s)",
    "speed-up",
]


def table_rows(rows, timeout):
    out = []
    for row in rows:
        cells = [row["kind"], str(row["n"]), str(row["d"]), f"{row['epsilon']:g}"]
        for what in WHATS:
            cells.append(fmt_time(row.get(f"ours_{what}_median_s"), timeout))
            cells.append(fmt_time(row.get(f"theirs_{what}_median_s"), timeout))
            cells.append(
                fmt_ratio(
                    row.get(f"speedup_{what}"),
                    row.get(f"speedup_{what}_is_lower_bound", False),
                )
            )
        out.append(cells)
    return out


def versions(python):
    code = (
        "import json, numpy, scipy, sklearn\n"
        "v = dict(numpy=numpy.__version__, scipy=scipy.__version__,"
        " sklearn=sklearn.__version__)\n"
        "try:\n import dpcov; v['dpcov'] = dpcov.__version__\n"
        "except ImportError: pass\n"
        "try:\n import diffprivlib; v['diffprivlib'] = diffprivlib.__version__\n"
        "except ImportError: pass\n"
        "print(json.dumps(v))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def slowdown(rows):
    """Largest ratio of dpcov's structured to isotropic time, same cell, at
    d >= 50 (below, the fits take milliseconds and the ratio is noise)."""
    iso = {
        (r["n"], r["d"], r["epsilon"], w): r[f"ours_{w}_median_s"]
        for r in rows
        if r["kind"] == "isotropic"
        for w in WHATS
    }
    return max(
        r[f"ours_{w}_median_s"] / iso[r["n"], r["d"], r["epsilon"], w]
        for r in rows
        if r["kind"] == "structured" and r["d"] >= 50
        for w in WHATS
        if (r["n"], r["d"], r["epsilon"], w) in iso
    )


def summary(rows, timeout):
    """Two or three sentences of facts read off the table."""
    sentences = []
    parts = []
    for kind in KINDS:
        ratios = [
            (row[f"speedup_{what}"], row[f"speedup_{what}_is_lower_bound"])
            for row in rows
            if row["kind"] == kind and row["d"] == 100 and row["n"] == N
            for what in WHATS
            if f"speedup_{what}" in row
        ]
        if ratios:
            low, high = min(ratios), max(ratios)
            parts.append(f"{fmt_ratio(*low)}x to {fmt_ratio(*high)}x on {kind} data")
    if parts:
        sentences.append(
            f"At d = 100 and n = {N} dpcov's fit is faster than diffprivlib's "
            "by "
            + " and by ".join(parts)
            + " (covariance_eig and PCA, the three epsilons; ``>`` marks a "
            f"lower bound from a fit stopped after {timeout:g} s)."
        )
    stopped = [
        f"d = {row['d']}, epsilon = {row['epsilon']:g}"
        + (f", n = {row['n']}" if row["n"] != N else "")
        for row in rows
        if row["kind"] == "structured"
        and any(row.get(f"speedup_{w}_is_lower_bound") for w in WHATS)
    ]
    if stopped:
        sentences.append(
            f"On structured data diffprivlib did not finish within {timeout:g} s "
            f"at {'; '.join(stopped)}: its time grows steeply with epsilon on "
            "this spectrum, while dpcov's structured fits take at most "
            f"{slowdown(rows):.1f}x its isotropic ones at d >= 50."
        )
    big = [r for r in rows if r["n"] != N and "speedup_PCA" in r]
    for r in big:
        ratios = " and ".join(
            fmt_ratio(r[f"speedup_{w}"], r[f"speedup_{w}_is_lower_bound"]) + "x"
            for w in WHATS
        )
        sentences.append(
            f"At n = {r['n']} ({r['kind']}, d = {r['d']}, epsilon = "
            f"{r['epsilon']:g}) the speed-ups are {ratios} (covariance_eig, PCA)."
        )
    return " ".join(sentences)


def write_rst(path, rows, meta, command, timeout):
    title = "Benchmark: speed of iterative eigenvector sampling (Amin et al., 2019)"
    lines = [
        title,
        "~" * len(title),
        "",
        f"``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 {command}``",
        "",
        "Whole pure-DP fit, all ``d`` eigenvectors sampled, ``data_norm=1`` on "
        "centred data: :class:`~dpcov.covariance.EigenSamplingCovariance` "
        "(ours ES) against diffprivlib's ``covariance_eig``, and "
        ":class:`~dpcov.decomposition.PCA` on ``EigenSamplingCovariance()`` "
        "against diffprivlib's ``PCA(centered=True)``. Isotropic data: standard "
        "normal rows; structured: ``N(0, diag(s))`` with ``s`` geometric from 1 "
        "to 1e-3, randomly rotated; rows scaled to a largest norm of 1. Medians "
        f"of {meta['rounds']} interleaved rounds of fit time alone, in seconds; "
        "speed-up is diffprivlib's median over ours.",
        "",
        f"Environment: {meta['cpu']}, one BLAS thread (``OPENBLAS_NUM_THREADS=1``); "
        f"dpcov {meta['ours'].get('dpcov', '?')} with numpy "
        f"{meta['ours'].get('numpy', '?')}, scipy {meta['ours'].get('scipy', '?')}, "
        f"scikit-learn {meta['ours'].get('sklearn', '?')}; diffprivlib "
        f"{meta['theirs'].get('diffprivlib', '?')} (own environment: numpy "
        f"{meta['theirs'].get('numpy', '?')}, scipy "
        f"{meta['theirs'].get('scipy', '?')}, scikit-learn "
        f"{meta['theirs'].get('sklearn', '?')}).",
        "",
        ".. csv-table:: Fit time (s), dpcov vs diffprivlib",
        "   :header: " + ", ".join(f'"{c}"' for c in COLUMNS),
        "",
    ]
    for cells in table_rows(rows, timeout):
        lines.append("   " + ", ".join(cells))
    lines += ["", summary(rows, timeout), ""]
    wrapped = []
    for line in lines:
        if len(line) > 79 and not line.startswith(("   ", "``", "..")):
            wrapped.extend(textwrap.wrap(line, 79, break_on_hyphens=False))
        else:
            wrapped.append(line)
    Path(path).write_text("\n".join(wrapped))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--timeout", type=float, default=300.0, help="s per fit")
    parser.add_argument("--diffprivlib-python", default=DIFFPRIVLIB_PYTHON)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument(
        "--rst",
        nargs="?",
        const=str(ROOT / "docs" / "user_guide" / "_bench_eigen_speed.rst"),
        help="also write the user-guide include (default path if no value)",
    )
    parser.add_argument(
        "--from-json",
        help="only rewrite the --rst file from a JSON file this script wrote",
    )
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(), parse_constant=float)
        rows = [
            {
                k: float("inf") if isinstance(v, str) and v.startswith(">") else v
                for k, v in row.items()
            }
            for row in saved["rows"]
        ]
        for row in rows:
            print("  ".join(table_rows([row], saved["args"]["timeout"])[0]))
        if args.rst:
            write_rst(
                args.rst,
                rows,
                saved["meta"],
                saved["meta"]["command"],
                saved["args"]["timeout"],
            )
        return
    if args.quick:
        args.rounds = 2
    dims = [d for d in DIMENSIONS if not args.quick or d <= 100]
    cells = [
        dict(kind=kind, n=N, d=d, epsilon=eps)
        for kind in KINDS
        for d in dims
        for eps in EPSILONS
    ]
    if not args.quick:
        cells.append(dict(BIG))
    have_theirs = os.path.exists(args.diffprivlib_python)
    if not have_theirs:
        print(f"{args.diffprivlib_python} not found: diffprivlib columns skipped")
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    if threads != "1":
        print(f"warning: OPENBLAS_NUM_THREADS={threads!r}, not 1")
    meta = dict(
        rounds=args.rounds,
        timeout=args.timeout,
        cpu=cpu_model(),
        blas_threads=threads,
        ours=versions(sys.executable),
        theirs=versions(args.diffprivlib_python) if have_theirs else {},
    )
    meta["command"] = " ".join(
        ["python benchmarks/bench_eigen_sampling_speed.py", *sys.argv[1:]]
    )
    start = time.perf_counter()
    rows = []
    header = "".join(
        f"{c:>19s}" if i >= 4 else f"{c:>11s}" for i, c in enumerate(COLUMNS)
    )
    print(header)
    for cell in cells:
        times, notes = run_cell(cell, args, have_theirs)
        row = summarise(cell, times, notes, args.timeout)
        rows.append(row)
        cells_out = table_rows([row], args.timeout)[0]
        print(
            "".join(
                f"{c:>19s}" if i >= 4 else f"{c:>11s}" for i, c in enumerate(cells_out)
            ),
            flush=True,
        )
        for note in notes:
            print(f"    note: {note}")
    meta["wall_s"] = time.perf_counter() - start
    print(f"total {meta['wall_s']:.0f} s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = (
        "eigen_sampling_speed_quick.json" if args.quick else "eigen_sampling_speed.json"
    )
    with open(out / name, "w") as f:
        json.dump(
            {"args": vars(args), "meta": meta, "rows": jsonable(rows, args.timeout)},
            f,
            indent=2,
        )
    if args.rst:
        write_rst(args.rst, rows, meta, meta["command"], args.timeout)


if __name__ == "__main__":
    main()
