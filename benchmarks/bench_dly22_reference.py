"""dpcov's AdaptiveCov (and its parts) against the authors' code, cell by cell.

The authors of Dong, Liang and Yi (2022) published their code
(https://github.com/hkustDB/PrivateCovariance, PyTorch). This script runs it
and dpcov on the same datasets: the authors' generator (``gen_synthetic_data_fix``
in their ``functions.py``: Gaussian rows times a Uniform(0, 1) matrix, centred,
norms ``2**(k - N)`` in Zipf-sized blocks, ``s = 3``), rows of norm at most 1,
the non-centred second moment, zCDP budget ``rho``. The reference's releases
clamp eigenvalues to ``[0, 1]`` (its ``b_fleig=True``), so dpcov runs with
``projection="clamp"``, the same public post-processing.

Their two per-row Python loops (``get_bincounts`` and ``convert_symm_mat``) are
replaced by vectorised versions that return bit-identical arrays
(``--check`` verifies it on every cell's first repeat); nothing else of their
code is changed. Each repeat draws a new dataset (seed from the repeat) and
seeds NumPy and PyTorch for the reference and dpcov's ``random_state`` for
dpcov, independently.

    python benchmarks/bench_dly22_reference.py --reference PATH/TO/PrivateCovariance \
        --out benchmarks/results

writes ``dly22_reference.json`` (per-repeat errors, so later runs of dpcov
alone pair with them: ``--reuse FILE``, with ``--methods`` naming the
estimators to rerun; the others keep their earlier errors) and
``dly22_reference.rst`` (the table: dpcov's mean error over the reference's,
with the delta method's standard error on paired repeats).
"""

import argparse
import importlib
import itertools
import json
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance

GRID = dict(n=[1_000, 5_000, 20_000], d=[10, 100, 400], N=[1, 8], rho=[0.01, 0.1, 1.0])
#: Paired repeats per dimension (the standard error of a ratio falls as
#: 1/sqrt(repeats); the spread of the errors falls with d).
REPEATS = {10: 300, 100: 100, 400: 30}
METHODS = ["AdaptiveCov", "GaussCov", "SeparateCov"]
DPCOV = {
    "AdaptiveCov": AdaptiveCovariance,
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
}


def _load_reference(path):
    """Import the authors' modules from a checkout and vectorise two helpers."""
    import torch

    sys.path.insert(0, str(Path(path).resolve()))
    functions = importlib.import_module("functions")
    algos = importlib.import_module("adaptive.algos")
    utils = importlib.import_module("adaptive.utils")
    original = SimpleNamespace(
        bincounts=utils.get_bincounts, symmetric=utils.convert_symm_mat
    )

    def get_bincounts(x_norm, n, t, k1=0):
        # Their loop: l1 = -floor(log2 x), plus one unless x > 2**-l1, at
        # least 1; counted when l1 < t. Same float operations, all rows at once.
        x = x_norm.reshape(-1).numpy()[:n]
        l1 = -np.floor(np.log2(x)).astype(np.int64)
        l1 = l1 + ~(x > 2.0 ** (-l1.astype(np.float64)))
        l1 = np.maximum(l1, 1)
        return np.bincount(l1[l1 < t], minlength=t)[:t].astype(np.float64)

    def convert_symm_mat(ZZ, d):
        # Their loop fills the upper triangle row by row, then mirrors it.
        rows, cols = torch.triu_indices(d, d)
        S = torch.empty([d, d])
        S[rows, cols] = ZZ[0]
        S[cols, rows] = ZZ[0]
        return S

    utils.convert_symm_mat = convert_symm_mat
    algos.get_bincounts = get_bincounts
    return SimpleNamespace(
        torch=torch,
        data=functions.gen_synthetic_data_fix,
        algos=algos,
        utils=utils,
        original=original,
        fast=SimpleNamespace(bincounts=get_bincounts, symmetric=convert_symm_mat),
    )


def _seeds(cell, repeat):
    """Seeds of the data, the reference's noise and dpcov's noise."""
    base = np.random.SeedSequence([cell["n"], cell["d"], cell["N"], repeat])
    return [int(s) for s in base.generate_state(3) % (2**31 - 1)]


def _data(ref, cell, seed):
    X = ref.data(cell["d"], cell["n"], 3, cell["N"], seed=seed)
    return X


def _reference_errors(ref, X, target, cell, seed):
    torch = ref.torch
    n, d, rho = cell["n"], cell["d"], cell["rho"]
    args = SimpleNamespace(total_budget=rho, n=n, d=d, beta=0.1)
    out = {}
    for name, call in [
        ("AdaptiveCov", lambda: ref.algos.AdaptiveCov(X, args)),
        ("GaussCov", lambda: ref.algos.GaussCov(X, n, d, rho, b_fleig=True)),
        ("SeparateCov", lambda: ref.algos.SeparateCov(X, n, d, rho, b_fleig=True)),
    ]:
        torch.manual_seed(seed)
        # The authors' code draws from NumPy's global generator.
        np.random.seed(seed % (2**32))  # noqa: NPY002
        release = call().double().numpy()
        out[name] = float(np.linalg.norm(release - target))
    return out


def _dpcov_errors(X, target, cell, seed, methods):
    params = dict(
        rho=cell["rho"],
        data_norm=1.0,
        assume_centered=True,
        projection="clamp",
        eigenvalue_floor=0.0,
        # The mechanisms as the authors' code runs them: no shrinkage toward
        # zero (the code has none; bench_shrinkage.py --paper measures it).
        shrinkage=None,
        random_state=seed,
    )
    return {
        m: float(np.linalg.norm(DPCOV[m](**params).fit(X).covariance_ - target))
        for m in methods
    }


def _check_helpers(ref, X, cell):
    """The vectorised helpers return exactly what the authors' loops return."""
    torch = ref.torch
    n, d = cell["n"], cell["d"]
    x_norm = torch.linalg.norm(X, dim=1, keepdim=True)
    for t in (8, 81):
        a = ref.original.bincounts(x_norm, n, t)
        b = ref.fast.bincounts(x_norm, n, t)
        assert np.array_equal(a, b), "get_bincounts differs"
    Z = torch.normal(0, 1, size=(1, d * (d + 1) // 2))
    if d <= 100:
        assert torch.equal(ref.original.symmetric(Z, d), ref.fast.symmetric(Z, d))


def ratio(a, b):
    """Mean of ``a`` over mean of ``b`` and its delta-method s.e. (paired)."""
    a, b = np.asarray(a), np.asarray(b)
    r = a.mean() / b.mean()
    return float(r), float(np.std(a - r * b, ddof=1) / (np.sqrt(a.size) * b.mean()))


def run_cell(ref, cell, repeats, methods, reference=None, check=False):
    runs = {"reference": {m: [] for m in METHODS}, "dpcov": {m: [] for m in methods}}
    for r in range(repeats):
        data_seed, ref_seed, our_seed = _seeds(cell, r)
        Xt = _data(ref, cell, data_seed)
        X = Xt.double().numpy()
        target = X.T @ X / cell["n"]
        if check and r == 0:
            _check_helpers(ref, Xt, cell)
        if reference is None:
            for m, e in _reference_errors(ref, Xt, target, cell, ref_seed).items():
                runs["reference"][m].append(e)
        for m, e in _dpcov_errors(X, target, cell, our_seed, methods).items():
            runs["dpcov"][m].append(e)
    if reference is not None:
        runs["reference"] = reference
    runs["ratio"] = {
        m: ratio(runs["dpcov"][m], runs["reference"][m][:repeats]) for m in methods
    }
    return runs


def _key(cell):
    return f"n={cell['n']} d={cell['d']} N={cell['N']} rho={cell['rho']:g}"


def _table(results, methods):
    head = f"{'n':>6s} {'d':>4s} {'N':>2s} {'rho':>5s} {'reps':>5s}"
    head += "".join(f"  {m + ' ref':>16s} {'ratio':>12s}" for m in methods)
    lines = [head]
    for res in results.values():
        cell = res["cell"]
        line = (
            f"{cell['n']:6d} {cell['d']:4d} {cell['N']:2d} {cell['rho']:5g} "
            f"{len(res['dpcov'][methods[0]]):5d}"
        )
        for m in methods:
            r, se = res["ratio"][m]
            mark = "*" if r - 2 * se > 1 else " "
            ref_mean = np.mean(res["reference"][m])
            line += f"  {ref_mean:16.4e} {r:6.3f}+-{se:.3f}{mark}"
        lines.append(line)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference", required=True, help="checkout of the authors' code"
    )
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument(
        "--reuse", help="JSON of an earlier run: reuse its reference errors"
    )
    parser.add_argument("--methods", default="AdaptiveCov,GaussCov,SeparateCov")
    parser.add_argument("--scale", type=float, default=1.0, help="repeats multiplier")
    parser.add_argument("--cells", default=None, help="only cells whose key has this")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    # The noise warnings of small-budget cells are expected here.
    warnings.simplefilter("ignore")
    methods = args.methods.split(",")
    ref = _load_reference(args.reference)
    ref.torch.set_num_threads(1)
    earlier = json.loads(Path(args.reuse).read_text()) if args.reuse else {}
    results = {}
    start = time.time()
    for n, d, N, rho in itertools.product(*GRID.values()):
        cell = dict(n=n, d=d, N=N, rho=rho)
        key = _key(cell)
        if args.cells and not all(p in key for p in args.cells.split(";")):
            continue
        repeats = max(2, int(REPEATS[d] * args.scale))
        reference = earlier.get(key, {}).get("reference")
        if reference is not None and len(reference[METHODS[0]]) < repeats:
            reference = None
        res = run_cell(ref, cell, repeats, methods, reference, check=args.check)
        res["cell"] = cell
        # dpcov's errors of the methods not rerun come from the earlier run.
        for m in METHODS:
            if m not in methods and m in earlier.get(key, {}).get("dpcov", {}):
                res["dpcov"][m] = earlier[key]["dpcov"][m]
                res["ratio"][m] = earlier[key]["ratio"][m]
        results[key] = res
        ratios = " ".join(f"{m}={res['ratio'][m][0]:.3f}" for m in methods)
        print(f"[{time.time() - start:6.0f}s] {key}: {ratios}", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    shown = [m for m in METHODS if all(m in r["ratio"] for r in results.values())]
    text = _table(results, shown)
    print("\n".join(text))
    (out / "dly22_reference.json").write_text(json.dumps(results))
    (out / "dly22_reference.rst").write_text(
        "::\n\n" + "\n".join("    " + t for t in text) + "\n"
    )


if __name__ == "__main__":
    main()
