"""Synthetic data generators used in the seed papers' experiments."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._zipf import make_zipf_norms

__all__ = ["make_zipf_norms"]
