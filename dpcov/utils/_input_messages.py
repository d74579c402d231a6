"""What an error about non-finite input tells the user to do (no data in it)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

#: The advice after "Input X contains NaN or infinity".
NON_FINITE_HINT = (
    "fill missing cells with dpcov.impute.SimpleImputer (a private imputer: "
    "scikit-learn's reads the rows without privacy), or drop them; replace or "
    "drop infinite entries."
)


class NonFiniteInput(ValueError):
    """NaN or infinity met while reading the rows.

    The estimators that check the entries in their first pass over the rows
    (not in a read of their own before it) raise this; the fit re-raises it
    naming itself (:meth:`named`). The message is the same whichever entry
    and whichever chunk failed first (on Dask, the block that fails first
    varies from run to run): it tells, as a refusal at validation does, only
    that such an entry exists.

    Parameters
    ----------
    where : str, default=None
        The entry point that refuses the rows, e.g. ``"PCA.fit"``.
    """

    def __init__(self, where=None):
        self.where = where
        if where is None:
            message = "Input X contains NaN or infinity: " + NON_FINITE_HINT
        else:
            message = (
                f"Input X contains NaN or infinity: {where} needs finite "
                "values; " + NON_FINITE_HINT
            )
        super().__init__(message)

    def __reduce__(self):
        # Pickled (joblib's processes, Dask's workers) with its entry point.
        return (type(self), (self.where,))

    def named(self, where):
        """The same error, naming the entry point that refuses the rows."""
        return type(self)(where)
