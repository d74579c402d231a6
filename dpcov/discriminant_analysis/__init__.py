"""Private discriminant analysis from private class statistics."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._lda import LinearDiscriminantAnalysis

__all__ = ["LinearDiscriminantAnalysis"]
