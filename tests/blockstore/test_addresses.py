"""One canonical form of a storage address: every spelling a blockstore reads as one place is
one address, and containment is segment-wise."""

from __future__ import annotations

import pytest

from kvlake.blockstore import (
    StorageAddress,
    canonical_address,
    canonical_prefix,
    parse_address,
    parse_prefix,
    prefix_overlaps,
)
from kvlake.errors import InvalidInputError

SPELLINGS = {
    "s3://b/p": [
        "s3://b/p",
        "s3:///b/p",
        "s3://b//p",
        "s3://b/p/",
        "s3://b/./p",
        "s3:////b/p",
        "s3://./b/p",
        "s3://b/p/.",
    ],
    "local://x": [
        "local:///x",
        "local://x",
        "local://./x",
        "local:////x",
        "local://x//",
        "local://x/.",
    ],
}


@pytest.mark.parametrize(
    ("canonical", "spelling"),
    [(canonical, spelling) for canonical, all_ in SPELLINGS.items() for spelling in all_],
)
def test_every_spelling_of_a_place_has_one_canonical_form(canonical: str, spelling: str) -> None:
    assert canonical_address(spelling) == canonical
    assert parse_address(spelling) == parse_address(canonical)


@pytest.mark.parametrize(
    "bad", ["s3://", "s3:///", "s3://./", "s3://b/../p", "s3://..", "b/p", "://b/p", "s3://b/\0"]
)
def test_an_address_without_a_place_or_climbing_up_is_refused(bad: str) -> None:
    with pytest.raises(InvalidInputError, match="storage address"):
        parse_address(bad)


def test_containment_is_segment_wise_and_per_scheme() -> None:
    lake = parse_address("s3://lake/repo1")
    assert lake.contains(parse_address("s3:///lake//repo1/data/x"))
    assert lake.contains(lake)
    assert not lake.contains(parse_address("s3://lake/repo10"))
    assert not lake.contains(parse_address("local://lake/repo1/x"))
    assert parse_address("s3://lake").overlaps(lake) and lake.overlaps(parse_address("s3://lake"))
    assert not lake.overlaps(parse_address("s3://lake/repo2"))
    assert parse_address("s3://lake/./repo1//data/x").key_in(lake) == "data/x"
    with pytest.raises(InvalidInputError, match="not inside"):
        parse_address("s3://lake/repo10/x").key_in(lake)


def test_a_prefix_keeps_its_name_and_canonicalises_its_folder() -> None:
    assert parse_prefix("s3:///lake//dir/na") == (StorageAddress("s3", ("lake", "dir")), "na")
    assert canonical_prefix("s3:///lake/./dir/") == "s3://lake/dir/"
    with pytest.raises(InvalidInputError, match="'..'"):
        parse_prefix("s3://lake/dir/..")


@pytest.mark.parametrize(
    ("prefix", "overlaps"),
    [
        ("s3://lake/repo1/data/", True),
        ("s3:///lake/repo1/", True),
        ("s3://lake/re", True),
        ("s3://lake//repo1", True),
        ("s3://lake/", True),
        ("s3://lake/repo2/", False),
        ("s3://lake/x", False),
        ("local://lake/repo1/", False),
    ],
)
def test_a_prefix_overlaps_a_namespace_it_lists_any_blob_of(prefix: str, overlaps: bool) -> None:
    folder, name = parse_prefix(prefix)
    assert prefix_overlaps(folder, name, parse_address("s3://lake/repo1")) is overlaps
