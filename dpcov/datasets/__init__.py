"""Synthetic data generators: the papers' experiments and tables in mixed units."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._tables import make_mixed_units_table, make_sensor_table
from ._zipf import make_zipf_norms

__all__ = ["make_mixed_units_table", "make_sensor_table", "make_zipf_norms"]
