"""Checks that every dpcov estimator must pass, beyond scikit-learn's.

Each check takes an estimator instance (with its geometry parameters set, e.g.
``data_norm``) and raises an AssertionError when the estimator breaks a
privacy convention. :func:`parametrize_with_dp_checks` turns them into pytest
cases, as :func:`sklearn.utils.estimator_checks.parametrize_with_checks` does
for scikit-learn's checks.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings

import numpy as np
from sklearn import clone, config_context

from ..accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    PureDP,
    compose,
)
from ..exceptions import (
    BudgetExceeded,
    NoiseDominatedWarning,
    NoPrivateResult,
    SeededNoiseWarning,
)
from ._check_fits import (
    _check_data,
    _data,
    _fit,
    _fitted_output,
    _Unreadable,
    privacy_of,
)
from ._random import held_objects
from ._warnings import user_frame
from .validation import (
    DEFAULT_DELTA,
    check_approx_privacy_params,
    check_privacy_params,
    check_zcdp_privacy_params,
)


def _configured_guarantee(estimator, epsilon, delta, rho=None):
    if delta is None:
        # A pipeline's documented default (1e-6, the estimators').
        delta = DEFAULT_DELTA
    guarantee = privacy_of(estimator).guarantee
    if guarantee == "approx_dp":
        return check_approx_privacy_params(epsilon, delta)
    if guarantee == "zcdp":
        return check_zcdp_privacy_params(epsilon, delta, rho)
    # A fit of Gaussian parts only, with no cap on its accountant, is
    # calibrated on the exact Gaussian curve.
    return check_privacy_params(
        epsilon,
        delta,
        rho,
        gaussian=estimator._on_exact_curve(),
        shares=estimator._exact_shares(),
    )


def check_privacy_params_validated_in_fit(estimator):
    """Out-of-range privacy parameters fail even with validation switched off.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 200)
    for params in (
        {"epsilon": 0.0},
        {"epsilon": -1.0},
        {"delta": 1.0},
        {"delta": -0.5},
    ):
        est = clone(estimator).set_params(**params)
        with config_context(skip_parameter_validation=True):
            try:
                _fit(est, X)
            except ValueError:
                continue
        raise AssertionError(f"{type(estimator).__name__} accepted {params}")


def check_geometry_resolved_privately(estimator):
    """With ``data_norm=None`` a private radius is found and paid for.

    The parameter stays None, ``data_norm_`` is set, and the radius step shows
    in ``budget_split_``; with ``bounds="private"``, the ranges step does.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    if "data_norm" not in estimator.get_params():
        return
    if isinstance(estimator.get_params().get("bounds"), str):
        # bounds="private": the ranges are found and paid for instead.
        est = clone(estimator).set_params(random_state=0)
        _fit(est, _data(scale=3.0))
        assert est.bounds_ is not None and "bounds" in est.budget_split_
        return
    est = clone(estimator).set_params(data_norm=None, epsilon=1.0, random_state=0)
    _fit(est, _data(scale=3.0))
    assert est.data_norm is None, "fit wrote to the data_norm parameter"
    assert est.data_norm_ > 0
    assert "radius" in est.budget_split_, "the private radius is not accounted for"


#: Fits of an unseeded check before it gives up on a private answer.
UNSEEDED_ATTEMPTS = 3


def _unseeded_fit(estimator, X):
    """Fit with fresh noise, again if the private answer is "no answer".

    "No answer" (:class:`~dpcov.exceptions.NoPrivateResult`) is a legitimate
    private outcome: ApproximateSubspace gives it in about 0.6% of fits on
    the checks' data (rows exactly on a subspace). The checks of unseeded
    fits test the noise, not that rate: they refit up to
    ``UNSEEDED_ATTEMPTS`` times (about 2e-7 to fail three times).
    """
    for attempt in range(UNSEEDED_ATTEMPTS):
        try:
            return _fit(estimator, X)
        except NoPrivateResult:
            if attempt == UNSEEDED_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def check_seeded_fits_reproducible(estimator):
    """The same seed gives the same fit; unseeded fits differ.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 3000)
    a = _fitted_output(_fit(clone(estimator).set_params(random_state=3), X))
    b = _fitted_output(_fit(clone(estimator).set_params(random_state=3), X))
    np.testing.assert_array_equal(a, b)
    if privacy_of(estimator).deterministic_release:
        # The randomness only decides whether to release; what is released
        # is a function of the data (ExactSubspace).
        return
    c = _fitted_output(_unseeded_fit(clone(estimator).set_params(random_state=None), X))
    d = _fitted_output(_unseeded_fit(clone(estimator).set_params(random_state=None), X))
    assert not np.allclose(c, d), "random_state=None fits are identical"
    # A Generator is advanced by each fit, like a RandomState in scikit-learn.
    est = clone(estimator).set_params(random_state=np.random.default_rng(0))
    first = _fitted_output(_unseeded_fit(est, X))
    assert not np.allclose(first, _fitted_output(_unseeded_fit(est, X)))


def check_budget_accounted(estimator):
    """The recorded steps compose to the configured budget, no more.

    The configured budget is recomputed from the parameters with
    :func:`~dpcov.utils.check_privacy_params`; the composition of
    ``budget_split_`` must equal it up to rounding and be at most
    ``guarantee_``, which must be at most the budget, and the reported
    (epsilon, delta, rho) must be within the parameters: all exactly, in
    floating point.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 3000)
    cases = (
        {"epsilon": 0.7, "delta": 1e-6, "rho": None},
        {"epsilon": 0.7, "delta": 0.0, "rho": None},
        {"epsilon": 0.7, "delta": 1e-6, "rho": 0.05},
    )
    for params in cases:
        if "rho" not in estimator.get_params():
            if params["rho"] is not None:
                continue
            params = {k: v for k, v in params.items() if k != "rho"}
        est = clone(estimator).set_params(random_state=0, **params)
        try:
            configured = _configured_guarantee(
                estimator, params["epsilon"], params["delta"], params.get("rho")
            )
        except ValueError:
            configured = None
        if configured is None:
            # delta=0 for an (epsilon, delta)-only or a zCDP-only estimator:
            # fit must refuse.
            try:
                _fit(est, X)
            except ValueError:
                continue
            raise AssertionError(f"{type(estimator).__name__} accepted {params}")
        _fit(est, X)
        composed = compose(est.budget_split_.values())
        # A pipeline's guarantee composes its steps' own, each composed of
        # its parts: a few ulps below the composition of its shares. An
        # estimator's is exact.
        slack = 1 - 1e-12 if hasattr(est, "steps") else 1.0
        if isinstance(configured, GaussianDP):
            # Gaussian steps on the zCDP budget that composes to mu: recorded
            # as the one Gaussian mechanism they make up, at most the ask.
            assert type(composed) is ZCDP and type(est.guarantee_) is GaussianDP
            assert math.isclose(composed.rho, configured.gaussian_rho(), rel_tol=1e-9)
            assert composed.rho <= configured.gaussian_rho()
            assert est.guarantee_ == GaussianDP.of_gaussian_steps(composed.rho)
            assert est.guarantee_.mu <= configured.mu
        elif isinstance(configured, ProfileDP):
            # Steps at the shares of the rho the profile was computed at,
            # recorded as that profile (which bounds each of them).
            running = est._running_budget(configured)
            assert type(composed) is ZCDP and type(est.guarantee_) is ProfileDP
            assert math.isclose(composed.rho, running.rho, rel_tol=1e-9)
            assert composed.rho <= running.rho
            assert est.guarantee_ == configured
        elif isinstance(configured, ApproxDP):
            assert type(composed) is type(configured) is type(est.guarantee_)
            assert math.isclose(composed.epsilon, configured.epsilon, rel_tol=1e-9)
            assert math.isclose(composed.delta, configured.delta, rel_tol=1e-9)
            assert est.guarantee_ == configured
            assert composed.epsilon <= est.guarantee_.epsilon
            assert composed.delta <= est.guarantee_.delta
        elif isinstance(configured, PureDP):
            assert type(composed) is type(configured) is type(est.guarantee_)
            assert math.isclose(composed.epsilon, configured.epsilon, rel_tol=1e-9)
            assert composed.epsilon * slack <= est.guarantee_.epsilon
            assert est.guarantee_.epsilon <= configured.epsilon
        else:
            assert type(composed) is type(configured) is type(est.guarantee_)
            assert math.isclose(composed.rho, configured.rho, rel_tol=1e-9)
            assert composed.rho * slack <= est.guarantee_.rho
            assert est.guarantee_.rho <= configured.rho
        if params.get("rho") is None:
            assert est.epsilon_spent_ <= params["epsilon"]
        else:
            assert est.rho_spent_ <= params["rho"]
        assert est.delta_spent_ <= params["delta"]


def _same_guarantee(a, b):
    if type(a) is not type(b):
        return False
    # Each parameter a number, or a tuple of them (a profile's parts).
    flat_a = np.hstack([np.ravel(x) for x in a._parameters()])
    flat_b = np.hstack([np.ravel(x) for x in b._parameters()])
    return flat_a.shape == flat_b.shape and bool(
        np.allclose(flat_a, flat_b, rtol=1e-9, atol=0)
    )


def _cap(guarantee, factor):
    # An accountant whose cap is ``factor`` times ``guarantee``, in its notion.
    if isinstance(guarantee, PureDP):
        return BudgetAccountant(epsilon=factor * guarantee.epsilon)
    if isinstance(guarantee, ApproxDP):
        return BudgetAccountant(
            epsilon=factor * guarantee.epsilon, delta=guarantee.delta
        )
    return BudgetAccountant(rho=factor * guarantee.to_zcdp().rho)


def check_accountant_charged(estimator):
    """A shared accountant records each fit and refuses before reading data.

    ``privacy_cost()`` (computed from the parameters) equals the fitted
    ``guarantee_`` and the configured budget; a fit under a cap below it
    raises ``BudgetExceeded`` without touching ``X`` (an input that fails on
    any read) and records nothing; under a cap equal to it the first fit is
    recorded and the second refused; ``clone`` keeps the same accountant.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 3000)
    params = estimator.get_params()
    configured = _configured_guarantee(
        estimator, params["epsilon"], params["delta"], params.get("rho")
    )
    cost = clone(estimator).privacy_cost()
    assert _same_guarantee(cost, configured), (cost, configured)

    tight = _cap(cost, 0.5)
    est = clone(estimator).set_params(accountant=tight, random_state=0)
    try:
        _fit(est, _Unreadable())
    except BudgetExceeded:
        pass
    else:
        raise AssertionError("a fit over the cap was not refused")
    assert len(tight) == 0, "a refused fit was recorded"

    exact = _cap(cost, 1.0)
    est = clone(estimator).set_params(accountant=exact, random_state=0)
    assert clone(est).accountant is exact, "clone copied the accountant"
    if isinstance(cost, GaussianDP | ProfileDP):
        # Under a cap (a filter in zCDP) the fit is calibrated in zCDP, the
        # terms the cap counts: below the exact curve's rho.
        cost = est.privacy_cost()
        assert type(cost) is ZCDP and cost.rho < exact.rho_cap, cost
    _fit(est, X)
    assert _same_guarantee(est.guarantee_, cost), (est.guarantee_, cost)
    entries = len(exact)
    if hasattr(est, "steps"):
        # A pipeline records one entry per private step; they compose to it.
        assert _same_guarantee(compose([g for _, g in exact.ledger]), cost)
    else:
        (label, recorded) = exact.ledger[0]
        assert entries == 1 and recorded == cost and label == type(est).__name__
    try:
        _fit(est, _Unreadable())
    except BudgetExceeded:
        pass
    else:
        raise AssertionError("a second fit over the cap was not refused")
    assert len(exact) == entries, "a refused fit was recorded"


def check_no_undocumented_outputs(estimator):
    """No warning on heavily clipped data; every fitted attribute is documented.

    A fit on rows far outside ``data_norm`` must not warn (a warning about
    clipping would reveal how many rows were clipped; a
    :class:`~dpcov.exceptions.NoiseDominatedWarning`, computed from the
    release, is allowed), and every public
    attribute ending in ``_`` must be listed in the class docstring's
    Attributes section, where its privacy status is stated.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    from numpydoc.docscrape import ClassDoc  # a test dependency

    X = _check_data(estimator, 3000, scale=50.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = _fit(clone(estimator).set_params(random_state=0), X)
    # A NoiseDominatedWarning is post-processing of the release (the fit may
    # be honestly noisy on these rows), not a report about clipping; a
    # SeededNoiseWarning is about the seed this check passes (a parameter).
    expected = (NoiseDominatedWarning, SeededNoiseWarning)
    caught = [w for w in caught if not issubclass(w.category, expected)]
    assert not caught, f"fit warned: {[str(w.message) for w in caught]}"
    documented = {
        item.name.split(" ")[0] for item in ClassDoc(type(estimator))["Attributes"]
    }
    fitted = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
    undocumented = fitted - documented
    assert not undocumented, f"undocumented fitted attributes: {sorted(undocumented)}"


def check_seeded_fit_warns(estimator):
    """A seeded fit warns once, at the caller's line; an unseeded fit does not.

    A seed lets anyone who knows it regenerate the noise, so ``fit`` says so
    with one :class:`~dpcov.exceptions.SeededNoiseWarning` (however many
    inner estimators share the seed), attributed to the first frame outside
    dpcov, scikit-learn and joblib; with ``random_state=None`` it stays
    silent.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 3000)
    for seed in (12345, np.random.RandomState(0), np.random.default_rng(0)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _fit(clone(estimator).set_params(random_state=seed), X)
            caller = user_frame()
        seeded = [w for w in caught if issubclass(w.category, SeededNoiseWarning)]
        assert len(seeded) == 1, f"{len(seeded)} SeededNoiseWarnings for {seed!r}"
        assert seeded[0].filename == caller.f_code.co_filename, (
            f"the warning names {seeded[0].filename}, not the caller's file"
        )
        assert "12345" not in str(seeded[0].message), "the message quotes the seed"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _unseeded_fit(clone(estimator).set_params(random_state=None), X)
    assert not [w for w in caught if issubclass(w.category, SeededNoiseWarning)]


def _random_states(estimator, path="", seen=None):
    # (path, value) of every random_state reachable from a fitted estimator:
    # its parameters (nested ones included) and those of the fitted
    # estimators it holds (PCA's covariance_estimator_, a search's
    # best_estimator_, ...), to any depth.
    seen = set() if seen is None else seen
    if id(estimator) in seen:
        return
    seen.add(id(estimator))
    for key, value in estimator.get_params(deep=True).items():
        if key.rsplit("__", 1)[-1] == "random_state":
            yield f"{path}{key}", value
    for key, value in vars(estimator).items():
        if key.endswith("_") and hasattr(value, "get_params"):
            yield from _random_states(value, f"{path}{key}.", seen)


_GENERATOR_TYPES = (
    np.random.Generator,
    np.random.RandomState,
    np.random.BitGenerator,
    np.random.SeedSequence,
)


def check_release_carries_no_seed(estimator):
    """A release fitted with ``random_state=None`` cannot rebuild its noise.

    No ``random_state`` reachable from the fitted estimator (its parameters,
    nested ones included, and the fitted estimators it holds) is anything
    but None, and no generator or seed sequence is held anywhere in its
    attributes: nothing whose state could replay the fit's draws. And a
    clone of the release, refitted on the same rows, gives
    another release: its noise is fresh, so refitting it on zero rows and
    subtracting cannot cancel the release's noise.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.
    """
    X = _check_data(estimator, 3000)
    release = _unseeded_fit(clone(estimator).set_params(random_state=None), X)
    carried = {k: v for k, v in _random_states(release) if v is not None}
    assert not carried, f"the fitted estimator carries random states: {carried}"
    held = [
        path
        for path, obj in held_objects(release, type(release).__name__)
        if isinstance(obj, _GENERATOR_TYPES)
    ]
    assert not held, f"the fitted estimator holds generators: {held}"
    if hasattr(release, "best_estimator_") or getattr(
        estimator, "_deterministic_release", False
    ):
        # A search's model was fitted on a private part of the rows (see
        # tests/model_selection/test_search.py for its refit); a
        # deterministic release has no noise to rebuild.
        return
    refit = _unseeded_fit(clone(release), X)
    assert not np.allclose(_fitted_output(refit), _fitted_output(release)), (
        "a clone of the release, refitted on the same rows, rebuilt it"
    )


DP_CHECKS = [
    check_privacy_params_validated_in_fit,
    check_geometry_resolved_privately,
    check_seeded_fits_reproducible,
    check_budget_accounted,
    check_accountant_charged,
    check_no_undocumented_outputs,
    check_seeded_fit_warns,
    check_release_carries_no_seed,
]


def parametrize_with_dp_checks(estimators):
    """Pytest decorator running every DP check on every estimator.

    Parameters
    ----------
    estimators : list of estimator instances
        Estimators to check, with their geometry parameters set.

    Returns
    -------
    decorator : callable
        A ``pytest.mark.parametrize("estimator, check", ...)`` decorator.
    """
    import pytest

    cases = [(est, check) for est in estimators for check in DP_CHECKS]
    ids = [f"{type(est).__name__}-{check.__name__}" for est, check in cases]
    return pytest.mark.parametrize("estimator, check", cases, ids=ids)
