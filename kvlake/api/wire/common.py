"""Shapes every endpoint shares: errors and pagination.

Request structs refuse unknown fields and wrong types (msgspec decodes strictly),
so a request that reaches the core is well formed. Text fields carry length
bounds so no single field can be huge, and integer fields the bounds of a
64-bit signed integer, all the records (msgpack), SQLite and PostgreSQL hold:
a size of 2**64 is a 400 naming the field, not a 500 from the encoder
(issue 23).
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

MAX_PER_PAGE: Final = 1000
DEFAULT_PER_PAGE: Final = 100

INT64_MAX: Final = 2**63 - 1
Integer = Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]
"""Every integer of a request, unless a tighter bound applies."""
Count = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]
"""Sizes, generations: 0 or more."""
Name = Annotated[str, msgspec.Meta(max_length=1024)]
Text = Annotated[str, msgspec.Meta(max_length=64 * 1024)]
Metadata = Annotated[dict[Name, Text], msgspec.Meta(max_length=1000)]


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every request body: unknown fields are an error, not silently dropped."""


class Error(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """lakeFS's error shape; `detail` (kvlake's) says what to do, where lakeFS's text does not."""

    message: str
    detail: str | None = None


class Pagination(msgspec.Struct, frozen=True, kw_only=True):
    has_more: bool
    next_offset: str
    results: int
    max_per_page: int


def pagination(count: int, *, has_more: bool, next_offset: str) -> Pagination:
    return Pagination(
        has_more=has_more,
        next_offset=next_offset if has_more else "",
        results=count,
        max_per_page=MAX_PER_PAGE,
    )
