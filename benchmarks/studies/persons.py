"""One person, many rows: a person-level fit against group privacy and averaging.

A visits table: ``m`` persons, person ``p`` with ``c_p`` rows, ``c_p`` drawn
from a Zipf-like law on 1..50 (``P(c) ~ c**-1.5``); row ``i`` of person ``p``
is ``u_p + e_i`` with a person effect ``u_p ~ N(0, diag(s))`` (``s``
geometric from 1 to 0.05) and row noise ``e_i ~ N(0, 0.25 I)``. The target
is the row covariance ``diag(s) + 0.25 I``, known by construction. Every
method is ``AdaptiveCovariance`` (its private threshold) with the public
row-norm bound ``data_norm = 5`` (``E|x|**2`` is about 6 at ``d = 10``) at
the zCDP budget ``rho`` of ``(epsilon, 1e-6)``, guaranteeing each person
that ``rho``:

- ``persons``: ``fit(X, groups=g)`` with ``max_rows_per_group=k``;
- ``(a) rows``: each person's rows cut to ``k`` at random, then a row-level
  fit at ``rho / k**2`` (group privacy: ``k`` rows of one person cost
  ``k**2`` times a row's ``rho``);
- ``(b) means``: each person's rows cut to ``k`` at random and averaged by
  hand, then a row-level fit on the ``m`` averages at ``rho`` (its target is
  the covariance of person means, ``diag(s) + 0.25 E[1/c] I``).

Columns: the relative Frobenius error ``||C - S||_F / ||S||_F`` and the
share of the top-2 variance of ``S`` that the release's top-2 axes capture
(PCA on the released covariance). Repetition ``r`` seeds the table with
``r`` and every fit with ``1000 + r``.
"""

import warnings

import numpy as np

from dpcov.accounting import zcdp_rho
from dpcov.covariance import AdaptiveCovariance

from ..harness import Study, paired_se, rst_table

DELTA = 1e-6
DATA_NORM = 5.0


def _table(cell, r):
    rng = np.random.default_rng(r)
    m, d = cell["m"], cell["d"]
    sizes = np.arange(1, 51)
    weights = sizes**-1.5
    counts = rng.choice(sizes, size=m, p=weights / weights.sum())
    groups = rng.permutation(np.repeat(np.arange(m), counts))
    spectrum = np.geomspace(1.0, 0.05, d)
    effects = rng.normal(size=(m, d)) * np.sqrt(spectrum)
    X = effects[groups] + 0.5 * rng.normal(size=(groups.size, d))
    return X, groups, np.diag(spectrum + 0.25)


def _cut(groups, k, rng):
    """Indices of at most k rows per person, at random; the person of each."""
    order = rng.permutation(groups.size)
    order = order[np.argsort(groups[order], kind="stable")]
    sorted_groups = groups[order]
    first = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(groups.size), 0))
    kept = order[np.arange(groups.size) - start < k]
    return kept, groups[kept]


def _scores(covariance, target):
    error = np.linalg.norm(covariance - target) / np.linalg.norm(target)
    values, vectors = np.linalg.eigh(covariance)
    top = vectors[:, np.argsort(values)[::-1][:2]]
    best = np.sort(np.linalg.eigvalsh(target))[::-1][:2].sum()
    return {
        "error": float(error),
        "captured": float(np.trace(top.T @ target @ top) / best),
    }


def _method(kind):
    def method(data, cell, r):
        X, groups, target = data
        k, rho = cell["k"], zcdp_rho(cell["epsilon"], DELTA)
        seed = 1000 + r
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's and the noise's
            if kind == "persons":
                estimator = AdaptiveCovariance(
                    rho=rho,
                    data_norm=DATA_NORM,
                    max_rows_per_group=k,
                    random_state=seed,
                )
                estimator.fit(X, groups=groups)
            else:
                kept, owner = _cut(groups, k, np.random.default_rng(seed))
                if kind == "rows":
                    estimator = AdaptiveCovariance(
                        rho=rho / k**2, data_norm=DATA_NORM, random_state=seed
                    )
                    estimator.fit(X[kept])
                else:
                    _, index, sizes = np.unique(
                        owner, return_inverse=True, return_counts=True
                    )
                    means = np.zeros((sizes.size, X.shape[1]))
                    np.add.at(means, index, X[kept])
                    means /= sizes[:, np.newaxis]
                    estimator = AdaptiveCovariance(
                        rho=rho, data_norm=DATA_NORM, random_state=seed
                    )
                    estimator.fit(means)
        return _scores(estimator.covariance_, target)

    return method


class _PersonsStudy(Study):
    def table(self, rows, grid, repeats):
        # The paired differences persons - baseline, per metric, with their
        # standard errors: the comparison the measured claim is about.
        for row in rows:
            runs = row["runs"]
            for metric in ("error", "captured"):
                for base in ("(a) rows", "(b) means"):
                    row[f"{metric}: persons - {base[:3]}"] = paired_se(
                        runs[f"persons {metric}"], runs[f"{base} {metric}"]
                    )
        return super().table(rows, grid, repeats) + (
            "\n\nPaired differences (persons minus baseline, ± one paired "
            "standard error); a negative error difference or a positive "
            "captured difference favours the person-level fit.\n\n"
            + rst_table(
                rows,
                [*grid, *[k for k in rows[0] if k.startswith(("error:", "captured:"))]],
            )
        )


STUDY = _PersonsStudy(
    name="persons",
    title=__doc__.splitlines()[0],
    caption="Relative Frobenius error and captured top-2 variance",
    grid={"m": [1_000, 5_000], "d": [10], "epsilon": [1.0], "k": [1, 5, 20]},
    data=_table,
    methods={
        "persons": _method("persons"),
        "(a) rows": _method("rows"),
        "(b) means": _method("means"),
    },
    repeats=30,
    quick={"m": [2_000], "k": [5], "repeats": 2},
    docs="docs/user_guide/_bench_persons.rst",
)
