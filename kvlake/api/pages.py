"""One page of any listing, with all four pagination fields, read lazily from an iterator."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Final, TypeVar

from kvlake.api.wire.common import Pagination, pagination

_T = TypeVar("_T")

SEARCH_EXAMINED: Final = 10_000
"""Items one page of a `search=` listing looks at before it answers with what it found.

A substring matches anywhere, so no index seeks to it; bounding the items looked
at bounds a page's cost, and the page's `next_offset` continues the search."""


def page(
    items: Iterable[_T], amount: int, name: Callable[[_T], str], *, prefix: str = ""
) -> tuple[list[_T], Pagination]:
    """Up to `amount` items (in name order) starting with `prefix`; reads one more at most."""
    selected = iter(items)
    if prefix:
        selected = itertools.takewhile(
            lambda item: name(item).startswith(prefix),
            itertools.dropwhile(lambda item: name(item) < prefix, selected),
        )
    results = list(itertools.islice(selected, amount + 1))
    has_more = len(results) > amount
    del results[amount:]
    next_offset = name(results[-1]) if has_more and results else ""
    return results, pagination(len(results), has_more=has_more, next_offset=next_offset)


def search_page(
    items: Iterable[_T],
    amount: int,
    name: Callable[[_T], str],
    wanted: Callable[[_T], bool],
    *,
    examined: int = SEARCH_EXAMINED,
) -> tuple[list[_T], Pagination]:
    """Up to `amount` wanted items, looking at `examined` items at most (issue 33).

    A page that stops at the bound may hold fewer than `amount` results (even
    none): `has_more` is set and `next_offset` is the last item looked at, so the
    next page (`after=` it) goes on from there, as lakeFS clients do.
    """
    results: list[_T] = []
    last = ""
    for count, item in enumerate(items, start=1):
        last = name(item)
        if wanted(item):
            if len(results) == amount:
                return results, pagination(
                    len(results), has_more=True, next_offset=name(results[-1])
                )
            results.append(item)
        if count == examined:
            return results, pagination(len(results), has_more=True, next_offset=last)
    return results, pagination(len(results), has_more=False, next_offset="")
