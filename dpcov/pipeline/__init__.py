"""Pipelines that share one privacy budget and pass ranges from step to step."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._pipeline import PrivatePipeline, make_private_pipeline, output_range

__all__ = ["PrivatePipeline", "make_private_pipeline", "output_range"]
