"""The public plan of MultivariateGaussian: CoinPress's budget planner and the
recursive preconditioning's schedule."""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings

import numpy as np
import pytest

from dpcov.accounting import ZCDP, compose, zcdp_rho
from dpcov.distributions import MultivariateGaussian
from dpcov.distributions._gaussian_plan import (
    CENTRED_SHARES,
    MEAN_SHARES,
    CoinpressPlan,
    KlsuPlan,
    PlanInputs,
    centred_plans,
    mean_error,
    mean_share,
    plan_coinpress,
    plan_gaussian,
    plan_klsu,
    plan_mean,
    prior_errors,
)
from dpcov.exceptions import NoiseDominatedWarning

# The defaults' budget (epsilon = 1, delta = 1e-6) and scaled bounds
# (max_variance / min_variance = 1e8, mean_bound / sqrt(min_variance) = 1e6).
DEFAULT_RHO = zcdp_rho(1.0, 1e-6)


def _inputs(n, d, rho, condition, radius, method="coinpress", min_variance=1.0):
    # The plan's inputs as MultivariateGaussian builds them, for
    # min_variance=1 unless told (so that radius is mean_bound).
    return PlanInputs(
        n,
        d,
        ZCDP(rho),
        condition,
        radius,
        method=method,
        beta=0.1,
        n_iterations="auto",
        min_variance=min_variance,
        mean_bound=radius * math.sqrt(min_variance),
    )


# (n, d, rho, K, radius) and the plan's prior parts, rows and mean frame.
CASES = [
    # The defaults at n = 20000, d = 5: pairs, both parts private.
    ((20_000, 5, DEFAULT_RHO, 1e8, 1e6), (), "pairs", "whitened"),
    # The cells of MultivariateGaussian's tests: the centred layout at K =
    # 1e2, the prior covariance at K = 1e4, the prior mean for a known mean
    # (radius 0), and both priors for too few rows.
    ((4000, 10, 0.1, 1e2, 10 * math.sqrt(10)), (), "centred", "whitened"),
    ((4000, 10, 0.1, 1e4, 10.0), ("covariance",), "pairs", "public"),
    ((100_000, 10, 0.1, 1e2, 0.0), ("mean",), "pairs", "public"),
    ((8, 10, 1e-4, 1e4, 10.0), ("covariance", "mean"), "pairs", "public"),
]


@pytest.mark.parametrize(("args", "parts", "rows", "frame"), CASES)
def test_plan_fields(args, parts, rows, frame):
    # The plan's fields agree with each other: its shares compose to rho
    # (never more), a part from its prior has no plan, the centred layout
    # has a coarse mean's plan and whitens, and the choice is one of the
    # public candidates.
    inputs = _inputs(*args)
    plan = plan_coinpress(inputs)
    assert isinstance(plan, CoinpressPlan) and plan.inputs == inputs
    assert (plan.prior_parts, plan.rows, plan.frame) == (parts, rows, frame)
    rho = inputs.budget.rho
    assert compose(plan.shares.values()).rho == pytest.approx(rho, rel=1e-12)
    assert compose(plan.shares.values()).rho <= rho
    assert (plan.cov_plan is None) == ("covariance" in parts)
    assert (plan.coarse_plan is None) == (rows == "pairs")
    if parts == ("covariance", "mean"):
        assert plan.shares == {"not spent (public prior)": inputs.budget}
    share, prior_parts, centred = mean_share(inputs)
    assert prior_parts == parts
    assert share in (0.0, *MEAN_SHARES, 1.0)
    if rows == "centred":
        assert centred in CENTRED_SHARES and share == 0.0
        assert set(plan.shares) == {"coarse mean", "cov", "mean"}
    else:
        assert centred is None


@pytest.mark.parametrize(("args", "parts", "rows", "frame"), CASES[:3])
def test_estimator_follows_its_plan(args, parts, rows, frame):
    # The fit's public attributes are its plan's: the layout, the mean's
    # frame, the prior parts and the covariance's steps and budgets.
    n, d, rho, condition, radius = args
    X = np.random.default_rng(0).normal(size=(n, d))
    est = MultivariateGaussian(
        rho=rho, min_variance=1.0, max_variance=condition, mean_bound=radius
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        est.set_params(random_state=0).fit(X)
    plan = plan_gaussian(_inputs(*args))
    assert est.covariance_rows_ == plan.rows
    assert est.mean_frame_ == plan.frame
    assert est.prior_parts_ == plan.prior_parts
    if plan.cov_plan is not None:
        assert est.n_iterations_["covariance"] == plan.cov_plan.n_steps
        steps = [v.rho for k, v in est.budget_split_.items() if k.startswith("cov")]
        assert steps == list(plan.cov_plan.rhos)
    if plan.coarse_plan is not None:
        assert est.n_iterations_["coarse mean"] == plan.coarse_plan.n_steps


def test_infinite_budget_keeps_both_parts():
    # No noise: no candidate is weighed, both parts are private in pairs.
    plan = plan_coinpress(_inputs(4000, 10, math.inf, 1e2, 10.0))
    assert set(plan.shares) == {"cov", "mean"}
    assert plan.prior_parts == () and plan.rows == "pairs"
    assert plan.cov_plan is not None and plan.coarse_plan is None


def test_prior_errors():
    # sqrt(d) (1 - 1/K) for the identity, the radius for the zero mean.
    assert prior_errors(_inputs(100, 4, 0.1, 4.0, 3.0)) == (1.5, 3.0)


def test_mean_error_frames():
    # Without a covariance plan only the public frame, at the public
    # frame's planned error; with tight bounds (K = 1 + 1e-4) the public
    # frame is as good as any whitening, with the defaults' K = 1e8 the
    # whitened frame wins.
    inputs = _inputs(20_000, 5, DEFAULT_RHO, 1e8, 1e6)
    public = plan_mean(inputs, 0.01, inputs.radius, inputs.condition)
    assert mean_error(inputs, 0.01, None) == (public.predicted_error, "public")
    assert plan_coinpress(inputs).frame == "whitened"
    tight = _inputs(20_000, 5, DEFAULT_RHO, 1.0 + 1e-4, 1e4)
    assert plan_coinpress(tight).frame == "public"


@pytest.mark.parametrize("q", CENTRED_SHARES)
def test_centred_plans_compose(q):
    # The coarse mean (q1), the covariance (1 - q1 - q3) and the final mean
    # (q3) compose to rho.
    shares, coarse, cov = centred_plans(_inputs(4000, 10, 0.1, 1e2, 10.0), q)
    assert compose(shares.values()).rho == pytest.approx(0.1, rel=1e-12)
    assert compose(shares.values()).rho <= 0.1
    assert math.fsum(coarse.rhos) == pytest.approx(q[0] * 0.1, rel=1e-9)
    assert math.fsum(cov.rhos) == pytest.approx((1 - q[0] - q[1]) * 0.1, rel=1e-9)


def test_plan_klsu():
    # A third of the rows (an even count) for the preconditioner, whose
    # rounds start from the public condition bound.
    inputs = _inputs(1_000_000, 10, 0.5, 1e3, 1e4, method="klsu")
    plan = plan_gaussian(inputs)
    assert isinstance(plan, KlsuPlan) and plan.inputs == inputs
    assert plan.n_pre == 333_332
    assert plan.conditions[0] == 1e3 and len(plan.conditions) > 1
    assert plan.conditions[-1] < plan.conditions[0]


def test_plan_klsu_checks():
    # The public checks, before the data are read.
    with pytest.raises(ValueError, match="at least 6 rows"):
        plan_klsu(_inputs(5, 4, 0.1, 1e8, 1e6, method="klsu"))
    with pytest.raises(ValueError, match="cannot reach a condition bound"):
        plan_klsu(_inputs(1000, 4, DEFAULT_RHO, 1e8, 1e6, method="klsu"))
    # KVMean's coarse histogram would need more bins than float64 counts.
    inputs = _inputs(30, 2, DEFAULT_RHO, 4.0, 1e25, "klsu", min_variance=1e-150)
    with pytest.raises(ValueError, match="bins"):
        plan_klsu(inputs)
