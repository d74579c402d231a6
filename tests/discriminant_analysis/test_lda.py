"""Private LDA: sensitivities, noise scale, accuracy, errors, pipeline."""

import math

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

from dpcov.accounting import ZCDP, PureDP, compose, zcdp_rho
from dpcov.covariance import AdaptiveCovariance
from dpcov.discriminant_analysis import LinearDiscriminantAnalysis
from dpcov.discriminant_analysis._lda import LDA_SHARES, class_statistics_noise
from tests._privacy_checks import recorded_calls, recorded_releases

pytestmark = pytest.mark.filterwarnings("ignore::dpcov.exceptions.SeededNoiseWarning")


def _mixture(seed, n=30_000, d=4, k=3, gap=3.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) + gap * np.eye(k, d)[y]
    return X, y


def test_accuracy_close_to_scikit_learn():
    # Three Gaussian classes, 30000 rows, epsilon = 1: within 0.01 of the
    # non-private LDA's training accuracy (measured: 0.9695 against 0.9697).
    X, y = _mixture(0)
    ours = LinearDiscriminantAnalysis(
        epsilon=1.0, data_norm=20.0, classes=[0, 1, 2], random_state=0
    ).fit(X, y)
    exact = SkLDA().fit(X, y)
    assert ours.score(X, y) >= exact.score(X, y) - 0.01
    assert ours.epsilon_spent_ == pytest.approx(1.0)
    budget = ZCDP(zcdp_rho(1.0, 1e-6))
    assert compose(ours.budget_split_.values()).rho <= budget.rho
    assert ours.budget_split_["means"].rho == pytest.approx(
        LDA_SHARES["means"] * budget.rho
    )


def test_class_statistics_sensitivity_by_brute_force(global_random_seed):
    # Replacing one row (its label included) moves (S_1..S_K, w N_1..w N_K)
    # by at most 2R in L2 with w = R, and 2 R sqrt(d) + 2 w in L1; a larger
    # weight breaks the L2 bound (a row changing class).
    rng = np.random.default_rng(global_random_seed)
    d, k, R = 3, 4, 2.0
    worst_l2 = worst_l1 = 0.0
    for _ in range(3000):
        x, x_new = (rng.normal(size=d) for _ in range(2))
        x *= R * rng.uniform(0.5, 1.0) / np.linalg.norm(x)
        x_new *= R / np.linalg.norm(x_new)
        a, b = rng.integers(k, size=2)
        delta = np.zeros((k, d + 1))
        delta[a, :d] -= x
        delta[a, d] -= R
        delta[b, :d] += x_new
        delta[b, d] += R
        worst_l2 = max(worst_l2, np.linalg.norm(delta))
        worst_l1 = max(worst_l1, np.abs(delta).sum())
    assert worst_l2 <= 2 * R + 1e-9
    assert worst_l1 <= 2 * R * math.sqrt(d) + 2 * R + 1e-9
    # w = 1.5 R: a row of norm R moving class moves it by sqrt(2 + 2 2.25) R.
    assert math.sqrt(2 * R**2 + 2 * (1.5 * R) ** 2) > 2 * R


def test_class_statistics_noise_closed_form():
    weight, noise = class_statistics_noise(ZCDP(0.02), 3.0, 5)
    assert weight == 3.0
    assert noise.std == pytest.approx(6.0 / math.sqrt(0.04))
    weight, noise = class_statistics_noise(PureDP(0.5), 3.0, 5)
    assert noise.scale == pytest.approx((6.0 * math.sqrt(5) + 6.0) / 0.5)


def test_released_means_have_the_closed_form_spread(global_random_seed):
    # Rows of norm 0.9 (the radius step picks 1 with probability 1 - 1e-9:
    # every other radius scores at most -(n - k)); class 0 holds 1000 rows
    # at (0.9, 0), class 1 1000 rows at (0, 0.9). The class sums and the
    # weighted counts (S_0, S_1, w N_0, w N_1), w = R = 1, are released at
    # once with the means' share of rho: L2 sensitivity 2 R, so Gaussian
    # noise of s.d. 2 R / sqrt(2 0.2 rho) on each coordinate (the mean of
    # class 0 then has spread sigma**2 (1 + m**2 / w**2) / N**2 by the delta
    # method, which 400 fits checked before). Exact, on one fit: the
    # recorded release is the exact vector plus a draw at that scale, and
    # means_ is its documented post-processing, S~ / max(N~ / w, 1)
    # projected into the r-ball (the samplers' laws are tested in
    # tests/mechanisms). Later releases are the covariance's.
    X = np.zeros((2000, 2))
    X[:1000, 0] = 0.9
    X[1000:, 1] = 0.9
    y = np.repeat([0, 1], 1000)
    rho = zcdp_rho(1.0, 1e-6)
    with recorded_releases() as releases:
        model = LinearDiscriminantAnalysis(
            data_norm=1.0, classes=[0, 1], random_state=global_random_seed
        ).fit(X, y)
    assert model.data_norm_ == 1.0
    (release,) = [r for r in releases if np.shape(r.value) == (6,)]
    assert release.law == "gaussian"
    assert LDA_SHARES["means"] == 0.2
    assert release.scale == pytest.approx(2 / math.sqrt(2 * 0.2 * rho), rel=1e-12)
    np.testing.assert_allclose(
        release.value, [900.0, 0.0, 0.0, 900.0, 1000.0, 1000.0], rtol=1e-12
    )
    counts = np.maximum(release.noisy[4:], 1.0)
    means = release.noisy[:4].reshape(2, 2) / counts[:, None]
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    means *= np.minimum(1.0, 1.0 / norms)
    np.testing.assert_allclose(model.means_, means, rtol=1e-12)


@pytest.mark.parametrize(
    "params, y, message",
    [
        (dict(classes=None), None, "needs classes"),
        (dict(classes=[0, 1]), "labels", "label outside classes"),
        (dict(classes=[0, 1, 2]), "short", "they must match"),
        (dict(classes=[0, 1, 2], priors=[1.0, -1.0, 1.0]), None, "priors"),
        (dict(classes=[0, 1, 2]), "continuous", "continuous"),
    ],
)
def test_bad_inputs_refused_naming_no_value(params, y, message):
    X, labels = _mixture(1, n=3000)
    if y == "short":
        labels = labels[:-1]
    elif y == "continuous":
        labels = labels + 0.25
    elif y == "labels":
        labels = labels.copy()  # holds 2, outside [0, 1]
    from dpcov.accounting import BudgetAccountant

    accountant = BudgetAccountant()
    model = LinearDiscriminantAnalysis(data_norm=20.0, accountant=accountant, **params)
    with pytest.raises(ValueError, match=message) as info:
        model.fit(X, labels)
    assert not [key for key in vars(model) if key.endswith("_")]
    assert len(accountant) == 0
    assert "2.25" not in str(info.value)


def test_too_few_rows_says_how_many():
    X, y = _mixture(1, n=50)
    with pytest.raises(ValueError, match=r"at least \d+ samples"):
        LinearDiscriminantAnalysis(classes=[0, 1, 2]).fit(X, y)


def test_public_priors_and_methods():
    X, y = _mixture(2, n=20000)
    model = LinearDiscriminantAnalysis(
        data_norm=20.0, classes=[0, 1, 2], priors=[1, 1, 2], random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(model.priors_, [0.25, 0.25, 0.5])
    proba = model.predict_proba(X[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X[:50]), np.argmax(proba, axis=1))
    assert model.transform(X[:50]).shape == (50, 2)
    assert model.decision_function(X[:50]).shape == (50, 3)


def test_string_classes():
    X, y = _mixture(3, n=20000)
    names = np.array(["cat", "dog", "eel"])
    model = LinearDiscriminantAnalysis(
        data_norm=20.0, classes=names, random_state=0
    ).fit(X, names[y])
    assert set(model.predict(X[:100])) <= set(names)
    assert model.score(X, names[y]) > 0.9


def test_in_a_private_pipeline_after_pca():
    # PCA's output norm bound flows to the LDA as its outer bound; the LDA
    # still picks a private radius inside it.
    from dpcov.decomposition import PCA
    from dpcov.pipeline import PrivatePipeline

    X, y = _mixture(4, n=30000, d=8)
    pipe = PrivatePipeline(
        [
            ("pca", PCA(n_components=4, bounds=(-10.0, 10.0))),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
        ],
        epsilon=2.0,
        random_state=0,
    ).fit(X, y)
    assert pipe.ranges_["lda"][0] == "data_norm"
    lda = pipe.named_steps["lda"]
    assert lda.data_norm_ <= pipe.ranges_["lda"][1]
    assert pipe.score(X, y) > 0.9
    assert pipe.epsilon_spent_ <= 2.0


def test_public_problems_are_refused_before_spending():
    from dpcov import config_context
    from dpcov.accounting import BudgetAccountant
    from dpcov.covariance import EigenSamplingCovariance, GaussianCovariance

    X, y = _mixture(5, n=5000)
    accountant = BudgetAccountant()
    for params, message in [
        (dict(covariance=GaussianCovariance(bounds=(-1.0, 1.0))), "leave its bounds"),
        (dict(n_components=5), "n_components=5 is above"),
    ]:
        model = LinearDiscriminantAnalysis(
            data_norm=20.0, classes=[0, 1, 2], accountant=accountant, **params
        )
        with pytest.raises(ValueError, match=message):
            model.fit(X, y)
    assert len(accountant) == 0
    sampled = LinearDiscriminantAnalysis(
        data_norm=20.0,
        classes=[0, 1, 2],
        covariance=EigenSamplingCovariance(),
        accountant=accountant,
    )
    assert not sampled._supports_hardened_noise()
    assert LinearDiscriminantAnalysis(classes=[0, 1])._supports_hardened_noise()
    from dpcov.exceptions import NoHardenedSampler

    with config_context(secure_noise=True), pytest.raises(NoHardenedSampler):
        sampled.fit(X, y)
    assert len(accountant) == 0


def test_two_classes_have_scikit_learn_shapes():
    X, y = _mixture(6, n=5000, k=2)
    model = LinearDiscriminantAnalysis(
        epsilon=np.inf, data_norm=20.0, classes=[0, 1]
    ).fit(X, y)
    exact = SkLDA().fit(X, y)
    assert model.coef_.shape == exact.coef_.shape == (1, 4)
    assert model.intercept_.shape == exact.intercept_.shape == (1,)
    decision = model.decision_function(X[:20])
    assert decision.shape == (20,)
    np.testing.assert_array_equal(model.predict(X[:20]), (decision > 0).astype(int))


def _mixed_units_classes(seed, n=30_000):
    # The mixed-units table (scales 1e-2 to 1e4) with three classes cut from
    # a linear score of the standardised features: 24000 rows train, the
    # rest test.
    from dpcov.datasets import make_mixed_units_table

    table = make_mixed_units_table(n, random_state=seed)
    X = table.data
    rng = np.random.default_rng(seed)
    score = ((X - X.mean(0)) / X.std(0)) @ rng.normal(size=X.shape[1])
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    cut = int(0.8 * n)
    return table, X[:cut], y[:cut], X[cut:], y[cut:]


def test_private_ranges_on_mixed_units_come_close_to_scikit_learn():
    # Features of scales 1e-2 to 1e4: a row-norm bound lets the largest
    # unit drown the rest (measured 0.50 test accuracy against
    # scikit-learn's 0.92); per-feature ranges put every feature in [-1, 1].
    # Over 20 seeds (python -m benchmarks run lda_units) the private ranges' gap
    # to scikit-learn averaged 0.012 (sd about 0.014 per seed): the mean of 5
    # is within 0.04 (4 sd of a mean of 5).
    gaps = []
    for seed in range(5):
        _, Xtr, ytr, Xte, yte = _mixed_units_classes(seed)
        model = LinearDiscriminantAnalysis(
            epsilon=1.0, bounds="private", classes=[0, 1, 2], random_state=seed
        ).fit(Xtr, ytr)
        gaps.append(SkLDA().fit(Xtr, ytr).score(Xte, yte) - model.score(Xte, yte))
        assert model.epsilon_spent_ <= 1.0
        assert set(model.budget_split_) >= {"bounds", "radius", "means"}
        budget = ZCDP(zcdp_rho(1.0, 1e-6))
        assert compose(model.budget_split_.values()).rho == pytest.approx(budget.rho)
        assert model.budget_split_["bounds"].rho == pytest.approx(budget.rho / 4)
        lower, upper = model.bounds_
        assert lower.shape == upper.shape == (12,) and np.all(lower < upper)
    assert np.mean(gaps) <= 0.04


def test_public_bounds_map_back_to_the_original_units():
    # At epsilon = inf, with every row inside the box, the released class
    # means are the true class means in the original units (the map to
    # [-1, 1]^d and back is exact), and the classifier agrees with
    # scikit-learn's on nearly every row (their covariances differ by the
    # clipping threshold's and ridge's few ulps).
    table, Xtr, ytr, Xte, _ = _mixed_units_classes(7, n=6000)
    model = LinearDiscriminantAnalysis(
        epsilon=np.inf, bounds=table.bounds, classes=[0, 1, 2]
    ).fit(Xtr, ytr)
    means = np.array([Xtr[ytr == k].mean(0) for k in range(3)])
    np.testing.assert_allclose(model.means_, means, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(model.bounds_[0], table.bounds[0])
    agree = np.mean(model.predict(Xte) == SkLDA().fit(Xtr, ytr).predict(Xte))
    assert agree >= 0.99


def test_bounds_and_data_norm_together_are_refused_before_spending():
    from dpcov.accounting import BudgetAccountant

    X, y = _mixture(8, n=3000)
    accountant = BudgetAccountant()
    model = LinearDiscriminantAnalysis(
        bounds=(-10.0, 10.0), data_norm=5.0, classes=[0, 1, 2], accountant=accountant
    )
    with pytest.raises(ValueError, match="not both"):
        model.fit(X, y)
    assert len(accountant) == 0 and not hasattr(model, "means_")


def test_the_pooled_covariance_is_released_with_the_bound_2r():
    # Rows centred on their class's released mean have norm at most 2 r
    # (both in the r-ball): the covariance estimator gets data_norm = 2 r,
    # and its public noise level is the ridge. A GaussianCovariance noise
    # level is a closed form of (budget, n, d, bound): computed here
    # independently, it rejects a bound of r (a quarter of the noise).
    from dpcov.covariance import GaussianCovariance

    X, y = _mixture(9, n=20_000)
    model = LinearDiscriminantAnalysis(
        epsilon=1.0,
        data_norm=20.0,
        classes=[0, 1, 2],
        covariance=GaussianCovariance(),
        random_state=0,
    ).fit(X, y)
    rho = LDA_SHARES["covariance"] * zcdp_rho(1.0, 1e-6)

    def noise_level(bound):
        return (
            GaussianCovariance(rho=rho, data_norm=bound, assume_centered=True)
            .fit(np.zeros((X.shape[0], X.shape[1])))
            .noise_level_
        )

    assert model.ridge_ == pytest.approx(noise_level(2 * model.data_norm_), rel=1e-12)
    assert model.ridge_ != pytest.approx(noise_level(model.data_norm_), rel=0.1)


def test_in_a_private_pipeline_after_a_scaler_receives_its_box():
    # A box from upstream (the scaler's image of its box) arrives as bounds.
    from dpcov.pipeline import PrivatePipeline
    from dpcov.preprocessing import StandardScaler

    table, Xtr, ytr, Xte, yte = _mixed_units_classes(10)
    pipe = PrivatePipeline(
        [
            ("scale", StandardScaler(bounds=table.bounds)),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
        ],
        epsilon=1.0,
        random_state=0,
    ).fit(Xtr, ytr)
    assert pipe.ranges_["lda"][0] == "bounds"
    assert pipe.named_steps["lda"].bounds_ is not None
    assert pipe.score(Xte, yte) >= SkLDA().fit(Xtr, ytr).score(Xte, yte) - 0.1


@pytest.mark.parametrize("n_features", [2, 3, 8])
def test_rows_at_the_box_corners_keep_their_radius(n_features):
    # Binary features in bounds (0, 1): every row sits at a corner of the
    # unit box, at norm sqrt(d). The radius's candidates include the outer
    # bound itself (sqrt(d) is a power of two only for d a power of 4), so
    # the private radius holds every row and the class means are right: the
    # released mean's error is about sqrt(d) * sigma / (n / 2) here, below
    # 0.02 (sigma from the closed form at this budget).
    rng = np.random.default_rng(n_features)
    y = rng.integers(0, 2, 20_000)
    p = np.where(y[:, None] == 0, 0.2, 0.8)
    X = (rng.random((20_000, n_features)) < p).astype(float)
    model = LinearDiscriminantAnalysis(
        epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0
    ).fit(X, y)
    assert model.data_norm_ == pytest.approx(math.sqrt(n_features))
    truth = np.array([X[y == k].mean(0) for k in (0, 1)])
    np.testing.assert_allclose(model.means_, truth, atol=0.02)


def test_rows_constant_within_each_class_give_a_finite_classifier():
    # At epsilon = inf the pooled covariance of such rows is zero: the ridge
    # (at least 1e-12 of the radius squared) keeps the classifier finite.
    y = np.repeat([0, 1], 50)
    X = np.where(y == 0, -10.0, 10.0)[:, None]
    for params in (dict(bounds=(-20.0, 20.0)), dict(data_norm=20.0)):
        model = LinearDiscriminantAnalysis(
            epsilon=np.inf, classes=[0, 1], **params
        ).fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and model.score(X, y) == 1.0


def _persons(seed, n_persons=3000, k=4, d=3):
    # Persons with 1..k rows each, in no order; a row's class is its own
    # (a person's rows may hold several classes).
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, k + 1, n_persons)
    groups = rng.permutation(np.repeat(np.arange(n_persons), sizes))
    y = rng.integers(0, 3, groups.size)
    X = rng.normal(size=(groups.size, d)) + 3.0 * np.eye(3, d)[y]
    return X, y, groups


def test_class_statistics_person_sensitivity_by_brute_force(global_random_seed):
    # A person's k_p rows (norm at most R) weigh 1 / k_p each: replacing the
    # person moves (S_1..S_K, w N_1..w N_K) by at most 2 R in L2 with w = R
    # and 2 R sqrt(d) + 2 w in L1 (a row's bounds, whatever k_p); adding or
    # removing one, by at most sqrt(2) R. Summing the rows instead (weight
    # 1) moves it by up to 2 k R.
    rng = np.random.default_rng(global_random_seed)
    d, K, R, k = 3, 4, 2.0, 5

    def person():
        rows = rng.integers(1, k + 1)
        x = rng.normal(size=(rows, d))
        x *= R * rng.uniform(0.5, 1.0, (rows, 1)) / np.linalg.norm(x, axis=1)[:, None]
        v = np.zeros((K, d + 1))
        for row, label in zip(x, rng.integers(K, size=rows), strict=True):
            v[label, :d] += row / rows
            v[label, d] += R / rows
        return v

    worst_l2 = worst_l1 = worst_add = 0.0
    for _ in range(3000):
        a, b = person(), person()
        worst_l2 = max(worst_l2, np.linalg.norm(a - b))
        worst_l1 = max(worst_l1, np.abs(a - b).sum())
        worst_add = max(worst_add, np.linalg.norm(a))
    assert worst_l2 <= 2 * R + 1e-9
    assert worst_l1 <= 2 * R * math.sqrt(d) + 2 * R + 1e-9
    assert worst_add <= math.sqrt(2) * R + 1e-9
    assert worst_l2 > 1.5 * R


def test_over_persons_the_class_statistics_weigh_each_person_once():
    # With groups: the class sums and counts are sums over persons of their
    # kept rows weighted 1 / k_p (all rows kept here), released at the row
    # fit's scale; the pooled covariance is fitted over persons, and a
    # person replaced by k rows of other classes at the radius costs the
    # class-statistics release at most its share of rho (and more than a
    # quarter of it: at half the noise, the claim would break).
    X, y, groups = _persons(0)
    params = dict(rho=0.5, data_norm=8.0, classes=[0, 1, 2])
    k = 4

    def fit(X, y, groups):
        with (
            recorded_releases() as releases,
            recorded_calls(AdaptiveCovariance, "fit") as inner,
        ):
            model = LinearDiscriminantAnalysis(
                max_rows_per_group=k, random_state=0, **params
            ).fit(X, y, groups=groups)
        (release,) = [r for r in releases if np.shape(r.value) == (12,)]
        ((_, _, covariance),) = inner
        assert covariance.privacy_unit_ == "person"
        return model, release

    model, release = fit(X, y, groups)
    radius = model.data_norm_
    rows = X * np.minimum(1.0, radius / np.linalg.norm(X, axis=1))[:, None]
    sizes = np.bincount(groups)
    weights = 1.0 / sizes[groups]
    sums = np.zeros((3, 3))
    np.add.at(sums, y, rows * weights[:, None])
    counts = np.bincount(y, weights=weights, minlength=3)
    np.testing.assert_allclose(
        release.value, np.r_[sums.ravel(), radius * counts], rtol=1e-10
    )
    _, noise = class_statistics_noise(ZCDP(LDA_SHARES["means"] * 0.5), radius, 3)
    assert release.scale == pytest.approx(noise.std, rel=1e-12)
    assert model.privacy_unit_ == "person"
    # A person replaced: a person of one row becomes k rows at the radius,
    # in a class the person did not hold.
    p = int(np.flatnonzero(sizes == 1)[0])
    mine = groups == p
    other_class = (int(y[mine][0]) + 1) % 3
    corner = np.zeros((k, 3))
    corner[:, other_class] = radius
    replaced = (
        np.vstack([X[~mine], corner]),
        np.r_[y[~mine], np.full(k, other_class)],
        np.r_[groups[~mine], np.full(k, p)],
    )
    other_model, other = fit(*replaced)
    assert other_model.data_norm_ == radius
    # (Same rows for the other persons, in another order: compare sums.)
    delta = other.value - release.value
    loss = float(delta @ delta) / (2 * release.scale**2)
    share = LDA_SHARES["means"] * 0.5
    assert share / 4 < loss <= share


def test_a_pipeline_over_persons_ends_in_lda():
    # The pipeline hands groups and k to the scaler and to LDA, whose checks
    # before spending read the labels' rows and the persons' number; a
    # refusal there states no count.
    from dpcov.pipeline import PrivatePipeline
    from dpcov.preprocessing import StandardScaler

    X, y, groups = _persons(1)
    pipe = PrivatePipeline(
        [
            ("scale", StandardScaler(bounds=(-6.0, 6.0))),
            ("lda", LinearDiscriminantAnalysis(classes=[0, 1, 2])),
        ],
        epsilon=2.0,
        max_rows_per_group=4,
        random_state=0,
    ).fit(X, y, groups=groups)
    assert pipe.privacy_unit_ == "person"
    assert pipe.score(X, y) > 0.8
    few = groups < 50
    with pytest.raises(ValueError, match="persons") as error:
        pipe.fit(X[few], y[few], groups=groups[few])
    text = str(error.value)
    assert "50" not in text and str(few.sum()) not in text


def test_add_remove_releases_a_count_first_and_reads_it():
    # neighbours="add_remove": a noisy count (sensitivity 1, 1/16 of rho)
    # comes first; the radius's plan reads it (a refusal for too few then
    # names it as the released count, after the fit is recorded); the class
    # statistics are released as under replacement; the pooled covariance
    # fits under add/remove with its own count. A row added at the radius
    # costs the class-statistics release at most its share of rho (the
    # add/remove change, at most sqrt(2) r, within the replace-one 2 r).
    from dpcov.accounting import BudgetAccountant

    X, y = _mixture(2, n=20_000, d=3)
    rho = 0.5
    params = dict(rho=rho, data_norm=20.0, classes=[0, 1, 2], random_state=0)

    def fit(X, y, **extra):
        with recorded_releases() as releases:
            model = LinearDiscriminantAnalysis(**params, **extra).fit(X, y)
        return model, releases

    model, releases = fit(X, y, neighbours="add_remove")
    count = releases[0]
    assert count.value == 20_000
    assert count.scale == pytest.approx(1 / math.sqrt(2 * rho / 16), rel=1e-12)
    assert model.released_count_ == max(round(float(count.noisy)), 1)
    assert model.neighbours_ == "add_remove"
    assert {"count", "covariance_count"} <= set(model.budget_split_)
    assert compose(model.budget_split_.values()).rho == pytest.approx(rho)
    statistics = [r for r in releases if np.shape(r.value) == (12,)]
    (replace_statistics,) = [r for r in fit(X, y)[1] if np.shape(r.value) == (12,)]
    np.testing.assert_allclose(statistics[0].value, replace_statistics.value)
    assert statistics[0].scale == pytest.approx(
        replace_statistics.scale * math.sqrt(16 / 15), rel=1e-12
    )
    added, added_releases = fit(
        np.vstack([X, [[0.0, 0.0, model.data_norm_]]]),
        np.r_[y, 2],
        neighbours="add_remove",
    )
    assert added.data_norm_ == model.data_norm_
    (after,) = [r for r in added_releases if np.shape(r.value) == (12,)]
    delta = after.value - statistics[0].value
    loss = float(delta @ delta) / (2 * after.scale**2)
    share = LDA_SHARES["means"] * rho * 15 / 16
    assert share / 4 < loss <= share
    ledger = BudgetAccountant(relation="add_remove")
    with pytest.raises(ValueError, match=r"the released \(noisy\) count is"):
        LinearDiscriminantAnalysis(
            epsilon=1.0,
            classes=[0, 1, 2],
            neighbours="add_remove",
            accountant=ledger,
            random_state=0,
        ).fit(X[:50], y[:50])
    assert len(ledger) == 1 and ledger.relations == ["add_remove"]
