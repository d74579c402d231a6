"""Private learning of distributions: Gaussians and product distributions.

:class:`MultivariateGaussian` learns a Gaussian's mean and covariance with
only weak public bounds, by private preconditioning; :class:`ProductBernoulli`
learns a product distribution over {0, 1}^d.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._gaussian import MultivariateGaussian
from ._product import ProductBernoulli

__all__ = ["MultivariateGaussian", "ProductBernoulli"]
