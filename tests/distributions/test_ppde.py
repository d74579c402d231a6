"""Tests for dpcov.distributions._ppde: the marginals of product distributions."""

import itertools
import math

import numpy as np
import pytest
from scipy import sparse, stats

from dpcov.distributions._ppde import (
    ORIENTED_BOUND,
    bernoulli_tv_bounds,
    binary_row_distance,
    naive_product_release,
    ppde_min_samples,
    ppde_public_requirements,
    ppde_release,
    ppde_round,
    ppde_schedule,
    ppde_step_error,
    ppde_truncation_radius,
    truncated_binary_mean,
)

from .._privacy_checks import recorded_releases


def _bernoulli_rows(p, n, rng):
    return rng.random((n, len(p))) < np.asarray(p)


def _reference_truncated_mean(rows, radius):
    # Written out independently of the module: scale each row to norm <= B.
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1)
    with np.errstate(divide="ignore"):
        scale = np.where(norms > radius, radius / norms, 1.0)
    return (rows * scale[:, None]).mean(axis=0)


def _bernstein_radius(u, k, n_r, n_rounds, beta):
    # Truncation radius (Bernstein): B = sqrt(mu + sqrt(2 mu L) + 2 L / 3), mu = u k,
    # L = log(2 n_r (R_p + 1) / beta).
    L = math.log(2 * n_r * n_rounds / beta)
    mu = u * k
    return math.sqrt(mu + math.sqrt(2 * mu * L) + 2 * L / 3)


def _mu_interval(above_x, above_x_prime, alpha=1e-3):
    # Gaussian-DP audit (Dong, Roth and Su, 2022, Gaussian differential
    # privacy): with TPR = P(T > t | X) and FPR =
    # P(T > t | X'), mu = Phi^-1(TPR) - Phi^-1(FPR) for a Gaussian mechanism
    # whose projection is N(m, s^2) vs N(m', s^2), at every threshold t.
    # Clopper-Pearson intervals at 1 - alpha / 2 each give a 1 - alpha
    # interval for mu.
    tpr = stats.binomtest(int(above_x.sum()), above_x.size)
    fpr = stats.binomtest(int(above_x_prime.sum()), above_x_prime.size)
    tpr = tpr.proportion_ci(1 - alpha / 2, method="exact")
    fpr = fpr.proportion_ci(1 - alpha / 2, method="exact")
    return (
        stats.norm.ppf(tpr.low) - stats.norm.ppf(fpr.high),
        stats.norm.ppf(tpr.high) - stats.norm.ppf(fpr.low),
    )


def _audit(release_x, release_x_prime, n_runs, seed):
    # Project each release on a fixed direction (inside release_*), set the
    # threshold on separate calibration runs, count the event on fresh runs.
    cal = 500
    t_x = np.array([release_x(seed + i) for i in range(cal)])
    t_xp = np.array([release_x_prime(seed + 10**6 + i) for i in range(cal)])
    threshold = 0.5 * (np.median(t_x) + np.median(t_xp))
    start = seed + 2 * 10**6
    t_x = np.array([release_x(start + i) for i in range(n_runs)])
    t_xp = np.array([release_x_prime(start + 10**6 + i) for i in range(n_runs)])
    return _mu_interval(t_x > threshold, t_xp > threshold)


# --------------------------------------------------------------------------
# Geometry: sensitivities, radii, plan


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_binary_row_distance_is_the_largest_distance(k):
    # Brute force over all pairs of {0, 1}^k: the bound holds, and it is
    # attained when B**2 is an integer (disjoint supports of min(B**2, k/2)
    # ones, for even k or k >= 2 B**2).
    cube = np.array(list(itertools.product([0, 1], repeat=k)), dtype=float)
    for radius in [0.5, 1.0, math.sqrt(2), 1.5, 2.0, 3.0, np.inf]:
        trunc = (
            cube
            * np.minimum(
                1.0,
                radius / np.maximum(np.linalg.norm(cube, axis=1), 1e-300),
            )[:, None]
        )
        gaps = np.linalg.norm(trunc[:, None, :] - trunc[None, :, :], axis=2)
        bound = binary_row_distance(k, radius)
        assert gaps.max() <= bound + 1e-12
        integral = np.isinf(radius) or float(radius**2).is_integer()
        if integral and (k % 2 == 0 or k >= 2 * radius**2):
            assert gaps.max() == pytest.approx(bound)
    # The generic 2 B (two points of a ball) is never attained by binary rows.
    assert binary_row_distance(100, 2.0) == pytest.approx(2.0 * math.sqrt(2))


def test_truncated_mean_against_reference(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    rows = rng.random((300, 25)) < rng.random(25)
    rows[:20] = True  # rows of norm 5, truncated below
    for radius in [0.5, 1.0, 2.5, 4.0, 10.0, np.inf]:
        expected = _reference_truncated_mean(rows, radius)
        np.testing.assert_allclose(truncated_binary_mean(rows, radius), expected)
        np.testing.assert_allclose(
            truncated_binary_mean(sparse.csr_array(rows), radius), expected
        )
        # Numeric input: nonzero counts as 1.
        np.testing.assert_allclose(truncated_binary_mean(3.0 * rows, radius), expected)


def test_truncation_radius_is_bernstein():
    for u, k, n_r, rounds, beta in [
        (0.5, 1000, 5000, 11, 0.1),
        (1e-3, 40, 200, 3, 0.5),
    ]:
        assert ppde_truncation_radius(u, k, n_r, rounds, beta) == pytest.approx(
            _bernstein_radius(u, k, n_r, rounds, beta), rel=1e-14
        )


def test_truncation_rate_is_zero_in_model():
    # On in-model data no row is truncated (the radius fails with
    # probability at most beta / 2 = 0.05 over all rows and rounds).
    rng = np.random.default_rng(0)
    p = np.r_[np.full(200, 0.002), 0.3, 0.1, 0.05, 0.02, 0.01, 0.9]
    X = _bernoulli_rows(p, 60_000, rng)
    release = ppde_release(X, rho=0.5, rng=rng)
    oriented = X ^ release.flipped
    for step in release.rounds:
        rows = oriented[step.rows][:, step.active]
        assert np.all(rows.sum(axis=1) <= step.radius**2)


@pytest.mark.parametrize("orientation", ["private", "known"])
@pytest.mark.parametrize("n, d", [(10, 1), (1000, 16), (12345, 1000), (10**6, 5000)])
def test_schedule(n, d, orientation):
    plan = ppde_schedule(n, d, orientation=orientation)
    u_first = ORIENTED_BOUND if orientation == "private" else 0.5
    # Step 0 uses floor(n / 10) rows (at least one) only when it is private.
    expected = max(1, n // 10) if orientation == "private" else 0
    assert plan.n_orientation == expected
    # Every row is used once; blocks are as equal as possible.
    assert plan.n_orientation + sum(plan.block_sizes) == n
    assert max(plan.block_sizes) - min(plan.block_sizes) <= 1
    # u_r = u_1 / 2**(r - 1); the final bound is <= 1/d, the one before > 1/d
    # (R_p = ceil(log2(u_1 d)) is the fewest rounds that get there).
    u = np.array(plan.upper_bounds)
    np.testing.assert_array_equal(u, u_first / 2.0 ** np.arange(plan.n_rounds))
    assert u[-1] <= 1.0 / d
    if plan.n_rounds > 1:
        assert u[-2] > 1.0 / d
    assert plan.n_rounds == max(0, math.ceil(math.log2(u_first * d))) + 1


def test_min_samples_is_the_boundary():
    for d, rho, orientation in [(10, 0.5, "private"), (300, 0.05, "known")]:
        n_min = ppde_min_samples(d, rho=rho, orientation=orientation)

        def ok(n, d=d, rho=rho, orientation=orientation):
            steps = ppde_public_requirements(n, d, rho=rho, orientation=orientation)
            return all(err <= margin for _, err, margin in steps)

        assert ok(n_min) and not ok(n_min - 1)


# --------------------------------------------------------------------------
# Noise scales against the closed form


def test_naive_noise_scale(global_random_seed):
    # sigma = sqrt(d) / (n sqrt(2 rho)) exactly (L2 sensitivity sqrt(d) / n
    # of the mean of binary rows), and the release is the empirical mean plus
    # Gaussian noise of that scale. One fit checks it exactly: the recorded
    # release's value is the mean (recomputed here), its law and scale the
    # closed form's, and the step's noisy value is the recorded one (the
    # sampler's law is tested in tests/mechanisms).
    rng = np.random.default_rng(global_random_seed)
    n, d, rho = 100, 400, 0.3
    X = _bernoulli_rows(rng.random(d), n, rng)
    sigma = math.sqrt(d) / (n * math.sqrt(2 * rho))
    with recorded_releases() as releases:
        step = naive_product_release(X, rho=rho, rng=rng).rounds[0]
    (release,) = releases
    assert step.sigma == pytest.approx(sigma, rel=1e-14)
    assert step.sensitivity == pytest.approx(math.sqrt(d) / n, rel=1e-14)
    assert release.law == "gaussian"
    assert release.scale == pytest.approx(sigma, rel=1e-14)
    np.testing.assert_allclose(release.value, X.mean(axis=0), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(step.noisy, release.noisy)


def test_ppde_noise_scale_per_round(global_random_seed):
    # Per step: the release is the truncated mean of the rows the step read
    # (recomputed here) plus N(0, sigma_r^2), with sigma_r = min(sqrt(2) B_r,
    # sqrt(|S_r|)) / (n_r sqrt(2 rho)) (orientation step: sqrt(d) / (n_0
    # sqrt(2 rho))). The steps' additive releases are recorded in order (the
    # orientation step, then each round that reads its block); for each, the
    # value must be the recomputed mean, the law and scale the closed form's,
    # and the step's noisy value the recorded one: exact on one fit (the
    # sampler's law is tested in tests/mechanisms).
    rng = np.random.default_rng(global_random_seed)
    rho, beta = 0.2, 0.1
    # 48 tiny marginals keep |S_r| large (the sqrt(2) B_r branch), the rest
    # lock in along the way; 20 all-ones rows force truncation.
    p = np.r_[np.full(48, 0.003), 0.9, 0.6, 0.45, 0.3, 0.2, 0.12, 0.08, 0.05]
    p = np.r_[p, 0.03, 0.02, 0.012, 0.008, 0.005, 0.5, 0.7, 0.35]
    X = _bernoulli_rows(p, 20_000, rng)
    X[rng.choice(20_000, 20, replace=False)] = True
    n_rounds = ppde_schedule(*X.shape).n_rounds
    with recorded_releases() as releases:
        release = ppde_release(X, rho=rho, rng=rng, beta=beta)
    steps = [release.orientation] + [s for s in release.rounds if s.active.size]
    assert len(releases) == len(steps)
    step = release.orientation
    n0, d = step.rows.size, X.shape[1]
    sigma = math.sqrt(d) / (n0 * math.sqrt(2 * rho))
    expected = [(X[step.rows].mean(axis=0), sigma)]
    oriented = X ^ release.flipped
    branches = set()
    for step in steps[1:]:
        k, n_r = step.active.size, step.rows.size
        radius = _bernstein_radius(step.upper_bound, k, n_r, n_rounds, beta)
        assert step.radius == pytest.approx(radius, rel=1e-12)
        distance = min(math.sqrt(2) * radius, math.sqrt(k))
        branches.add(math.sqrt(2) * radius < math.sqrt(k))
        rows = oriented[step.rows][:, step.active]
        sigma = distance / (n_r * math.sqrt(2 * rho))
        expected.append((_reference_truncated_mean(rows, radius), sigma))
    assert branches == {True, False}, "both sensitivity branches must be exercised"
    for step, recorded, (value, sigma) in zip(steps, releases, expected, strict=True):
        assert step.sigma == pytest.approx(sigma, rel=1e-12)
        assert recorded.law == "gaussian"
        assert recorded.scale == pytest.approx(sigma, rel=1e-12)
        np.testing.assert_allclose(recorded.value, value, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(step.noisy, recorded.noisy)


# --------------------------------------------------------------------------
# Privacy: disjoint blocks and audits on worst-case neighbours


class _Recorder:
    """Array wrapper that logs every row index read through ``X[indices]``."""

    def __init__(self, X):
        self.X = X
        self.shape = X.shape
        self.reads = []

    def __getitem__(self, index):
        index = np.asarray(index)
        assert index.ndim == 1 and index.dtype.kind == "i", "rows only, by index"
        self.reads.append(index.copy())
        return self.X[index]


@pytest.mark.parametrize("orientation", ["private", "known"])
def test_each_row_is_read_exactly_once(orientation, global_random_seed):
    # Every row index is read by exactly one step (parallel
    # composition); the tiny marginals keep coordinates active until the final
    # round, so no block is skipped.
    rng = np.random.default_rng(global_random_seed)
    p = np.r_[np.full(30, 0.001), 0.4, 0.2, 0.1, 0.05]
    X = _bernoulli_rows(p, 9_000, rng)
    recorder = _Recorder(X)
    release = ppde_release(recorder, rho=1.0, rng=rng, orientation=orientation)
    reads = np.concatenate(recorder.reads)
    np.testing.assert_array_equal(np.sort(reads), np.arange(X.shape[0]))
    plan = ppde_schedule(*X.shape, orientation=orientation)
    assert len(recorder.reads) == plan.n_blocks
    # The records say the same.
    steps = ([release.orientation] if release.orientation else []) + release.rounds
    np.testing.assert_array_equal(np.concatenate([step.rows for step in steps]), reads)
    assert [step.rows.size for step in release.rounds] == list(plan.block_sizes)


@pytest.mark.slow
def test_naive_audit_matches_rho():
    # Worst-case neighbours for the empirical marginals: one row all ones vs
    # all zeros, a shift of sqrt(d) / n along u = 1 / sqrt(d): a rho-zCDP
    # Gaussian mechanism is exactly sqrt(2 rho)-GDP there. The 99.9% interval
    # of mu must contain sqrt(2 rho) (no leak, no excess noise), and with
    # sigma / 2 (rho' = 4 rho) its lower end must exceed sqrt(2 rho).
    n, d, rho = 60, 10, 0.5
    X = np.zeros((n, d), dtype=bool)
    X[1::2] = True  # other rows: marginals near 1/2
    X_prime = X.copy()
    X[0], X_prime[0] = True, False
    u = np.full(d, 1 / math.sqrt(d))

    def run(data, rho_run):
        return lambda seed: float(
            u
            @ naive_product_release(data, rho=rho_run, rng=np.random.default_rng(seed))
            .rounds[0]
            .noisy
        )

    target = math.sqrt(2 * rho)
    low, high = _audit(run(X, rho), run(X_prime, rho), 10_000, seed=1)
    assert low <= target <= high
    low, _ = _audit(run(X, 4 * rho), run(X_prime, 4 * rho), 10_000, seed=2)
    assert low > target


@pytest.mark.slow
@pytest.mark.parametrize("branch", ["sqrt(k)", "sqrt(2) B"])
def test_ppde_round_audit_matches_rho(branch):
    # One PPDE round on worst-case neighbouring blocks, for each branch of
    # the sensitivity min(sqrt(2) B, sqrt(k)) / n_r: with k = 16 and u = 1/2
    # the all-ones row (norm 4 < B) against the all-zeros row is at distance
    # sqrt(k); with k = 400 and u = 0.005, two rows with disjoint supports of
    # 200 ones are both truncated to norm B, at distance sqrt(2) B. Either
    # way the audited mu must be sqrt(2 rho) (the paper's 2 B would give
    # sqrt(rho), outside the interval); with sigma / 2 it must exceed it.
    rho, n_r = 0.5, 50
    rng = np.random.default_rng(0)
    if branch == "sqrt(k)":
        k, u = 16, 0.5
        x, x_prime = np.ones(k, dtype=bool), np.zeros(k, dtype=bool)
    else:
        k, u = 400, 0.005
        x, x_prime = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
        x[:200], x_prime[200:] = True, True
    rows = rng.random((n_r, k)) < u / 2
    rows_prime = rows.copy()
    rows[0], rows_prime[0] = x, x_prime
    radius = ppde_truncation_radius(u, k, n_r, 10, 0.1)
    shift = _reference_truncated_mean(rows, radius) - _reference_truncated_mean(
        rows_prime, radius
    )
    bound = binary_row_distance(k, radius) / n_r
    assert np.linalg.norm(shift) == pytest.approx(bound)  # worst case attained
    assert (math.sqrt(2) * radius < math.sqrt(k)) == (branch == "sqrt(2) B")
    direction = shift / np.linalg.norm(shift)

    def run(data, rho_run):
        def release(seed):
            noisy, *_ = ppde_round(
                data,
                upper_bound=u,
                n_rounds=10,
                beta=0.1,
                rho=rho_run,
                rng=np.random.default_rng(seed),
            )
            return float(direction @ noisy)

        return release

    target = math.sqrt(2 * rho)
    low, high = _audit(run(rows, rho), run(rows_prime, rho), 10_000, seed=3)
    assert low <= target <= high
    low, _ = _audit(run(rows, 4 * rho), run(rows_prime, 4 * rho), 10_000, seed=4)
    assert low > target


# --------------------------------------------------------------------------
# Accuracy: the invariant and total variation


def _worst_case_error(plan, step, d, rho, beta):
    # Error bound of a step (ppde_step_error) with |S_r| = d, the worst case.
    if step == "orientation":
        m, u, variance = plan.n_orientation, 1.0, 0.25
        sigma = math.sqrt(d) / (m * math.sqrt(2 * rho))
    else:
        m, u = plan.block_sizes[step], plan.upper_bounds[step]
        variance = 0.25 if u >= 0.5 else u * (1 - u)
        radius = _bernstein_radius(u, d, m, plan.n_rounds, beta)
        sigma = min(math.sqrt(2) * radius, math.sqrt(d)) / (m * math.sqrt(2 * rho))
    beta_step = beta / (2 * plan.n_blocks)
    return ppde_step_error(m, d, variance=variance, sigma=sigma, beta=beta_step)


def test_invariant_and_tv_once_n_meets_every_round(global_random_seed):
    # The invariant of Kamath et al. (2019), Claims 5.13-5.14. At n = 40000,
    # d = 8, rho = 50 every step's error bound E_r (Bernstein + Gaussian tails,
    # union bounds; with |S_r| = d) is within its margin (1/8 for the
    # orientation, u_r / 8 for round r), so with probability >= 1 - beta = 0.99
    # a trial satisfies: every oriented marginal <= 5/8; coordinates moving on
    # from round r have p <= u_{r+1}; those locked in round r have p >= u_r / 8.
    # Then every estimate is within E_r of p_j (clipping to an interval that
    # contains p_j only helps), so TV <= sqrt(sum_j E_r(j)**2 / (p_j (1 - p_j)))
    # (TV <= sqrt(1 - BC**2), -2 log BC <= KL <= chi-square). Required: >= 95%
    # of trials; with failure probability <= 0.01 each, 6+ failures in 100 has
    # probability < 6e-4.
    n, d, rho, beta = 40_000, 8, 50.0, 0.01
    # Marginals at the lock-in thresholds u_r / 4 (5/32, 5/64, 5/128) and
    # near 1/2 (either orientation is then correct), plus tiny and flipped.
    p = np.array([0.85, 0.66, 0.5, 0.3, 0.16, 0.08, 0.04, 0.001])
    plan = ppde_schedule(n, d)
    errors = {
        step: _worst_case_error(plan, step, d, rho, beta)
        for step in ["orientation", *range(plan.n_rounds)]
    }
    assert errors["orientation"] <= 1 / 8
    for r, u in enumerate(plan.upper_bounds[:-1]):  # the partitioning rounds
        assert errors[r] <= u / 8
    rng = np.random.default_rng(global_random_seed)
    good = 0
    for _ in range(100):
        X = _bernoulli_rows(p, n, rng)
        release = ppde_release(X, rho=rho, rng=rng, beta=beta)
        oriented = np.where(release.flipped, 1 - p, p)
        ok = bool(np.all(oriented <= ORIENTED_BOUND))
        for step in release.rounds[:-1]:
            u = step.upper_bound
            moving = np.setdiff1d(step.active, step.locked)
            ok &= bool(np.all(oriented[moving] <= u / 2))
            ok &= bool(np.all(oriented[step.locked] >= u / 8))
        bound = math.sqrt(
            sum(
                errors[release.set_in_round[j]] ** 2 / (p[j] * (1 - p[j]))
                for j in range(d)
            )
        )
        ok &= bernoulli_tv_bounds(p, release.marginals)[1] <= bound
        good += ok
    assert good >= 95


def test_tv_bounds_against_enumeration(global_random_seed):
    # Exact TV by enumerating {0, 1}^d (d = 8) lies between the bounds.
    rng = np.random.default_rng(global_random_seed)
    cube = np.array(list(itertools.product([0, 1], repeat=8)), dtype=bool)
    for scale in [0.01, 0.1, 0.5]:
        p = rng.random(8)
        q = np.clip(p + scale * rng.standard_normal(8), 0, 1)
        prob_p = np.prod(np.where(cube, p, 1 - p), axis=1)
        prob_q = np.prod(np.where(cube, q, 1 - q), axis=1)
        tv = 0.5 * np.abs(prob_p - prob_q).sum()
        lower, upper = bernoulli_tv_bounds(p, q)
        assert lower - 1e-12 <= tv <= upper + 1e-12
        bc = np.sum(np.sqrt(prob_p * prob_q))
        assert lower == pytest.approx(1 - bc)
        assert upper == pytest.approx(math.sqrt(1 - bc**2))


def test_tv_bounds_edge_cases():
    assert bernoulli_tv_bounds([0.3, 0.0, 1.0], [0.3, 0.0, 1.0]) == (0.0, 0.0)
    assert bernoulli_tv_bounds([0.0], [1.0]) == (1.0, 1.0)
    # d = 5000 tiny differences: the product of 5000 factors does not
    # underflow or round to 1 (log space, expm1).
    p = np.full(5000, 0.001)
    lower, upper = bernoulli_tv_bounds(p, p * 1.01)
    per_coord = 1 - (math.sqrt(0.001 * 0.00101) + math.sqrt(0.999 * (1 - 0.00101)))
    assert lower == pytest.approx(-math.expm1(5000 * math.log1p(-per_coord)))
    assert 0 < lower < upper < 0.1


# --------------------------------------------------------------------------
# Input handling


def test_sparse_input_gives_the_same_release():
    # CSR input is processed without densifying; same draws, same release.
    rng = np.random.default_rng(0)
    p = np.r_[0.9, 0.95, 0.5, 0.2, 0.01, np.full(40, 0.02)]
    X = _bernoulli_rows(p, 30_000, rng)
    for orientation in ["private", "known"]:
        dense = ppde_release(
            X, rho=0.3, rng=np.random.default_rng(5), orientation=orientation
        )
        csr = ppde_release(
            sparse.csr_matrix(X.astype(np.int8)),
            rho=0.3,
            rng=np.random.default_rng(5),
            orientation=orientation,
        )
        np.testing.assert_array_equal(dense.marginals, csr.marginals)
    dense = naive_product_release(X, rho=0.3, rng=np.random.default_rng(5))
    csr = naive_product_release(
        sparse.csr_array(X), rho=0.3, rng=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(dense.marginals, csr.marginals)


def test_inf_rho_gives_exact_marginals():
    rng = np.random.default_rng(0)
    X = _bernoulli_rows(rng.random(7), 500, rng)
    release = naive_product_release(X, rho=np.inf, rng=rng)
    np.testing.assert_array_equal(release.marginals, X.mean(axis=0))
    assert release.rounds[0].sigma == 0.0


def test_too_few_rows_for_the_blocks():
    with pytest.raises(ValueError, match="at least one row per block"):
        ppde_release(
            np.ones((5, 100), dtype=bool), rho=1.0, rng=np.random.default_rng(0)
        )
