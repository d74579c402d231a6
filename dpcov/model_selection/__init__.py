"""Private model selection and the cost of pipelines and searches.

:class:`PrivateSearchCV` is a hyperparameter search whose choice is itself
differentially private (the best of a random number of private runs, Liu and
Talwar 2019; Papernot and Steinke 2022). :func:`pipeline_cost` and
:func:`search_cost` compute what a pipeline's private steps and a
scikit-learn search spend; a scikit-learn search's choice is not private.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from ..pipeline._cost import pipeline_cost
from ._cost import search_cost
from ._search import PrivateSearchCV

__all__ = ["PrivateSearchCV", "pipeline_cost", "search_cost"]
