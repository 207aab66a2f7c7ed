"""Work batches are one tagged union, decoded in one place, and old records still read.

A bulk delete's batches outlive the process that wrote them (a resumed operation
reads them after an upgrade), so the records kvlake wrote before batches were
tagged (one struct whose `ranges` told the two apart) must decode to the same
batches.
"""

from __future__ import annotations

import msgspec
import pytest

from kvlake.graveler import RangeInfo
from kvlake.operations import Outcome, PathBatch, RangeBatch
from kvlake.operations.records import RangePlan, decode_batch, encode

# Written by kvlake before batches were tagged (encode(Batch(...)) of that version).
OLD_PATH_BATCH = (
    b"\x88\xa5paths\x92\xa3a/1\xa3a/2\xa9addresses\x92\xa6data/x\xa6data/y\xa6ranges\x90"
    b"\xa8estimate\x00\xa6staged\x90\xa4gone\x90\xa4plan\xc0\xa7outcome\x84\xa7deleted\x01"
    b"\xa6failed\x00\xa7skipped\x01\xa7objects\xc0"
)
OLD_RANGE_BATCH = (
    b"\x88\xa5paths\x90\xa9addresses\x90\xa6ranges\x91\x85\xa2id\xa2r1\xa7min_key\xc4\x03a/0"
    b"\xa7max_key\xc4\x03a/9\xa5count\n\xa4sized\xa8estimate\t\xa6staged\x91\xa3a/5\xa4gone"
    b"\x91\xa3a/3\xa4plan\x85\xa5paths\x91\xa3a/5\xa9addresses\x90\xa6hidden\x08\xa4keep\x91"
    b"\xc4\x03a/7\xa7skipped\x01\xa7outcome\xc0"
)
PATHS = PathBatch(
    paths=["a/1", "a/2"], addresses=["data/x", "data/y"], outcome=Outcome(deleted=1, skipped=1)
)
RANGES = RangeBatch(
    ranges=[RangeInfo(id="r1", min_key=b"a/0", max_key=b"a/9", count=10, size=100)],
    estimate=9,
    staged=["a/5"],
    gone=["a/3"],
    plan=RangePlan(paths=["a/5"], addresses=[], tombstoned=8, keep=[b"a/7"], skipped=1),
)


@pytest.mark.parametrize(
    ("raw", "batch"), [(OLD_PATH_BATCH, PATHS), (OLD_RANGE_BATCH, RANGES)], ids=["paths", "ranges"]
)
def test_a_batch_stored_before_batches_were_tagged_decodes_to_its_variant(
    raw: bytes, batch: PathBatch | RangeBatch
) -> None:
    assert decode_batch(raw) == batch


@pytest.mark.parametrize("batch", [PATHS, RANGES], ids=["paths", "ranges"])
def test_a_batch_is_stored_with_its_kind_and_reads_back_as_it_was(
    batch: PathBatch | RangeBatch,
) -> None:
    raw = encode(batch)
    assert msgspec.msgpack.decode(raw)["kind"] == ("ranges" if batch is RANGES else "paths")
    assert decode_batch(raw) == batch


def test_each_variant_says_what_enumeration_counted_and_where_it_stood() -> None:
    assert (PATHS.objects, PATHS.last_path) == (2, "a/2")
    assert (RANGES.objects, RANGES.last_path, RANGES.span) == (9, "a/9", (b"a/0", b"a/9"))


def test_a_batch_of_an_unknown_kind_is_refused_by_name() -> None:
    raw = msgspec.msgpack.encode({"kind": "objects", "paths": ["a/1"]})
    with pytest.raises(msgspec.ValidationError, match="objects"):
        decode_batch(raw)
