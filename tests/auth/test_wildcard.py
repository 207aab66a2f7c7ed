"""Policy wildcards: the same answers as a regular expression would give, without backtracking."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvlake.auth.wildcard import match


def _reference(pattern: str, value: str) -> bool:
    """The old translation to a regular expression: right, but exponential on some inputs."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch("".join(parts), value, re.DOTALL) is not None


@given(st.text(alphabet="ab/*?", max_size=12), st.text(alphabet="ab/", max_size=14))
def test_matches_exactly_what_the_regular_expression_matches(pattern: str, value: str) -> None:
    assert match(pattern, value) == _reference(pattern, value)


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("*", "", True),
        ("", "", True),
        ("", "a", False),
        ("a*", "a", True),
        ("*a", "ba", True),
        ("ab*ba", "aba", False),
        ("ab*ba", "abba", True),
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("*.csv", "dir/x.csv", True),
        ("*.csv", "dir/x.csvx", False),
        ("a*b*c", "aXbYbZc", True),
        ("a*b*c", "aXcYb", False),
        ("?*?", "a", False),
    ],
)
def test_edge_cases(pattern: str, value: str, expected: bool) -> None:
    assert match(pattern, value) is expected


# A hang detector, not a speed figure: the regular expression took 35 s on this input.
@pytest.mark.timeout(10)
def test_many_stars_against_a_long_run_of_separators_does_not_backtrack() -> None:
    pattern = "arn:lakefs:fs:::repository/r/object/*/*/*/*/*/*.csv"
    path = "arn:lakefs:fs:::repository/r/object/" + "/" * 1020
    for _ in range(100):
        assert not match(pattern, path)
        assert match(pattern, path + "x.csv")
    assert not match("?" * 30 + "*" + "a?" * 500 + "*b", "a" * 2000)
