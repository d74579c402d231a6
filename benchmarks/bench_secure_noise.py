"""The cost of hardened noise: fits with ``secure_noise=True`` against numpy's.

    python benchmarks/bench_secure_noise.py --rounds 5
    python benchmarks/bench_secure_noise.py --rounds 3 --d 100 1000 --n 20000

For each dimension ``d``, every estimator is fitted with numpy's sampler and
with the exact discrete samplers (``dpcov.config_context(secure_noise=True)``),
alternately, ``--rounds`` times on the same rows; the table gives the median
fit times and their difference, the time the hardened noise adds. The rows
(``n`` of them, unit norm, ``data_norm=1``) only enter the Gram pass, which is
the same in both: the added time depends on ``d`` (``d (d + 1) / 2`` noise
draws for a covariance release) and not on ``n``.

It also times the samplers alone: draws per second of the discrete Gaussian
and the discrete Laplace at the scales (in grid steps) of a covariance
release, ``2**20`` and ``2**30``.

``--reference PATH`` also times the reference sampler of Canonne, Kamath and
Steinke (``discretegauss.py`` of github.com/IBM/discrete-gaussian-differential-
privacy, one draw at a time in Python fractions) at the same scales.

Results go to ``benchmarks/results/secure_noise.json`` and, as a table, to
``docs/user_guide/_bench_secure_noise.rst``.
"""

import argparse
import importlib.util
import json
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from _machine import cpu_model
from threadpoolctl import threadpool_limits

import dpcov
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.decomposition import PCA
from dpcov.distributions import MultivariateGaussian, ProductBernoulli
from dpcov.mechanisms._discrete import discrete_gaussian, discrete_laplace

ROOT = Path(__file__).resolve().parent
GIVEN = dict(data_norm=1.0, assume_centered=True, epsilon=1.0)
ESTIMATORS = {
    "GaussianCovariance": lambda: GaussianCovariance(**GIVEN),
    "GaussianCovariance (pure)": lambda: GaussianCovariance(**GIVEN, delta=0.0),
    "SeparateCovariance": lambda: SeparateCovariance(**GIVEN),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(**GIVEN),
    "PCA (defaults, 10 components)": lambda: PCA(n_components=10, epsilon=1.0),
    "MultivariateGaussian": lambda: MultivariateGaussian(epsilon=1.0),
    "ProductBernoulli": lambda: ProductBernoulli(epsilon=1.0, binarize=0.0),
}


def _rows(n, d, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _time_fit(make, X, secure):
    estimator = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dpcov.config_context(secure_noise=secure):
            start = time.perf_counter()
            estimator.fit(X)
            elapsed = time.perf_counter() - start
    expected = "discrete" if secure else "numpy"
    assert estimator.noise_sampler_ == expected, estimator.noise_sampler_
    return elapsed


def run_fits(n, dims, rounds, names):
    results = []
    for d in dims:
        X = _rows(n, d)
        for name in names:
            make = ESTIMATORS[name]
            if name == "MultivariateGaussian" and d > 100:
                continue  # its public plan simulation dominates at large d
            _time_fit(make, X[:2000], False)  # warm up imports and caches
            plain, secure = [], []
            for _ in range(rounds):
                plain.append(_time_fit(make, X, False))
                secure.append(_time_fit(make, X, True))
            row = {
                "estimator": name,
                "n": n,
                "d": d,
                "numpy_s": statistics.median(plain),
                "discrete_s": statistics.median(secure),
                "numpy_all": plain,
                "discrete_all": secure,
            }
            row["added_s"] = row["discrete_s"] - row["numpy_s"]
            results.append(row)
            print(
                f"d={d:5d} {name:32s} numpy {row['numpy_s']:7.3f} s   "
                f"discrete {row['discrete_s']:7.3f} s   added {row['added_s']:+7.3f} s",
                flush=True,
            )
    return results


def run_samplers(size):
    out = []
    for law, sampler in (
        ("gaussian", discrete_gaussian),
        ("laplace", discrete_laplace),
    ):
        for scale in (2**20, 2**30):
            start = time.perf_counter()
            sampler(scale, size)
            elapsed = time.perf_counter() - start
            out.append(
                {
                    "law": law,
                    "scale": scale,
                    "draws": size,
                    "seconds": elapsed,
                    "draws_per_s": size / elapsed,
                }
            )
            print(
                f"discrete {law:8s} t=2**{int(np.log2(scale))}: "
                f"{size / elapsed:,.0f} draws/s",
                flush=True,
            )
    return out


def run_reference(path, size):
    spec = importlib.util.spec_from_file_location("discretegauss", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import random

    rng = random.SystemRandom()
    out = []
    for law, scale in (("gaussian", 2**20), ("laplace", 2**20)):
        start = time.perf_counter()
        for _ in range(size):
            if law == "gaussian":
                module.sample_dgauss(scale * scale, rng)
            else:
                module.sample_dlaplace(scale, rng)
        elapsed = time.perf_counter() - start
        out.append(
            {
                "law": f"{law} (reference, one draw at a time)",
                "scale": scale,
                "draws": size,
                "seconds": elapsed,
                "draws_per_s": size / elapsed,
            }
        )
        print(f"reference {law}: {size / elapsed:,.0f} draws/s", flush=True)
    return out


def _table(fits, samplers, machine):
    lines = [
        ".. list-table:: Fit time with numpy's sampler and with the exact discrete "
        f"samplers (median of the rounds; {machine})",
        "   :header-rows: 1",
        "",
        "   * - estimator",
        "     - d",
        "     - numpy (s)",
        "     - discrete (s)",
        "     - added (s)",
    ]
    for row in fits:
        lines += [
            f"   * - {row['estimator']}",
            f"     - {row['d']}",
            f"     - {row['numpy_s']:.3f}",
            f"     - {row['discrete_s']:.3f}",
            f"     - {row['added_s']:+.3f}",
        ]
    lines += [
        "",
        ".. list-table:: The samplers alone: dpcov's in one vectorised call of "
        "500,500 draws, the reference one draw at a time (5,000 draws)",
        "   :header-rows: 1",
        "",
        "   * - law",
        "     - scale (grid steps)",
        "     - draws per second",
    ]
    for row in samplers:
        lines += [
            f"   * - discrete {row['law']}",
            f"     - 2**{int(np.log2(row['scale']))}",
            f"     - {row['draws_per_s']:,.0f}",
        ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--draws", type=int, default=500_500)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--only", nargs="+", default=list(ESTIMATORS))
    parser.add_argument("--reference", metavar="PATH", help="discretegauss.py")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    machine = (
        f"{cpu_model()}, {os.cpu_count()} cores, {args.blas_threads} BLAS thread(s)"
    )
    print(machine, "| numpy", np.__version__, "| python", platform.python_version())
    with threadpool_limits(args.blas_threads):
        fits = run_fits(args.n, args.d, args.rounds, args.only)
        samplers = run_samplers(args.draws)
        if args.reference:
            samplers += run_reference(args.reference, 5000)
    if args.no_write:
        return
    payload = {
        "machine": machine,
        "args": vars(args),
        "fits": fits,
        "samplers": samplers,
    }
    (ROOT / "results" / "secure_noise.json").write_text(json.dumps(payload, indent=1))
    rst = ROOT.parent / "docs" / "user_guide" / "_bench_secure_noise.rst"
    rst.write_text(_table(fits, samplers, machine))


if __name__ == "__main__":
    main()
