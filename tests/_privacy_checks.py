"""Shared helpers of the privacy tests: laws on neighbours, and outcomes.

* :func:`gaussian_shift` and :func:`laplace_event_loss` measure the privacy
  loss between the output laws on two neighbouring datasets and compare it
  with the closed form of the mechanism at its claimed sensitivity. They are
  two-sided: noise calibrated to half the sensitivity (a privacy bug) or
  twice it (an accuracy bug) makes them fail.
* :func:`clopper_pearson` bounds an event's probability from its count, for
  threshold audits (a lower bound on the privacy loss that must not exceed
  the claimed one).
* :func:`recorded_releases` records every additive release of a fit (the
  exact statistic, the law, the scale and the noisy value) where the noise
  module draws it, so a noise-scale test checks one fit exactly against its
  closed form instead of estimating the spread of many fits: the release is
  the statistic plus the recorded draw, and the scale is the closed form's.
  The samplers' laws themselves are tested in ``tests/mechanisms``.
* :func:`recorded_choices` does the same for the exponential mechanism:
  every index drawn, with the probabilities and scores it was drawn from.
* :func:`fitted_step` binds a noisy step of a fit to the inputs one fit
  gives it (exact statistics and public values), so a neighbour audit draws
  thousands of its outputs instead of refitting: their law is the fit's, and
  the rest of the fit (a covariance fit's shrinkage bootstrap, many times
  the mechanism's cost) is skipped. :func:`fitted_mechanism` does it for a
  covariance fit's mechanism and checks the release the fit recorded.
* :func:`outcome` and :func:`outcomes` record what a fit lets out on one
  dataset: a neighbouring pair chosen to break a privacy claim (an extreme
  finite row against an ordinary one) must give the same outcome, a fit or
  the same refusal, and the same warnings, but for the release-based ones
  (whose law, not their presence, the guarantee covers).
"""

import contextlib
import math
import warnings
from dataclasses import dataclass
from unittest import mock

import numpy as np
from scipy import stats

from dpcov.exceptions import NoiseDominatedWarning, SeededNoiseWarning
from dpcov.mechanisms import _noise


def gaussian_shift(statistic_a, statistic_b):
    """Standardised mean shift between two samples of a 1-D statistic.

    For a Gaussian mechanism whose projected output is ``N(m, s^2)`` on one
    neighbour and ``N(m + Delta, s^2)`` on the other, this estimates
    ``Delta / s``; a rho-zCDP Gaussian mechanism on a worst-case pair has
    ``Delta / s = sqrt(2 rho)`` exactly (Renyi divergence ``alpha Delta^2 /
    (2 s^2)``).

    Returns
    -------
    shift : float
        ``|mean_a - mean_b| / pooled_std``.
    standard_error : float
        Its standard error, ``sqrt(2 / m)`` to first order for ``m`` runs per
        side.
    """
    a, b = np.asarray(statistic_a), np.asarray(statistic_b)
    pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    shift = abs(a.mean() - b.mean()) / pooled
    m = min(a.size, b.size)
    return shift, math.sqrt(2.0 / m + shift**2 / (4.0 * m))


def laplace_event_loss(in_event_a, in_event_b):
    """Log-ratio of the probabilities of an event on two neighbours.

    On the event where every Laplace coordinate lies beyond both neighbours'
    means (in the direction of the change), the density ratio of a Laplace
    mechanism is exactly ``exp(D1 / b)``, with ``D1`` the L1 distance between
    the neighbours' statistics and ``b`` the scale. So the log-ratio of the
    event's probabilities equals ``D1 / b``.

    Returns
    -------
    loss : float
        ``log(P_a(E) / P_b(E))``.
    standard_error : float
        Delta-method standard error of the log-ratio.
    """
    a, b = np.asarray(in_event_a), np.asarray(in_event_b)
    pa, pb = a.mean(), b.mean()
    se = math.sqrt((1 - pa) / (pa * a.size) + (1 - pb) / (pb * b.size))
    return math.log(pa / pb), se


def clopper_pearson(k, n, level):
    """The two-sided Clopper-Pearson interval of a binomial proportion.

    Parameters
    ----------
    k : int
        Events seen.
    n : int
        Trials.
    level : float
        Probability that the interval misses the true proportion.

    Returns
    -------
    low, high : float
        Exact (conservative) bounds from the beta quantiles.
    """
    lo = stats.beta.ppf(level / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - level / 2, k + 1, n - k) if k < n else 1.0
    return lo, hi


#: Warnings computed from a release (or the seed the test gives): they may
#: differ between neighbours as the release does.
RELEASE_WARNINGS = (NoiseDominatedWarning, SeededNoiseWarning)


def outcome(fit):
    """Run ``fit()``: ("fit" or the error's class and text, the warnings seen).

    Parameters
    ----------
    fit : callable
        Fits the composite on one dataset.

    Returns
    -------
    result : str or tuple
        ``"fit"``, or ``(error class name, message)``.
    seen : list of tuple
        ``(category name, message)`` of every warning but the release-based
        ones, sorted and without repeats.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit()
        except Exception as error:  # noqa: BLE001 - the outcome is compared
            result = (type(error).__name__, str(error))
        else:
            result = "fit"
    seen = sorted(
        {
            (message.category.__name__, str(message.message))
            for message in caught
            if not issubclass(message.category, RELEASE_WARNINGS)
        }
    )
    return result, seen


def outcomes(pair, make):
    """The outcome of ``make().fit(X)`` on each dataset of ``pair``.

    Parameters
    ----------
    pair : tuple of array-like
        The neighbouring datasets.
    make : callable
        Builds a fresh, unfitted composite.

    Returns
    -------
    seen : list of tuple
        :func:`outcome` of each fit, in the order of ``pair``.
    """
    return [outcome(lambda X=X: make().fit(X)) for X in pair]


@dataclass
class Release:
    """One additive release: ``noisy = value + noise`` of ``law`` at ``scale``.

    ``sensitivity`` is the one the call passed (used by the hardened noise).
    """

    law: str
    scale: float
    value: np.ndarray
    noisy: np.ndarray
    sensitivity: float = None

    @property
    def noise(self):
        return np.asarray(self.noisy) - np.asarray(self.value)


@contextlib.contextmanager
def recorded_releases():
    """Record every additive release drawn inside the ``with`` block, in order.

    Wraps the noise module's ``add_gaussian``, ``add_laplace`` and
    ``add_symmetric`` (every additive draw of dpcov goes through them); the
    draws themselves are unchanged, so the fit is the one it would be.
    Yields the list of :class:`Release` it fills.
    """
    releases = []

    def wrap(name, law=None):
        original = getattr(_noise, name)

        def recorder(rng, value, scale, *args, **kwargs):
            noisy = original(rng, value, scale, *args, **kwargs)
            # add_symmetric(rng, matrix, scale, law, sensitivity); the others
            # (rng, value, scale, sensitivity).
            named = ("law", "sensitivity") if law is None else ("sensitivity",)
            call = dict(zip(named, args, strict=False)) | kwargs
            releases.append(
                Release(
                    law or call.get("law", "gaussian"),
                    scale,
                    np.copy(value),
                    np.copy(noisy),
                    call.get("sensitivity"),
                )
            )
            return noisy

        return mock.patch.object(_noise, name, recorder)

    with (
        wrap("add_gaussian", "gaussian"),
        wrap("add_laplace", "laplace"),
        wrap("add_symmetric"),
    ):
        yield releases


@contextlib.contextmanager
def recorded_calls(target, name):
    """Record every call of ``target.name`` inside the block, in order.

    The calls are passed on unchanged; yields the list of ``(args, kwargs,
    result)`` it fills. For a helper that draws noise without an additive
    release (which :func:`recorded_releases` records), or for one step of a
    fit (``target`` an estimator, ``name`` its method).
    """
    calls = []
    original = getattr(target, name)

    def recorder(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append((args, kwargs, result))
        return result

    with mock.patch.object(target, name, recorder):
        yield calls


def fitted_step(estimator, X, step, **fit_params):
    """One fit with a spy on a noisy step of ``estimator``, as a sampler.

    Fits ``estimator`` on ``X`` once with a spy on its method ``step`` (which
    takes the generator as ``rng=``), and returns that call's output and
    ``draw(rng)``: the same call on the same inputs with another generator.
    Where the step's inputs are exact statistics and public values, fixed
    before any noise is drawn, ``draw`` has the law of the fit's output of
    that step: a neighbour audit draws from it instead of refitting, and
    skips the rest of the fit (a covariance fit's shrinkage bootstrap costs
    many times its mechanism). ``fit_params`` go to ``fit`` (``groups``).
    """
    method = getattr(estimator, step)
    with recorded_calls(estimator, step) as calls:
        estimator.fit(X, **fit_params)
    ((args, kwargs, output),) = calls
    kwargs = {key: value for key, value in kwargs.items() if key != "rng"}

    def draw(rng):
        return method(*args, rng=rng, **kwargs)

    return output, draw


def fitted_mechanism(estimator, X, *, half_widths=None, **fit_params):
    """:func:`fitted_step` on a covariance fit's mechanism, its release checked.

    The mechanism (``_mechanism``) adds the noise to the exact second moment
    of the processed rows. Checks that the fit recorded that call's release
    (``raw_covariance_`` where ``store_raw=True``, and every attribute the
    release carries) and returns ``draw(rng)``, which returns a
    :class:`~dpcov.covariance._base.Release`. ``half_widths``: the public
    box's, when the mechanism works in the box's unit coordinates
    (``raw_covariance_`` is then ``raw * h h^T``).
    """
    release, draw = fitted_step(estimator, X, "_mechanism", **fit_params)
    if estimator.store_raw:
        units = 1.0 if half_widths is None else np.outer(half_widths, half_widths)
        np.testing.assert_allclose(
            estimator.raw_covariance_, units * release.raw, rtol=1e-12, atol=0
        )
    for name, value in release.attributes.items():
        np.testing.assert_array_equal(getattr(estimator, name), value)
    return draw


@dataclass
class Choice:
    """One draw of the exponential mechanism: its law, scores and the index."""

    probabilities: np.ndarray
    scores: np.ndarray
    index: int


@contextlib.contextmanager
def recorded_choices():
    """Record every exponential-mechanism draw inside the block, in order.

    Wraps the noise module's ``exponential_choice`` (every exponential
    mechanism draws its index there; the draws are unchanged) and yields the
    list of :class:`Choice` it fills.
    """
    choices = []
    original = _noise.exponential_choice

    def recorder(rng, probabilities, *, scores, coefficient):
        index = original(rng, probabilities, scores=scores, coefficient=coefficient)
        choices.append(Choice(np.copy(probabilities), np.copy(scores), index))
        return index

    with mock.patch.object(_noise, "exponential_choice", recorder):
        yield choices
