"""Fit time of the private covariance estimators and PCA against scikit-learn.

    python benchmarks/bench_fit_time.py --n 1000000 --d 100 --rounds 15
    python benchmarks/bench_fit_time.py --n 1000000 --d 100 --rounds 15 --blas-threads 1
    python benchmarks/bench_fit_time.py --n 1000000 --d 500 --rounds 5 --only pca

Time: every estimator is fitted once per round, in a shuffled order, on the
same input, for ``--rounds`` rounds, beside the floor of every fit, one
``X.T @ X`` (NumPy's ``syrk``); the table reports the median, the minimum and
the maximum, the ratio of the medians to scikit-learn's estimator for the
same job: ``EmpiricalCovariance(assume_centered=True)`` for the covariance
estimators (all given ``data_norm=1`` and ``assume_centered=True``),
``PCA(n_components=10)`` for dpcov's PCA with its defaults
(AdaptiveCovariance, a private radius and a private mean), the ratio to the
floor, and the reads of ``X`` per fit (dpcov's passes over the rows, counted
where the estimators call them; scikit-learn's validation reads ``X`` once
more to check it for NaN and infinity, dpcov checks it in its first pass).
Interleaving makes the ratios robust to the machine's load varying over time.

The rows have unit norm: every row sits on the clipping radius, the worst
case for the clip (the time does not depend on the data beyond ``n`` and
``d``: every row is scaled, clipped or not).

Memory: the peak of the memory allocated during one fit, traced by
``tracemalloc`` (NumPy reports its buffers to it): the working memory on top
of the input.

``--passes`` also times each pass over the rows of one fit of each dpcov
estimator (the chunked reductions of ``dpcov.utils._gram``), in the order
they run.

The machine, the library versions and the BLAS with its threads are printed
first; ``--blas-threads`` caps the BLAS threads of both libraries (dpcov's
passes use as many threads as the BLAS would).
"""

import argparse
import json
import os
import platform
import time
import tracemalloc
import warnings
from contextlib import nullcontext

import numpy as np
import scipy
import sklearn
from _machine import cpu_model
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SklearnPCA
from threadpoolctl import threadpool_info, threadpool_limits

import dpcov
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA

GIVEN = dict(data_norm=1.0, assume_centered=True, random_state=0)
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
REFERENCE = {
    **{name: "EmpiricalCovariance (sklearn)" for name in COVARIANCE},
    **{name: "PCA (sklearn)" for name in DECOMPOSITION},
}
FLOOR = "X.T @ X (numpy)"


class _Gram:
    # The floor as an estimator of the table: one X.T @ X.
    def fit(self, X):
        X.T @ X
        return self


def machine():
    blas = [
        f"{lib['internal_api']} {lib['version']} ({lib['num_threads']} threads, "
        f"{lib.get('architecture')})"
        for lib in threadpool_info()
        if lib["user_api"] == "blas"
    ]
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "dpcov": dpcov.__version__,
        "blas": sorted(set(blas)),
    }


def peak_mib(make, X):
    tracemalloc.start()
    make().fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def time_passes(make, X):
    # Each row_statistics call of one fit, timed where the estimators call it
    # (a call that asks for nothing, and checks nothing, reads no row).
    from dpcov.covariance import _adaptive, _base

    log = []
    original = _base.row_statistics
    steps = ("gram", "total", "square_norm", "norm_sums", "final_clip", "bins")

    def timed(X, **kwargs):
        start = time.perf_counter()
        out = original(X, **kwargs)
        asked = [key for key in steps if kwargs.get(key) is not None]
        asked = [key for key in asked if kwargs[key] is not False]
        if not asked and kwargs.get("check_finite"):
            asked = ["check_finite"]
        if asked:
            log.append((time.perf_counter() - start, "+".join(asked)))
        return out

    _base.row_statistics = _adaptive.row_statistics = timed
    try:
        start = time.perf_counter()
        make().fit(X)
        total = time.perf_counter() - start
    finally:
        _base.row_statistics = _adaptive.row_statistics = original
    return total, log


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", choices=["covariance", "pca"])
    parser.add_argument("--blas-threads", type=int)
    parser.add_argument("--passes", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # noise-dominated warnings of small budgets

    estimators = {FLOOR: _Gram}
    if args.only != "pca":
        estimators.update(COVARIANCE)
    if args.only != "covariance":
        estimators.update(DECOMPOSITION)
    limits = (
        nullcontext()
        if args.blas_threads is None
        else threadpool_limits(limits=args.blas_threads, user_api="blas")
    )
    with limits:
        info = machine()
        rng = np.random.default_rng(0)
        X = rng.standard_normal((args.n, args.d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        print(
            f"{info['cpu']}, {info['cores']} cores; Python {info['python']}, NumPy "
            f"{info['numpy']}, SciPy {info['scipy']}, scikit-learn {info['sklearn']}"
        )
        print("BLAS: " + "; ".join(info["blas"]))
        print(
            f"n={args.n} d={args.d}, unit-norm rows, {X.nbytes / 2**20:.0f} MiB, "
            f"{args.rounds} interleaved rounds"
        )
        names = list(estimators)
        times = {name: [] for name in names}
        for name in names:  # warm-up (imports, first-call overheads)
            estimators[name]().fit(X[:20_000])
        for _ in range(args.rounds):
            for name in rng.permutation(names):
                start = time.perf_counter()
                estimators[name]().fit(X)
                times[name].append(time.perf_counter() - start)
        memory = {name: peak_mib(estimators[name], X) for name in names}
        # The passes of one fit of each dpcov estimator: their number always
        # (the reads), their times with --passes.
        passes = {
            name: time_passes(estimators[name], X)
            for name in names
            if "sklearn" not in name and name != FLOOR
        }

    header = f"{'estimator':32s}{'median s':>10s}{'min s':>8s}{'max s':>8s}"
    print(header + f"{'x sklearn':>11s}{'x X.T@X':>9s}{'reads':>7s}{'peak MiB':>10s}")
    results = {}
    floor = float(np.median(times[FLOOR]))
    for name in names:
        median = float(np.median(times[name]))
        ratio = median / float(np.median(times[REFERENCE.get(name, FLOOR)]))
        reads = len(passes[name][1]) if name in passes else None
        results[name] = {
            "median_s": median,
            "min_s": float(np.min(times[name])),
            "max_s": float(np.max(times[name])),
            "ratio": ratio,
            "ratio_to_gram": median / floor,
            "reads": reads,
            "peak_mib": memory[name],
        }
        shown = "" if reads is None else str(reads)
        print(
            f"{name:32s}{median:10.3f}{np.min(times[name]):8.3f}"
            f"{np.max(times[name]):8.3f}{ratio:11.2f}{median / floor:9.2f}"
            f"{shown:>7s}{memory[name]:10.1f}"
        )
    if not args.passes:
        passes = {}
    for name, (total, log) in passes.items():
        steps = ", ".join(f"{what} {seconds:.3f}" for seconds, what in log)
        rest = total - sum(seconds for seconds, _ in log)
        print(f"passes of {name} ({total:.3f} s): {steps}; the rest {rest:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "args": vars(args),
                    "machine": info,
                    "results": results,
                    "passes": {
                        name: {"total_s": total, "passes": log}
                        for name, (total, log) in passes.items()
                    },
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
