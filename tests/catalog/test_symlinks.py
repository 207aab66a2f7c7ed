"""Hive symlink files (createSymlinkFile): one per folder, the objects' full addresses."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import RefNotFoundError
from kvlake.kv import Store
from tests.deletion.helpers import DeletionLake


def _symlink(lake: DeletionLake, key: str) -> list[str]:
    return lake.blocks.get(lake.namespace, key).decode().split("\n")


def test_one_file_per_folder_lists_its_objects_on_the_ref(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    a1 = lake.upload("tables/t/a=1/x.parquet", b"1")
    a2 = lake.upload("tables/t/a=2/y.parquet", b"2")
    a3 = lake.upload("tables/t/a=2/z.parquet", b"3")
    top = lake.upload("top.txt", b"t")
    lake.upload("other/o", b"o")
    lake.commit()
    gone = lake.upload("tables/t/a=1/staged-only", b"s")  # staged on main, not on the tag
    lake.graveler.create_tag(repo, "v1", "main~0")  # the commit, without the staged write
    location = lake.catalog.write_symlinks(repo, "main", "tables/")
    assert location == f"{lake.namespace}/symlinks"
    base = "symlinks/repo1/main/tables/t"
    assert _symlink(lake, f"{base}/a=1/symlink.txt") == [  # in path order
        f"{lake.namespace}/{gone.address}",
        f"{lake.namespace}/{a1.address}",
    ]
    assert _symlink(lake, f"{base}/a=2/symlink.txt") == [
        f"{lake.namespace}/{a2.address}",
        f"{lake.namespace}/{a3.address}",
    ]
    assert not lake.blocks.exists(lake.namespace, "symlinks/repo1/main/other/symlink.txt")
    lake.catalog.write_symlinks(repo, "v1", "")
    assert _symlink(lake, "symlinks/repo1/v1/tables/t/a=1/symlink.txt") == [
        f"{lake.namespace}/{a1.address}"
    ]
    assert _symlink(lake, "symlinks/repo1/v1/symlink.txt") == [f"{lake.namespace}/{top.address}"]
    with pytest.raises(RefNotFoundError):
        lake.catalog.write_symlinks(repo, "nope", "")


def test_the_files_are_never_logged_and_their_blobs_stay(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    stat = lake.upload("t/x", b"1")
    lake.catalog.write_symlinks(repo, "main", "")
    lake.upload("t/x", b"2")  # logs the first blob; the symlink file still names it
    lake.catalog.write_symlinks(repo, "main", "")  # rewritten: names the new blob
    lake.settle()
    assert stat.address not in lake.data_blobs()
    assert lake.blocks.exists(lake.namespace, "symlinks/repo1/main/t/symlink.txt")
    [line] = _symlink(lake, "symlinks/repo1/main/t/symlink.txt")
    assert line.removeprefix(f"{lake.namespace}/") in lake.data_blobs()
