"""Wire models of garbage collection rules, in lakeFS's shape (swagger `GarbageCollectionRules`).

Day counts are plain integers here: the graveler refuses a negative one with a
message that says what to give instead (kvlake/graveler/gcrules.py).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from kvlake.api.wire.common import Name, Request


class GarbageCollectionRule(Request):
    branch_id: Name
    retention_days: int


class GarbageCollectionRules(Request):
    default_retention_days: int
    branches: Annotated[list[GarbageCollectionRule], msgspec.Meta(max_length=10_000)]
