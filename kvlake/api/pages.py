"""One page of any listing, with all four pagination fields, read lazily from an iterator."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import TypeVar

from kvlake.api.wire.common import Pagination, pagination

_T = TypeVar("_T")


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
