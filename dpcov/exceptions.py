"""Exceptions raised by dpcov estimators.

A stability-based private algorithm may legitimately answer "no result"
(the bottom outcome of seed 001): that answer is itself a private release,
and the estimators raise one of the exceptions below for it. Their messages
state only public quantities (the parameters, the sample size, the
requirement the data must meet); they never report a count, a score or a
norm computed from the data.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = ["NoPrivateResult", "NoStableSubspace", "NoHeavyCell", "BudgetExceeded"]


class NoPrivateResult(RuntimeError):
    """A private selection returned its bottom outcome: no result.

    The budget of the fit is spent. Fitting again on the same data is a new
    release that needs its own budget (composition); dpcov never retries.
    """


class NoStableSubspace(NoPrivateResult):
    """No subspace won the private selection stably enough to be released.

    Raised by :class:`dpcov.decomposition.ExactSubspace` (the stability test
    failed) and by the boosting step of
    :class:`dpcov.decomposition.ApproximateSubspace` (no run agreed with a
    majority of the others).
    """


class NoHeavyCell(NoPrivateResult):
    """No grid cell of the private histogram held enough blocks.

    Raised by :class:`dpcov.decomposition.ApproximateSubspace`.
    """


class BudgetExceeded(RuntimeError):
    """A fit would exceed the cap of its :class:`~dpcov.accounting.BudgetAccountant`.

    Raised before the estimator reads its data; nothing is recorded. The
    message states the guarantees and the cap, which are public.
    """
