"""The records graveler stores, as frozen msgspec structs.

Values are opaque to graveler: the catalog encodes an object's metadata into
`data` and an identity hash over everything except the physical address, so
that two writes of the same content compare equal in diffs and merges.
"""

from __future__ import annotations

import msgspec


class Value(msgspec.Struct, frozen=True, kw_only=True):
    """What graveler stores under a key: an identity for comparisons and opaque data."""

    identity: bytes
    data: bytes
