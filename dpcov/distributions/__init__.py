"""Private learning of distributions: Gaussians and product distributions.

:class:`MultivariateGaussian` learns a Gaussian's mean and covariance with
only weak public bounds, by private preconditioning; :class:`ProductBernoulli`
learns a product distribution over {0, 1}^d. Their algorithms sit beside
them: CoinPress (Biswas, Dong, Kamath and Ullman, 2020) and the recursive
preconditioning and coordinate-wise means of Kamath, Li, Singhal and Ullman
(2019) for Gaussians, and the product-distribution releases (the Gaussian
mechanism and PPDE, Kamath, Li, Singhal and Ullman, 2019) for
:class:`ProductBernoulli`. They compose the primitives of
:mod:`dpcov.mechanisms`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._coinpress import (
    best_covariance_plan,
    best_mean_plan,
    coinpress_covariance,
    coinpress_mean,
    covariance_plan,
    mean_plan,
    sampling_ridge,
    simulate_covariance_error,
)
from ._gaussian import MultivariateGaussian
from ._klsu import kv_mean, naive_pce, naive_pme, ppc, ppc_schedule
from ._product import ProductBernoulli

__all__ = [
    "MultivariateGaussian",
    "ProductBernoulli",
    "best_covariance_plan",
    "best_mean_plan",
    "coinpress_covariance",
    "coinpress_mean",
    "covariance_plan",
    "mean_plan",
    "sampling_ridge",
    "simulate_covariance_error",
    "kv_mean",
    "naive_pce",
    "naive_pme",
    "ppc",
    "ppc_schedule",
]
