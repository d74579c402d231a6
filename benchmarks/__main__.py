"""List the studies, or run some.

    python -m benchmarks list
    python -m benchmarks run NAME [NAME ...] [--quick] [--repeats R]
        [--set KEY=VALUE[,VALUE...]] [--n-jobs J] [--out DIR] [--docs]

``--set`` replaces a grid axis's values (comma-separated) or sets an option
(a reference's path, a CSV file) in every named study that has it (a key no
named study has is an error); ``--docs`` also writes the table into the
docs' include the study names, with the command that made it, and the
study's figure (if it has one) over the docs' image.
"""

import argparse
import ast
import shutil
import sys
import time
from pathlib import Path

from .harness import all_studies, get_study, machine_record, write_results

ROOT = Path(__file__).resolve().parent.parent


def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _overrides(pairs):
    out = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        values = [_value(v) for v in text.split(",")]
        out[key] = values if len(values) > 1 else values[0]
    return out


def _shown(args, keys):
    """The arguments that reproduce one study's run (not where it wrote)."""
    shown = ["--quick"] if args.quick else []
    if args.repeats is not None:
        shown += ["--repeats", str(args.repeats)]
    for pair in args.set:
        if pair.partition("=")[0] in keys:
            shown += ["--set", pair]
    if args.n_jobs != 1:
        shown += ["--n-jobs", str(args.n_jobs)]
    return shown


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the studies, their docs page and quick grid")
    run = sub.add_parser("run", help="run studies and write their tables")
    run.add_argument("names", nargs="+")
    run.add_argument("--quick", action="store_true", help="a smoke run")
    run.add_argument("--repeats", type=int)
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUES")
    run.add_argument("--n-jobs", type=int, default=1)
    run.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    run.add_argument("--docs", action="store_true", help="update the docs' include")
    args = parser.parse_args(argv)

    if args.command == "list":
        for name, study in all_studies().items():
            where = f"  [{study.docs}]" if study.docs else ""
            print(f"{name:24s} {study.title}{where}")
        return 0
    overrides = _overrides(args.set)
    studies = [get_study(name) for name in args.names]
    if unknown := set(overrides) - set().union(*(s.keys() for s in studies)):
        raise SystemExit(f"no study named has the grid axis or option {unknown}")
    for name, study in zip(args.names, studies, strict=True):
        keys = study.keys()
        grid, options, repeats = study.settings(
            quick=args.quick,
            overrides={k: v for k, v in overrides.items() if k in keys},
            repeats=args.repeats,
        )
        start = time.perf_counter()
        rows, text = study.execute(grid, options, repeats, n_jobs=args.n_jobs)
        shown_args = _shown(args, keys)
        path = write_results(study, rows, text, machine_record(), shown_args, args.out)
        print(path.read_text())
        print(f"[{name}: {time.perf_counter() - start:.1f} s]", flush=True)
        if args.docs:
            if study.docs is None:
                raise SystemExit(f"{name} has no docs include")
            shutil.copyfile(path, ROOT / study.docs)
            if study.image is not None:
                if not path.with_suffix(".png").exists():
                    raise SystemExit(f"{name}: its figure needs matplotlib")
                shutil.copyfile(path.with_suffix(".png"), ROOT / study.image)
    return 0


if __name__ == "__main__":
    sys.exit(main())
