"""What the spectral and reproduction studies share beyond the harness.

``Panels`` is a study whose grid is a product with some cells left out (the
old scripts ran ragged grids); ``Combined`` runs several studies as one (a
sweep per parameter, a table per part) and writes them as one include.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..harness import Study


def old_seed(r):
    """The seed the ported scripts gave repetition ``r``."""
    return 1000 * r + 7


def ratio_se(a, b):
    """``mean(a) / mean(b)`` and its delta-method standard error (paired)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    r = a.mean() / b.mean()
    se = np.std(a - r * b, ddof=1) / (np.sqrt(a.size) * b.mean()) if a.size > 1 else 0
    return float(r), float(se)


@dataclass
class Panels(Study):
    """A study whose ``keep(cell)`` drops cells of the grid's product."""

    keep: Callable = None

    def cells(self, grid):
        for cell in super().cells(grid):
            if self.keep is None or self.keep(cell):
                yield cell


@dataclass
class Combined(Study):
    """Several studies run as one; ``--set`` reaches the parts that know a key."""

    parts: list = field(default_factory=list)

    def settings(self, *, quick=False, overrides=None, repeats=None):
        overrides = overrides or {}
        known = {k for part in self.parts for k in [*part.grid, *part.options]}
        if unknown := set(overrides) - known:
            raise SystemExit(f"{self.name}: no grid axis or option {unknown}")
        return {}, {"quick": quick, "set": overrides, "repeats": repeats}, repeats

    def execute(self, grid, options, repeats, n_jobs=1):
        rows, texts = [], []
        for part in self.parts:
            known = {*part.grid, *part.options}
            mine = {k: v for k, v in options["set"].items() if k in known}
            g, o, r = part.settings(
                quick=options["quick"], overrides=mine, repeats=options["repeats"]
            )
            part_rows, text = part.execute(g, o, r, n_jobs=n_jobs)
            rows += [dict(row, part=part.name) for row in part_rows]
            texts.append(f"{part.title}\n\n{text}")
        return rows, "\n\n".join(texts)
