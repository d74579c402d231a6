"""Helpers the covariance studies share (group A)."""

import math
import warnings

import numpy as np

from ..harness import Study


def rel_error(estimate, target, ord="fro"):
    """``||estimate - target|| / ||target||`` (the zero matrix scores 1)."""
    return float(np.linalg.norm(estimate - target, ord) / np.linalg.norm(target, ord))


def quiet_fit(est, X, record=None):
    """Fit with warnings silenced; with ``record`` a class, whether it warned it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    if record is None:
        return est
    return est, float(any(issubclass(w.category, record) for w in caught))


def picks(columns):
    """Methods that read column ``c`` of what ``data`` computed (NaN if absent).

    For studies whose fits share one random stream across methods, so the
    whole repetition runs in ``data``, as the scripts they port did.
    """
    return {c: (lambda data, cell, seed, c=c: data.get(c, np.nan)) for c in columns}


class FilledStudy(Study):
    """A study whose table leaves out the cells where every value is NaN."""

    def table(self, rows, grid, repeats):
        def empty(row):
            return all(math.isnan(v) for vs in row["runs"].values() for v in vs)

        return super().table([r for r in rows if not empty(r)], grid, repeats)
