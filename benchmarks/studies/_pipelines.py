"""What group D's studies share: a table with columns derived from the runs.

The harness's table shows one summary per measured column; some tables also
need a figure computed from a whole cell (a ratio of two means, the largest
value, the count of each choice). :class:`DerivedStudy` adds them.
"""

import warnings
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..harness import Study, near_best, rst_table


@dataclass
class DerivedStudy(Study):
    """A :class:`Study` whose table adds ``derive(row)``'s columns to each row.

    ``derive`` gets a summarised row (``row[k]`` is ``(centre, spread)``,
    ``row["runs"][k]`` the values per repetition) and returns ``{column:
    value}``; ``bold`` names methods of which the best (largest mean) and
    those within two paired standard errors of it print in bold.
    """

    derive: object = None
    bold: tuple = ()
    note: object = None  # options -> a line printed above the table, or None
    blas_threads: int = None  # small problems run faster on one BLAS thread

    def execute(self, grid, options, repeats, n_jobs=1):
        with warnings.catch_warnings(), threadpool_limits(self.blas_threads, "blas"):
            # Seeded fits warn (noise-dominated, no convergence): measured here.
            warnings.simplefilter("ignore")
            rows, text = super().execute(grid, options, repeats, n_jobs)
        note = self.note(options) if self.note else None
        return rows, f"{note}\n\n{text}" if note else text

    def table(self, rows, grid, repeats):
        text = super().table(rows, grid, repeats)
        columns = list(dict.fromkeys(k for row in rows for k in row["runs"]))
        extra = {}
        for row in rows:
            new = self.derive(row) if self.derive else {}
            row.update(new)
            extra.update(new)
        shown = [dict(row) for row in rows]
        for row in shown if self.bold else ():
            res = {m: {"mean": row[m][0], "runs": row["runs"][m]} for m in self.bold}
            _, near = near_best(res, list(self.bold))
            for m in near:
                row[m] = f"**{row[m][0]:.3g} ± {row[m][1]:.2g}**"
        head = text.partition("\n\n")[0]
        return head + "\n\n" + rst_table(shown, [*grid, *columns, *extra])


def ratio_of_means(a, b):
    """``row -> mean(a) / mean(b)``, paired over the same repetitions."""
    return lambda row: float(np.nanmean(row["runs"][a]) / np.nanmean(row["runs"][b]))
