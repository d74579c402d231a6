"""Fit time and peak memory of the private covariance estimators vs scikit-learn.

Each measurement runs in a fresh subprocess so that its peak memory (ru_maxrss)
is that fit's alone; the input is generated inside the subprocess before the
baseline is read, so "extra MiB" is the fit's working memory (plus imports).

    python benchmarks/bench_fit_time.py --n 1000000 --d 100 --repeats 3

The target of the foundation issue: at n=1e6, d=100, assume_centered=True with
a given data_norm, at most 1.5x the time of
sklearn.covariance.EmpiricalCovariance(assume_centered=True), computing X^T X
once, in chunks, without copying X.
"""

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np


def _estimator(name):
    from sklearn.covariance import EmpiricalCovariance

    from dpcov.covariance import (
        AdaptiveCovariance,
        GaussianCovariance,
        SeparateCovariance,
    )

    given = dict(data_norm=1.0, random_state=0)
    return {
        "sklearn": lambda: EmpiricalCovariance(assume_centered=True),
        "GaussianCovariance": lambda: GaussianCovariance(assume_centered=True, **given),
        "SeparateCovariance": lambda: SeparateCovariance(assume_centered=True, **given),
        "AdaptiveCovariance": lambda: AdaptiveCovariance(assume_centered=True, **given),
        "GaussianCovariance (private radius)": lambda: GaussianCovariance(
            assume_centered=True, random_state=0
        ),
        "sklearn (centred)": lambda: EmpiricalCovariance(),
        "GaussianCovariance (centred)": lambda: GaussianCovariance(**given),
    }[name]


NAMES = [
    "sklearn",
    "GaussianCovariance",
    "SeparateCovariance",
    "AdaptiveCovariance",
    "GaussianCovariance (private radius)",
    "sklearn (centred)",
    "GaussianCovariance (centred)",
]


def child(n, d, name, repeats, dtype):
    """Time one estimator in this process and print a JSON line."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d), dtype=np.dtype(dtype))
    X /= np.sqrt(d) * 3  # norms mostly below 1: clipping touches few rows
    make = _estimator(name)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        make().fit(X)
        times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"time": min(times), "extra_mib": (peak - base) / 1024}
    print(json.dumps({**result, "input_mib": X.nbytes / 2**20}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.n, args.d, args.child, args.repeats, args.dtype)
        return
    results = {}
    print(f"n={args.n} d={args.d} dtype={args.dtype}, best of {args.repeats}")
    print(f"{'estimator':38s}{'time (s)':>10s}{'x sklearn':>11s}{'extra MiB':>11s}")
    for name in NAMES:
        command = [
            sys.executable, __file__, "--child", name, "--n", str(args.n),
            "--d", str(args.d), "--repeats", str(args.repeats), "--dtype", args.dtype,
        ]  # fmt: skip
        out = subprocess.run(command, check=True, capture_output=True, text=True)
        results[name] = json.loads(out.stdout)
        ref = results["sklearn (centred)" if "centred" in name else "sklearn"]["time"]
        r = results[name]
        ratio = r["time"] / ref
        print(f"{name:38s}{r['time']:10.3f}{ratio:11.2f}{r['extra_mib']:11.1f}")
    print(f"input: {results['sklearn']['input_mib']:.0f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
