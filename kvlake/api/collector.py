"""The cyclic garbage collector, set for serving (issue 28's tail latency).

A server process holds a few hundred thousand long-lived objects (pyarrow,
Starlette, prometheus_client, kvlake's own tables), and every full collection
walked all of them while requests waited. Requests allocate many short-lived
containers (a listing of 1,000 objects makes about 6,000), which at CPython's
default young threshold of 700 meant several young collections per request.
So once a process has opened its stores it freezes what exists (`gc.freeze`:
moved where no collection walks) and raises the young threshold: collections
come less often and walk only what requests made. Cycles are still collected,
later; the memory this can leave waiting is bounded by the threshold.
"""

from __future__ import annotations

import gc
from typing import Final

YOUNG_THRESHOLD: Final = 20_000
"""Allocations (net of frees) of tracked containers between young collections."""


def tune_for_serving() -> None:
    """Freeze the start-up heap and raise the young threshold, for this process."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
