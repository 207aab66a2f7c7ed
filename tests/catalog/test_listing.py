"""Property test: delimited, paginated listings match a model built from plain sorting."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from kvlake.catalog.listing import list_page, prefix_end
from kvlake.catalog.records import CommonPrefix, ObjectEntry, to_value
from kvlake.graveler.records import Value

paths = st.lists(
    st.text(alphabet="ab/", min_size=1, max_size=6).filter(lambda p: "\0" not in p),
    unique=True,
    max_size=40,
)


def model_listing(keys: list[str], prefix: str, delimiter: str) -> list[tuple[bool, str]]:
    """(is a common prefix, path) rows, from sorting and folding every key."""
    rows: list[tuple[bool, str]] = []
    for key in sorted(keys, key=str.encode):
        if not key.startswith(prefix):
            continue
        cut = key.find(delimiter, len(prefix)) if delimiter else -1
        row = (True, key[: cut + len(delimiter)]) if cut >= 0 else (False, key)
        if not rows or rows[-1] != row:
            rows.append(row)
    return rows


@settings(max_examples=300, deadline=None)
@given(paths, st.sampled_from(["", "a", "a/", "b"]), st.sampled_from(["", "/"]), st.integers(1, 5))
def test_paging_through_a_listing_matches_the_model(
    keys: list[str], prefix: str, delimiter: str, amount: int
) -> None:
    entry = ObjectEntry(address="data/x", size=1, checksum="c", mtime=0.0, content_type="t")
    stored = sorted((k.encode(), to_value(entry)) for k in keys)

    def entries_from(start: bytes) -> Iterator[tuple[bytes, Value]]:
        return iter([(k, v) for k, v in stored if k >= start])

    seen: list[tuple[bool, str]] = []
    after = ""
    while True:
        page = list_page(
            entries_from, prefix=prefix, delimiter=delimiter, after=after, amount=amount
        )
        seen += [(isinstance(r, CommonPrefix), r.path) for r in page.results]
        if not page.has_more:
            break
        assert len(page.results) == amount
        after = page.next_offset
    assert seen == model_listing(keys, prefix, delimiter)


def test_prefix_end_is_the_first_key_after_the_prefix() -> None:
    assert prefix_end(b"a/") == b"a0"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff\xff") == b""
