"""The released number of units, for fits under add/remove neighbours.

Under add/remove neighbours (one unit, a row or a person, added or
removed) the number of units is private. A fit then spends a share of its
budget on a noisy count first (sensitivity 1), rounded and floored at 1
(post-processing), and reads it wherever it would read the number of units:
its input comes back wrapped (:class:`~dpcov.utils._gram._units.CountedRows`,
or a :class:`~dpcov.utils._gram._units.UnitRows` with ``count``) so that
``X.shape[0]`` is the released count, while the sums are over the units
themselves.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import replace

import numpy as np

from ..accounting import split_budget
from ..mechanisms import calibrate_additive
from ._gram._units import CountedRows, UnitRows

#: Share of the whole budget spent on the noisy count (sensitivity 1: at
#: (1, 1e-6) its standard deviation is about 21 units, a relative error of
#: 0.4% at 5000 units).
COUNT_SHARE = 1.0 / 16

#: A count at which no minimum number of units binds: a plan made with it
#: before the count is released runs the checks that need no count (the
#: parameters, a box's values), so that they refuse before anything is spent.
UNBINDING_COUNT = 2**53


def fewest_units(neighbours):
    """The fewest rows a fit's validation accepts under ``neighbours``.

    Under add/remove neighbours an empty table is a neighbour of a one-row
    table: refusing it before anything is released would be an outcome the
    guarantee does not cover (it says that the table is empty). Its fit
    therefore runs like any other (the count released first, then refused
    or released at that count), and validation accepts no rows. Under
    replacement the number of rows is public and an empty table is refused
    as scikit-learn refuses it.
    """
    return 0 if neighbours == "add_remove" else 1


def split_count(budget):
    """``(count budget, the rest)``: :data:`COUNT_SHARE` of ``budget`` and the rest."""
    shares = split_budget(budget, {"count": COUNT_SHARE, "rest": 1.0 - COUNT_SHARE})
    return shares["count"], shares["rest"]


def release_count(X, budget, rng):
    """The noisy number of units of ``X``, and ``X`` wrapped to report it.

    Parameters
    ----------
    X : ndarray, sparse matrix, dask.array.Array or UnitRows
        The validated rows (or persons' rows).
    budget : PureDP or ZCDP
        The count's budget.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    X : CountedRows or UnitRows
        ``X`` with ``shape[0]`` the released count.
    count : int
        The released count: adding or removing a unit moves the exact count
        by 1, and the noisy one is rounded and at least 1.
    """
    exact = X.starts.size - 1 if isinstance(X, UnitRows) else X.shape[0]
    noise = calibrate_additive(budget, l2_sensitivity=1.0, l1_sensitivity=1.0)
    count = max(int(np.rint(noise.add(float(exact), rng))), 1)
    if isinstance(X, UnitRows):
        return replace(X, count=count), count
    return CountedRows(X, count), count
