"""Zero-copy imports of local folders: off unless enabled, only from the import folders, and
the imported files are read in place and never deleted."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.catalog import ImportSource
from kvlake.config import ImportSettings, Settings, load_settings
from kvlake.errors import ConfigError, InvalidInputError
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support.imports import run_import

FILES = {"imports/set/a.csv": b"a,b", "imports/set/sub/b.csv": b"1,2,3", "imports/x": b"x"}
SOURCES = [
    ImportSource("local://imports/set/", "data/", "common_prefix"),
    ImportSource("local://imports/x", "single", "object"),
]
ENABLED = ImportSettings(local_enabled=True, local_prefixes="local://imports")


def _lake(root: Path, imports: ImportSettings) -> DeletionLake:
    for key, body in FILES.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(body)
    settings = Settings(data_dir=str(root.parent / "data"), imports=imports)
    return DeletionLake(
        MemoryStore(),
        open_blockstore(f"local://{root}"),
        settings=settings,
        namespace="local://lake/repo1",
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "blocks"


@pytest.fixture
def lake(root: Path) -> Iterator[DeletionLake]:
    lake = _lake(root, ENABLED)
    yield lake
    lake.lake.close()


def read(lake: DeletionLake, path: str, ref: str = "main") -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, ref, path)
    with reader:
        return reader.read()


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in (root / "imports").rglob("*")
        if p.is_file()
    }


def test_a_local_import_commits_entries_that_read_the_files_in_place(lake: DeletionLake) -> None:
    importer = lake.catalog.imports
    assert importer.supported
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me", message="local")
    run_import(lake.lake, job.import_id)
    status = importer.status(lake.repository, job.import_id)
    assert (status.completed, status.error, status.ingested) == (True, "", 3)
    assert read(lake, "data/a.csv") == b"a,b" and read(lake, "data/sub/b.csv") == b"1,2,3"
    assert read(lake, "single") == b"x"
    stat = lake.catalog.stat(lake.repository, "main", "data/sub/b.csv")
    assert stat.address == "local://imports/set/sub/b.csv" and stat.size == 5
    assert stat.checksum == hashlib.md5(b"1,2,3").hexdigest()  # as an upload's
    assert lake.data_blobs() == set()  # nothing was copied into the namespace


def test_imported_local_files_are_never_deleted(lake: DeletionLake, root: Path) -> None:
    importer = lake.catalog.imports
    run_import(
        lake.lake, importer.prepare(lake.repository, "main", SOURCES, committer="me").import_id
    )
    catalog, repository = lake.catalog, lake.repository
    catalog.copy_object(repository, "main", "single", "main", "copy", shallow=False)
    catalog.copy_object(repository, "main", "data/a.csv", "main", "copy2")
    catalog.delete_object(repository, "main", "copy")  # a staged delete
    lake.graveler.resets.reset_branch(repository, "main")  # drops the token with copy2
    catalog.delete_objects(repository, "main", ["data/a.csv", "single", "data/sub/b.csv"])
    lake.commit()
    lake.purges.delete_repository("repo1", purge=True)  # and its namespace goes, all of it
    lake.settle()
    assert list(lake.dead_letters()) == []
    assert list(lake.blocks.list_keys("local://lake/repo1")) == []  # the purge ran
    assert files(root) == FILES


def test_local_imports_are_off_by_default_with_lakefs_answer(root: Path) -> None:
    lake = _lake(root, ImportSettings())
    assert not lake.catalog.imports.supported
    with pytest.raises(InvalidInputError, match="does not import .*KVLAKE_IMPORTS_LOCAL_ENABLED"):
        lake.catalog.imports.prepare(lake.repository, "main", SOURCES, committer="me")


def test_a_bad_local_source_is_refused_before_anything_is_recorded(
    lake: DeletionLake, root: Path
) -> None:
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "f").write_bytes(b"f")
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    for source, match in (
        (ImportSource("local://elsewhere/", "d/", "common_prefix"), "outside the folders"),
        (ImportSource("local://elsewhere/f", "f", "object"), "outside the folders"),
        (ImportSource("local://lake/repo1/", "d/", "common_prefix"), "is inside repository repo1"),
        (ImportSource("local://imports/nope/", "d/", "common_prefix"), "does not exist"),
        (ImportSource("local://imports/nope/a", "d/", "common_prefix"), "does not exist"),
        (ImportSource("local://imports/set/nope", "n", "object"), "does not exist"),
        (ImportSource("local://imports/../lake/repo1/", "d/", "common_prefix"), "cannot be read"),
    ):
        with pytest.raises(InvalidInputError, match=match):
            lake.catalog.imports.prepare(lake.repository, "main", [source], committer="me")
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == head


def test_a_name_prefix_reaching_past_an_import_folder_is_refused(root: Path) -> None:
    (root / "imports" / "settled").mkdir(parents=True)  # `set` as a name prefix lists it too
    narrow = ImportSettings(local_enabled=True, local_prefixes="local://imports/set")
    lake = _lake(root, narrow)
    importer, repository = lake.catalog.imports, lake.repository
    with pytest.raises(InvalidInputError, match="outside the folders"):
        importer.prepare(
            repository,
            "main",
            [ImportSource("local://imports/set", "d/", "common_prefix")],
            committer="me",
        )
    importer.prepare(
        repository,
        "main",
        [ImportSource("local://imports/set/", "d/", "common_prefix")],
        committer="me",
    )


def test_a_folder_reached_through_a_link_is_not_imported(lake: DeletionLake, root: Path) -> None:
    (root / "imports" / "link").symlink_to(root / "lake")
    source = ImportSource("local://imports/link/", "d/", "common_prefix")
    with pytest.raises(InvalidInputError, match="does not exist|symbolic link"):
        lake.catalog.imports.prepare(lake.repository, "main", [source], committer="me")


def test_an_empty_import_folder_replaces_the_destination_with_nothing(
    lake: DeletionLake, root: Path
) -> None:
    (root / "imports" / "empty").mkdir()
    lake.upload("data/old")
    lake.commit()
    importer = lake.catalog.imports
    empty = [ImportSource("local://imports/empty/", "data/", "common_prefix")]
    job = importer.prepare(lake.repository, "main", empty, committer="me")
    run_import(lake.lake, job.import_id)
    status = importer.status(lake.repository, job.import_id)
    assert (status.completed, status.ingested) == (True, 0)
    assert list(lake.catalog.list_objects(lake.repository, "main").results) == []


def test_no_repository_may_take_a_namespace_in_or_around_an_import_folder(
    lake: DeletionLake,
) -> None:
    for namespace in ("local://imports/set", "local://imports", "local://imports/x/y"):
        with pytest.raises(InvalidInputError, match="folder local imports read"):
            lake.graveler.create_repository("other", storage_namespace=namespace)
    lake.graveler.create_repository("other", storage_namespace="local://importsx")


def test_import_folders_are_checked_when_the_settings_load() -> None:
    with pytest.raises(ConfigError, match="KVLAKE_IMPORTS_LOCAL_PREFIXES is empty"):
        ImportSettings(local_enabled=True)
    for bad in ("imports", "local://a/../b", "local://"):
        with pytest.raises(ConfigError, match="write local:// folders"):
            ImportSettings(local_prefixes=bad)
    assert ImportSettings(local_prefixes=" local://a/ ;local:///b/c").folders() == (
        "local://a",
        "local://b/c",
    )


def test_import_settings_load_from_the_environment() -> None:
    env = {
        "KVLAKE_IMPORTS_LOCAL_ENABLED": "true",
        "KVLAKE_IMPORTS_LOCAL_PREFIXES": "local://imports;local://raw",
        "KVLAKE_IMPORTS_ENGINE": "spark",
        "KVLAKE_IMPORTS_SPARK_THRESHOLD": "5",
    }
    imports = load_settings(env).imports
    assert imports.folders() == ("local://imports", "local://raw")
    assert (imports.local_enabled, imports.engine, imports.spark_threshold) == (True, "spark", 5)
    with pytest.raises(ConfigError, match="KVLAKE_IMPORTS_LOCAL_PREFIXES is empty"):
        load_settings({"KVLAKE_IMPORTS_LOCAL_ENABLED": "true"})
    with pytest.raises(ConfigError, match="KVLAKE_IMPORTS_ENGINE is 'fast'"):
        load_settings({"KVLAKE_IMPORTS_ENGINE": "fast"})
