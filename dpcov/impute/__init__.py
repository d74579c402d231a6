"""Private imputation of missing cells."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._base import SimpleImputer

__all__ = ["SimpleImputer"]
