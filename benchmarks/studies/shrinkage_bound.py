"""The best any shrinkage rule can do when the noise has one degree of freedom.

A release ``Y = theta + sigma z`` (``z`` standard Gaussian or Laplace of unit
variance, ``sigma`` public, ``theta > 0`` unknown) is kept, shrunk or zeroed
by a rule ``f(Y / sigma)`` in ``[0, 1]``: the only inputs a post-processing
rule has. Its mean relative error is ``E |f(Y / sigma) Y - theta| / theta``;
the raw release's is ``none = E |z| sigma / theta``. The criterion asks the
rule's error to be at most ``factor min(none, 1) + 0.05`` in every cell. Over
cells whose ``none`` spans ``[low, high]`` (geometric, 12 points), a linear
program (``scipy.optimize.linprog``, HiGHS) on a grid of ``Y / sigma`` finds
the rule with the smallest worst ratio of error to that bound: above 1, no
rule meets the criterion in every cell of the span. In the user's units the
noise of a covariance release on a table with one dominant feature has about
one effective degree of freedom (wine's), and a rule must serve every
epsilon a user may ask: the span is the range of signal to noise it meets.
"""

import numpy as np
from scipy import sparse, stats
from scipy.optimize import linprog

from ..harness import Study, rst_table

#: The grid of ``Y / sigma`` the rule is chosen on, and the cells per span.
GRID = np.linspace(-30.0, 40.0, 1401)
CELLS = 12
#: Unit-variance laws: density and E|z|.
LAWS = {
    "gaussian": (stats.norm(), np.sqrt(2.0 / np.pi)),
    "laplace": (stats.laplace(scale=1.0 / np.sqrt(2.0)), 1.0 / np.sqrt(2.0)),
}


def minimax_ratio(law, factor, low, high, grid=GRID, cells=CELLS):
    """The smallest worst ratio of a rule's error to the criterion's bound.

    Variables: ``f`` on the grid, ``e_j >= |f y - t_j|`` per cell ``j``
    (``t_j = theta / sigma``) and the ratio ``R``; each cell's mean of
    ``e_j / t_j`` is at most ``R (factor min(none_j, 1) + 0.05)``.
    """
    law, mean_abs = LAWS[law]
    nones = np.geomspace(high, low, cells)
    size = grid.size
    n_vars = size * (1 + cells) + 1
    rows, cols, vals, bound = [], [], [], []
    for j, none in enumerate(nones):
        t = mean_abs / none
        offset = size * (1 + j)
        index = np.arange(size)
        # f y - e <= t and -f y - e <= -t, one pair of rows per grid point.
        first = len(bound) + 2 * index
        rows += [first, first, first + 1, first + 1]
        cols += [index, offset + index, index, offset + index]
        vals += [grid, -np.ones(size), -grid, -np.ones(size)]
        bound += [b for _ in range(size) for b in (t, -t)]
        weights = law.pdf(grid - t) * (grid[1] - grid[0]) / t
        row = len(bound)
        rows += [np.full(size, row), [row]]
        cols += [offset + index, [n_vars - 1]]
        vals += [weights, [-(factor * min(none, 1.0) + 0.05)]]
        bound.append(0.0)
    matrix = sparse.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(bound), n_vars),
    ).tocsr()
    cost = np.zeros(n_vars)
    cost[-1] = 1.0
    limits = [(0.0, 1.0)] * size + [(0.0, None)] * (n_vars - size)
    result = linprog(cost, A_ub=matrix, b_ub=bound, bounds=limits, method="highs")
    return float(result.x[-1]) if result.status == 0 else np.nan


def _bound(data, cell, r):
    low, high = (float(v) for v in cell["span"].split("-"))
    return minimax_ratio(cell["law"], cell["factor"], low, high)


class BoundStudy(Study):
    def table(self, rows, grid, repeats):
        # One exact value per cell (a linear program, no repetition).
        lines = [{**r, "minimax ratio": r["runs"]["minimax ratio"][0]} for r in rows]
        return f"{self.caption}.\n\n" + rst_table(lines, [*grid, "minimax ratio"])


STUDY = BoundStudy(
    name="shrinkage_bound",
    title=__doc__.splitlines()[0],
    caption=(
        "Smallest worst ratio of a rule's mean relative error to factor x "
        "min(raw, 1) + 0.05 over cells whose raw error spans the range "
        "(one degree of freedom; above 1: no rule meets it in every cell)"
    ),
    grid={
        "law": list(LAWS),
        "factor": [1.25, 1.5],
        "span": ["0.25-20", "0.1-50", "0.1-500"],
    },
    methods={"minimax ratio": _bound},
    repeats=1,
    quick={"span": ["0.25-20"], "repeats": 1},
    docs="docs/user_guide/_bench_shrinkage_bound.rst",
)
