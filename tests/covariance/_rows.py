"""Rows with a known second moment, for the covariance tests."""

import numpy as np


def axis_rows(counts, d, R=1.0):
    """Rows R e_j repeated counts[j] times: second moment diag(counts)/n R^2."""
    rows = [np.eye(d)[j] * R for j, c in enumerate(counts) for _ in range(c)]
    return np.array(rows)
