"""Every check that compares storage addresses compares the canonical form the blockstore
reads (kvlake/blockstore/addresses.py), so no second spelling of a place walks around one:
import sources and the own-namespace refusal, local import folders, namespace claims,
links and stageObject, and purges. Run on the local folder and on S3."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.api.routes.staging import relative_address as api_relative_address
from kvlake.blockstore import BlockStore
from kvlake.catalog import ImportSource, check_outside_import_folders
from kvlake.catalog.links import relative_address
from kvlake.config import ImportSettings, Settings
from kvlake.deletion.purge import overlaps
from kvlake.errors import ConfigError, InvalidInputError, StorageNamespaceInUseError
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support.imports import run_import

IMPORT_FOLDERS = "local://imports"
"""The local lake's import folder (KVLAKE_IMPORTS_LOCAL_PREFIXES); the S3 lake imports from
`s3://lake/imports`, any folder of the bucket."""
FILES = {"set/a.csv": b"a,b", "set/sub/b.csv": b"1,2,3", "x": b"x"}


def own_spellings(scheme: str) -> list[str]:
    """Import sources that all name (part of) repo1's namespace `<scheme>://lake/repo1`."""
    return [
        f"{scheme}://lake/repo1/data/",
        f"{scheme}:///lake/repo1/data/",
        f"{scheme}:////lake/repo1/data/",
        f"{scheme}://lake//repo1/data/",
        f"{scheme}://lake/./repo1/data/",
        f"{scheme}://./lake/repo1/data/",
        f"{scheme}://lake/repo1//data/",
        f"{scheme}:///lake/repo1/_lakefs/",
        f"{scheme}:///lake/repo1/",
        f"{scheme}:///lake/repo1",
        f"{scheme}://lake//re",
    ]


OWN = own_spellings("SCHEME")


@pytest.fixture
def lake(lake_blocks: BlockStore, tmp_path: Path) -> Iterator[DeletionLake]:
    """repo1 at `<scheme>://lake/repo1`, with files to import in `<scheme>://.../imports`."""
    scheme = lake_blocks.scheme
    imports = ImportSettings(local_enabled=True, local_prefixes=IMPORT_FOLDERS)
    settings = Settings(data_dir=str(tmp_path / "data"), imports=imports)
    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks, settings=settings)
        for key, body in FILES.items():
            lake_blocks.put(imports_folder(scheme), key, body)
        yield lake
        lake.lake.close()


def imports_folder(scheme: str) -> str:
    return IMPORT_FOLDERS if scheme == "local" else "s3://lake/imports"


@pytest.mark.parametrize("spelling", OWN)
def test_an_import_of_the_own_namespace_is_refused_in_every_spelling(
    lake: DeletionLake, spelling: str
) -> None:
    scheme = lake.blocks.scheme
    source = spelling.replace("SCHEME", scheme)
    where = "is inside" if "repo1/" in source.replace("//", "/") else "overlaps"
    refusal = f"import source {source} {where} repository repo1's namespace {scheme}://lake/repo1"
    sources = [ImportSource(source, "d/", "common_prefix")]
    if not source.endswith("/"):
        sources.append(ImportSource(source, "d/obj", "object"))  # an object source is a file
    for one in sources:
        with pytest.raises(InvalidInputError) as refused:
            lake.catalog.imports.prepare(lake.repository, "main", [one], committer="me")
        assert str(refused.value).startswith(refusal)


def test_the_refusal_names_the_source_and_the_namespace(lake: DeletionLake) -> None:
    if lake.blocks.scheme != "s3":
        pytest.skip("the issue's reproduction is an S3 lake's")
    with pytest.raises(InvalidInputError) as refused:
        lake.catalog.imports.prepare(
            lake.repository,
            "main",
            [ImportSource("s3:///lake/repo1/data/", "d/", "common_prefix")],
            committer="me",
        )
    assert str(refused.value).startswith(
        "import source s3:///lake/repo1/data/ is inside repository repo1's namespace"
        " s3://lake/repo1"
    )


def test_an_import_of_the_own_blobs_never_lets_the_deletion_log_delete_a_committed_blob(
    lake: DeletionLake,
) -> None:
    """The reproduction of issue 22 #1: import the namespace by another spelling, overwrite
    the original on another branch, let the deletion worker run: every commit still reads."""
    scheme = lake.blocks.scheme
    lake.upload("data/original", b"original")
    repository = lake.repository
    lake.graveler.create_branch(repository, "imported", "main")
    with contextlib.suppress(InvalidInputError):  # refused now; it used to be accepted
        importer = lake.catalog.imports
        job = importer.prepare(
            repository,
            "imported",
            [ImportSource(f"{scheme}:///lake/repo1/data/", "copy/", "common_prefix")],
            committer="me",
        )
        run_import(lake.lake, job.import_id)
    lake.upload("data/original", b"overwritten")  # the first blob goes to the deletion log
    lake.commit()
    lake.settle()
    for ref in ("main", "imported"):
        for entry in lake.catalog.list_objects(lake.repository, ref).results:
            _, reader = lake.catalog.open_object(lake.repository, ref, entry.path)
            with reader:
                reader.read()


@pytest.mark.parametrize(
    "spelling", ["{folder}/set/", "{scheme}:///{path}//set/", "{scheme}://./{path}/./set/"]
)
def test_an_accepted_source_is_imported_at_its_canonical_address(
    lake: DeletionLake, spelling: str
) -> None:
    scheme = lake.blocks.scheme
    folder = imports_folder(scheme)
    source = spelling.format(folder=folder, scheme=scheme, path=folder.partition("://")[2])
    importer = lake.catalog.imports
    job = importer.prepare(
        lake.repository,
        "main",
        [
            ImportSource(source, "data/", "common_prefix"),
            ImportSource(source.replace("/set/", "//x"), "single", "object"),
        ],
        committer="me",
    )
    run_import(lake.lake, job.import_id)
    assert lake.catalog.stat(lake.repository, "main", "data/sub/b.csv").address == (
        f"{folder}/set/sub/b.csv"
    )
    assert lake.catalog.stat(lake.repository, "main", "single").address == f"{folder}/x"


@pytest.mark.parametrize(
    "spelling",
    [
        "{scheme}://lake/repo1",
        "{scheme}:///lake/repo1",
        "{scheme}://lake//repo1/",
        "{scheme}://lake/./repo1",
        "{scheme}:////lake/repo1",
        "{scheme}://./lake/repo1",
        "{scheme}:///lake/repo1/sub",
        "{scheme}://lake//repo1/./sub/",
    ],
)
def test_a_namespace_held_by_a_repository_is_refused_in_every_spelling(
    lake: DeletionLake, spelling: str
) -> None:
    namespace = spelling.format(scheme=lake.blocks.scheme)
    with pytest.raises(StorageNamespaceInUseError, match="repository 'repo1'"):
        lake.graveler.create_repository("repo2", storage_namespace=namespace)


@pytest.mark.parametrize(
    "spelling",
    ["{s}://lake/repo1", "{s}:///lake/repo1/", "{s}://lake//./repo1", "{s}:////lake/repo1"],
)
def test_a_claim_is_found_by_every_spelling_of_its_namespace(
    lake: DeletionLake, spelling: str
) -> None:
    owner = lake.graveler.references.namespace_owner(spelling.format(s=lake.blocks.scheme))
    assert owner is not None and owner.repository == "repo1"


@pytest.mark.parametrize(
    "spelling",
    [
        "{scheme}://lake/repo1/data/k",
        "{scheme}:///lake/repo1/data/k",
        "{scheme}://lake//repo1/data/k",
        "{scheme}://lake/repo1/./data/k",
        "{scheme}:////lake/repo1//data/k",
        "{scheme}://./lake/repo1/data/k/",
    ],
)
def test_links_take_every_spelling_of_an_address_in_the_namespace(
    lake: DeletionLake, spelling: str
) -> None:
    namespace = lake.repository.storage_namespace
    address = spelling.format(scheme=lake.blocks.scheme)
    assert relative_address(namespace, address) == "data/k"
    assert api_relative_address(namespace, address) == "data/k"


@pytest.mark.parametrize(
    "spelling",
    [
        "{scheme}://lake/repo10/data/k",
        "{scheme}://lake/repo1/../repo2/data/k",
        "{scheme}:///lake/repo1//_lakefs/x",
        "{scheme}://lake/./repo1/symlinks/x",
        "{scheme}:///lake/repo1/",
        "other://lake/repo1/data/k",
    ],
)
def test_links_refuse_every_spelling_of_an_address_outside_the_namespace(
    lake: DeletionLake, spelling: str
) -> None:
    namespace = lake.repository.storage_namespace
    address = spelling.format(scheme=lake.blocks.scheme)
    with pytest.raises(InvalidInputError, match="physical address"):
        relative_address(namespace, address)
    if "_lakefs" not in address and "symlinks" not in address:
        with pytest.raises(InvalidInputError, match="outside"):
            api_relative_address(namespace, address)


def test_stage_object_by_another_spelling_stages_the_blob_in_the_namespace(
    lake: DeletionLake,
) -> None:
    scheme = lake.blocks.scheme
    lake.blocks.put(lake.namespace, "data/linked", b"linked")
    lake.catalog.links.link(
        lake.repository,
        "main",
        "linked",
        f"{scheme}:///lake//repo1/./data/linked",
        size=6,
        checksum="c",
        content_type="text/plain",
        metadata={},
    )
    assert lake.catalog.stat(lake.repository, "main", "linked").address == "data/linked"


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        ("{s}://lake/repo1", "{s}:///lake/repo1", True),
        ("{s}://lake//repo1/", "{s}://lake/repo1/./sub", True),
        ("{s}:///lake", "{s}://lake/repo1", True),
        ("{s}://lake/repo1", "{s}://lake/repo10", False),
        ("{s}://lake/repo1", "other://lake/repo1", False),
    ],
)
def test_purges_see_every_spelling_of_a_shared_namespace(
    lake: DeletionLake, first: str, second: str, shared: bool
) -> None:
    scheme = lake.blocks.scheme
    assert overlaps(first.format(s=scheme), second.format(s=scheme)) is shared


@pytest.mark.parametrize(
    "spelling", ["{s}:///lake/repo1", "{s}://lake//repo1/", "{s}://./lake/repo1/./sub"]
)
def test_a_purge_sees_the_live_repository_on_every_spelling(
    lake: DeletionLake, spelling: str
) -> None:
    users = lake.purges.live_users(spelling.format(s=lake.blocks.scheme))
    assert [r.name for r in users] == ["repo1"]


@pytest.mark.parametrize(
    "namespace",
    ["local://imports", "local:///imports/repo1", "local://imports//repo1", "local://./imports/a"],
)
def test_no_namespace_lies_in_an_import_folder_in_any_spelling(namespace: str) -> None:
    with pytest.raises(InvalidInputError, match="KVLAKE_IMPORTS_LOCAL_PREFIXES"):
        check_outside_import_folders(namespace, ["local://imports"])
    check_outside_import_folders(namespace.replace("imports", "imported"), ["local://imports"])


def test_import_folders_are_read_in_canonical_form() -> None:
    settings = ImportSettings(
        local_enabled=True, local_prefixes="local:///imports/;local://./raw//2026;local:////x"
    )
    assert settings.folders() == ("local://imports", "local://raw/2026", "local://x")
    for bad in ("local://imports/../etc", "local://", "s3://lake/x"):
        with pytest.raises(ConfigError, match="KVLAKE_IMPORTS_LOCAL_PREFIXES"):
            ImportSettings(local_enabled=True, local_prefixes=bad)


def test_a_local_source_in_an_import_folder_is_found_in_every_spelling(
    lake: DeletionLake,
) -> None:
    if lake.blocks.scheme != "local":
        pytest.skip("import folders are the local blockstore's")
    importer = lake.catalog.imports
    for source in ("local:///imports//set/", "local://./imports/set/", "local:////imports/set/"):
        importer.prepare(
            lake.repository, "main", [ImportSource(source, "d/", "common_prefix")], committer="m"
        )
    for source in ("local:///imported/set/", "local://imports/../lake/repo1/"):
        with pytest.raises(InvalidInputError, match="import path"):
            importer.prepare(
                lake.repository,
                "main",
                [ImportSource(source, "d/", "common_prefix")],
                committer="m",
            )
