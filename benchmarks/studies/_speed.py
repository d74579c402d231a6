"""What the speed studies share: one row per timed call, fresh processes, memory.

:class:`SpeedStudy` extends the harness's :class:`TimingStudy`: ``calls(cell)``
makes the named no-argument calls of a cell (warmed up), timed interleaved by
:func:`time_calls`; each call gets a row with its best and median time, its
ratio to the baseline call (median of per-round ratios) and to its reference
(``reference(name)``: the ratio of the medians), its ``tracemalloc`` peak
with ``memory=True`` and the columns ``extra(cell, name, call)`` adds. With
the option ``fresh_process`` each cell runs in a process of its own (peak RSS
and memmaps are then the cell's own).
"""

import json
import os
import resource
import subprocess
import sys
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from ..harness import TimingStudy, peak_mib, rst_table, time_calls

ROOT = Path(__file__).resolve().parents[2]
MiB = 2**20


@dataclass
class SpeedStudy(TimingStudy):
    calls: object = None
    reference: object = None
    extra: object = None
    env: dict = field(default_factory=dict)

    def execute(self, grid, options, repeats, n_jobs=1):
        rows = []
        for cell in self.cells(grid):
            if options.get("fresh_process"):
                rows += in_fresh_process(self, cell, options, repeats)
            else:
                rows += self.run_cell(dict(cell, **options), list(grid), repeats)
        return rows, self.table(rows, grid, repeats)

    def run_cell(self, cell, keys, repeats):
        threads = cell.get("blas_threads")
        limit = nullcontext() if threads is None else threadpool_limits(threads, "blas")
        rows = []
        with limit, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded fits, noise-dominated budgets
            calls = self.calls(cell)
            timed = time_calls(
                calls, rounds=repeats, baseline=self.baseline, settle=self.settle
            )
            for name, call in calls.items():
                t = timed[name]
                row = {k: cell[k] for k in keys}
                row.update({"call": name, "median s": t["median"], "best s": t["best"]})
                if self.baseline is not None:
                    row[f"x {self.baseline}"] = t["ratio"]
                ref = self.reference(name) if self.reference else None
                if self.reference is not None:
                    row["x reference"] = (
                        t["median"] / timed[ref]["median"] if ref in timed else np.nan
                    )
                if self.memory:
                    row["peak MiB"] = peak_mib(call)
                if self.extra is not None:
                    row.update(self.extra(cell, name, call))
                rows.append(row)
        return rows

    def table(self, rows, grid, repeats):
        columns = list(dict.fromkeys(k for row in rows for k in row))
        against = f"; x {self.baseline}: median per-round ratio" * bool(self.baseline)
        head = (
            f"{self.caption} (median and best of {repeats} interleaved rounds, "
            f"in seconds{against}; x reference: ratio of the medians)."
        )
        return head + "\n\n" + rst_table(rows, columns)


def in_fresh_process(study, cell, options, repeats):
    """Run one cell of ``study`` in a new interpreter; return its rows."""
    job = {"name": study.name, "cell": cell, "options": options, "repeats": repeats}
    env = dict(os.environ, **study.env)
    code = "from benchmarks.studies._speed import _child; _child()"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("ROWS "):
            return json.loads(line[5:])
    error = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
    return [dict(cell, call=f"failed: {error[0][:120]}")]


def _child():
    from ..harness import get_study

    job = json.loads(sys.stdin.read())
    study = get_study(job["name"])
    cell = dict(job["cell"], **job["options"])
    rows = study.run_cell(cell, list(job["cell"]), job["repeats"])
    print("ROWS " + json.dumps(rows, default=float), flush=True)


def unit_rows(n, d, rng=0):
    """Rows of unit norm: every row on the clipping radius ``data_norm=1``."""
    X = np.random.default_rng(rng).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def warm_up(calls, warm):
    """Run each of ``warm`` (first-call costs: imports, kernels) once."""
    for call in warm.values():
        call()
    return calls


# -- process memory (Linux /proc; NaN elsewhere) ------------------------------


def _status_mib(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_peak_mib(call):
    """The peak RSS during ``call()`` minus the RSS before it, in MiB.

    Writing 5 to ``/proc/self/clear_refs`` resets the peak (and ``ru_maxrss``)
    to the current RSS; NaN where it cannot.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return float("nan")
    before = _status_mib("VmRSS")
    call()
    return max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before, 0.0)
