"""Scaling features with public ranges: private standardisation, box scaling.

:class:`StandardScaler` is a private drop-in for scikit-learn's: it releases
the mean and the variance of each feature of rows clipped to public ranges.
:class:`BoundsScaler` maps the public ranges onto ``[-1, 1]`` and costs no
privacy. Either puts features measured on different scales on one scale
before a private step (PCA, covariance estimation). :class:`PublicTransformer`
declares a public map (a function of each row, chosen without the data) so
that a private pipeline or search may run it between private steps.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._data import BoundsScaler, StandardScaler
from ._public import PublicTransformer

__all__ = ["BoundsScaler", "PublicTransformer", "StandardScaler"]
