"""BodyBudget's books on the event loop, driven step by step (no server, no threads)."""

from __future__ import annotations

import asyncio
import contextlib

from kvlake.api.body import BodyBudget


def test_an_empty_body_released_after_a_full_one_of_its_client_keeps_the_books() -> None:
    async def scenario() -> tuple[int, int]:
        budget = BodyBudget(100, client_share=0.5, wait=1.0)
        async with contextlib.AsyncExitStack() as stack:
            full = contextlib.AsyncExitStack()
            await full.enter_async_context(budget.hold(50, client="10.0.0.1"))
            await stack.enter_async_context(budget.hold(0, client="10.0.0.1"))
            await full.aclose()  # the full body ends first, the empty one after
        return budget.used, budget.held("10.0.0.1")

    assert asyncio.run(scenario()) == (0, 0)
