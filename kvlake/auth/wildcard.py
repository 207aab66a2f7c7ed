"""Policy wildcards (`*` any run of characters, `?` exactly one), matched without backtracking.

A pattern becomes one regular expression only at the server's peril: `a*/*/*/*.csv`
against a path of 700 slashes made the regex engine try every way to split the
path between the stars, freezing the server for seconds per request. Here the
pattern is split at its stars into fixed-length segments instead. The first
segment must match at the start, the last at the end, and each one in between
is matched at its leftmost position after the previous one: leftmost is always
safe, because a star before and after a segment absorbs whatever the segment
skipped. No position is ever revisited, so a match costs at most one scan of
the value per segment (O(len(pattern) * len(value)) in the worst case, done in
C by `re` over patterns with no quantifiers), whatever the input.
"""

from __future__ import annotations

import functools
import re
from typing import Final

MAX_PATTERN_LENGTH: Final = 2048
"""Characters a policy pattern may have; longer ones are refused when the policy is written."""


class _Segments:
    """A pattern split at its stars; each segment a quantifier-free regex of fixed length."""

    __slots__ = ("first", "last", "middle", "starred")

    def __init__(self, pattern: str) -> None:
        parts = pattern.split("*")
        self.starred = len(parts) > 1
        self.first = _segment(parts[0])
        self.last = _segment(parts[-1]) if self.starred else self.first
        self.middle = tuple(_segment(part) for part in parts[1:-1] if part)


def _segment(text: str) -> tuple[re.Pattern[str], int]:
    literal = "".join("." if char == "?" else re.escape(char) for char in text)
    return re.compile(literal, re.DOTALL), len(text)


@functools.lru_cache(maxsize=4096)
def _split(pattern: str) -> _Segments:
    """Split once per pattern: patterns are immutable text, so caching is safe."""
    return _Segments(pattern)


def match(pattern: str, value: str) -> bool:
    """Whether `value` matches `pattern` as a whole, `*` and `?` being the only wildcards."""
    segments = _split(pattern)
    first, first_length = segments.first
    if not segments.starred:
        return first.fullmatch(value) is not None
    last, last_length = segments.last
    end = len(value) - last_length
    if first_length > end or first.match(value) is None:
        return False
    if last.fullmatch(value, end) is None:
        return False
    position = first_length
    for segment, length in segments.middle:
        found = segment.search(value, position, end)
        if found is None:
            return False
        position = found.start() + length
    return True


def matches_under(pattern: str, prefix: str) -> bool:
    """Whether some value starting with `prefix` matches `pattern`.

    What a deny needs to be honoured for a request on every resource under a prefix
    (a bulk delete of `object/data/`): `object/data/secret/*` matches no value the
    request names, yet denies some of what it would touch. Every position of the
    pattern still alive after `prefix` can reach the pattern's end (a literal or `?`
    takes one more character, a star any run), so one alive position is enough.
    """
    return bool(_positions_after(pattern, prefix))


def covers_under(pattern: str, prefix: str) -> bool:
    """Whether `pattern` matches every value starting with `prefix`: at some position
    alive after it, a star and nothing else remains.

    Exact for patterns without `?`; with one it may answer False where every value does
    match (`*?` after `a`), which refuses an allow, never grants a deny: the safe side.
    """
    return any(
        p < len(pattern) and not pattern[p:].strip("*") for p in _positions_after(pattern, prefix)
    )


def _positions_after(pattern: str, prefix: str) -> set[int]:
    """The pattern's positions a match can be at after reading `prefix`, run as a set of
    positions (no backtracking: O(len(pattern) * len(prefix)) at worst)."""
    alive = _closure(pattern, {0})
    for char in prefix:
        step = set()
        for position in alive:
            if position == len(pattern):
                continue
            token = pattern[position]
            if token == "*":
                step.add(position)
            elif token in ("?", char):
                step.add(position + 1)
        alive = _closure(pattern, step)
        if not alive:
            break
    return alive


def _closure(pattern: str, positions: set[int]) -> set[int]:
    """The positions plus those reached by skipping stars (a star may match nothing)."""
    closed = set(positions)
    for position in positions:
        while position < len(pattern) and pattern[position] == "*":
            position += 1
            closed.add(position)
    return closed
