"""The version of dpcov (read by the build from here, without importing dpcov)."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

__version__ = "0.1.0.dev0"
