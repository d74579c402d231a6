"""Private linear models from private sufficient statistics."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._ssp import LinearRegression, Ridge

__all__ = ["LinearRegression", "Ridge"]
