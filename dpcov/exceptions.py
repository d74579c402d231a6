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
    "TooFewUnits",
    "BudgetExceeded",
    "NoHardenedSampler",
    "NoiseDominatedWarning",
    "SeededNoiseWarning",
    "ApproximateSamplerWarning",
    "AccountantCopyError",
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


class TooFewUnits(NoPrivateResult, ValueError):
    """The released (noisy) count of units is below what the fit needs.

    Under add/remove neighbours the number of rows (or persons) is private:
    a fit records its budget, releases a noisy count, and refuses when that
    count is below the fewest units its plan needs (a private radius or
    private ranges, ``n_components``). The refusal is a function of the
    released count only, so it is a private outcome ("no result", whose
    message states the released count); it is a ``ValueError`` as well, as
    the refusal of too few rows is under replacement, where the number of
    rows is public and the refusal comes before anything is spent.
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
    ``signal_to_noise_`` attribute, is below 1: for the covariance
    estimators, the estimated energy of the noise in the estimate exceeds
    that of the signal, in the units of ``covariance_`` (see their
    ``shrinkage`` parameter); for the other estimators, the released
    statistic is smaller than the public scale of what the noise alone would
    give. The figure is computed from the release and public parameters
    only, so the warning reveals nothing the release does not. Remedies: a
    larger budget, more rows, a tighter public ``data_norm`` or ``bounds``,
    or fewer features.
    """


class SeededNoiseWarning(UserWarning):
    """A release's noise was drawn from a seed the user gave.

    Raised (as a warning) by ``fit`` when ``random_state`` is not None (an
    integer, a :class:`numpy.random.RandomState` or a
    :class:`numpy.random.Generator`), the budget is finite and the noise is
    numpy's (not ``dpcov.set_config(secure_noise=True)``, whose noise comes
    from the operating system's CSPRNG whatever the seed). Anyone who knows
    the seed, or holds the fitted estimator (its ``get_params()`` shows the
    seed; a generator's state can be wound back to the draws of the fit),
    can regenerate the noise and subtract it: the release is not private
    against them. Seeds are for tests and experiments; a release uses
    ``random_state=None``. The message names the kind of seed, never its
    value.
    """


class ApproximateSamplerWarning(UserWarning):
    """A release's noise comes from an approximate sampler.

    Raised (as a warning) by ``fit`` when a mechanism samples its noise by a
    Markov chain rather than exactly (NuclearLaplaceCovariance's noise
    profile beyond ``exact_max_dim`` features): the guarantee then holds up
    to the chain's total-variation error. Decided by the number of features
    and the parameters only, so it reveals nothing about the rows.
    """


class AccountantCopyError(BaseException):
    """A copy of a :class:`~dpcov.accounting.BudgetAccountant` was asked to record.

    An accountant is shared, never copied, by :func:`copy.deepcopy` and
    :func:`sklearn.base.clone`; pickling is the one way to copy it, and joblib
    pickles estimators to send them to worker processes (``n_jobs > 1`` with
    its default backend). A fit in a worker would record into a copy that the
    caller never sees, so the copy refuses to record anything, before any data
    are read. Saving a fitted estimator with its accountant (pickle, joblib)
    still works; only recording into the loaded copy is refused.

    It derives from :class:`BaseException`, not :class:`Exception`, so that
    the error handlers that catch every ``Exception`` a fit raises (those of
    scikit-learn's searches and ``cross_validate``, which turn failed fits
    into scores of NaN and a summary) let it through: the search stops with
    this error as its last line instead of reporting every fit as failed.
    pytest's ``Skipped`` and ``Exit`` derive from ``BaseException`` for the
    same reason. joblib's backends pass it on to the caller; the pools of
    :mod:`multiprocessing.pool` do not (their workers catch ``Exception``
    only, and a task that raises it never completes): do not use them to fit
    estimators that hold an accountant. Catch it by name
    (``except AccountantCopyError``).
    """
