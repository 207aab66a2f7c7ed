"""LocalBlockStore specifics: the root is a wall, puts are atomic files, errors are translated."""

from __future__ import annotations

import io
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from kvlake.blockstore import READ_CHUNK
from kvlake.blockstore.local import LocalBlockStore
from kvlake.blockstore.local_syncs import FolderSyncs
from kvlake.blockstore.local_uploads import TEMP_PREFIX
from kvlake.errors import (
    BlobNotFoundError,
    ConfigError,
    ConflictError,
    InvalidInputError,
    UnavailableError,
)
from tests.support import wait_until

from .streams import PatternStream, SourceError

NS = "local://lake/repo1"
AS_ROOT = os.geteuid() == 0


def files_under(folder: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(top, name), folder)
        for top, _, names in os.walk(folder)
        for name in names
    )


def test_put_writes_a_file_below_the_namespace_folder(local_store: LocalBlockStore) -> None:
    local_store.put(NS, "data/ab/cd", b"blob")
    assert Path(local_store.root, "lake/repo1/data/ab/cd").read_bytes() == b"blob"
    assert files_under(local_store.root) == ["lake/repo1/data/ab/cd"]


def test_namespace_linked_out_of_the_root_is_refused(
    local_store: LocalBlockStore, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, Path(local_store.root, "lake"))
    with pytest.raises(InvalidInputError, match="leads out of the blockstore root"):
        local_store.check_namespace(NS)
    with pytest.raises(InvalidInputError, match="symbolic link"):
        local_store.put(NS, "k", b"x")
    assert list(outside.iterdir()) == []


def test_namespace_linked_to_the_root_itself_is_refused(local_store: LocalBlockStore) -> None:
    os.symlink(local_store.root, Path(local_store.root, "everything"))
    with pytest.raises(InvalidInputError, match="leads out"):
        local_store.check_namespace("local://everything")


def test_namespace_linked_within_the_root_is_served(local_store: LocalBlockStore) -> None:
    Path(local_store.root, "real").mkdir()
    os.symlink(Path(local_store.root, "real"), Path(local_store.root, "alias"))
    local_store.put("local://alias", "k", b"x")
    assert Path(local_store.root, "real/k").read_bytes() == b"x"
    assert list(local_store.list_keys("local://alias")) == ["k"]


@pytest.mark.parametrize("target", ["outside", "root/lake/repo2"])
def test_key_linked_out_of_its_namespace_is_refused(
    local_store: LocalBlockStore, tmp_path: Path, target: str
) -> None:
    (tmp_path / target).mkdir(parents=True)
    (tmp_path / target / "secret").write_bytes(b"secret")
    Path(local_store.root, "lake/repo1").mkdir(parents=True)
    os.symlink(tmp_path / target, Path(local_store.root, "lake/repo1/data"))
    for call in (local_store.get, local_store.size, local_store.delete):
        with pytest.raises(InvalidInputError, match="leads out of storage namespace"):
            call(NS, "data/secret")
    with pytest.raises(InvalidInputError, match="symbolic link"):
        local_store.put(NS, "data/new", b"x")
    failures = local_store.delete_many(NS, ["data/secret"])
    assert isinstance(failures["data/secret"], InvalidInputError)
    assert (tmp_path / target / "secret").read_bytes() == b"secret"
    assert sorted(p.name for p in (tmp_path / target).iterdir()) == ["secret"]


def test_listing_does_not_follow_symbolic_links(local_store: LocalBlockStore) -> None:
    local_store.put("local://lake/repo2", "b", b"x")
    local_store.put(NS, "a", b"x")
    os.symlink(Path(local_store.root, "lake/repo2"), Path(local_store.root, "lake/repo1/link"))
    os.symlink(Path(local_store.root, "lake/repo1/a"), Path(local_store.root, "lake/repo1/c"))
    assert list(local_store.list_keys(NS)) == ["a"]
    assert list(local_store.list_keys(NS, "link/")) == []


def test_failed_put_leaves_no_file_behind(local_store: LocalBlockStore) -> None:
    source = PatternStream(3 * READ_CHUNK, fail_at=2 * READ_CHUNK)
    with pytest.raises(SourceError):
        local_store.put(NS, "data/torn", io.BufferedReader(source))
    assert files_under(local_store.root) == []


def test_leftover_upload_files_are_hidden_and_reserved(local_store: LocalBlockStore) -> None:
    local_store.put(NS, "data/a", b"x")
    Path(local_store.root, "lake/repo1/data", f"{TEMP_PREFIX}crashed").write_bytes(b"partial")
    assert list(local_store.list_keys(NS)) == ["data/a"]
    with pytest.raises(InvalidInputError, match="reserves"):
        local_store.put(NS, f"data/{TEMP_PREFIX}x", b"x")


def test_put_streams_without_holding_the_blob_in_memory(local_store: LocalBlockStore) -> None:
    size = 24 * READ_CHUNK
    tracemalloc.start()
    try:
        local_store.put(NS, "big", PatternStream(size))  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert local_store.size(NS, "big") == size
    assert peak < 8 * READ_CHUNK


def test_a_blob_and_a_folder_cannot_share_a_name(local_store: LocalBlockStore) -> None:
    local_store.put(NS, "a/b", b"x")
    with pytest.raises(ConflictError, match="'a'"):
        local_store.put(NS, "a", b"x")
    local_store.put(NS, "f", b"x")
    with pytest.raises(ConflictError, match="'f/g'"):
        local_store.put(NS, "f/g", b"x")
    assert list(local_store.list_keys(NS)) == ["a/b", "f"]


def test_a_folder_is_not_a_blob(local_store: LocalBlockStore) -> None:
    local_store.put(NS, "a/b", b"x")
    with pytest.raises(BlobNotFoundError):
        local_store.size(NS, "a")
    with pytest.raises(BlobNotFoundError):
        local_store.open_reader(NS, "a")
    local_store.delete(NS, "a")
    assert local_store.get(NS, "a/b") == b"x"


def test_too_long_a_key_segment_is_invalid_input(local_store: LocalBlockStore) -> None:
    with pytest.raises(InvalidInputError, match="too long"):
        local_store.put(NS, "x" * 300, b"x")


@pytest.mark.skipif(AS_ROOT, reason="root ignores file permissions; run as a normal user")
def test_permission_errors_become_unavailable(local_store: LocalBlockStore) -> None:
    local_store.put(NS, "data/a", b"x")
    folder = Path(local_store.root, "lake/repo1/data")
    folder.chmod(0o500)
    try:
        with pytest.raises(UnavailableError, match="access to"):
            local_store.put(NS, "data/b", b"x")
        with pytest.raises(UnavailableError, match="access to"):
            local_store.delete(NS, "data/a")
    finally:
        folder.chmod(0o700)


def test_root_is_created(tmp_path: Path) -> None:
    store = LocalBlockStore.from_url(f"local://{tmp_path}/new/root")
    assert store.root == str(tmp_path / "new/root")
    assert (tmp_path / "new/root").is_dir()


@pytest.mark.parametrize("url", ["local://relative/path", "local://", "mem:///abs"])
def test_root_must_be_an_absolute_local_folder(url: str) -> None:
    with pytest.raises(ConfigError, match="KVLAKE_BLOCKSTORE_URL"):
        LocalBlockStore.from_url(url)


def test_unwritable_root_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(ConfigError, match="KVLAKE_BLOCKSTORE_URL .* cannot write"):
        LocalBlockStore.from_url(f"local://{tmp_path}/file/root")


@pytest.mark.skipif(AS_ROOT, reason="root ignores file permissions; run as a normal user")
def test_read_only_root_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="KVLAKE_BLOCKSTORE_URL"):
        LocalBlockStore.from_url(f"local://{tmp_path}/ro")


# -- durability: shared folder fsyncs and new folders ---------------------------------------


def _fsynced_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the path of every file and folder fsynced from now on."""
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    return synced


def test_a_put_makes_new_folders_durable_in_their_parents(
    local_store: LocalBlockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _fsynced_paths(monkeypatch)
    local_store.put(NS, "data/h1/a", b"1")
    namespace = os.path.join(local_store.root, "lake/repo1")
    folders = [path for path in synced if os.path.isdir(path)]
    parents = [local_store.root, os.path.dirname(namespace), namespace, f"{namespace}/data"]
    assert folders == [*parents, f"{namespace}/data/h1"]  # every new name, then the rename
    synced.clear()
    local_store.put(NS, "data/h1/b", b"2")
    assert [path for path in synced if os.path.isdir(path)] == [f"{namespace}/data/h1"]


def _wait_for_waiters(syncs: FolderSyncs, folder: str, count: int) -> None:
    wait_until(
        lambda: syncs.waiters(folder) >= count,
        interval=0.001,
        message=f"{count} sync callers to arrive",
    )


def test_callers_waiting_on_a_running_folder_fsync_share_the_next_one() -> None:
    syncs = FolderSyncs()
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def fsync() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            started.set()
            release.wait(10)

    first = threading.Thread(target=syncs.sync, args=("f", fsync))
    first.start()
    started.wait(10)
    # These ask while the first fsync runs, which may have begun before their renames.
    others = [threading.Thread(target=syncs.sync, args=("f", fsync)) for _ in range(5)]
    for thread in others:
        thread.start()
    _wait_for_waiters(syncs, "f", 6)
    assert all(thread.is_alive() for thread in others)
    release.set()
    for thread in (first, *others):
        thread.join(10)
    assert len(runs) == 2  # one more fsync covered all five
    assert syncs.waiters("f") == 0
    assert syncs.folders_in_use() == 0  # nothing is kept for a folder no one syncs


def test_a_failed_folder_fsync_fails_its_caller_and_the_waiters_run_their_own() -> None:
    syncs = FolderSyncs()
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []
    errors: list[BaseException] = []

    def fsync() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            started.set()
            release.wait(10)
            raise UnavailableError("disk gone")

    def first_caller() -> None:
        try:
            syncs.sync("f", fsync)
        except UnavailableError as exc:
            errors.append(exc)

    first = threading.Thread(target=first_caller)
    first.start()
    started.wait(10)
    waiters = [threading.Thread(target=syncs.sync, args=("f", fsync)) for _ in range(3)]
    for thread in waiters:
        thread.start()
    _wait_for_waiters(syncs, "f", 4)
    release.set()
    for thread in (first, *waiters):
        thread.join(10)
    assert [str(error) for error in errors] == ["disk gone"]
    assert len(runs) == 2


def test_the_root_its_folders_and_blobs_are_private(tmp_path: Path) -> None:
    """Issue 10 item 10: blobs are the server user's alone (0600 files, 0700 folders)."""
    root = tmp_path / "lake" / "blocks"
    store = LocalBlockStore(str(root))
    store.put("local://repo", "data/2026/blob", b"secret")
    assert (tmp_path / "lake").stat().st_mode & 0o777 == 0o700
    for folder in (root, root / "repo", root / "repo" / "data", root / "repo" / "data" / "2026"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert (root / "repo" / "data" / "2026" / "blob").stat().st_mode & 0o777 == 0o600


# -- the put path: the blob fsynced before its name, its folder checked by identity ----------


def test_a_put_fsyncs_the_blob_before_renaming_it_and_the_folder_after(
    local_store: LocalBlockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_store.put(NS, "data/h1/a", b"1")  # the folders exist from here on
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def recording_fsync(descriptor: int) -> None:
        path = os.readlink(f"/proc/self/fd/{descriptor}")
        events.append(("fsync folder " if os.path.isdir(path) else "fsync file ") + path)
        real_fsync(descriptor)

    def recording_replace(*args: object, **kwargs: object) -> None:
        events.append("rename")
        real_replace(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    local_store.put(NS, "data/h1/b", b"2")
    folder = os.path.join(local_store.root, "lake/repo1/data/h1")
    assert len(events) == 3  # one fsync of the data, one of the folder: nothing more
    assert events[0].startswith(f"fsync file {folder}/{TEMP_PREFIX}")
    assert events[1:] == ["rename", f"fsync folder {folder}"]


def test_a_crash_between_writing_and_renaming_leaves_no_partial_blob(
    local_store: LocalBlockStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_store.put(NS, "data/k", b"old")

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the process stops between the fsync and the rename

    monkeypatch.setattr(os, "replace", crash)
    monkeypatch.setattr(os, "unlink", lambda *args, **kwargs: None)  # a crash cleans nothing up
    with pytest.raises(KeyboardInterrupt):
        local_store.put(NS, "data/k", b"new and longer")
    with pytest.raises(KeyboardInterrupt):
        local_store.put(NS, "data/fresh", b"never named")
    monkeypatch.undo()
    assert local_store.get(NS, "data/k") == b"old"
    leftovers = os.listdir(os.path.join(local_store.root, "lake/repo1/data"))
    assert len([name for name in leftovers if name.startswith(TEMP_PREFIX)]) == 2
    assert list(local_store.list_keys(NS)) == ["data/k"]
    with pytest.raises(BlobNotFoundError):
        local_store.get(NS, "data/fresh")


def test_a_folder_swapped_for_a_link_after_a_put_is_checked_again(
    local_store: LocalBlockStore, tmp_path: Path
) -> None:
    local_store.put(NS, "data/a", b"1")  # data/ is checked and remembered
    outside = tmp_path / "outside"
    outside.mkdir()
    data = Path(local_store.root, "lake/repo1/data")
    os.rename(data, tmp_path / "moved")
    os.symlink(outside, data)
    with pytest.raises(InvalidInputError, match="symbolic link"):
        local_store.put(NS, "data/b", b"2")
    assert list(outside.iterdir()) == []


def test_a_new_folder_below_a_link_out_is_refused_before_it_is_created(
    local_store: LocalBlockStore, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    Path(local_store.root, "lake/repo1").mkdir(parents=True)
    os.symlink(outside, Path(local_store.root, "lake/repo1/data"))
    with pytest.raises(InvalidInputError, match="symbolic link"):
        local_store.put(NS, "data/new/folder/k", b"x")
    assert list(outside.iterdir()) == []
