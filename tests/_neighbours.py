"""What a composite lets out on one dataset: its outcome and its warnings.

A neighbouring pair chosen to break a privacy claim (an extreme finite row
against an ordinary one) must give the same outcome, a fit or the same
refusal, and the same warnings, but for the release-based ones (whose law,
not their presence, the guarantee covers).
"""

import warnings

from dpcov.exceptions import NoiseDominatedWarning, SeededNoiseWarning

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
