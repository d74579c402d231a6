"""Privacy guarantees, conversions between them, and composition.

Five notions of privacy are used in dpcov, each with respect to a unit
(a row, or a person with all its rows) and a neighbouring relation (one unit
replaced, or one added or removed), which every guarantee names (its
``unit`` and ``relation``):

* pure :math:`\\varepsilon`-DP (:class:`PureDP`),
* :math:`\\rho`-zero-concentrated DP (:class:`ZCDP`),
* :math:`\\mu`-Gaussian DP (:class:`GaussianDP`), the guarantee of Gaussian
  mechanisms with its exact :math:`(\\varepsilon, \\delta)` curve, and its
  composition with pure-DP and bounded-range steps (:class:`ProfileDP`), and
* approximate :math:`(\\varepsilon, \\delta)`-DP (:class:`ApproxDP`; a
  search's, the best of a random number of runs, is a :class:`SelectionDP`,
  which also carries the run and the law it was computed from).

Pure :math:`\\varepsilon`-DP implies :math:`\\varepsilon^2/2`-zCDP [BS16]_, and
:math:`\\rho`-zCDP implies :math:`(\\varepsilon, \\delta)`-DP for every
:math:`\\delta > 0` with the :math:`\\varepsilon` of :func:`zcdp_epsilon` [CKS20]_.
zCDP and pure DP compose by adding :math:`\\rho` (respectively
:math:`\\varepsilon`); approximate DP composes (basically) by adding both
parameters.

Estimators use this module to turn their ``epsilon``/``delta``/``rho``
parameters into a budget, split the budget between their steps, and report
what they spent. Across fits, a :class:`BudgetAccountant` shared by several
estimators (through their ``accountant`` parameter) records every fit's
guarantee, composes them and refuses a fit that would exceed a total set by the
user. What a pipeline's private steps or a hyperparameter search spend is
computed in :mod:`dpcov.model_selection`, which walks scikit-learn objects;
this module knows nothing of them.

References
----------
.. [BS16] Bun, M. and Steinke, T. "Concentrated Differential Privacy:
   Simplifications, Extensions, and Lower Bounds". TCC 2016.
   https://arxiv.org/abs/1605.02065.
.. [CKS20] Canonne, C., Kamath, G. and Steinke, T. "The Discrete Gaussian for
   Differential Privacy". NeurIPS 2020, Proposition 12 and Corollary 13.
   https://arxiv.org/abs/2004.00010.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ._accountant import BudgetAccountant
from ._composition import compose, split_budget
from ._conversions import (
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    zcdp_epsilon,
    zcdp_rho,
)
from ._dp_events import to_dp_event
from ._guarantees import ZCDP, ApproxDP, GaussianDP, ProfileDP, PureDP, SelectionDP

__all__ = [
    "PureDP",
    "ZCDP",
    "GaussianDP",
    "ProfileDP",
    "SelectionDP",
    "ApproxDP",
    "zcdp_epsilon",
    "zcdp_rho",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "compose",
    "split_budget",
    "BudgetAccountant",
    "to_dp_event",
]
