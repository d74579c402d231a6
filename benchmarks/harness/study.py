"""Studies: a grid, the data of a cell, the methods and what they measure.

:class:`Study` runs paired repetitions: repetition ``r`` of a cell draws its
data with seed ``r`` and hands the same data and the same seed to every
method, so the methods' differences are paired. :class:`TimingStudy` times
calls interleaved in one run and reports ratios to a baseline. A study that
is neither overrides :meth:`Study.execute`.
"""

import importlib
import itertools
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from joblib import Parallel, delayed

from .report import rst_table
from .stats import summarize
from .timing import peak_mib, time_calls


@dataclass
class Study:
    """A paired grid of repetitions.

    Parameters
    ----------
    name, title : str
        The command-line name and a one-line description.
    grid : dict
        Each key's list of values; the cells are their product.
    methods : dict
        ``name -> f(data, cell, seed)`` returning a number, or a dict of
        numbers (columns ``"name key"``); NaN where the method refuses.
    data : callable, optional
        ``f(cell, seed)`` making what every method of the repetition gets;
        by default the methods get ``None``.
    repeats : int
        Repetitions per cell.
    summary : {"mean", "median"}
        Mean with its standard error, or median with its 95% bootstrap
        interval ``[low, high]``. A column named ``"... warned"`` or
        ``"... share"`` (0/1 per repetition) is a share: its mean alone.
    caption : str
        What the numbers are, printed above the table.
    quick : dict
        Grid values (and ``"repeats"``) for the smoke run.
    options : dict
        Settings that are not grid axes (a reference's path, a CSV file); the
        cell passed to ``data`` and the methods holds them too, and
        ``"quick"`` (true in the smoke run).
    docs : str, optional
        The docs' include this study writes with ``--docs``.
    figure : callable, optional
        ``figure(rows)`` draws the study's figure (a matplotlib ``Figure``,
        see :func:`~benchmarks.harness.plot.line_figure`) from the rows the
        table shows.
    image : str, optional
        The docs' image the figure replaces with ``--docs``.
    keep : callable, optional
        ``keep(cell)`` false leaves a cell of the grid's product out (a
        ragged grid).
    """

    name: str
    title: str
    grid: dict
    methods: dict = field(default_factory=dict)
    data: Callable = None
    repeats: int = 10
    summary: str = "mean"
    caption: str = ""
    quick: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    docs: str = None
    figure: Callable = None
    image: str = None
    keep: Callable = None

    def keys(self):
        """The grid axes and options ``--set`` may change."""
        return {*self.grid, *self.options}

    def cells(self, grid):
        keys = list(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            cell = dict(zip(keys, values, strict=True))
            if self.keep is None or self.keep(cell):
                yield cell

    def settings(self, *, quick=False, overrides=None, repeats=None):
        """The grid, options and repetitions of a run."""
        grid, options = dict(self.grid), dict(self.options, quick=quick)
        if quick:
            grid.update({k: v for k, v in self.quick.items() if k in grid})
            options.update({k: v for k, v in self.quick.items() if k in options})
        for key, value in (overrides or {}).items():
            if key in grid:
                grid[key] = value if isinstance(value, list) else [value]
            elif key in options:
                options[key] = value
            else:
                raise SystemExit(f"{self.name}: no grid axis or option {key!r}")
        if repeats is None:
            repeats = self.quick.get("repeats", 2) if quick else self.repeats
        return grid, options, repeats

    def _repeat(self, cell, seed):
        data = self.data(cell, seed) if self.data is not None else None
        out = {}
        for name, method in self.methods.items():
            value = method(data, cell, seed)
            if isinstance(value, dict):
                out.update({f"{name} {key}": v for key, v in value.items()})
            else:
                out[name] = value
        return out

    def execute(self, grid, options, repeats, n_jobs=1):
        """Run the grid; return ``(rows, text)``."""
        cells = [dict(c, **options) for c in self.cells(grid)]
        jobs = [(c, r) for c in cells for r in range(repeats)]
        values = Parallel(n_jobs=n_jobs)(delayed(self._repeat)(c, r) for c, r in jobs)
        rows = []
        for i, cell in enumerate(cells):
            runs = values[i * repeats : (i + 1) * repeats]
            row = {k: cell[k] for k in grid}
            columns = list(dict.fromkeys(k for run in runs for k in run))
            row["runs"] = {
                k: [float(run.get(k, np.nan)) for run in runs] for k in columns
            }
            for k in columns:
                how = "share" if k.endswith(("warned", "share")) else self.summary
                row[k] = summarize(row["runs"][k], how)
            rows.append(row)
        return rows, self.table(rows, grid, repeats)

    def table(self, rows, grid, repeats):
        """The default table: one row per cell, one column per measured value."""
        columns = list(dict.fromkeys(k for row in rows for k in row["runs"]))
        spread = "± one standard error"
        if self.summary == "median":
            spread = "[its 95% bootstrap interval]"
        head = f"{self.caption}: {self.summary} of {repeats} repetitions {spread}"
        head += (
            "; warned: the share of fits that warned."
            if any(c.endswith("warned") for c in columns)
            else "."
        )
        return head.strip() + "\n\n" + rst_table(rows, [*grid, *columns])


@dataclass
class TimingStudy(Study):
    """Calls timed in one run, interleaved, with ratios to a baseline.

    ``setup(cell)`` makes the input; ``methods`` maps a name to
    ``f(data, cell)``, the call timed; ``baseline`` names the call the ratios
    divide by; ``repeats`` is the number of rounds. With ``memory=True`` each
    call's peak allocation is measured once more, untimed. ``settle``: the
    seconds of rest before each timed call (:func:`time_calls`).
    """

    setup: Callable = None
    baseline: str = None
    memory: bool = False
    repeats: int = 5
    settle: float = 0.0

    def execute(self, grid, options, repeats, n_jobs=1):
        rows = []
        for cell in self.cells(grid):
            cell = dict(cell, **options)
            data = self.setup(cell)
            calls = {
                name: partial(method, data, cell)
                for name, method in self.methods.items()
            }
            timed = time_calls(
                calls, rounds=repeats, baseline=self.baseline, settle=self.settle
            )
            row = {k: cell[k] for k in grid}
            for name, t in timed.items():
                row[f"{name} s"] = t["best"]
                if "ratio" in t:
                    row[f"{name} ratio"] = t["ratio"]
                if self.memory:
                    row[f"{name} MiB"] = peak_mib(calls[name])
            rows.append(row)
        return rows, self.table(rows, grid, repeats)

    def table(self, rows, grid, repeats):
        columns = [k for k in rows[0] if k not in grid] if rows else []
        head = (
            f"{self.caption} (best of {repeats} interleaved rounds in seconds; "
            f"ratio: median per-round ratio to {self.baseline})."
        )
        return head.strip() + "\n\n" + rst_table(rows, [*grid, *columns])


@dataclass
class Combined(Study):
    """Several studies run as one (a sweep per parameter, a table per part).

    ``--set`` reaches the parts that have the key; the tables are written one
    after another into one include.
    """

    parts: list = field(default_factory=list)

    def keys(self):
        return {k for part in self.parts for k in part.keys()}

    def settings(self, *, quick=False, overrides=None, repeats=None):
        overrides = overrides or {}
        if unknown := set(overrides) - self.keys():
            raise SystemExit(f"{self.name}: no grid axis or option {unknown}")
        return {}, {"quick": quick, "set": overrides, "repeats": repeats}, repeats

    def execute(self, grid, options, repeats, n_jobs=1):
        rows, texts = [], []
        for part in self.parts:
            keys = part.keys()
            mine = {k: v for k, v in options["set"].items() if k in keys}
            g, o, r = part.settings(
                quick=options["quick"], overrides=mine, repeats=options["repeats"]
            )
            part_rows, text = part.execute(g, o, r, n_jobs=n_jobs)
            rows += [dict(row, part=part.name) for row in part_rows]
            texts.append(f"{part.title}\n\n{text}")
        return rows, "\n\n".join(texts)


def all_studies():
    """Every study declared in ``benchmarks/studies``, by name."""
    from .. import studies

    found = {}
    for info in pkgutil.iter_modules(studies.__path__):
        module = importlib.import_module(f"{studies.__name__}.{info.name}")
        for study in getattr(module, "STUDIES", [getattr(module, "STUDY", None)]):
            if study is None:
                continue
            if study.name in found:
                raise RuntimeError(f"two studies are named {study.name!r}")
            found[study.name] = study
    return dict(sorted(found.items()))


def get_study(name):
    studies = all_studies()
    if name not in studies:
        raise SystemExit(f"no study {name!r}; `python -m benchmarks list` lists them")
    return studies[name]
