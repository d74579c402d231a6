"""What a scikit-learn search spends: every fit of every candidate.

:func:`search_cost` lists what each fit of a
:class:`~sklearn.model_selection.GridSearchCV` (or any search with
``estimator`` and a parameter grid) spends on its rows, walking each
candidate to its private steps with :func:`dpcov.pipeline._cost.private_steps`.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ParameterGrid, check_cv

from ..accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    PureDP,
    compose,
)
from ..accounting._guarantees import notion_of
from ..pipeline._cost import walk_costs

__all__ = ["search_cost"]


def search_cost(search, *, delta=0.0):
    """What a scikit-learn hyperparameter search spends, fit by fit.

    A search fits every candidate on every training split and, with ``refit``,
    the best candidate once more on all rows: ``n_candidates * n_splits + 1``
    fits on overlapping subsets of the same rows, which compose. This function
    recomputes each fit's guarantee from its parameters (the estimator's
    ``privacy_cost()``; every dpcov estimator found in a
    :class:`~sklearn.pipeline.Pipeline` or another meta-estimator counts) and
    returns them as a ledger.

    Use it for searches with ``n_jobs > 1``, whose fits run in other processes
    where an accountant passed to the estimator cannot record (see
    :class:`~dpcov.accounting.BudgetAccountant`). For a fitted search the
    candidates come from ``cv_results_["params"]``; for an unfitted
    :class:`~sklearn.model_selection.GridSearchCV` from its ``param_grid`` and
    the number of splits of its ``cv`` (so the cost can be checked before the
    search reads any data). The count covers the fits only: choosing the best
    candidate from held-out scores is not private (see the privacy-model
    chapter): :class:`PrivateSearchCV` is the search whose choice is.

    Parameters
    ----------
    search : GridSearchCV, RandomizedSearchCV or similar
        A fitted search (anything with ``cv_results_``, ``n_splits_`` and
        ``refit``; a halving search lists every fit in ``cv_results_``), or
        an unfitted ``GridSearchCV`` whose ``cv`` is an integer, None or a
        splitter with a data-independent number of splits.
    delta : float, default=0.0
        The delta at which the total is stated, in [0, 1): with 0, the total
        is the fits' composition as it is (pure DP, zCDP, or (epsilon,
        delta)-DP at the (epsilon, delta) fits' deltas); with ``delta > 0``,
        (epsilon, delta)-DP at that delta.

    Returns
    -------
    cost : BudgetAccountant
        An accountant without cap (``BudgetAccountant(delta=delta)``) whose
        ledger holds one entry per private fit. Its printout states the
        number of fits and the total (``spent=...``); read the total with
        :meth:`~dpcov.accounting.BudgetAccountant.spent`,
        :meth:`~dpcov.accounting.BudgetAccountant.total` or
        :attr:`~dpcov.accounting.BudgetAccountant.epsilon`, or charge it to
        your own accountant with ``accountant.spend(cost)``.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from dpcov.model_selection import search_cost
    >>> from dpcov.covariance import SeparateCovariance
    >>> search = GridSearchCV(
    ...     SeparateCovariance(data_norm=1.0), {"epsilon": [0.5, 1.0]}, cv=3
    ... )
    >>> search_cost(search)  # before fitting: 2 * 3 + 1 fits, Gaussian only
    BudgetAccountant(delta=0.0, n_fits=7, spent=GaussianDP(mu=...))
    >>> search_cost(search, delta=1e-6)
    BudgetAccountant(delta=1e-06, n_fits=7, spent=ApproxDP(epsilon=..., delta=1e-06))
    """
    # ``best``: the refit's parameters when known; ``refit_costliest``: charge
    # the refit at the costliest candidate (unfitted search with refit).
    refit_costliest = False
    if hasattr(search, "cv_results_"):
        candidates = list(search.cv_results_["params"])
        n_splits = int(search.n_splits_)
        best = getattr(search, "best_params_", None) if search.refit else None
    elif type(search) is GridSearchCV:
        # Only a plain grid search: successive halving fits more than
        # n_candidates * n_splits + 1 times.

        cv = search.cv
        if not (cv is None or isinstance(cv, Integral) or hasattr(cv, "get_n_splits")):
            # An iterable of splits would be consumed here, before the search.
            raise ValueError(
                "the search's cv is an iterable of splits: its number is not "
                "known without using it up; fit the search first and call "
                "search_cost on the fitted search."
            )
        candidates = list(ParameterGrid(search.param_grid))
        n_splits = check_cv(cv).get_n_splits()
        if n_splits is None:
            raise ValueError(
                "the search's cv has a data-dependent number of splits; fit the "
                "search first and call search_cost on the fitted search."
            )
        best = None
        refit_costliest = bool(search.refit)
    else:
        raise TypeError(
            "search_cost needs a fitted search (with cv_results_) or an "
            "unfitted GridSearchCV."
        )

    def costs(params):
        return walk_costs(clone(search.estimator).set_params(**params))

    cost = BudgetAccountant(delta=delta)
    per_candidate = [costs(params) for params in candidates]
    for params, entries in zip(candidates, per_candidate, strict=True):
        for split in range(n_splits):
            for name, guarantee in entries:
                cost.spend(guarantee, label=f"{name} {params} split {split}")
    if best is not None:
        for name, guarantee in costs(best):
            cost.spend(guarantee, label=f"{name} {best} refit")
    elif refit_costliest:
        # The refit's candidate is not known before the search runs: charge a
        # guarantee that dominates every candidate's.
        guarantee = _dominating([compose(g for _, g in e) for e in per_candidate if e])
        if guarantee is not None:
            cost.spend(guarantee, label="refit (the costliest candidate)")
    return cost


def _dominating(guarantees):
    # One guarantee at least as strong a cost as each of ``guarantees``.
    if not guarantees:
        return None
    kinds = {notion_of(g) for g in guarantees}
    if kinds == {PureDP}:
        return PureDP(max(g.epsilon for g in guarantees))
    if kinds == {GaussianDP}:
        return GaussianDP(max(g.mu for g in guarantees))
    if ApproxDP not in kinds:
        return ZCDP(max(g.to_zcdp().rho for g in guarantees))
    if kinds - {PureDP, ApproxDP}:
        raise ValueError(
            "the candidates mix zCDP and (epsilon, delta)-only guarantees, so "
            "the refit's cost is not known before the search: fit the search "
            "and call search_cost on the fitted search."
        )
    approx = [g.to_approx_dp(0.0) if isinstance(g, PureDP) else g for g in guarantees]
    return ApproxDP(max(g.epsilon for g in approx), max(g.delta for g in approx))
