"""Fit time and peak memory at scale: dpcov's estimators vs scikit-learn.

    python benchmarks/bench_scale.py                      # full grid
    python benchmarks/bench_scale.py --quick              # smoke run
    python benchmarks/bench_scale.py --n 1000000 --d 100  # one cell

Leave ``OPENBLAS_NUM_THREADS`` unset: every estimator, scikit-learn's
included, then uses all cores (the thread count is recorded).

Grid: ``n`` in {1e5, 1e6, 5e6} x ``d`` in {10, 100, 500} (``--n``/``--d``
override it; ``--quick`` is ``n = 1e5``, ``d`` in {10, 100}). The target: at
``n = 1e6, d = 100``, at most 1.5x scikit-learn's time, and a peak
memory of at most the input plus ``O(d**2 + chunk * d)``.

Estimators (``fit`` only), all with their defaults (``epsilon = 1``, centred,
``data_norm=None``: the private radius) and ``random_state=0``:
``GaussianCovariance``, ``SeparateCovariance``, ``AdaptiveCovariance``,
``NuclearLaplaceCovariance``, ``EigenSamplingCovariance`` and
``PCA(n_components=10)``, each also with the public bound ``data_norm=1``
("given"). References: ``sklearn.covariance.EmpiricalCovariance()`` for the
covariance estimators and ``sklearn.decomposition.PCA(n_components=10)``
(default solver) for PCA. The noise samplers of ``NuclearLaplaceCovariance``
(Gibbs chain) and ``EigenSamplingCovariance`` (``d - 1`` Bingham draws) cost
a time that grows with ``d`` but not with ``n``: about 4-12 s and 1 s per fit
at ``d = 100``, 140 s and 47 s at ``d = 500`` (this 2-core VM, ``n = 5000``).
They are skipped for ``d > --slow-max-d`` (default 200) and the table says so.

Data: Gaussian rows ``z @ diag(sqrt(s)) @ Q.T`` with a random rotation ``Q``
and variances ``s`` geometric from 1 down to 1e-2, scaled to trace 1/4 (typical
row norm 1/2); the rare rows of norm above 1 are scaled down to norm 1 when
generated, so ``data_norm = 1`` is a true public bound. Each cell writes its
``X`` (float64) chunk by chunk into a ``.npy`` memmap in a temporary directory
(``--tmpdir``), in a subprocess of its own, then runs in a fresh subprocess
that loads ``X`` fully into RAM with ``np.load``. When the input plus
scikit-learn's centred copy would exceed ``--ram-fraction`` (0.8) of the RAM
(on 24 GiB: ``n = 5e6, d = 500``, 18.6 GiB), scikit-learn is not run ("n/a")
and dpcov's estimators fit the memmapped file directly
(``np.load(mmap_mode="r")``): they read ``X`` in chunks and never copy it, so
their working memory stays bounded; their time then includes reading the file.

Time: a warm-up fit on 20000 rows (not for the two slow samplers), then
``--repeats`` rounds (default 3) in which every estimator fits once, in a
shuffled order; the table gives the median and its ratio to the reference's
median. ``time.perf_counter`` around ``fit`` only.

Memory, per estimator:

- "peak MiB above input": one more fit under ``tracemalloc`` (NumPy reports its
  buffers to it): the peak of the memory allocated during ``fit``, i.e. the
  working memory on top of the input;
- "RSS MiB": the process peak RSS during a timed fit minus the RSS just before
  it (the peak is reset before each fit through ``/proc/self/clear_refs``, which
  also resets ``getrusage``'s ``ru_maxrss``); the largest over the rounds. With
  a memmapped input it includes the file pages read;
- "bound MiB": the budget ``O(d**2 + chunk * d)`` with stated constants,
  ``(8 * d**2 * C1 + C2 * CHUNK_BYTES) / 2**20`` with ``C1 = 8`` d x d float64
  matrices and ``C2 = 4`` chunks of ``CHUNK_BYTES`` = 8 MiB of rows
  (``--bound-c1``, ``--bound-c2``). Peaks above it are in bold.

Per cell (second table): the process peak RSS over the whole cell minus the
RSS right after loading ``X`` (the largest ``ru_maxrss`` reading), which
scikit-learn's copy dominates when it runs.

``--max-seconds`` (default 3600) guards a cell: once exceeded, the remaining
fits of that cell are skipped (an estimator with at least one timed fit keeps
the median of those). Writes ``--out`` + ``.json`` (every timing, the machine:
CPUs, RAM, NumPy/scikit-learn versions, BLAS through ``threadpoolctl``) and
``--out`` + ``.rst`` (the tables for the docs) after every cell; ``--from-json``
re-renders the rst.
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from _machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent
NS = [100_000, 1_000_000, 5_000_000]
DIMS = [10, 100, 500]
QUICK_NS = [100_000]
QUICK_DIMS = [10, 100]
DATA_NORM = 1.0  # the public row-norm bound of the generated data
TRACE = 0.25  # E||x||^2 of the generated rows
N_COMPONENTS = 10
WARMUP_ROWS = 20_000
SLOW = {"NuclearLaplaceCovariance", "EigenSamplingCovariance"}
REFERENCE = {
    "covariance": "sklearn EmpiricalCovariance",
    "pca": "sklearn PCA",
}
NA_SKLEARN = "n/a (needs ~2x input)"
MiB = 2**20


def chunk_bytes():
    try:
        from dpcov.utils._gram import CHUNK_BYTES
    except ImportError:  # the constant moved: the documented default
        return 8 * MiB
    return CHUNK_BYTES


def estimators(d):
    """``{name: (family, base class name, factory)}``, each reference first."""
    from sklearn.covariance import EmpiricalCovariance
    from sklearn.decomposition import PCA as SkPCA

    from dpcov import covariance
    from dpcov.decomposition import PCA

    table = {
        "sklearn EmpiricalCovariance": ("covariance", "", EmpiricalCovariance),
    }
    for cls in [
        covariance.GaussianCovariance,
        covariance.SeparateCovariance,
        covariance.AdaptiveCovariance,
        covariance.NuclearLaplaceCovariance,
        covariance.EigenSamplingCovariance,
    ]:
        name = cls.__name__
        table[name] = ("covariance", name, lambda c=cls: c(random_state=0))
        table[f"{name} (given)"] = (
            "covariance",
            name,
            lambda c=cls: c(data_norm=DATA_NORM, random_state=0),
        )
    pca = dict(n_components=min(N_COMPONENTS, d), random_state=0)
    table["sklearn PCA"] = ("pca", "", lambda: SkPCA(n_components=pca["n_components"]))
    table["PCA"] = ("pca", "PCA", lambda: PCA(**pca))
    table["PCA (given)"] = ("pca", "PCA", lambda: PCA(data_norm=DATA_NORM, **pca))
    return table


def ram_bytes():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def needs_mmap(n, d, ram_fraction):
    """Input plus scikit-learn's centred copy would not fit in RAM."""
    return 2 * 8 * n * d > ram_fraction * ram_bytes()


def bound_mib(d, c1, c2):
    return (8 * d * d * c1 + c2 * chunk_bytes()) / MiB


# -- process memory (Linux /proc; None elsewhere) ---------------------------


def _status_kib(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mib():
    kib = _status_kib("VmRSS")
    return None if kib is None else kib / 1024


def maxrss_mib():
    # ru_maxrss is in KiB on Linux; it follows the resets below.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss():
    """Reset the peak RSS (VmHWM and ru_maxrss) to the current RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# -- data ----------------------------------------------------------------


def make_data(path, n, d, seed):
    """Write ``X`` to a ``.npy`` memmap, chunk by chunk; return its stats."""
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    variances = np.geomspace(1.0, 1e-2, d)
    variances *= TRACE / variances.sum()
    transform = np.sqrt(variances)[:, np.newaxis] * rotation.T
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d))
    step = max(1, 64 * MiB // (8 * d))
    clipped = 0
    for start in range(0, n, step):
        rows = rng.standard_normal((min(step, n - start), d)) @ transform
        norms = np.linalg.norm(rows, axis=1)
        over = norms > DATA_NORM
        clipped += int(over.sum())
        rows[over] *= (DATA_NORM / norms[over])[:, np.newaxis]
        X[start : start + rows.shape[0]] = rows
    X.flush()
    del X
    return {"clipped_at_generation": clipped / n, "trace": TRACE}


# -- one cell, in its own process -------------------------------------------


def run_cell(n, d, path, args):
    cell_start = time.perf_counter()
    deadline = cell_start + args.max_seconds
    caught = {}

    def record_warning(message, category, *rest, **kwargs):
        key = f"{category.__name__}: {str(message)[:160]}"
        caught[key] = caught.get(key, 0) + 1

    warnings.showwarning = record_warning
    warnings.simplefilter("always")

    table = estimators(d)
    rss_start = rss_mib()
    mmap = needs_mmap(n, d, args.ram_fraction)
    if mmap:
        X = np.load(path, mmap_mode="r")
    else:
        X = np.load(path)
    rss_loaded = rss_mib()
    cell_peak = maxrss_mib()  # the load's peak

    rows = {}
    runnable = []
    for name, (family, base, _) in table.items():
        row = {"family": family, "times_s": [], "rss_peak_mib": []}
        if mmap and name in REFERENCE.values():
            row["skipped"] = NA_SKLEARN
        elif base in SLOW and d > args.slow_max_d:
            row["skipped"] = f"skipped: d > {args.slow_max_d} (n-independent sampler)"
        else:
            runnable.append(name)
        rows[name] = row

    def over_time(name, stage):
        if time.perf_counter() <= deadline:
            return False
        rows[name].setdefault("skipped_fits", []).append(stage)
        return True

    # Warm-up (imports, first-call overheads); the slow samplers' cost does not
    # shrink with n, so their warm-up would cost a full fit.
    warm = X[: min(n, WARMUP_ROWS)]
    for name in runnable:
        if table[name][1] not in SLOW and not over_time(name, "warm-up"):
            table[name][2]().fit(warm)

    order = np.random.default_rng(args.seed)
    have_reset = True
    for _ in range(args.repeats):
        for name in order.permutation(runnable):
            if over_time(name, "timing"):
                continue
            estimator = table[name][2]()
            cell_peak = max(cell_peak, maxrss_mib())
            have_reset = reset_peak_rss() and have_reset
            before = rss_mib()
            start = time.perf_counter()
            estimator.fit(X)
            elapsed = time.perf_counter() - start
            peak = maxrss_mib()
            cell_peak = max(cell_peak, peak)
            rows[name]["times_s"].append(elapsed)
            if have_reset and before is not None:
                rows[name]["rss_peak_mib"].append(peak - before)
            del estimator
            print(f"  {n} x {d} {name}: {elapsed:.3f} s", file=sys.stderr, flush=True)

    for name in runnable:
        if over_time(name, "tracemalloc"):
            continue
        estimator = table[name][2]()
        tracemalloc.start()
        estimator.fit(X)
        rows[name]["tracemalloc_peak_mib"] = tracemalloc.get_traced_memory()[1] / MiB
        tracemalloc.stop()
        del estimator
    cell_peak = max(cell_peak, maxrss_mib())

    for row in rows.values():
        if row["times_s"]:
            row["median_s"] = float(np.median(row["times_s"]))
            row["min_s"] = float(np.min(row["times_s"]))
        elif "skipped" not in row:
            row["skipped"] = "skipped: --max-seconds"
        if row["rss_peak_mib"]:
            row["rss_peak_mib_max"] = float(np.max(row["rss_peak_mib"]))
    for row in rows.values():
        reference = rows[REFERENCE[row["family"]]]
        if "median_s" in row and "median_s" in reference:
            row["ratio"] = row["median_s"] / reference["median_s"]

    from threadpoolctl import threadpool_info

    return {
        "n": n,
        "d": d,
        "input_mib": X.nbytes / MiB,
        "input": "memmap" if mmap else "ram",
        "rss_start_mib": rss_start,
        "rss_after_load_mib": rss_loaded,
        "cell_peak_rss_above_input_mib": (
            None if rss_loaded is None else cell_peak - rss_loaded
        ),
        "peak_reset": have_reset,
        "bound_mib": bound_mib(d, args.bound_c1, args.bound_c2),
        "wall_s": time.perf_counter() - cell_start,
        "threads": threadpool_info(),
        "warnings": caught,
        "estimators": rows,
    }


# -- driver ------------------------------------------------------------------


def machine():
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    import dpcov

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_gib": ram_bytes() / 2**30,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "dpcov": dpcov.__version__,
        "git_commit": commit,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "blas": [
            {k: v for k, v in lib.items() if k != "filepath"}
            for lib in threadpool_info()
        ],
        "chunk_bytes": chunk_bytes(),
    }


def sci(n):
    mantissa, exponent = f"{n:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if n >= 10_000 else str(n)


def fmt(x):
    return f"{x:.3g}"


def blas_summary(meta):
    blas = [lib for lib in meta["blas"] if lib.get("user_api") == "blas"]
    return (
        ", ".join(
            f"{lib.get('prefix')} {lib.get('version')} ({lib.get('num_threads')} "
            f"threads, {lib.get('architecture')})"
            for lib in blas
        )
        or "BLAS unknown"
    )


def render_rst(result):
    meta, args, cells = result["meta"], result["args"], result["cells"]
    c1, c2 = args["bound_c1"], args["bound_c2"]
    chunk_mib = meta["chunk_bytes"] / MiB
    header = [
        "n",
        "d",
        "estimator",
        "time s",
        "x sklearn",
        "peak MiB above input",
        "bound MiB",
        "RSS MiB",
    ]
    rows = []
    for cell in cells:
        n, d = sci(cell["n"]), str(cell["d"])
        if "error" in cell:
            rows.append([n, d, cell["error"]] + [""] * 5)
            continue
        for name, row in cell["estimators"].items():
            skipped = row.get("skipped")
            if "median_s" not in row:
                time_s, ratio = skipped or "", ""
            else:
                time_s = fmt(row["median_s"])
                ratio = f"{row['ratio']:.2f}" if "ratio" in row else "n/a"
                if row.get("skipped_fits"):
                    time_s += f" ({len(row['times_s'])} fits, --max-seconds)"
            peak = row.get("tracemalloc_peak_mib")
            if peak is None:
                peak_s = ""
            else:
                peak_s = fmt(peak)
                if not name.startswith("sklearn") and peak > cell["bound_mib"]:
                    peak_s = f"**{peak_s}**"
            rss = row.get("rss_peak_mib_max")
            rss_s = "" if rss is None else f"{max(rss, 0.0):.0f}"
            bound = fmt(cell["bound_mib"])
            rows.append([n, d, name, time_s, ratio, peak_s, bound, rss_s])
    title = "Fit time and working memory vs scikit-learn (epsilon = 1, centred)"
    lines = simple_table(title, header, rows)

    rows = []
    for cell in cells:
        if "error" in cell:
            continue
        above = cell["cell_peak_rss_above_input_mib"]
        rows.append(
            [
                sci(cell["n"]),
                str(cell["d"]),
                f"{cell['input_mib']:.0f}",
                "memmap" if cell["input"] == "memmap" else "RAM",
                "" if above is None else f"{above:.0f}",
                f"{cell['wall_s']:.0f}",
            ]
        )
    header = ["n", "d", "input MiB", "X in", "peak RSS above input MiB", "wall s"]
    lines += [""] + simple_table("Per cell: process peak RSS", header, rows)

    skipped_slow = sorted(
        {
            cell["d"]
            for cell in cells
            for row in cell.get("estimators", {}).values()
            if "n-independent" in row.get("skipped", "")
        }
    )
    mmap_cells = [
        f"n = {sci(c['n'])}, d = {c['d']}" for c in cells if c.get("input") == "memmap"
    ]
    notes = [
        f"{meta['cpu']}, {meta['cpu_count']} CPUs, {meta['ram_gib']:.0f} GiB RAM; "
        f"NumPy {meta['numpy']}, scikit-learn {meta['sklearn']}, "
        f"{blas_summary(meta)}; OPENBLAS_NUM_THREADS "
        f"{meta['OPENBLAS_NUM_THREADS'] or 'unset'} (the same threads for both "
        "sides).",
        f"time s: median of {args['repeats']} interleaved rounds, ``fit`` only. "
        "x sklearn: ratio to ``EmpiricalCovariance()`` for the covariance "
        "estimators, to ``PCA(n_components=10)`` (default solver) for PCA.",
        "Estimators at their defaults (``epsilon=1``, centred, "
        "``data_norm=None``: private radius, 1/8 of the budget); (given): "
        f"``data_norm={DATA_NORM:g}``, a public bound that holds for the "
        "generated rows.",
        "peak MiB above input: ``tracemalloc`` peak during one fit (NumPy's "
        f"buffers). bound MiB: ``(8 d^2 x {c1:g} + {c2:g} x {chunk_mib:g} MiB)``, "
        f"i.e. ``O(d^2 + chunk d)`` with {c1:g} d x d float64 matrices and "
        f"{c2:g} chunks of rows; dpcov's peaks above it are in bold. RSS MiB: "
        "peak RSS during a timed fit minus the RSS before it (the largest over "
        "the rounds).",
    ]
    if mmap_cells:
        notes.append(
            f"{'; '.join(mmap_cells)}: the input plus scikit-learn's centred copy "
            f"exceeds {args['ram_fraction']:.0%} of RAM, so scikit-learn is not "
            f"run ({NA_SKLEARN}) and dpcov fits the memmapped ``.npy`` file "
            "(``np.load(mmap_mode='r')``): it reads ``X`` in chunks and never "
            "copies it. Its time includes reading the file, its RSS the file "
            "pages read."
        )
    if skipped_slow:
        notes.append(
            f"d = {', '.join(map(str, skipped_slow))}: NuclearLaplaceCovariance "
            "and EigenSamplingCovariance skipped: their noise samplers (Gibbs "
            "chain; d - 1 Bingham draws) take about 140 s and 47 s per fit at "
            "d = 500 on this machine, whatever n is."
        )
    if args.get("quick"):
        notes.append("Smoke run (``--quick``), not the full grid.")
    lines += ["", "Notes:", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def simple_table(title, header, rows):
    """An rst simple table inside a ``table`` directive (for its title)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    rule = "   " + "  ".join("=" * w for w in widths)

    def line(cells):
        return (
            "   "
            + "  ".join(
                f"{c:{w}s}" for c, w in zip(cells, widths, strict=True)
            ).rstrip()
        )

    body = [line(r) for r in rows]
    return [f".. table:: {title}", "", rule, line(header), rule] + body + [rule]


def print_table(cell):
    if "error" in cell:
        print(f"n={cell['n']} d={cell['d']}: {cell['error']}")
        return
    above = cell["cell_peak_rss_above_input_mib"]
    print(
        f"n={cell['n']} d={cell['d']}: input {cell['input_mib']:.0f} MiB "
        f"({cell['input']}), cell peak RSS above input "
        f"{'?' if above is None else f'{above:.0f}'} MiB, "
        f"bound {cell['bound_mib']:.1f} MiB, {cell['wall_s']:.0f} s"
    )
    print(f"{'estimator':40s}{'median s':>10s}{'x sklearn':>11s}{'peak MiB':>10s}")
    for name, row in cell["estimators"].items():
        if "median_s" not in row:
            print(f"{name:40s}  {row.get('skipped', '')}")
            continue
        ratio = f"{row['ratio']:.2f}" if "ratio" in row else "n/a"
        peak = row.get("tracemalloc_peak_mib")
        peak = "" if peak is None else f"{peak:.1f}"
        print(f"{name:40s}{row['median_s']:10.3f}{ratio:>11s}{peak:>10s}")


CELL_OPTIONS = [
    "repeats",
    "max_seconds",
    "slow_max_d",
    "seed",
    "ram_fraction",
    "bound_c1",
    "bound_c2",
]


def run_grid(args):
    if args.quick:
        ns, dims = args.n or QUICK_NS, args.d or QUICK_DIMS
    else:
        ns, dims = args.n or NS, args.d or DIMS
    forwarded = []
    for option in CELL_OPTIONS:
        forwarded += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    result = {
        "args": vars(args),
        "meta": {**machine(), "command": " ".join(sys.argv)},
        "cells": [],
    }
    started = time.perf_counter()
    script = str(Path(__file__).resolve())
    for n in ns:
        for d in dims:
            with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
                path = str(Path(tmp) / "X.npy")
                print(f"n={n} d={d}: writing {8 * n * d / MiB:.0f} MiB", flush=True)
                start = time.perf_counter()
                made = subprocess.run(
                    [sys.executable, script, "--make-data", str(n), str(d), path]
                    + ["--seed", str(args.seed)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                generated = time.perf_counter() - start
                if made.returncode != 0:
                    cell = {"n": n, "d": d, "error": "data generation failed"}
                    cell["stderr"] = made.stderr[-2000:]
                else:
                    cell = _run_cell_process(script, n, d, path, forwarded)
                    cell.update(json.loads(made.stdout.strip().splitlines()[-1]))
                    cell["generation_s"] = generated
            result["cells"].append(cell)
            print_table(cell)
            result["meta"]["wall_s"] = time.perf_counter() - started
            write(result, args.out)
    return result


def _run_cell_process(script, n, d, path, forwarded):
    command = [sys.executable, script, "--cell", str(n), str(d), "--data", path]
    proc = subprocess.run(
        command + forwarded, stdout=subprocess.PIPE, text=True, check=False
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"n": n, "d": d, "error": f"cell process failed (exit {proc.returncode})"}


def write(result, out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_name(out.name + ".json"), "w") as f:
        json.dump(result, f, indent=2)
    with open(out.with_name(out.name + ".rst"), "w") as f:
        f.write(render_rst(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", help=f"default {NS}")
    parser.add_argument("--d", type=int, nargs="+", help=f"default {DIMS}")
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--max-seconds", type=float, default=3600.0, help="guard per cell"
    )
    parser.add_argument(
        "--slow-max-d",
        type=int,
        default=200,
        help="largest d for NuclearLaplace- and EigenSamplingCovariance",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ram-fraction",
        type=float,
        default=0.8,
        help="memmap the input (and skip sklearn) when 2x input exceeds this",
    )
    parser.add_argument("--bound-c1", type=float, default=8.0, help="d x d matrices")
    parser.add_argument("--bound-c2", type=float, default=4.0, help="chunks")
    parser.add_argument("--tmpdir", help="where the .npy inputs are written")
    parser.add_argument(
        "--out",
        default=str(ROOT / "benchmarks" / "results" / "scale"),
        help="prefix of the .json and .rst outputs",
    )
    parser.add_argument("--from-json", help="re-render the rst of this json")
    # Internal modes of the subprocesses.
    parser.add_argument("--make-data", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--cell", type=int, nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.make_data:
        n, d, path = args.make_data
        print(json.dumps(make_data(path, int(n), int(d), args.seed)))
    elif args.cell:
        n, d = args.cell
        print("RESULT " + json.dumps(run_cell(n, d, args.data, args)), flush=True)
    elif args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)
        with open(Path(args.from_json).with_suffix(".rst"), "w") as f:
            f.write(render_rst(result))
    else:
        run_grid(args)


if __name__ == "__main__":
    main()
