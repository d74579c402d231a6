"""Exceptions raised by dpcov estimators.

A stability-based private algorithm may legitimately answer "no result"
(the bottom outcome of Singhal and Steinke, 2021): that answer is itself a
private release, and the estimators raise one of the exceptions below for it.
Their messages state only public quantities (the parameters, the sample size,
the requirement the data must meet); they never report a count, a score or a
norm computed from the data.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = [
    "NoPrivateResult",
    "NoStableSubspace",
    "NoHeavyCell",
    "BudgetExceeded",
    "NoHardenedSampler",
    "NoiseDominatedWarning",
]


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


class NoHardenedSampler(ValueError):
    """The estimator has no exact sampler for ``secure_noise=True``.

    Raised by ``fit``, before the data are read, when
    ``dpcov.set_config(secure_noise=True)`` (or ``dpcov.config_context``) is
    in force and one of the estimator's mechanisms has no exact discrete
    sampler (the Bingham sampler, the nuclear-norm profile, the truncated
    Laplace, the private selection's run count, ...). The user guide's page on
    the privacy model lists which estimators run on hardened noise.
    """


class NoiseDominatedWarning(UserWarning):
    """A release is dominated by its noise.

    Raised (as a warning) when an estimator's signal-to-noise figure, its
    ``signal_to_noise_`` attribute, is below 1: the largest released
    eigenvalue (or the released statistic) is smaller than the public scale
    of what the noise alone would give. The figure is computed from the
    release and public parameters only, so the warning reveals nothing the
    release does not. Remedies: a larger budget, more rows, a tighter public
    ``data_norm`` or ``bounds``, or fewer features.
    """
