"""Private PCA and covariance on PyTorch tensors, on a GPU where there is one.

    export SCIPY_ARRAY_API=1
    python benchmarks/bench_gpu.py --n 10000000 --d 1024 --dtype float32
    python benchmarks/bench_gpu.py --n 4000000 --d 1024 --dtype float64
    python benchmarks/bench_gpu.py --device cpu --n 1000000 --d 100 --numpy

Rows of unit norm (every row on the clipping radius, the worst case for the
clip) are drawn on the device (``--device``: ``cuda`` when PyTorch sees a
GPU, else ``cpu``). Under scikit-learn's ``array_api_dispatch`` each fit
reads the tensor where it lives (dpcov's passes run on the device, the
noise and the ``d x d`` algebra on the host), beside:

- the floor, one ``X.T @ X`` by PyTorch on the same tensor (synchronised);
- scikit-learn's array-API ``PCA(n_components=10)`` on the same tensor;
- with ``--numpy``, the same fits on a NumPy copy of the rows (CPU).

Every fit runs ``--rounds`` times in a shuffled order; the table gives the
median and the ratio to the floor. A GPU is lent to some sessions only (the
project's ``device`` tool): without one, ``--device cpu`` measures PyTorch's
CPU backend against NumPy's.
"""

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--device", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--numpy", action="store_true")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if os.environ.get("SCIPY_ARRAY_API") != "1":
        parser.error("set SCIPY_ARRAY_API=1 (scikit-learn's array API dispatch)")
    warnings.simplefilter("ignore")  # seeded fits; noise-dominated warnings

    import sklearn
    import torch
    from sklearn.decomposition import PCA as SklearnPCA

    from dpcov.covariance import GaussianCovariance
    from dpcov.decomposition import PCA

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    X = torch.randn(args.n, args.d, dtype=dtype, device=device)
    X /= torch.linalg.vector_norm(X, dim=1, keepdim=True)

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def gram(data):
        data.T @ data
        sync()

    given = dict(data_norm=1.0, random_state=0)
    jobs = {
        "X.T @ X (torch)": lambda data: gram(data),
        "PCA (sklearn, array API)": lambda data: SklearnPCA(10).fit(data),
        "PCA(data_norm=1)": lambda data: PCA(10, **given).fit(data),
        "PCA (defaults)": lambda data: PCA(10, random_state=0).fit(data),
        "GaussianCovariance(data_norm=1, centred)": lambda data: GaussianCovariance(
            assume_centered=True, **given
        ).fit(data),
        "GaussianCovariance (defaults)": lambda data: GaussianCovariance(
            random_state=0
        ).fit(data),
    }
    inputs = {"torch": X}
    if args.numpy:
        inputs["numpy"] = X.cpu().numpy()
    names = [(name, kind) for name in jobs for kind in inputs]
    names = [(n, k) for n, k in names if not (k == "numpy" and "torch" in n)]
    times = {key: [] for key in names}
    rng = np.random.default_rng(0)
    with sklearn.config_context(array_api_dispatch=True):
        for name, kind in names:  # warm-up (kernels, imports)
            jobs[name](inputs[kind][:10_000])
        sync()
        for _ in range(args.rounds):
            for index in rng.permutation(len(names)):
                name, kind = names[index]
                sync()
                start = time.perf_counter()
                jobs[name](inputs[kind])
                sync()
                times[(name, kind)].append(time.perf_counter() - start)
    if device.startswith("cuda"):
        where = torch.cuda.get_device_name(0)
    else:
        where = f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"
    print(
        f"{where}; torch {torch.__version__}, NumPy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}"
    )
    print(f"n={args.n} d={args.d} {args.dtype} on {device}, {args.rounds} rounds")
    floor = float(np.median(times[("X.T @ X (torch)", "torch")]))
    print(f"{'fit':44s}{'input':>7s}{'median s':>10s}{'x X.T@X':>9s}")
    results = []
    for name, kind in names:
        median = float(np.median(times[(name, kind)]))
        results.append(
            {"fit": name, "input": kind, "median_s": median, "ratio": median / floor}
        )
        print(f"{name:44s}{kind:>7s}{median:10.3f}{median / floor:9.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "device": where, "results": results}, f)


if __name__ == "__main__":
    main()
