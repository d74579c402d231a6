"""Errors and warnings of the command line, which never quote the data.

A user error is a :class:`CommandError`, printed as one line. An exception
or a warning raised during a fit is shown only when its text cannot depend
on the data (see ``_fit_failure`` and ``_show_warnings``); otherwise only
its type is named.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import re
import sys
import warnings

from ..exceptions import BudgetExceeded, NoPrivateResult


class CommandError(Exception):
    """A user error, printed as one line ``dpcov: error: ...`` (exit status 1)."""


def _one_line(exc):
    return " ".join(str(exc).split())


#: This package: its frames are not counted as dpcov's code below.
_CLI = __name__.rpartition(".")[0]


def _raised_in_dpcov(exc):
    # Whether the innermost frame of ``exc``'s traceback is dpcov's code
    # (the command line's modules aside): its messages state only public
    # values.
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    in_cli = module == _CLI or module.startswith(_CLI + ".")
    return module.startswith("dpcov.") and not in_cli


def _fit_failure(estimator, exc):
    """The one-line message for an exception raised by ``estimator.fit(X)``.

    dpcov's own exceptions state only public values (parameters, ``n``,
    ``d``, guarantees): the estimators pass their input through one guard
    that replaces third-party validation messages. Any other message may
    quote the data (NumPy, SciPy and scikit-learn put array values in
    theirs), so only its type is named.
    """
    name = type(estimator).__name__
    if isinstance(exc, MemoryError):
        return f"{name}: out of memory"
    public = isinstance(exc, NoPrivateResult | BudgetExceeded) or (
        isinstance(exc, ValueError | TypeError) and _raised_in_dpcov(exc)
    )
    if public:
        message = _one_line(exc)
        if isinstance(exc, NoPrivateResult):
            message = f"no private result: {message}"
    else:
        message = (
            f"the fit failed ({type(exc).__name__}); its message is not shown, "
            "as it comes from outside dpcov and could quote the data"
        )
    return message if name in message else f"{name}: {message}"


#: NumPy's floating-point warnings: fixed texts, no values.
_FLOATING_POINT_WARNING = re.compile(
    r"(overflow|underflow|invalid value|divide by zero) encountered in [\w ]+"
)


def _recorder(caught):
    # A warnings.showwarning that appends (text, category, module) to
    # ``caught``, where module is that of the code that raised the warning
    # (the first frame outside the warnings machinery).
    def record(message, category, filename, lineno, file=None, line=None):
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__") in (
            "warnings",
            "_py_warnings",
        ):
            frame = frame.f_back
        module = "" if frame is None else frame.f_globals.get("__name__", "")
        caught.append((_one_line(message), category, module))

    return record


def _show_warnings(caught):
    # dpcov's warnings state public values; so do NumPy's floating-point
    # ones. The text of any other (SciPy's LinAlgWarning quotes a condition
    # number of the data, for one) is not shown.
    seen = set()
    for text, category, module in caught:
        if not (module.startswith("dpcov.") or _FLOATING_POINT_WARNING.fullmatch(text)):
            text = (
                f"{category.__name__} from {module.partition('.')[0] or 'Python'}"
                " (its text is not shown: it comes from outside dpcov and could "
                "quote the data)"
            )
        line = f"dpcov: warning: {text}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)


@contextlib.contextmanager
def _warnings_as_lines():
    # Record every warning raised inside (each time it is raised), and print
    # each once, as one line, on leaving: after a failure too.
    caught = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _recorder(caught)
        try:
            yield
        finally:
            _show_warnings(caught)
