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


def test_a_hold_that_waits_for_budget_gets_it_when_a_holder_releases() -> None:
    async def scenario() -> tuple[bool, int]:
        budget = BodyBudget(100, wait=5.0)
        first = contextlib.AsyncExitStack()
        await first.enter_async_context(budget.hold(100, client="a"))
        got = asyncio.Event()

        async def second() -> None:
            async with budget.hold(60, client="b"):
                got.set()

        waiter = asyncio.create_task(second())
        await asyncio.sleep(0.05)
        waited = not got.is_set()  # the budget is full: it waits
        await first.aclose()
        await asyncio.wait_for(waiter, 1.0)  # woken by the release, well before its 5 s
        return waited and got.is_set(), budget.used

    assert asyncio.run(scenario()) == (True, 0)
