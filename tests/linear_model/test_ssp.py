"""Private least squares (SSP, AdaSSP): sensitivities, noise, accuracy, API."""

import math

import numpy as np
import pytest
from scipy import linalg
from sklearn.base import clone
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.metrics import r2_score

from dpcov.accounting import ZCDP, PureDP, compose, zcdp_rho
from dpcov.linear_model import LinearRegression, Ridge
from dpcov.linear_model._ssp import ADASSP_SHARES, adassp_ridge, ssp_noise
from tests._privacy_checks import recorded_releases

pytestmark = pytest.mark.filterwarnings("ignore::dpcov.exceptions.SeededNoiseWarning")


def _problem(seed, n=15_000, d=10, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    w = rng.normal(size=d)
    y = X @ w + 0.5 + rng.normal(0, noise, n)
    return X, y


def test_r2_within_5_percent_of_least_squares():
    # 15000 rows (12000 to train), d = 10, features in [-1, 1], a linear
    # target plus noise, epsilon = 1: held-out R^2 at least 0.95 of ordinary
    # least squares' (mean over 5 seeds; measured 0.978, each seed >= 0.956
    # over 10).
    ratios = []
    for seed in range(5):
        X, y = _problem(seed)
        model = LinearRegression(
            epsilon=1.0,
            delta=1e-6,
            bounds=(-1.0, 1.0),
            target_bounds=(-10.0, 10.0),
            random_state=seed,
        ).fit(X[:12000], y[:12000])
        exact = SkLinearRegression().fit(X[:12000], y[:12000])
        ratios.append(
            r2_score(y[12000:], model.predict(X[12000:]))
            / r2_score(y[12000:], exact.predict(X[12000:]))
        )
    assert np.mean(ratios) >= 0.95


def _neighbour_pair(rng, m):
    # Rows u = (z, 1), z in [-1, 1]^(m-1) (corners often), targets in [-1, 1].
    def row():
        z = rng.choice([-1.0, 1.0, rng.uniform(-1, 1)], size=m - 1)
        return np.append(z, 1.0), rng.choice([-1.0, 1.0, rng.uniform(-1, 1)])

    return row(), row()


def test_sensitivities_by_brute_force(global_random_seed):
    # Replacing one row: U^T U moves by at most sqrt(2) B^2 (Frobenius), its
    # smallest eigenvalue by at most B^2, U^T t by at most 2 B (L2) and
    # 2 sqrt(m) B (L1), with B^2 = m (the columns, intercept included).
    rng = np.random.default_rng(global_random_seed)
    m = 4
    B2 = float(m)
    base = rng.uniform(-1, 1, size=(30, m))
    base[:, -1] = 1.0
    t = rng.uniform(-1, 1, 30)
    G = base.T @ base
    smallest = linalg.eigvalsh(G)[0]
    worst = np.zeros(4)
    for _ in range(2000):
        (u, a), (v, b) = _neighbour_pair(rng, m)
        i = rng.integers(30)
        old, new = base[i], v
        H = G - np.outer(old, old) + np.outer(new, new)
        dcross = new * b - old * t[i]
        worst = np.maximum(
            worst,
            [
                np.linalg.norm(H - G),
                abs(linalg.eigvalsh(H)[0] - smallest),
                np.linalg.norm(dcross),
                np.abs(dcross).sum(),
            ],
        )
    bounds = [
        math.sqrt(2) * B2,
        B2,
        2 * math.sqrt(B2),
        2 * math.sqrt(m) * math.sqrt(B2),
    ]
    assert np.all(worst <= np.array(bounds) + 1e-9)
    # Adding (or removing) one row moves them by u u^T, at most B^2 and u t:
    # at most B^2, B^2, B and sqrt(m) B, within the replace-one bounds
    # (each reached at a corner row with |t| = 1, up to the eigenvalue's).
    added = np.zeros(4)
    for _ in range(2000):
        (u, a), _ = _neighbour_pair(rng, m)
        H = G + np.outer(u, u)
        added = np.maximum(
            added,
            [
                np.linalg.norm(H - G),
                abs(linalg.eigvalsh(H)[0] - smallest),
                np.linalg.norm(u * a),
                np.abs(u * a).sum(),
            ],
        )
    assert np.all(added <= np.array([B2, B2, math.sqrt(B2), math.sqrt(m * B2)]) + 1e-9)
    assert np.all(added <= np.array(bounds))
    assert added[0] == pytest.approx(B2) and added[2] == pytest.approx(math.sqrt(B2))


def test_noise_scales_closed_form():
    rho, m = 0.05, 6
    split = {k: ZCDP(rho * s) for k, s in ADASSP_SHARES.items()}
    noise = ssp_noise(split, m)
    assert noise["gram"].std == pytest.approx(m / math.sqrt(rho * 0.45))
    assert noise["cross"].std == pytest.approx(
        2 * math.sqrt(m) / math.sqrt(2 * rho * 0.45)
    )
    assert noise["lambda_min"].std == pytest.approx(m / math.sqrt(2 * rho * 0.1))
    pure = ssp_noise({"gram": PureDP(0.5), "cross": PureDP(0.5)}, m)
    assert pure["cross"].scale == pytest.approx(2 * math.sqrt(m) * math.sqrt(m) / 0.5)


def test_adassp_ridge_is_the_noise_norm_less_the_lower_eigenvalue():
    split = {k: ZCDP(0.1 * s) for k, s in ADASSP_SHARES.items()}
    noise = ssp_noise(split, 5)
    spread = noise["gram"].std * 2 * math.sqrt(5) + noise["gram"].std * math.sqrt(
        2 * math.log(20)
    )
    tail = noise["lambda_min"].std * math.sqrt(2 * math.log(20))
    assert adassp_ridge(0.0, noise, 5) == pytest.approx(spread)
    assert adassp_ridge(spread + tail + 1.0, noise, 5) == 0.0
    assert adassp_ridge(tail + 3.0, noise, 5) == pytest.approx(spread - 3.0)


def test_released_cross_products_have_the_closed_form_spread(global_random_seed):
    # Ridge with a public ridge: half of the budget (rho / 2) each to
    # U^T U and U^T t, over rows u = (z, 1) (B^2 = m = d + 1 = 4) and unit
    # targets t: L2 sensitivities sqrt(2) B^2 and 2 B, so Gaussian noise of
    # s.d. sqrt(2) B^2 / sqrt(rho) on each entry of the Gram matrix (one
    # symmetric draw) and 2 B / sqrt(rho) on each cross product. Exact, on
    # one fit: the two recorded releases are the exact statistics plus draws
    # at these scales, and coef_ is the documented post-processing, the
    # solution of (G~ + alpha diag(1 / h^2, 0)) theta = c~ times h_y / h
    # (the samplers' laws are tested in tests/mechanisms; 500 fits checked
    # the cross products' spread before).
    X, y = _problem(0, n=4000, d=3)
    m, alpha = 4, 1.0
    rho = zcdp_rho(1.0, 1e-6)
    Z = np.hstack([X, np.ones((X.shape[0], 1))])  # inside the box [-1, 1]
    t = np.clip(y, -10.0, 10.0) / 10.0
    with recorded_releases() as releases:
        model = Ridge(
            alpha=alpha,
            bounds=(-1.0, 1.0),
            target_bounds=(-10.0, 10.0),
            random_state=global_random_seed,
        ).fit(X, y)
    gram, cross = releases
    assert gram.law == cross.law == "gaussian"
    assert gram.scale == pytest.approx(math.sqrt(2) * m / math.sqrt(rho), rel=1e-12)
    assert cross.scale == pytest.approx(2 * math.sqrt(m) / math.sqrt(rho), rel=1e-12)
    np.testing.assert_allclose(gram.value, Z.T @ Z, rtol=1e-12)
    np.testing.assert_allclose(cross.value, Z.T @ t, rtol=1e-12)
    penalty = np.diag([alpha, alpha, alpha, 0.0])
    theta = np.linalg.solve(gram.noisy + penalty, cross.noisy)
    np.testing.assert_allclose(model.coef_, 10.0 * theta[:3], rtol=1e-9)
    assert model.intercept_ == pytest.approx(10.0 * theta[3], rel=1e-9)


def test_budget_split_and_guarantee():
    X, y = _problem(1, n=5000, d=4)
    model = LinearRegression(
        bounds=(-1.0, 1.0), target_bounds=(-10.0, 10.0), random_state=0
    ).fit(X, y)
    budget = ZCDP(zcdp_rho(1.0, 1e-6))
    assert set(model.budget_split_) == {"lambda_min", "gram", "cross"}
    assert compose(model.budget_split_.values()).rho <= budget.rho
    assert model.epsilon_spent_ == pytest.approx(1.0)
    private = LinearRegression(
        bounds="private", target_bounds=(-10.0, 10.0), random_state=0
    ).fit(X, y)
    assert private.budget_split_["bounds"].rho == pytest.approx(budget.rho / 4)
    pure = Ridge(
        delta=0.0, bounds=(-1.0, 1.0), target_bounds=(-10.0, 10.0), random_state=0
    ).fit(X, y)
    assert isinstance(pure.guarantee_, PureDP)
    assert pure.epsilon_spent_ == pytest.approx(1.0)


def test_ridge_alpha_in_original_units_matches_sklearn_without_noise():
    # epsilon = inf: no noise; the ridge penalises the coefficients in the
    # original units, as scikit-learn's does.
    from sklearn.linear_model import Ridge as SkRidge

    rng = np.random.default_rng(0)
    X = rng.uniform([0, -50], [10, 50], size=(500, 2))
    y = X @ [2.0, 0.1] + 1.0 + rng.normal(0, 0.1, 500)
    ours = Ridge(
        alpha=30.0,
        epsilon=np.inf,
        bounds=([0.0, -50.0], [10.0, 50.0]),
        target_bounds=(-100.0, 100.0),
    ).fit(X, y)
    exact = SkRidge(alpha=30.0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, exact.coef_, rtol=1e-9)
    np.testing.assert_allclose(ours.intercept_, exact.intercept_, rtol=1e-9)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(bounds=None, target_bounds=(0.0, 1.0)), "needs bounds"),
        (dict(bounds=(0.0, 1.0), target_bounds=None), "target_bounds"),
    ],
)
def test_missing_ranges_are_refused(params, message):
    X, y = _problem(0, n=100, d=2)
    with pytest.raises(ValueError, match=message):
        LinearRegression(**params).fit(X, y)


@pytest.mark.parametrize(
    "y, message",
    [
        (np.full(100, np.nan), "NaN or infinity"),
        (np.zeros(99), "different numbers of rows"),
        (np.array(["a"] * 100), "not numbers"),
        (np.zeros((100, 2)), "1d array"),
        (np.arange(100).astype("datetime64[D]"), "dates or durations"),
        (np.arange(100).astype("timedelta64[s]"), "dates or durations"),
    ],
)
def test_bad_targets_name_no_value(y, message):
    X, _ = _problem(0, n=100, d=2)
    model = LinearRegression(bounds=(-1.0, 1.0), target_bounds=(0.0, 1.0))
    with pytest.raises(ValueError, match=message) as info:
        model.fit(X, y)
    assert "'a'" not in str(info.value)
    assert not hasattr(model, "coef_")


def test_targets_outside_their_range_are_refused_naming_no_value():
    from dpcov.accounting import BudgetAccountant

    X, y = _problem(2, n=5000, d=3)
    y[0] = 1234.5678
    accountant = BudgetAccountant()
    model = LinearRegression(
        bounds=(-1.0, 1.0), target_bounds=(-10.0, 10.0), accountant=accountant
    )
    with pytest.raises(ValueError, match="outside target_bounds") as info:
        model.fit(X, y)
    assert "1234" not in str(info.value)
    assert len(accountant) == 0 and not hasattr(model, "coef_")


def test_in_a_private_pipeline_the_model_receives_the_range():
    from dpcov.pipeline import PrivatePipeline
    from dpcov.preprocessing import StandardScaler

    X, y = _problem(3, n=20000, d=4)
    X = X * [1.0, 10.0, 100.0, 1000.0] + 5.0
    pipe = PrivatePipeline(
        [
            ("scale", StandardScaler(bounds="private")),
            ("model", LinearRegression(target_bounds=(-10.0, 10.0))),
        ],
        epsilon=2.0,
        random_state=0,
    ).fit(X, y)
    assert "model" in pipe.ranges_
    assert pipe.score(X, y) > 0.8
    assert pipe.epsilon_spent_ <= 2.0


@pytest.mark.parametrize("model", [LinearRegression, Ridge])
def test_least_squares_over_persons_sums_each_person_s_average(model):
    # With groups: the released statistics are the sums over persons of
    # each person's averaged u u^T and u t (all rows kept here: at most k
    # per person), with the row-level noise scales (a person's averages lie
    # in one row's ranges, so the sensitivities are unchanged).
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 5, 400)
    groups = rng.permutation(np.repeat(np.arange(400), counts))
    X = rng.uniform(-2, 2, size=(groups.size, 2))
    y = np.clip(X @ [1.0, -1.0] + rng.normal(0, 0.5, groups.size), -3.0, 3.0)
    params = dict(rho=0.5, bounds=(-1.0, 1.0), target_bounds=(-3.0, 3.0))
    with recorded_releases() as by_person:
        fitted = model(max_rows_per_group=4, random_state=0, **params)
        fitted.fit(X, y, groups=groups)
    with recorded_releases() as by_row:
        model(random_state=0, **params).fit(X, y)
    assert [r.scale for r in by_person] == pytest.approx([r.scale for r in by_row])
    u = np.c_[np.clip(X, -1, 1), np.ones(len(X))]
    t = np.clip(y, -3, 3) / 3
    gram = sum((u[groups == p].T @ u[groups == p]) / counts[p] for p in range(400))
    cross = sum(u[groups == p].T @ t[groups == p] / counts[p] for p in range(400))
    released = {tuple(np.shape(r.value)): r.value for r in by_person}
    np.testing.assert_allclose(released[(3, 3)], gram, rtol=1e-12)
    np.testing.assert_allclose(released[(3,)], cross, rtol=1e-12)
    assert fitted.privacy_unit_ == "person"
    with pytest.raises(ValueError, match="metadata routing"):
        model(max_rows_per_group=4, **params).fit(X, y)


def _gaussian_loss(releases_a, releases_b):
    # The zCDP cost (rho) of the fit's Gaussian releases on two neighbours,
    # from their exact values: sum |Delta|^2 / (2 s^2), over the upper
    # triangle of a symmetric release (its independent entries).
    loss = 0.0
    for a, b in zip(releases_a, releases_b, strict=True):
        assert a.law == b.law == "gaussian" and a.scale == b.scale
        delta = np.asarray(b.value, dtype=float) - np.asarray(a.value, dtype=float)
        if delta.ndim == 2:
            delta = delta[np.triu_indices(delta.shape[0])]
        loss += float(np.sum(delta**2)) / (2 * a.scale**2)
    return loss


@pytest.mark.parametrize("model", [LinearRegression, Ridge])
def test_least_squares_add_remove_reads_no_count(model):
    # neighbours="add_remove": the same releases as replace-one (values and
    # scales), no count released (least squares needs none), and the fit
    # records the relation.
    X, y = _problem(3, n=3000, d=3)
    params = dict(rho=0.5, bounds=(-1.0, 1.0), target_bounds=(-10.0, 10.0))
    with recorded_releases() as replace:
        model(random_state=0, **params).fit(X, y)
    with recorded_releases() as add_remove:
        fitted = model(neighbours="add_remove", random_state=0, **params).fit(X, y)
    assert len(add_remove) == len(replace)
    for a, b in zip(replace, add_remove, strict=True):
        assert a.scale == b.scale
        np.testing.assert_array_equal(a.value, b.value)
    assert fitted.neighbours_ == "add_remove"
    assert "count" not in fitted.budget_split_
    assert compose(fitted.budget_split_.values()).rho == pytest.approx(0.5)


@pytest.mark.parametrize("model", [LinearRegression, Ridge])
def test_least_squares_neighbour_losses_within_the_claim(model):
    # The exact zCDP cost of the Gaussian releases on neighbours chosen to
    # break the claim: a row added at a corner (u = (1, ..., 1), t = 1)
    # under add/remove, a person of k such rows added under add/remove over
    # persons (averaged: one row's worth, not k), and a person's rows
    # replaced by corners of the other sign. Each costs at most rho, and
    # more than rho / 4, so that the noise at half its scale (four times the
    # cost) would break the claim.
    rng = np.random.default_rng(0)
    rho, k, m = 0.5, 6, 60
    X = rng.uniform(-0.5, 0.5, size=(m, 2))
    y = rng.uniform(-0.5, 0.5, m)
    groups = np.arange(m)
    corner, t = np.ones((k, 2)), np.ones(k)
    params = dict(rho=rho, bounds=(-1.0, 1.0), target_bounds=(-1.0, 1.0))

    def releases(X, y, groups=None, **extra):
        with recorded_releases() as out:
            model(random_state=0, **params, **extra).fit(X, y, groups=groups)
        return out

    row_added = _gaussian_loss(
        releases(X, y, neighbours="add_remove"),
        releases(np.vstack([X, corner[:1]]), np.r_[y, t[:1]], neighbours="add_remove"),
    )
    person = dict(max_rows_per_group=k, neighbours="add_remove")
    person_added = _gaussian_loss(
        releases(X, y, groups, **person),
        releases(np.vstack([X, corner]), np.r_[y, t], np.r_[groups, [m] * k], **person),
    )
    replaced = _gaussian_loss(
        releases(np.vstack([X, corner]), np.r_[y, t], np.r_[groups, [m] * k], **person),
        releases(
            np.vstack([X, -corner[:2]]),
            np.r_[y, -t[:2]],
            np.r_[groups, [m] * 2],
            **person,
        ),
    )
    for loss in (row_added, person_added, replaced):
        assert rho / 4 < loss <= rho
    # The person's k rows weigh one row's worth: the same cost as one row.
    assert person_added == pytest.approx(row_added, rel=1e-9)


def test_least_squares_over_persons_with_private_ranges_and_in_a_pipeline():
    # bounds="private" with groups: the ranges count persons (the plan reads
    # their number, which a refusal does not state); a pipeline over persons
    # ending in least squares checks the targets' rows and the persons'
    # number apart before spending.
    from dpcov.pipeline import PrivatePipeline
    from dpcov.preprocessing import StandardScaler

    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 5, 4000)
    groups = rng.permutation(np.repeat(np.arange(4000), sizes))
    X = rng.normal(size=(groups.size, 2)) * [1.0, 3.0]
    y = np.clip(X @ [1.0, -0.5] + rng.normal(0, 0.3, groups.size), -8.0, 8.0)
    model = LinearRegression(
        epsilon=2.0,
        bounds="private",
        target_bounds=(-8.0, 8.0),
        max_rows_per_group=4,
        random_state=0,
    ).fit(X, y, groups=groups)
    assert model.privacy_unit_ == "person" and "bounds" in model.budget_split_
    np.testing.assert_allclose(model.coef_, [1.0, -0.5], atol=0.15)
    few = groups < 60
    with pytest.raises(ValueError, match="persons at this budget") as error:
        clone(model).fit(X[few], y[few], groups=groups[few])
    assert "60" not in str(error.value) and str(few.sum()) not in str(error.value)
    pipe = PrivatePipeline(
        [
            ("scale", StandardScaler(bounds=(-10.0, 10.0))),
            ("model", LinearRegression(target_bounds=(-8.0, 8.0))),
        ],
        epsilon=2.0,
        max_rows_per_group=4,
        random_state=0,
    ).fit(X, y, groups=groups)
    assert pipe.privacy_unit_ == "person"
    assert {s.privacy_unit_ for s in pipe.named_steps.values()} == {"person"}
    outside = y.copy()
    outside[-1] = 9.0
    with pytest.raises(ValueError, match="outside target_bounds"):
        clone(pipe).fit(X, outside, groups=groups)
