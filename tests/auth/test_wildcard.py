"""Policy wildcards: the same answers as a regular expression would give, without backtracking."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvlake.auth.wildcard import covers_under, match, matches_under


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


def _suffixes(longest: int) -> list[str]:
    """Every text over the test alphabet (plus one letter no pattern names) up to `longest`."""
    return [
        "".join(chars)
        for length in range(longest + 1)
        for chars in itertools.product("ab/c", repeat=length)
    ]


_SHORT = _suffixes(5)


@given(st.text(alphabet="ab/*?", max_size=4), st.text(alphabet="ab/", max_size=5))
def test_a_pattern_matches_under_a_prefix_when_some_value_there_matches(
    pattern: str, prefix: str
) -> None:
    # A pattern of n characters that matches some value after the prefix matches one of
    # at most n more characters, so the short suffixes decide it.
    expected = any(match(pattern, prefix + suffix) for suffix in _SHORT)
    assert matches_under(pattern, prefix) == expected


@given(st.text(alphabet="ab/*?", max_size=4), st.text(alphabet="ab/", max_size=5))
def test_a_pattern_covers_a_prefix_when_every_value_there_matches(
    pattern: str, prefix: str
) -> None:
    # Sound always (it never grants a value the pattern does not match), exact without
    # `?`: `*?` covers every value after `a`, yet is not taken as covering (an allow that
    # narrow is refused for a prefix, as the safe side).
    expected = all(match(pattern, prefix + suffix) for suffix in _SHORT)
    if covers_under(pattern, prefix):
        assert expected
    if "?" not in pattern:
        assert covers_under(pattern, prefix) == expected


def test_a_deny_below_a_prefix_matches_under_it_but_does_not_cover_it() -> None:
    secret = "arn:lakefs:fs:::repository/r/object/data/secret/*"
    assert matches_under(secret, "arn:lakefs:fs:::repository/r/object/")
    assert matches_under(secret, "arn:lakefs:fs:::repository/r/object/data/secret/x/")
    assert not matches_under(secret, "arn:lakefs:fs:::repository/r/object/public/")
    assert not covers_under(secret, "arn:lakefs:fs:::repository/r/object/")
    assert covers_under(secret, "arn:lakefs:fs:::repository/r/object/data/secret/")
