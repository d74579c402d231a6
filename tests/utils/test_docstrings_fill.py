"""Tests of the docstrings module (shared parameter text)."""

from dpcov.utils._docstrings import _ENTRIES, fill_doc


def test_fill_doc_indents_and_leaves_other_braces():
    @fill_doc
    def f():
        """Summary.

        Parameters
        ----------
        {epsilon}
        choice : {"a", "b"}
            Kept as is.
        """

    assert '{"a", "b"}' in f.__doc__
    assert "{epsilon}" not in f.__doc__
    first, second = _ENTRIES["epsilon"].strip("\n").splitlines()[:2]
    assert "\n        " + first + "\n            " + second.strip() in f.__doc__
