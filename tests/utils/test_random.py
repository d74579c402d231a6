"""Tests of the random module (random_state handling)."""

import numpy as np
import pytest

from dpcov.utils import check_random_state


def test_seeded_generators_are_reproducible():
    assert check_random_state(3).random() == check_random_state(3).random()
    rs = np.random.RandomState(0)
    assert isinstance(check_random_state(rs), np.random.Generator)
    assert (
        check_random_state(np.random.RandomState(0)).random()
        == check_random_state(np.random.RandomState(0)).random()
    )


def test_generator_is_used_as_is():
    gen = np.random.default_rng(0)
    assert check_random_state(gen) is gen


def test_none_draws_fresh_entropy():
    assert check_random_state(None).random() != check_random_state(None).random()


@pytest.mark.parametrize("bad", ["0", 1.5, True, object()])
def test_bad_seed(bad):
    with pytest.raises(ValueError, match="random_state"):
        check_random_state(bad)


def test_held_objects_reach_nested_and_fitted_copies():
    # Attributes, dicts, lists and tuples, each object once (a cycle ends);
    # arrays are not entered.
    from types import SimpleNamespace

    from dpcov.utils._random import held_objects

    rng = np.random.default_rng(0)
    inner = SimpleNamespace(random_state=rng, values=np.zeros(3))
    outer = SimpleNamespace(steps=[("a", inner)], extra={"same": inner})
    outer.me = outer
    found = dict(held_objects(outer, "outer"))
    assert found["outer.steps.0.1.random_state"] is rng
    assert sum(obj is inner for obj in found.values()) == 1
    assert not any(path.startswith("outer.steps.0.1.values.") for path in found)
