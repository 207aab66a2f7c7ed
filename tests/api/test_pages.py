"""Listing pages: a `search=` page looks at a bounded number of items (issue 33)."""

from __future__ import annotations

from collections.abc import Iterator

from kvlake.api.pages import search_page


def names(count: int, seen: list[str]) -> Iterator[str]:
    for n in range(count):
        seen.append(name := f"r{n:06d}")
        yield name


def test_a_search_page_looks_at_a_bounded_number_of_items_whatever_the_listing_holds() -> None:
    looked = []
    for size in (100, 10_000):
        seen: list[str] = []
        results, page = search_page(names(size, seen), 10, str, lambda n: "x" in n, examined=50)
        assert results == [] and page.has_more and page.next_offset == "r000049"
        looked.append(len(seen))
    assert looked == [50, 50]


def test_search_pages_continue_where_the_last_one_stopped_and_find_every_match() -> None:
    every = [f"r{n:04d}" for n in range(1000)]
    wanted = {name for name in every if name.endswith("7")}
    found: list[str] = []
    after = ""
    while True:
        items = (name for name in every if name > after)
        results, page = search_page(items, 30, str, lambda n: n in wanted, examined=120)
        found.extend(results)
        if not page.has_more:
            break
        after = page.next_offset
    assert found == sorted(wanted)


def test_a_full_page_of_matches_stops_at_the_next_match() -> None:
    seen: list[str] = []
    results, page = search_page(names(1000, seen), 3, str, lambda n: True)
    assert results == ["r000000", "r000001", "r000002"]
    assert page.has_more and page.next_offset == "r000002" and len(seen) == 4
