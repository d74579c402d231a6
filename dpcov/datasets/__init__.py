"""Synthetic data generators: the papers' experiments and a table with public ranges."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._tables import make_sensor_table
from ._zipf import make_zipf_norms

__all__ = ["make_sensor_table", "make_zipf_norms"]
