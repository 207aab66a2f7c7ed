"""Spark task functions (GC's, the import's), called directly on small Arrow batches: no Spark.

Each function is what one Spark task runs over its partition (`mapInArrow`); here the
test is the task. The functions open the lake from the job's settings (`task_lake`),
so they read the same on-disk lake the test built through its own `Lake`.
"""

from __future__ import annotations

import calendar
import io
from collections.abc import Iterator, Sequence

import msgspec
import pyarrow as pa
import pytest

from kvlake.catalog import ImportJob
from kvlake.config import Settings
from kvlake.graveler import Piece, Repository
from kvlake.lake import Lake
from kvlake.pipelines.executors import encode_settings
from kvlake.pipelines.gc import tasks
from kvlake.pipelines.imports import PIECES, write_pieces


@pytest.fixture
def blockstore_kind() -> str:
    """A local folder only: what a task does does not depend on the blockstore."""
    return "local"


JAN_1: int = calendar.timegm((2025, 1, 1, 0, 0, 0))


def batches(**columns: Sequence[object]) -> Iterator[pa.RecordBatch]:
    """One partition: the columns split into batches of two rows (a task sees several)."""
    table = pa.table(columns)
    yield from table.to_batches(max_chunksize=2)


def column(output: Iterator[pa.RecordBatch], name: str) -> list[object]:
    return [value for batch in output for value in batch.column(name).to_pylist()]


class Small:
    """A repository with one committed blob, one staged blob and one no entry names."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        namespace = f"local://{lake.settings.data_dir}/blocks/repo1"
        self.repo: Repository = lake.graveler.create_repository(
            "repo1", storage_namespace=namespace
        )
        self.committed = self.upload("committed", b"in a commit")
        self.commit_id = lake.graveler.commit(self.repo, "main", committer="t", message="m")
        self.staged = self.upload("staged", b"staged only")
        self.orphan = "data/20250101T00/orphan"
        lake.blockstore.put(namespace, self.orphan, b"no entry")

    @property
    def namespace(self) -> str:
        return self.repo.storage_namespace

    def upload(self, path: str, data: bytes) -> str:
        return self.lake.catalog.upload(self.repo, "main", path, io.BytesIO(data)).address

    def tokens(self) -> list[str]:
        return list(self.lake.graveler.references.live_tokens(self.repo).all)

    def metarange_id(self) -> str:
        return self.lake.graveler.get_commit(self.repo, self.commit_id).metarange_id


@pytest.fixture
def small(lake: Lake) -> Small:
    return Small(lake)


def test_inventory_keeps_hour_folders_that_ended_by_the_cutoff_and_only_them() -> None:
    keys = [
        "data/20250101T00/a",  # its hour ended at 01:00, before the cutoff
        "data/20250101T01/b",  # ended at 02:00: at the cutoff, old enough
        "data/20250101T02/c",  # ends at 03:00: too young
        "data/2025010100/d",  # not an hour folder
        "_lakefs/retention/gc/x",
    ]
    sizes = [1, 2, 3, 4, 5]
    cutoff = JAN_1 + 2 * 3600.0
    old = list(tasks.inventory_addresses(cutoff)(batches(key=keys, size=sizes)))
    assert column(iter(old), "address") == ["data/20250101T00/a", "data/20250101T01/b"]
    assert column(iter(old), "size") == [1, 2]
    assert all(batch.schema == tasks.LISTED for batch in old)
    young = list(tasks.inventory_addresses(cutoff, young=True)(batches(key=keys)))
    assert column(iter(young), "address") == ["data/20250101T02/c"]
    assert column(iter(young), "size") == [None]  # an inventory without sizes: asked later


def test_the_staged_task_yields_what_live_staging_references(
    settings: Settings, small: Small
) -> None:
    run = tasks.staged_addresses(encode_settings(settings), small.namespace)
    assert column(run(batches(token=small.tokens())), "address") == [small.staged]


def test_the_range_tasks_yield_every_committed_address(settings: Settings, small: Small) -> None:
    encoded = encode_settings(settings)
    range_ids = column(
        tasks.range_ids(encoded, small.namespace)(batches(metarange_id=[small.metarange_id()])),
        "range_id",
    )
    assert range_ids
    found = tasks.range_addresses(encoded, small.namespace)(batches(range_id=range_ids))
    assert column(found, "address") == [small.committed]


def test_the_listing_task_yields_every_blob_of_its_folders_with_its_size(
    settings: Settings, small: Small
) -> None:
    folders = list(small.lake.blockstore.list_folders(small.namespace, "data/"))
    listed = list(
        tasks.folder_addresses(encode_settings(settings), small.namespace)(batches(folder=folders))
    )
    sizes = dict(zip(column(iter(listed), "address"), column(iter(listed), "size"), strict=True))
    assert sizes == {small.committed: 11, small.staged: 11, small.orphan: 8}


def test_parts_written_by_one_task_read_back_as_the_rows_it_got(
    settings: Settings, small: Small
) -> None:
    encoded, prefix = encode_settings(settings), "_lakefs/retention/gc/run/staged/"
    addresses = ["data/x/1", "data/x/2", "data/x/3"]
    written = tasks.write_parts(encoded, small.namespace, prefix)(batches(address=addresses))
    assert column(written, "rows") == [3]
    parts = list(small.lake.blockstore.list_keys(small.namespace, prefix))
    assert parts == [f"{prefix}part-00000.parquet"]  # outside Spark: partition 0
    read = tasks.read_table_parts(encoded, small.namespace)(batches(key=parts))
    assert column(read, "address") == addresses


@pytest.mark.parametrize("dry_run", [True, False])
def test_the_sweep_task_deletes_what_nothing_references_and_keeps_the_rest(
    settings: Settings, small: Small, dry_run: bool
) -> None:
    started = small.lake.clock()
    sweep = tasks.sweep(
        encode_settings(settings), "repo1", "run1", started, dry_run=dry_run, again=False
    )
    candidates = batches(address=[small.orphan, small.staged], size=[8, None])
    [counts] = pa.Table.from_batches(list(sweep(candidates)), tasks.SWEEP_SCHEMA).to_pylist()
    assert counts == {
        "deleted": 1,
        "kept": 1,  # live staging holds it: the fresh check keeps it
        "failed": 0,
        "bytes_freed": 8,
        "first_failure": "",
    }
    left = set(small.lake.blockstore.list_keys(small.namespace, "data/"))
    assert (small.orphan in left) == dry_run and small.staged in left


def test_the_import_task_writes_its_sorted_interval_as_one_piece(
    settings: Settings, small: Small
) -> None:
    job = ImportJob(
        repository=small.repo,
        branch="main",
        import_id="import1",
        sources=(),
        committer="t",
        message="m",
        metadata={},
    )
    keys = [b"imported/a", b"imported/b", b"imported/c"]
    write = write_pieces(encode_settings(settings), job)
    entries = batches(key=keys, identity=[b"i"] * 3, data=[b"d"] * 3)
    [row] = pa.Table.from_batches(list(write(entries)), PIECES).to_pylist()
    piece = msgspec.msgpack.decode(row["piece"], type=Piece)
    assert row["first_key"] == piece.first_key == b"imported/a"
    assert piece.count == 3
    empty = batches(key=pa.array([], pa.binary()), identity=[], data=[])
    assert list(write(empty)) == []  # an empty interval has no piece
