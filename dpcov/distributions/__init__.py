"""Private learning of distributions: Gaussians and product distributions.

:class:`MultivariateGaussian` learns a Gaussian's mean and covariance with
only weak public bounds, by private preconditioning.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._gaussian import MultivariateGaussian

__all__ = ["MultivariateGaussian"]
