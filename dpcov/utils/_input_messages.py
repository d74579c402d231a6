"""What an error about non-finite input tells the user to do (no data in it)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

#: The advice after "Input X contains NaN or infinity".
NON_FINITE_HINT = (
    "fill missing cells with dpcov.impute.SimpleImputer (a private imputer: "
    "scikit-learn's reads the rows without privacy), or drop them; replace or "
    "drop infinite entries."
)
