"""What the Gaussian and product studies share.

:class:`ListedStudy` runs listed cells (the grid's lists read in step, not
their product) and prints one table per measured quantity; the rest are the
Gaussian metrics and the loader of the CoinPress authors' code.
"""

import importlib
import math
import sys
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..harness import Study, rst_table


@dataclass
class ListedStudy(Study):
    """A :class:`Study` over listed cells, with its table split by quantity.

    ``zipped``: cell ``i`` takes the ``i``-th value of every grid list (a
    one-value list serves every cell), for grids whose cells are a list,
    not a product. ``parts``: ``{suffix: title}``; each part is one table of
    the columns ``"<method> <suffix>"`` headed by the method; the columns of
    no part go to a last table. ``split``: a grid key whose values get
    tables of their own, showing only the columns their rows have.
    """

    zipped: bool = False
    parts: dict = None
    split: str = None

    def cells(self, grid):
        if not self.zipped:
            yield from super().cells(grid)
            return
        for i in range(max(len(v) for v in grid.values())):
            yield {k: v[i] if len(v) > 1 else v[0] for k, v in grid.items()}

    def table(self, rows, grid, repeats):
        spread = "± one standard error"
        if self.summary == "median":
            spread = "[its 95% bootstrap interval]"
        groups = [(None, rows)]
        if self.split:
            values = dict.fromkeys(row[self.split] for row in rows)
            groups = [(v, [r for r in rows if r[self.split] == v]) for v in values]
        text = []
        for value, group in groups:
            keys = [k for k in grid if k != self.split]
            if self.zipped:  # only the keys that vary or matter in this group
                keys = [k for k in keys if any(r[k] is not None for r in group)]
            columns = [k for r in group for k in r if k not in (*grid, "runs")]
            for title, chosen, heads in self._parts(list(dict.fromkeys(columns))):
                if not self.parts:  # headed by what is measured
                    for m in self.methods:
                        heads = [h.removeprefix(f"{m} ") for h in heads]
                name = f"{value}: " if value is not None else ""
                text.append(
                    f"{name}{title} ({self.summary} of {repeats} repetitions, "
                    f"{spread}).\n\n"
                    + rst_table(group, [*keys, *chosen], [*keys, *heads])
                )
        return "\n\n".join(text)

    def _parts(self, columns):
        if not self.parts:
            yield self.caption, columns, columns
            return
        rest = list(columns)
        for suffix, title in self.parts.items():
            chosen = [c for c in columns if c.endswith(" " + suffix)]
            rest = [c for c in rest if c not in chosen]
            if chosen:
                yield title, chosen, [c[: -len(suffix) - 1] for c in chosen]
        if rest:
            yield self.caption, rest, rest


def listed(cells, keys):
    """The grid of listed cells (dicts): one list per key, None where absent."""
    return {k: [cell.get(k) for cell in cells] for k in keys}


def rotation(rng, d):
    """A uniformly random rotation: QR of a Gaussian matrix, signs fixed."""
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def gaussian_errors(cov_hat, mean_hat, q, lam, mu):
    """Affine-invariant errors of ``N(mean_hat, cov_hat)`` against the truth.

    ``Sigma = Q diag(lam) Q^T``: the covariance error
    ``||Sigma^-1/2 Sigma_hat Sigma^-1/2 - I||_F``, the mean error
    ``||Sigma^-1/2 (mu_hat - mu)||`` and Pinsker's bound on the total
    variation, ``min(1, sqrt(KL / 2))`` with the closed-form KL.
    """
    inv_root = (q / np.sqrt(lam)) @ q.T
    M = inv_root @ cov_hat @ inv_root
    M = (M + M.T) / 2.0
    v = inv_root @ (np.asarray(mean_hat) - mu)
    m, U = np.linalg.eigh(M)
    kl = math.inf
    if m.min() > 0:
        w = U.T @ v
        kl = 0.5 * float(np.sum(1.0 / m - 1.0 + np.log(m)) + np.sum(w * w / m))
    return {
        "cov": float(np.linalg.norm(M - np.eye(len(lam)))),
        "mean": float(np.linalg.norm(v)),
        "TV": min(1.0, math.sqrt(max(kl, 0.0) / 2.0)),
    }


@cache
def coinpress(path):
    """The authors' ``algos`` module of Biswas, Dong, Kamath and Ullman (2020).

    ``path`` is a checkout of their code (it needs torch); None gives None.
    """
    if path is None:
        return None
    sys.path.insert(0, str(path))  # algos.py imports its sibling utils.py
    return importlib.import_module("algos")


def reference_seed(*key):
    """Seed torch's and NumPy's global generators, which the reference draws from."""
    import torch

    state = np.random.SeedSequence(list(key)).generate_state(2)
    torch.manual_seed(int(state[0]))
    np.random.seed(int(state[1]))  # noqa: NPY002 (the reference draws from it)
