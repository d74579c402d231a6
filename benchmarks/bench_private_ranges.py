"""Private per-feature ranges against true public ranges, and a raw-table pipeline.

Two measurements for the user guide's "From a raw table" chapter:

1. Covariance error with ranges found privately (``bounds="private"``, a
   quarter of the budget) against the same estimator given the true public
   ranges of the table, on ``dpcov.datasets.make_mixed_units_table``
   (n = 20000, d = 12, scales 1e-2 to 1e4; true ranges the law's means
   +- 5 sd) and ``dpcov.datasets.make_sensor_table`` (n = 20000, d = 8; its
   ranges are what the sensors can report). Relative Frobenius error in
   original units against scikit-learn's ``EmpiricalCovariance``: mean and
   standard error over seeded fits (the table is redrawn with each seed),
   and the largest share of a feature's values outside its private range.
2. The raw-table pipeline: ``PrivatePipeline([SimpleImputer(),
   StandardScaler(), PCA(n_components=3)], epsilon, delta=1e-6)`` on the
   mixed-units table with 5% of cells missing and no ranges (only the
   imputer finds them, the rest flow): the share of the variance of the
   standardised complete table that its components capture, against the
   non-private top-3 subspace's.

    python benchmarks/bench_private_ranges.py --repeats 20 --out benchmarks/results
    python benchmarks/bench_private_ranges.py --out benchmarks/results \\
        --docs docs/user_guide/_bench_private_ranges.rst

writes ``private_ranges.json`` and ``private_ranges.rst`` (``--docs`` writes
the user guide's table from the JSON); ``--quick`` for a smoke run.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.covariance import EmpiricalCovariance
from sklearn.decomposition import PCA as SkPCA
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from dpcov.covariance import AdaptiveCovariance, GaussianCovariance, SeparateCovariance
from dpcov.datasets import make_mixed_units_table, make_sensor_table
from dpcov.decomposition import PCA
from dpcov.impute import SimpleImputer
from dpcov.pipeline import PrivatePipeline
from dpcov.preprocessing import StandardScaler

try:  # run as a script from the repository root or from benchmarks/
    from _machine import cpu_model
except ImportError:  # pragma: no cover
    from benchmarks._machine import cpu_model

ESTIMATORS = {
    "AdaptiveCov": AdaptiveCovariance,
    "GaussCov": GaussianCovariance,
    "SeparateCov": SeparateCovariance,
}
TABLES = {
    "mixed_units": lambda seed: make_mixed_units_table(20_000, random_state=seed),
    "sensor": lambda seed: make_sensor_table(20_000, random_state=seed),
}
EPSILONS = [1.0, 4.0]
# The mixed-units table's true public ranges in the covariance cells: the law's
# means +- PUBLIC_SD of its standard deviations (ranges a designer who knows
# the law would give; the table's own ``bounds`` are +- 6 sd). The sensor
# table keeps its own ranges, what the sensors can report.
PUBLIC_SD = 5.0


def true_ranges(table_name, table):
    if table_name != "mixed_units":
        return table.bounds
    lower, upper = table.bounds
    centre, sd = (lower + upper) / 2, np.sqrt(np.diag(table.covariance))
    return centre - PUBLIC_SD * sd, centre + PUBLIC_SD * sd


def _mean_se(values):
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size))


def covariance_cells(repeats, epsilons):
    rows = []
    for table_name, make in TABLES.items():
        for name, cls in ESTIMATORS.items():
            for epsilon in epsilons:
                private, public, wider, outside = [], [], [], []
                for seed in range(repeats):
                    table = make(seed)
                    X = table.data
                    C = EmpiricalCovariance().fit(X).covariance_
                    scale = np.linalg.norm(C)
                    cells = [
                        (private, "private"),
                        (public, true_ranges(table_name, table)),
                    ]
                    if table_name == "mixed_units":
                        # The table's own ranges too (+- 6 sd).
                        cells.append((wider, table.bounds))
                    for out, bounds in cells:
                        est = cls(
                            epsilon=epsilon,
                            delta=1e-6,
                            bounds=bounds,
                            random_state=seed,
                        ).fit(X)
                        out.append(np.linalg.norm(est.covariance_ - C) / scale)
                        if bounds == "private":
                            lower, upper = est.bounds_
                            outside.append(
                                float(np.max(np.mean((X < lower) | (X > upper), 0)))
                            )
                row = {
                    "table": table_name,
                    "estimator": name,
                    "epsilon": epsilon,
                    "private": _mean_se(private),
                    "public": _mean_se(public),
                    "ratio": float(np.mean(private) / np.mean(public)),
                    "wider": _mean_se(wider) if wider else None,
                    "ratio_wider": (
                        float(np.mean(private) / np.mean(wider)) if wider else None
                    ),
                    "outside_max": float(np.max(outside)),
                }
                rows.append(row)
                print(row, flush=True)
    return rows


def pipeline_cells(repeats, epsilons):
    rows = []
    for epsilon in epsilons:
        shares, spent = [], []
        for seed in range(repeats):
            table = make_mixed_units_table(20_000, missing_rate=0.05, random_state=seed)
            pipe = PrivatePipeline(
                [
                    ("impute", SimpleImputer()),
                    ("scale", StandardScaler()),
                    ("pca", PCA(n_components=3)),
                ],
                epsilon=epsilon,
                delta=1e-6,
                random_state=seed,
            ).fit(table.data)
            complete = make_mixed_units_table(20_000, random_state=seed).data
            Z = SkStandardScaler().fit_transform(complete)
            best = SkPCA(n_components=3).fit(Z).explained_variance_.sum()
            V = pipe.named_steps["pca"].components_
            shares.append(float(np.trace(V @ np.cov(Z, rowvar=False) @ V.T) / best))
            spent.append(pipe.epsilon_spent_)
        row = {
            "epsilon": epsilon,
            "captured": _mean_se(shares),
            "captured_min": float(np.min(shares)),
            "epsilon_spent_max": float(np.max(spent)),
        }
        rows.append(row)
        print(row, flush=True)
    return rows


def render(results):
    lines = [
        f"Machine: {results['machine']}; {results['repeats']} seeded fits per "
        "cell (the table redrawn with each seed), delta = 1e-6.",
        "",
        "Covariance: relative Frobenius error, mean +- s.e., with private ranges "
        "(a quarter of the budget) and with the table's true public ranges "
        f"(mixed units: the law's means +- {PUBLIC_SD:g} sd; sensor: what the "
        "sensors report); "
        "outside: the largest share of a feature's values outside its private "
        "range.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - table",
        "     - estimator",
        "     - epsilon",
        "     - private ranges",
        "     - true ranges",
        "     - ratio",
        "     - table's ranges (+- 6 sd)",
        "     - ratio",
        "     - outside",
    ]
    for row in results["covariance"]:
        lines += [
            f"   * - {row['table']}",
            f"     - {row['estimator']}",
            f"     - {row['epsilon']:g}",
            f"     - {row['private'][0]:.4f} +- {row['private'][1]:.4f}",
            f"     - {row['public'][0]:.4f} +- {row['public'][1]:.4f}",
            f"     - {row['ratio']:.2f}",
        ]
        if row.get("wider"):
            lines += [
                f"     - {row['wider'][0]:.4f} +- {row['wider'][1]:.4f}",
                f"     - {row['ratio_wider']:.2f}",
            ]
        else:
            lines += ["     - ", "     - "]
        lines += [
            f"     - {100 * row['outside_max']:.1f}%",
        ]
    lines += [
        "",
        "Raw-table pipeline (imputer, scaler, PCA with 3 components; 5% of cells "
        "missing, no ranges): share of the variance that the non-private top-3 "
        "subspace of the standardised table captures.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        "     - captured (mean +- s.e.)",
        "     - smallest",
        "     - largest epsilon spent",
    ]
    for row in results["pipeline"]:
        mean, se = (100 * value for value in row["captured"])
        lines += [
            f"   * - {row['epsilon']:g}",
            f"     - {mean:.2f}% +- {se:.2f}%",
            f"     - {100 * row['captured_min']:.2f}%",
            f"     - {row['epsilon_spent_max']:.6f}",
        ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--docs", type=Path, default=None)
    args = parser.parse_args()
    path = args.out / "private_ranges.json"
    if args.docs is not None:
        args.docs.write_text(render(json.loads(path.read_text())))
        return
    repeats = 2 if args.quick else args.repeats
    epsilons = EPSILONS[:1] if args.quick else EPSILONS
    warnings.simplefilter("ignore")  # seeded fits say so; measured here on purpose
    start = time.perf_counter()
    results = {
        "machine": cpu_model(),
        "repeats": repeats,
        "covariance": covariance_cells(repeats, epsilons),
        "pipeline": pipeline_cells(repeats, [0.5, 1.0] if not args.quick else [1.0]),
    }
    results["seconds"] = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    (args.out / "private_ranges.rst").write_text(render(results))
    print(render(results))


if __name__ == "__main__":
    main()
