"""Base mixin of dpcov's private estimators: the budget a fit spends.

Every dpcov estimator has privacy parameters (``epsilon``, ``delta`` and, for
most, ``rho``) and an optional shared :class:`~dpcov.accounting.BudgetAccountant`.
This mixin turns the parameters into the guarantee a fit spends, before the
data are read, and talks to the accountant.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Real

import numpy as np

from ._config import get_config
from .accounting import BudgetAccountant
from .exceptions import NoHardenedSampler, NoiseDominatedWarning, SeededNoiseWarning
from .utils._random import check_random_state
from .utils._sklearn_compat import Interval, Options
from .utils._warnings import warn
from .utils.validation import (
    check_approx_privacy_params,
    check_privacy_params,
    check_zcdp_privacy_params,
    privacy_spent,
)

__all__ = [
    "PRIVACY_PARAMETER_CONSTRAINTS",
    "PrivateEstimatorMixin",
    "warn_if_noise_dominated",
    "warn_if_seeded",
]

#: The ``_parameter_constraints`` of the parameters every private estimator
#: shares (``epsilon = inf``, no noise, is allowed for testing).
PRIVACY_PARAMETER_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "rho": [
        Interval(Real, 0, None, closed="neither"),
        Options(Real, {np.inf}),
        None,
    ],
    "accountant": [BudgetAccountant, None],
    "random_state": ["random_state", np.random.Generator],
}


class PrivateEstimatorMixin:
    """Mixin of private estimators: :meth:`privacy_cost` and the accountant.

    The class flags ``_approx_dp_only`` (an (epsilon, delta)-DP estimator with
    no pure or zCDP form) and ``_zcdp_only`` (a zCDP estimator with no pure-DP
    variant) select how the parameters map to a guarantee; by default
    ``delta=0`` gives pure DP and ``delta > 0`` or ``rho`` gives zCDP.

    Estimators call :meth:`_check_budget` before reading their data and
    :meth:`_spend_budget` after validating it, before any private step.

    The class flag ``_hardened_noise`` states that every mechanism of a fit
    has an exact discrete sampler; under ``dpcov.set_config(secure_noise=True)``
    :meth:`_check_budget` refuses the others with
    :class:`~dpcov.exceptions.NoHardenedSampler`.
    """

    _hardened_noise = False

    def _supports_hardened_noise(self):
        # Whether a fit with the current parameters runs on hardened noise.
        return self._hardened_noise

    def privacy_cost(self):
        """The guarantee a fit spends with the current parameters.

        Computed from the parameters only (no data): it is what ``fit``
        charges to the ``accountant``, and ``guarantee_`` (the composition
        of the steps in ``budget_split_``) is at most it, exactly in floating
        point.

        Returns
        -------
        guarantee : dpcov.accounting.PureDP, ZCDP or ApproxDP
            The guarantee of one fit.

        Raises
        ------
        ValueError
            If the privacy parameters are out of range.
        """
        if getattr(self, "_approx_dp_only", False):
            return check_approx_privacy_params(self.epsilon, self.delta)
        if getattr(self, "_zcdp_only", False):
            return check_zcdp_privacy_params(self.epsilon, self.delta, self.rho)
        return check_privacy_params(self.epsilon, self.delta, self.rho)

    def _check_budget(self):
        # Before the data are read: validate the privacy parameters and refuse
        # a fit that would exceed the accountant's cap.
        cost = self.privacy_cost()
        if get_config()["secure_noise"] and not self._supports_hardened_noise():
            raise NoHardenedSampler(
                f"{type(self).__name__} with these parameters has no hardened "
                "sampler: secure_noise=True needs an exact discrete sampler for "
                "every mechanism of the fit. The user guide's privacy model page "
                "('Hardened noise') lists the estimators that have one."
            )
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            accountant.check(cost, label=type(self).__name__)
        return cost

    def _spend_budget(self, cost):
        # After input validation, before any private step: record the fit (the
        # check is repeated atomically, for accountants shared by threads). A
        # wrapper (PCA) may have its inner estimator record under its name.
        accountant = getattr(self, "accountant", None)
        if accountant is not None:
            label = getattr(self, "_accounting_label", type(self).__name__)
            accountant.spend(cost, label=label)

    def _noise_generator(self, budget):
        # The generator of the fit's noise, after the input is validated and
        # before any draw; a seed the user gave is said out loud.
        warn_if_seeded(self, budget)
        return check_random_state(self.random_state)

    def _record_guarantee(self, guarantee):
        # The fitted record of what a fit spent: guarantee_, the sampler of
        # its noise and (epsilon_spent_, delta_spent_, rho_spent_).
        from .mechanisms._noise import sampler_name

        self.guarantee_ = guarantee
        self.noise_sampler_ = sampler_name()
        self.epsilon_spent_, self.delta_spent_, self.rho_spent_ = self._privacy_spent(
            guarantee
        )

    def _privacy_spent(self, guarantee):
        # (epsilon_spent_, delta_spent_, rho_spent_) of a fit that spent
        # ``guarantee``: with rho unset the budget came from (epsilon, delta),
        # and the reported epsilon is at most epsilon.
        asked = self.epsilon if getattr(self, "rho", None) is None else None
        return privacy_spent(guarantee, self.delta, epsilon=asked)


_REMEDY = (
    "Use a larger budget, more rows, a tighter public data_norm or bounds, or "
    "fewer features."
)


def warn_if_noise_dominated(
    estimator, signal_to_noise, *, what="release", remedy=_REMEDY
):
    """Warn with :class:`~dpcov.exceptions.NoiseDominatedWarning` below 1.

    The warning names the user's line (see :func:`dpcov.utils._warnings.warn`),
    whether the estimator was called directly or through a pipeline or a
    search.

    Parameters
    ----------
    estimator : estimator
        The fitted estimator (named in the message).
    signal_to_noise : float
        Its signal-to-noise figure, computed from released and public values
        only (it is printed, rounded).
    what : str, default="release"
        What the figure measures, for the message.
    remedy : str, default: a larger budget, more rows, tighter geometry
        What the user can change, for the message (public advice only).
    """
    if signal_to_noise < 1.0:
        warn(
            f"{type(estimator).__name__}: the {what} is dominated by noise "
            f"(signal_to_noise_={_two_digits_down(signal_to_noise)} < 1, from the "
            f"release and the public noise scale). {remedy}",
            NoiseDominatedWarning,
        )


def _two_digits_down(value):
    # The figure rounded down to two significant digits, so that a value
    # below 1 never prints as "1" (0.996 prints as 0.99, not 1).
    if not (math.isfinite(value) and value > 0):
        return f"{value:.2g}"
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return f"{math.floor(value / step) * step:.2g}"


def _seed_kind(seed):
    if isinstance(seed, np.random.Generator):
        return "a numpy Generator (its state can be wound back to this fit's draws)"
    if isinstance(seed, np.random.RandomState):
        return "a numpy RandomState"
    return "an integer seed"


def _is_finite(budget):
    return all(math.isfinite(value) for value in vars(budget).values())


def warn_if_seeded(estimator, budget):
    """Warn with :class:`~dpcov.exceptions.SeededNoiseWarning` for a seeded release.

    A fit whose ``random_state`` is not None, at a finite budget, on numpy's
    noise (under ``secure_noise`` every private draw comes from the
    operating system's CSPRNG, whatever the seed), releases noise that
    anyone who knows the seed can regenerate. The message names the kind of
    seed, never its value.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (its ``random_state`` is read).
    budget : PureDP, ZCDP or ApproxDP
        The guarantee of the fit: no warning when it is infinite (no noise).
    """
    seed = estimator.random_state
    if seed is None or not _is_finite(budget) or get_config()["secure_noise"]:
        return
    warn(
        f"{type(estimator).__name__}: random_state is {_seed_kind(seed)}, so "
        "this release is not private against anyone who knows it or holds the "
        "fitted estimator: they can regenerate the noise and subtract it. Use "
        "random_state=None for a release; seed only tests and experiments.",
        SeededNoiseWarning,
    )
