"""Garbage collection deletes exactly the expired, unreferenced, old-enough blobs, and no other.

A lake is built at known ages with a clock the test moves: commits kept and
expired by the rules, a deleted branch (a dangling commit), an overwrite, a
staged upload, a blob no entry ever referenced, a young unreferenced blob.
The whole run, and a sweep run again, also run on S3 (moto's server on loopback).
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from kvlake.blockstore import open_blockstore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import DAY, Repository, make_rules
from kvlake.lake import Lake
from kvlake.pipelines.gc.collector import SWEEP_STARTED, GarbageCollector
from kvlake.pipelines.runs import RunFiles
from tests.support import FakeClock

HOUR = 3600


class Built:
    """What the generated lake holds, by role."""

    def __init__(self, lake: Lake, repo: Repository) -> None:
        self.lake, self.repo = lake, repo
        self.addresses: dict[str, str] = {}

    def upload(self, name: str, path: str, branch: str = "main") -> str:
        stat = self.lake.catalog.upload(self.repo, branch, path, io.BytesIO(name.encode()))
        self.addresses[name] = stat.address
        return stat.address

    def commit(self, branch: str = "main") -> str:
        return self.lake.graveler.commit(self.repo, branch, committer="t", message=branch)

    def blobs(self) -> set[str]:
        return set(self.lake.blockstore.list_keys(self.repo.storage_namespace, "data/"))

    def named(self, *names: str) -> set[str]:
        return {self.addresses[name] for name in names}


def namespace_of(lake: Lake) -> str:
    """The namespace of repository `repo1` on the lake's blockstore (local folder or S3)."""
    if lake.blockstore.scheme == "s3":
        return "s3://lake/repo1"
    return f"local://{lake.settings.data_dir}/blocks/repo1"


def build(lake: Lake, clock: FakeClock) -> Built:
    namespace = namespace_of(lake)
    built = Built(lake, lake.graveler.create_repository("repo1", storage_namespace=namespace))
    lake.graveler.retention.set_rules(built.repo, make_rules(1, {"keep": 30}))
    built.upload("a1", "a")
    built.upload("b", "b")
    built.upload("c", "c")
    built.commit()  # expires: main moves on and the first commit is older than a day
    lake.graveler.create_branch(built.repo, "keep", "main")  # 30 days: keeps the first commit
    clock.advance(HOUR)
    built.upload("a2", "a")  # overwrites a1
    lake.graveler.delete(built.repo, "main", b"b")
    built.commit()
    lake.graveler.create_branch(built.repo, "dev", "main")
    built.upload("d", "d", branch="dev")
    built.commit("dev")
    lake.graveler.delete_branch(built.repo, "dev")  # its commit dangles, and expires
    built.upload("staged", "e")  # never committed: staging keeps it
    lake.blockstore.put(namespace, "data/20250101T00/orphan", b"no entry ever")
    built.addresses["orphan"] = "data/20250101T00/orphan"
    clock.advance(5 * DAY)
    built.upload("young", "young")  # inside the grace period once deleted from staging
    lake.graveler.delete(built.repo, "main", b"young")
    return built


def test_gc_deletes_exactly_the_expired_unreferenced_old_blobs(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    before = built.blobs()
    gc = GarbageCollector(spark, clocked_lake, clock=clock)

    summary = gc.run("repo1", grace_period=DAY)

    # a1 is only in the first commit, which "keep" retains (30 days); b likewise.
    assert before - built.blobs() == built.named("d", "orphan")
    assert summary.counts.deleted == 2 and summary.counts.failed == 0
    assert summary.counts.bytes_freed == len(b"d") + len(b"no entry ever")
    assert summary.counts.uncommitted == 1 and summary.counts.retained_commits == 3
    # A second run finds nothing more to delete.
    again = gc.run("repo1", grace_period=DAY)
    assert again.counts.candidates == 0 and again.counts.deleted == 0


def test_an_entry_imported_by_another_spelling_of_the_namespace_keeps_its_blob(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    """Imports made before sources were compared canonically (issue 22 #1) could point at
    the repository's own blobs by another spelling: the marks read it as the same blob."""
    built = build(clocked_lake, clock)
    scheme, _, path = built.repo.storage_namespace.partition("://")

    def imported(path_: str, name: str) -> None:
        address = f"{scheme}:///{path.replace('/', '//', 1)}/./{built.addresses[name]}"
        entry = ObjectEntry(address=address, size=1, checksum="c", mtime=0.0, content_type="t")
        clocked_lake.graveler.set(built.repo, "main", path_.encode(), to_value(entry))

    imported("legacy/orphan", "orphan")
    built.commit()
    imported("legacy/d", "d")  # staged only
    before = built.blobs()

    GarbageCollector(spark, clocked_lake, clock=clock).run("repo1", grace_period=DAY)

    assert built.blobs() == before


def test_without_the_long_rule_the_overwritten_and_deleted_blobs_go_too(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    clocked_lake.graveler.delete_branch(built.repo, "keep")
    before = built.blobs()

    swept = GarbageCollector(spark, clocked_lake, clock=clock).run("repo1", grace_period=DAY)

    assert before - built.blobs() == built.named("a1", "b", "d", "orphan")
    assert built.named("a2", "c", "staged", "young") <= built.blobs()
    assert swept.counts.too_young == 1  # "young": its hour folder ends after the cutoff


def test_a_dry_run_deletes_nothing_and_lists_every_candidate(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    before = built.blobs()

    summary = GarbageCollector(spark, clocked_lake, clock=clock).run(
        "repo1", grace_period=DAY, dry_run=True
    )

    assert built.blobs() == before
    assert summary.state == "dry_run" and summary.counts.deleted == 2
    files = RunFiles(clocked_lake.blockstore, built.repo.storage_namespace, summary.run_id)
    listed = {a for batch in files.rows("candidates") for a in batch.column("address").to_pylist()}
    assert listed == built.named("d", "orphan")


def test_a_commit_published_between_mark_and_sweep_keeps_what_it_references(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    gc = GarbageCollector(spark, clocked_lake, clock=clock)
    marked = gc.mark("repo1", grace_period=DAY)
    # The dangling commit holding "d" is merged back in after the mark took its marks.
    dangling = next(
        c.id
        for c in clocked_lake.graveler.retention.list_commits(built.repo)
        if c.commit.message == "dev"
    )
    clocked_lake.graveler.create_branch(built.repo, "revived", dangling)

    summary = gc.sweep("repo1", marked.run_id)

    assert summary.counts.late_marked >= 1
    assert built.named("d") <= built.blobs()
    assert built.named("orphan").isdisjoint(built.blobs())


def test_a_sweep_run_again_after_a_partial_one_finishes_and_loses_nothing(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    gc = GarbageCollector(spark, clocked_lake, clock=clock)
    marked = gc.mark("repo1", grace_period=DAY)
    # A sweep killed after deleting the orphan only: it had marked its start.
    files = RunFiles(clocked_lake.blockstore, built.repo.storage_namespace, marked.run_id)
    files.write_json(SWEEP_STARTED, marked)
    clocked_lake.blockstore.delete(built.repo.storage_namespace, built.addresses["orphan"])

    summary = gc.sweep("repo1", marked.run_id)

    assert summary.counts.deleted == 1 and summary.counts.failed == 0
    assert built.named("d", "orphan").isdisjoint(built.blobs())
    assert built.named("a1", "a2", "b", "c", "staged", "young") <= built.blobs()


@pytest.mark.parametrize("blockstore_kind", ["local"])  # refused before a blob is read
def test_bad_input_is_refused_and_changes_nothing(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    before = built.blobs()
    gc = GarbageCollector(spark, clocked_lake, clock=clock)

    with pytest.raises(InvalidInputError, match="uploaded in the future"):
        gc.run("repo1", grace_period=-1)
    with pytest.raises(InvalidInputError, match="is not a run id"):
        gc.sweep("repo1", "nope")
    with pytest.raises(NotFoundError, match="no finished mark"):
        gc.sweep("repo1", "01m8a1b2c3d4e5f6g7h8j9k0m1")
    clocked_lake.graveler.retention.delete_rules(built.repo)
    with pytest.raises(NotFoundError):
        gc.run("repo1")
    assert built.blobs() == before


def _referenced(lake: Lake, repo: Repository) -> set[str]:
    """Every address a branch head or staged entry references now."""
    found: set[str] = set()
    for name, _ in lake.graveler.list_branches(repo):
        page = lake.catalog.list_objects(repo, name).results
        found |= {stat.address for stat in page if hasattr(stat, "address")}
    return found


@pytest.mark.parametrize("phase", ["staged", "retained", "listed", "late_commits"])
def test_writers_racing_a_run_never_lose_a_referenced_blob(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock, phase: str
) -> None:
    lake = clocked_lake
    built = build(lake, clock)
    lake.graveler.delete_branch(built.repo, "keep")  # a1 and b are now in expired commits only
    old = lake.graveler.resolve_ref(built.repo, "main~1").commit_id

    def race(done: str, summary: object) -> None:
        if done != phase:
            return
        built.upload("fresh", "fresh")
        lake.catalog.copy_object(built.repo, old, "a", "main", "a-copy")  # a1's address again
        built.commit()
        lake.catalog.copy_object(built.repo, old, "b", "main", "b-copy")  # b's, left staged
        if phase != "late_commits":  # reviving expired commits during a sweep is unsupported
            dangling = next(
                c.id
                for c in lake.graveler.retention.list_commits(built.repo)
                if c.commit.message == "dev"
            )
            lake.graveler.create_branch(built.repo, "revived", dangling)

    GarbageCollector(spark, lake, clock=clock, progress=race).run("repo1", grace_period=DAY)

    referenced = _referenced(lake, built.repo)
    assert built.named("a1", "b", "fresh") <= referenced
    assert referenced <= built.blobs()
    assert built.named("orphan").isdisjoint(built.blobs())


def test_an_inventory_file_replaces_the_listing(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock, tmp_path: Path
) -> None:
    built = build(clocked_lake, clock)
    listed = sorted(built.blobs())
    inventory = tmp_path / "inventory.parquet"
    extra = ["data/20250101T00/only-in-inventory", "_lakefs/not-data", "data/bad-hour/x"]
    pq.write_table(pa.table({"key": listed + extra, "size": [1] * (len(listed) + 3)}), inventory)

    marked = GarbageCollector(spark, clocked_lake, clock=clock).mark(
        "repo1", grace_period=DAY, inventory=str(inventory)
    )

    files = RunFiles(clocked_lake.blockstore, built.repo.storage_namespace, marked.run_id)
    found = {a for batch in files.rows("candidates") for a in batch.column("address").to_pylist()}
    assert found == built.named("d", "orphan") | {extra[0]}
    assert marked.counts.listed == len(listed)  # less the young blob, plus only-in-inventory
    assert marked.counts.too_young == 1  # the young blob, counted from the inventory too


# On S3: a blockstore of the same kind that does not serve the namespace is one rooted
# elsewhere; a local folder serves every local:// namespace.
@pytest.mark.parametrize("blockstore_kind", ["s3"])
def test_a_repository_whose_namespace_this_lake_does_not_serve_is_refused(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock
) -> None:
    built = build(clocked_lake, clock)
    before = built.blobs()
    url = clocked_lake.settings.blockstore_url
    assert url.startswith("s3://lake?")
    with open_blockstore(url.replace("s3://lake?", "s3://lake/elsewhere?")) as blocks:
        elsewhere = Lake(clocked_lake.settings, clocked_lake.store, blocks, clock=clock)

        with pytest.raises(InvalidInputError, match="does not serve"):
            GarbageCollector(spark, elsewhere, clock=clock).run("repo1")

    assert built.blobs() == before
