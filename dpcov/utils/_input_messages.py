"""What an error about non-finite input tells the user to do (no data in it)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

#: The advice after "Input X contains NaN or infinity".
NON_FINITE_HINT = (
    "fill missing cells with dpcov.impute.SimpleImputer (a private imputer: "
    "scikit-learn's reads the rows without privacy), or drop them; replace or "
    "drop infinite entries."
)


class NonFiniteInput(ValueError):
    """NaN or infinity met while reading the rows.

    The estimators that check the entries in their first pass over the rows
    (not in a pass of their own before it) raise this; the fit re-raises it
    under its own name (:meth:`named`). ``has_nan`` and ``has_inf`` say what
    the chunk that failed holds: what the refusal tells, as a refusal at
    validation does, is only that such an entry exists.
    """

    def __init__(self, has_nan=True, has_inf=True, where=None):
        self.has_nan, self.has_inf, self.where = has_nan, has_inf, where
        present = " and ".join(
            word for word, flag in (("NaN", has_nan), ("infinity", has_inf)) if flag
        )
        if where is None:
            message = "Input X contains NaN or infinity: " + NON_FINITE_HINT
        else:
            message = (
                f"Input X contains {present}: {where} needs finite values; "
                + NON_FINITE_HINT
            )
        super().__init__(message)

    @classmethod
    def of(cls, rows):
        """The error for rows known to hold NaN or infinity."""
        return cls(
            has_nan=bool(np.isnan(rows).any()), has_inf=bool(np.isinf(rows).any())
        )

    def named(self, where):
        """The same error, naming the estimator that refuses the rows."""
        return type(self)(self.has_nan, self.has_inf, where)
