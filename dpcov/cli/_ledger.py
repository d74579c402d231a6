"""The budget ledger of ``dpcov fit``: a JSON file of every fit on the same data.

A fit that would exceed the ledger's cap is refused before the data are
read; an accepted fit is recorded, and the file saved, before the fit's first
private step. A lock file keeps concurrent fits on the same ledger from both
passing its cap.
"""

# Authors: The dpcov developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import dataclasses
import json
import os
from pathlib import Path

from ..accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    GaussianDP,
    ProfileDP,
    PureDP,
    SelectionDP,
)
from ..accounting._dp_events import dp_event_spec
from ..exceptions import BudgetExceeded
from ._atomic import write_atomically
from ._errors import CommandError, _one_line
from ._report import to_json

_GUARANTEES = {
    "pure": PureDP,
    "zCDP": ZCDP,
    "GDP": GaussianDP,
    "profile": ProfileDP,
    "approx": ApproxDP,
    "selection": SelectionDP,
}


def _guarantee_from_json(data):
    # The parameters (numbers; a search's run, a guarantee), and the unit and
    # relation where written (a guarantee at the default ones, or from a
    # file before them, has none).
    cls = _GUARANTEES[data["notion"]]
    fields = dataclasses.fields(cls)
    numbers = {
        f.name: (
            _guarantee_from_json(data[f.name])
            if isinstance(data[f.name], dict)
            else _numbers(data[f.name])
        )
        for f in fields
        if not f.kw_only and f.name in data
    }
    labels = {f.name: str(data[f.name]) for f in fields if f.kw_only and f.name in data}
    return cls(**numbers, **labels)


def _numbers(value):
    # A parameter: a number, or a list of them (a profile's parts).
    if isinstance(value, list):
        return tuple(float(v) for v in value)
    return float(value)


class FileLedger(BudgetAccountant):
    """A :class:`~dpcov.accounting.BudgetAccountant` saved at every record.

    :meth:`spend` writes the whole ledger to its file (atomically) as soon as
    a fit is recorded, which an estimator does before its first private step:
    a fit that fails or is interrupted afterwards stays on record.

    Parameters
    ----------
    path : path-like
        The ledger file.
    **cap : float
        ``epsilon``, ``delta`` or ``rho`` of :class:`BudgetAccountant`.
    """

    def __init__(self, path, **cap):
        super().__init__(**cap)
        self.path = Path(path)

    def spend(self, guarantee, *, label="fit", unit=None, relation=None):
        """Record ``guarantee`` (see :meth:`BudgetAccountant.spend`) and save.

        Parameters
        ----------
        guarantee : PureDP, ZCDP, ApproxDP or BudgetAccountant
            What a fit spends.
        label : str, default="fit"
            Label of the ledger entry.
        unit : {"row", "person"} or None, default=None
            The fit's privacy unit (None: the guarantee's own).
        relation : {"replace", "add_remove"} or None, default=None
            The fit's neighbouring relation (None: the guarantee's own).

        Returns
        -------
        self : FileLedger
            The ledger.
        """
        super().spend(guarantee, label=label, unit=unit, relation=relation)
        text = json.dumps(ledger_json(self), indent=2, allow_nan=False) + "\n"
        try:
            write_atomically([(self.path, lambda handle: handle.write(text.encode()))])
        except OSError as exc:
            # Raised inside the estimator's fit, before its private steps:
            # the fit stops, nothing is released.
            reason = exc.strerror or _one_line(exc)
            raise CommandError(f"cannot write the ledger: {reason}") from None
        return self


def _is_at(path, stat):
    # Whether ``path`` is (still) the file that ``stat`` describes.
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (stat.st_dev, stat.st_ino)


@contextlib.contextmanager
def _locked(path):
    # An exclusive lock on ``<ledger>.lock`` for the whole command, so that
    # concurrent fits on the same ledger cannot both pass its cap. POSIX
    # only; elsewhere the ledger is not protected against concurrent runs.
    #
    # The holder removes the lock file before it lets the lock go, so none is
    # left behind. A run that was waiting on the removed file then holds the
    # lock of a file no longer at the path: it sees that (device and inode
    # differ, or no file is there) and tries again with the file now at the
    # path. Only the holder of the file at the path runs.
    try:
        import fcntl  # noqa: PLC0415
    except ImportError:
        yield
        return
    lock_path = f"{path}.lock"
    while True:
        try:
            handle = open(lock_path, "a")  # noqa: SIM115 (closed below)
        except OSError as exc:
            reason = exc.strerror or _one_line(exc)
            raise CommandError(
                f"cannot create the ledger's lock file: {reason}"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            held = os.fstat(handle.fileno())
            if _is_at(lock_path, held):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if _is_at(lock_path, held):
                os.remove(lock_path)
        handle.close()  # lets the lock go, after the removal


def load_ledger(path, *, epsilon=None, delta=None, rho=None):
    """Read a ledger file into a :class:`~dpcov.accounting.BudgetAccountant`.

    A missing file starts an empty ledger with the cap given; an existing one
    keeps the cap it was created with (a different cap given here is an
    error, so that a cap cannot be raised by accident).

    Parameters
    ----------
    path : path-like
        The ledger file.
    epsilon, delta, rho : float or None, default=None
        The cap (``--max-epsilon``, ``--max-delta``, ``--max-rho``).

    Returns
    -------
    accountant : FileLedger
        The cap and the recorded fits; it saves itself at every record.
    """
    given = {"epsilon": epsilon, "delta": delta, "rho": rho}
    if delta is not None and epsilon is None:
        raise CommandError("--max-delta needs --max-epsilon")
    if not os.path.exists(path):
        if epsilon is not None and delta is None and rho is None:
            # No default delta: a cap is a privacy promise, so its delta is
            # said, never assumed (an epsilon alone used to mean pure DP).
            raise CommandError(
                "a new ledger's --max-epsilon needs --max-delta: --max-delta "
                "1e-6 caps (epsilon, 1e-6)-DP, which the default fits "
                "(delta=1e-6) keep; --max-delta 0 caps pure epsilon-DP, which "
                "only pure-DP fits (--delta 0) keep"
            )
        try:
            cap = {k: v for k, v in given.items() if v is not None}
            return FileLedger(path, **cap)
        except ValueError as exc:
            raise CommandError(f"ledger cap: {_one_line(exc)}") from None
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        stored = {k: data["cap"][k] for k in ("epsilon", "delta", "rho")}
        fits = [
            (
                str(e["label"]),
                _guarantee_from_json(e["guarantee"]),
                str(e.get("unit", "row")),  # files from before units: rows
                str(e.get("relation", "replace")),
            )
            for e in data["fits"]
        ]
        accountant = FileLedger(
            path, **{k: float(v) for k, v in stored.items() if v is not None}
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CommandError(f"{path}: not a dpcov ledger ({_one_line(exc)})") from None
    for name, value in given.items():
        if value is not None and value != (
            None if stored[name] is None else float(stored[name])
        ):
            raise CommandError(
                f"{path}: the ledger's cap has {name}={stored[name]}; it cannot "
                f"be changed to {value} (start a new ledger)"
            )
    history = BudgetAccountant()
    for label, guarantee, unit, relation in fits:
        history.spend(guarantee, label=label, unit=unit, relation=relation)
    try:
        # The recorded fits go in without rewriting the file.
        BudgetAccountant.spend(accountant, history)
    except BudgetExceeded:
        raise CommandError(
            f"{path}: the recorded fits already exceed the cap"
        ) from None
    return accountant


def ledger_json(accountant):
    """The ledger file's content for ``accountant``.

    Parameters
    ----------
    accountant : BudgetAccountant
        The cap and the recorded fits.

    Returns
    -------
    data : dict
        JSON-safe data: the cap, every fit's label, guarantee and privacy
        unit, and the total.
    """
    cap = to_json(
        {
            "epsilon": accountant.epsilon_cap,
            "delta": accountant.delta_cap,
            "rho": accountant.rho_cap,
        }
    )
    return {
        "dpcov_ledger": 1,
        "cap": cap,
        "fits": [
            {
                "label": label,
                "guarantee": to_json(guarantee),
                "unit": unit,
                "relation": relation,
                "dp_event": _event_json(guarantee),
            }
            for (label, guarantee), unit, relation in zip(
                accountant.ledger, accountant.units, accountant.relations, strict=True
            )
        ],
        "total": {
            "guarantee": to_json(accountant.total()),
            "epsilon": to_json(accountant.epsilon),
            "delta": accountant.delta_cap,
            "rho": to_json(accountant.rho),
        },
    }


def _event_json(guarantee):
    # The fit's dp_accounting event, as data (dpcov.accounting.to_dp_event
    # builds it), and the relation to read it under; None where dp_accounting
    # has none (an (epsilon, delta)-only guarantee).
    try:
        spec, relation = dp_event_spec(guarantee)
    except ValueError:
        return None
    return to_json({"event": spec, "neighboring_relation": relation})


def _cap_text(accountant):
    # The cap of ``accountant``, in its own units.
    if accountant.rho_cap is not None:
        return f"rho={accountant.rho_cap:g}"
    if accountant.epsilon_cap is None:
        return "none"
    if accountant.delta_cap == 0:
        return f"epsilon={accountant.epsilon_cap:g} (pure DP)"
    return f"(epsilon={accountant.epsilon_cap:g}, delta={accountant.delta_cap:g})"


def _total_text(accountant, cap):
    # The total of ``accountant`` in the units of the cap of ``cap``: rho for
    # a rho cap, epsilon for a pure one, (epsilon, delta) at the cap's delta.
    if cap.rho_cap is not None:
        return f"rho={accountant.rho:.6g}"
    if cap.epsilon_cap is None:
        return repr(accountant.total())
    epsilon = accountant.epsilon_at(cap.delta_cap)
    if cap.delta_cap == 0:
        return f"epsilon={epsilon:.6g}"
    return f"(epsilon={epsilon:.6g}, delta={cap.delta_cap:g})"


def _refusal(accountant, cost, label):
    # Why the ledger refuses a fit that costs ``cost``, in the cap's units.
    # Only public values: the guarantees and the cap.
    cap = _cap_text(accountant)
    if accountant.rho_cap is not None and isinstance(cost, ApproxDP):
        reason = (
            f"its guarantee, {cost!r}, has no zCDP form, and the ledger's cap is {cap}"
        )
    elif (
        accountant.epsilon_cap is not None
        and accountant.delta_cap == 0
        and not isinstance(cost, PureDP)
    ):
        reason = (
            f"its guarantee, {cost!r}, is not pure DP, and the ledger's cap is "
            f"{cap}, which only pure-DP fits (--delta 0) keep"
        )
    else:
        after = BudgetAccountant(delta=accountant.delta_cap)
        after.spend(accountant)
        after.spend(cost, label=label)
        reason = (
            f"it would bring the ledger's total to {_total_text(after, accountant)}"
            f", over its cap {cap}"
        )
    return (
        f"{label}: refused before reading the data: {reason} "
        f"({_fits(len(accountant))} recorded)"
    )


def _fits(n):
    return f"{n} fit" if n == 1 else f"{n} fits"


def refuse_over_cap(accountant, estimator, label):
    """Refuse a fit that the ledger's cap does not allow.

    Called before the data file is opened: the cost is the estimator's
    declared guarantee, which depends on its parameters alone.

    Parameters
    ----------
    accountant : BudgetAccountant
        The cap and the recorded fits.
    estimator : estimator
        The unfitted estimator.
    label : str
        The estimator's name, for the messages.

    Raises
    ------
    CommandError
        If the fit would pass the cap, or its cost cannot be computed from
        these parameters.
    """
    try:
        cost = estimator.privacy_cost()
        accountant.check(
            cost,
            label=label,
            unit=estimator._privacy_unit(),
            relation=estimator._relation(),
        )
    except BudgetExceeded:
        raise CommandError(_refusal(accountant, cost, label)) from None
    except ValueError as exc:
        raise CommandError(f"{label}: {_one_line(exc)}") from None


def ledger_report(accountant, path):
    """The ledger's entry in a fit's JSON report.

    Parameters
    ----------
    accountant : BudgetAccountant
        The ledger, this fit recorded.
    path : path-like
        The ledger file.

    Returns
    -------
    entry : dict
        The path, the number of fits and the total (as in the ledger file).
    """
    return {
        "path": str(path),
        "n_fits": len(accountant),
        "total": ledger_json(accountant)["total"],
    }


def ledger_line(accountant, path):
    """The line that ``dpcov fit`` prints about the ledger after a fit.

    Parameters
    ----------
    accountant : BudgetAccountant
        The ledger, this fit recorded.
    path : path-like
        The ledger file.

    Returns
    -------
    line : str
        The number of fits, the total and the cap, in the cap's units.
    """
    return (
        f"ledger {path}: {_fits(len(accountant))}, total "
        f"{_total_text(accountant, accountant)}, cap {_cap_text(accountant)}"
    )
