"""Fit time and peak memory of the private covariance estimators vs scikit-learn.

Each measurement runs in a fresh subprocess so that peak memory (ru_maxrss) is
that fit's alone; the input is generated inside the subprocess and its size is
reported, so "peak - input" is the estimator's working memory.

    python benchmarks/bench_fit_time.py --n 1000000 --d 100 --repeats 3

The target of the foundation issue: at n=1e6, d=100, assume_centered=True with
a given data_norm, at most 1.5x the time of
sklearn.covariance.EmpiricalCovariance(assume_centered=True), computing X^T X
once, in chunks, without copying X.
"""

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
n, d, name, repeats, dtype = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d), dtype=np.float32 if dtype == "float32" else np.float64)
X /= np.sqrt(d) * 3          # most norms below 1: clipping touches few rows
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from sklearn.covariance import EmpiricalCovariance
from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
make = {
    "sklearn": lambda: EmpiricalCovariance(assume_centered=True),
    "sklearn (centred)": lambda: EmpiricalCovariance(),
    "GaussianCovariance": lambda: GaussianCovariance(data_norm=1.0, assume_centered=True, random_state=0),
    "GaussianCovariance (centred)": lambda: GaussianCovariance(data_norm=1.0, random_state=0),
    "GaussianCovariance (private radius)": lambda: GaussianCovariance(assume_centered=True, random_state=0),
    "SeparateCovariance": lambda: SeparateCovariance(data_norm=1.0, assume_centered=True, random_state=0),
    "AdaptiveCovariance": lambda: AdaptiveCovariance(data_norm=1.0, assume_centered=True, random_state=0),
}[name]
times = []
for _ in range(repeats):
    t = time.perf_counter(); make().fit(X); times.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"time": min(times), "extra_mib": (peak - base) / 1024, "input_mib": X.nbytes / 2**20}))
"""

NAMES = [
    "sklearn",
    "GaussianCovariance",
    "SeparateCovariance",
    "AdaptiveCovariance",
    "GaussianCovariance (private radius)",
    "sklearn (centred)",
    "GaussianCovariance (centred)",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = {}
    print(f"n={args.n} d={args.d} dtype={args.dtype}, best of {args.repeats}")
    print(f"{'estimator':38s}{'time (s)':>10s}{'x sklearn':>11s}{'extra MiB':>11s}")
    for name in NAMES:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.n), str(args.d), name,
             str(args.repeats), args.dtype],
            check=True, capture_output=True, text=True,
        )
        results[name] = json.loads(out.stdout)
        ref = results["sklearn (centred)" if "centred" in name else "sklearn"]["time"]
        r = results[name]
        print(f"{name:38s}{r['time']:10.3f}{r['time'] / ref:11.2f}{r['extra_mib']:11.1f}")
    print(f"input: {results['sklearn']['input_mib']:.0f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
