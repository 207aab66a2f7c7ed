"""migrate copies every entry between any two drivers, verifies the copy and is safe to re-run."""

from __future__ import annotations

import hashlib
import itertools
import struct
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.errors import ConflictError, UnavailableError
from kvlake.kv import Store, open_store
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.migrate import MigrationReport, Phase, migrate
from kvlake.kv.store import MAX_BATCH_SIZE
from tests.support import drop_postgres_table

DRIVERS = ("mem", "sqlite", "postgres")


def _param(*kinds: str) -> object:
    marks = [pytest.mark.postgres] if "postgres" in kinds else []
    return pytest.param(*kinds, marks=marks, id="-".join(kinds))


PAIRS = [_param(src, dst) for src, dst in itertools.product(DRIVERS, DRIVERS)]
ONE = [_param(kind) for kind in DRIVERS]

OpenStore = Callable[[str], Store]


@pytest.fixture
def open_kind(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens a fresh, empty store of a driver kind; PostgreSQL gets its own table, dropped after."""
    opened: list[Store] = []
    tables: list[str] = []

    def open_fresh(kind: str) -> Store:
        if kind == "mem":
            url = "mem://"
        elif kind == "sqlite":
            url = f"sqlite://{tmp_path}/{uuid.uuid4().hex}.db"
        else:
            dsn = str(request.getfixturevalue("postgres_dsn"))  # skips locally, fails in CI
            tables.append(f"kv_test_{uuid.uuid4().hex[:16]}")
            url = f"{dsn}{'&' if '?' in dsn else '?'}table={tables[-1]}"
        store = open_store(url)
        opened.append(store)
        return store

    yield open_fresh
    for store in opened:
        store.close()
    for table in tables:
        drop_postgres_table(str(request.getfixturevalue("postgres_dsn")), table)


def fill(store: Store) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """Partitions that cover multi-page scans, odd bytes, empty values and a single key."""
    data = {
        b"big": [(b"key/%06d" % i, b"v" * (i % 50)) for i in range(MAX_BATCH_SIZE + 3001)],
        b"\x00odd": [(b"\x00", b""), (b"\x7f\xff", b"\x00\x01"), (b"\xff\xff", b"x" * 3000)],
        b"single": [(b"only", b"one")],
    }
    for partition, items in data.items():
        store.set_many(partition, items)
    return data


def expected_checksum(data: dict[bytes, list[tuple[bytes, bytes]]]) -> str:
    """The documented checksum, computed independently of kvlake.kv.migrate."""
    digest = hashlib.sha256()
    for partition in sorted(data):
        for key, value in sorted(data[partition]):
            for part in (partition, key, value):
                digest.update(struct.pack(">Q", len(part)) + part)
    return digest.hexdigest()


def content(store: Store) -> dict[bytes, list[tuple[bytes, bytes]]]:
    return {partition: list(store.scan(partition)) for partition in store.partitions()}


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_migrate_copies_everything_verifies_and_reruns_unchanged(
    open_kind: OpenStore, src: str, dst: str
) -> None:
    source, destination = open_kind(src), open_kind(dst)
    data = fill(source)
    report = migrate(source, destination)
    entries = sum(len(items) for items in data.values())
    size = sum(len(k) + len(v) for items in data.values() for k, v in items)
    assert report == MigrationReport(
        partitions=3, entries=entries, bytes=size, checksum=expected_checksum(data)
    )
    assert content(destination) == content(source)
    assert migrate(source, destination) == report  # idempotent
    assert content(destination) == content(source)


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_migrate_interrupted_by_a_failure_finishes_when_rerun(
    open_kind: OpenStore, src: str, dst: str
) -> None:
    source, destination = open_kind(src), open_kind(dst)
    data = fill(source)
    # The second batch write lands, then fails: a crash between commit and acknowledgement.
    faulty = FaultyStore(destination, [Fault(op="set_many", skip=1, when="after")])
    with pytest.raises(UnavailableError, match="injected fault"):
        migrate(source, faulty)
    assert content(destination) != content(source)
    report = migrate(source, destination)
    assert report.checksum == expected_checksum(data)
    assert content(destination) == content(source)


@pytest.mark.parametrize("dst", ONE)
def test_destination_with_extra_keys_is_reported(open_kind: OpenStore, dst: str) -> None:
    source, destination = open_kind("mem"), open_kind(dst)
    source.set_many(b"p", [(b"a", b"1"), (b"b", b"2")])
    destination.set(b"p", b"stale", b"x")
    with pytest.raises(ConflictError, match=r"partition b'p' holds 3 entries but the source has 2"):
        migrate(source, destination)


@pytest.mark.parametrize("dst", ONE)
def test_destination_with_an_extra_partition_is_reported(open_kind: OpenStore, dst: str) -> None:
    source, destination = open_kind("mem"), open_kind(dst)
    source.set(b"b", b"k", b"v")
    destination.set_many(b"a", [(b"k1", b"v"), (b"k2", b"v")])
    destination.set(b"c", b"k", b"v")
    with pytest.raises(ConflictError, match=r"has partition b'a', which the source lacks \(2 "):
        migrate(source, destination)
    destination.drop_partition(b"a")
    with pytest.raises(ConflictError, match=r"has partition b'c', which the source lacks \(1 "):
        migrate(source, destination)


@pytest.mark.parametrize(
    ("meddle", "problem"),
    [
        (lambda store: store.set(b"p", b"a", b"changed"), "different keys or values"),
        (lambda store: store.delete(b"p", b"a"), "holds only 1 of the 2 entries"),
    ],
    ids=["changed", "deleted"],
)
def test_a_writer_racing_the_copy_is_caught(
    open_kind: OpenStore, meddle: Callable[[Store], None], problem: str
) -> None:
    source, destination = open_kind("mem"), open_kind("sqlite")
    source.set_many(b"p", [(b"a", b"1"), (b"b", b"2")])

    def progress(phase: Phase, count: int) -> None:
        if phase == "copy":
            meddle(destination)

    with pytest.raises(ConflictError, match=problem):
        migrate(source, destination, progress=progress)


def test_empty_source_migrates_nothing(open_kind: OpenStore) -> None:
    report = migrate(open_kind("mem"), open_kind("sqlite"))
    assert report == MigrationReport(
        partitions=0, entries=0, bytes=0, checksum=hashlib.sha256().hexdigest()
    )


def test_progress_reports_every_entry_copied_and_verified(open_kind: OpenStore) -> None:
    source, destination = open_kind("mem"), open_kind("mem")
    data = fill(source)
    seen: dict[Phase, int] = {"copy": 0, "verify": 0}

    def progress(phase: Phase, count: int) -> None:
        seen[phase] += count

    migrate(source, destination, progress=progress)
    total = sum(len(items) for items in data.values())
    assert seen == {"copy": total, "verify": total}
