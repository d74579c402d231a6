"""Warnings shown at the user's line, whatever called dpcov.

A fixed ``stacklevel`` points at the user's code only when the user calls the
estimator directly. Through a :class:`~sklearn.pipeline.Pipeline`,
:class:`~sklearn.model_selection.GridSearchCV`,
:func:`~sklearn.model_selection.cross_validate` or dpcov's own
meta-estimators the frames in between differ, and the warning would name a
line of scikit-learn's or joblib's code. :func:`warn` walks the stack instead
and attributes the warning to the first frame outside dpcov, scikit-learn and
joblib: the user's own call.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings

import joblib
import sklearn

__all__ = ["warn", "user_frame"]


def _package_dir(init_file):
    return os.path.dirname(os.path.abspath(init_file)) + os.sep


#: The packages whose frames stand between the user and the warning: dpcov
#: itself, scikit-learn (pipelines, searches, the fit wrappers of every
#: estimator) and joblib (the sequential and threading backends of the
#: searches run the fits in joblib's frames).
_LIBRARY_DIRS = (
    _package_dir(os.path.join(os.path.dirname(__file__), os.pardir, "__init__.py")),
    _package_dir(sklearn.__file__),
    _package_dir(joblib.__file__),
)


def _in_library(filename):
    return os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def user_frame():
    """The first frame, from the caller out, outside dpcov, scikit-learn and joblib.

    In a parallel worker (a search with ``n_jobs > 1``, a thread pool) the
    user's call is on another thread's or process's stack: the walk stops at
    the first frame of the worker's machinery (``multiprocessing.pool``,
    ``concurrent.futures``), the closest there is.

    Returns
    -------
    frame : frame
        That frame, or the outermost one when every frame belongs to those
        packages (``python -m dpcov``).
    """
    frame = sys._getframe(1)
    outermost = frame
    while frame is not None:
        if not _in_library(frame.f_code.co_filename):
            return frame
        outermost = frame
        frame = frame.f_back
    return outermost


def warn(message, category=UserWarning):
    """Issue a warning attributed to the user's line (see :func:`user_frame`).

    The warning goes through the ordinary machinery
    (:func:`warnings.warn_explicit` with the frame's file, line, module name
    and registry, as :func:`warnings.warn` itself does), so filters,
    :func:`warnings.catch_warnings` and ``pytest.warns`` treat it as usual;
    only its location differs from a fixed ``stacklevel``.

    Parameters
    ----------
    message : str or Warning
        The text, or a warning instance (whose class is then the category).
    category : type, default=UserWarning
        The warning's class.
    """
    frame = user_frame()
    module_globals = frame.f_globals
    # No module_globals: warnings.warn does not pass them either (a loader
    # asked for the source of a script read from standard input raises).
    warnings.warn_explicit(
        message,
        category,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=module_globals.get("__name__", "<string>"),
        registry=module_globals.setdefault("__warningregistry__", {}),
    )
