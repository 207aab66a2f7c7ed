"""A big commit's result pinned to stored ids: speeding the commit path up must not change it.

Range and metarange ids are content addresses of the files written, so equal ids mean
equal files: the same cut points, the same rows, the same Parquet bytes. The ids below
were produced by commit bd9d74b's commit path (issue 28's starting point) on the same
input, on the local and S3 blockstores alike; a pyarrow upgrade that changes the Parquet
bytes changes them too (then re-derive them from a tree known to be right, never from
the tree under test).
"""

from __future__ import annotations

import hashlib

from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, Value, encode
from kvlake.kv.memory import MemoryStore

FIRST_METARANGE = "c9b7efc4c704e6734eac468cefadd703732ce2e2bd4b3e0b969d257723ed52de"
SECOND_METARANGE = "88a692ee08b98cdb5c2c1b1e2e70a758c5ac8bb8de0e97b77ac341481f8ea079"
RANGES = (
    "595bb6b423b49e6c", "352db6a062d90f28", "410a8e985bc50680", "e2c1efd8eba8828e",
    "dd282b9f2cbfa506", "052efd46cea5018f", "aece90a9c9d801ba", "8cf2757276969bc5",
)  # fmt: skip
"""The first 16 hex digits of each range id of both commits, in key order."""


def _value(number: int, round_: int) -> Value:
    data = hashlib.sha256(f"{number}/{round_}".encode()).digest()[: number % 23]
    return Value(identity=f"{number}-{round_}".encode(), data=data)


def _key(number: int) -> bytes:
    # Keys of varied lengths, so byte caps and hashes cut at varied places.
    return b"data/%d/part-%06d%s" % (number % 7, number, b"x" * (number % 13))


def _stage(
    kv: MemoryStore, graveler: Graveler, repo: Repository, entries: list[tuple[bytes, Value | None]]
) -> None:
    """What `Graveler.set` and `delete` stage (a tombstone is an empty value), in bulk."""
    token = graveler.get_branch(repo, "main").staging_token
    kv.set_many(
        keys.staging_partition(token),
        sorted((key, b"" if value is None else encode(value)) for key, value in entries),
    )


def test_commit_writes_the_stored_ranges(
    kv: MemoryStore, graveler: Graveler, namespace: str
) -> None:
    repo = graveler.create_repository("fixture", storage_namespace=namespace)
    _stage(kv, graveler, repo, [(_key(n), _value(n, 1)) for n in range(30_000)])
    first = graveler.get_commit(repo, graveler.commit(repo, "main", committer="c", message="1"))
    ranges = graveler.committed.ranges(namespace, first.metarange_id)
    # Changes in the middle, deletions, and keys past the end (the empty-base path's twin).
    changes: list[tuple[bytes, Value | None]] = [
        (_key(n), _value(n, 2)) for n in range(0, 30_000, 97)
    ]
    changes += [(_key(n), None) for n in range(5, 30_000, 89)]
    changes += [(_key(n), _value(n, 2)) for n in range(30_000, 34_000)]
    _stage(kv, graveler, repo, changes)
    second = graveler.get_commit(repo, graveler.commit(repo, "main", committer="c", message="2"))
    second_ranges = graveler.committed.ranges(namespace, second.metarange_id)
    assert (first.metarange_id, second.metarange_id) == (FIRST_METARANGE, SECOND_METARANGE)
    assert tuple(info.id[:16] for info in ranges + second_ranges) == RANGES
