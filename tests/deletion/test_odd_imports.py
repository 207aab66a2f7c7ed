"""The in-use check reads an imported entry's URL in canonical form (issue 22 d): an import
made before sources were compared canonically may name the repository's own blob by an odd
spelling (`s3:///lake/repo1/data/x`); the worker must count it as a reference to `data/x`,
as garbage collection's marks do, and never delete the blob under it. Local folder and S3."""

from __future__ import annotations

import pytest

from kvlake.catalog import entry_ref
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.deletion import GcMarks, log_candidates
from kvlake.graveler import Value
from tests.deletion.helpers import DeletionLake

SPELLINGS = (
    "{scheme}:///lake/repo1/{key}",
    "{scheme}://lake//repo1/{key}",
    "{scheme}://lake/./repo1//{key}",
    "{scheme}:////lake/repo1/./{key}",
    "{scheme}://./lake/repo1/{key}",
)


def old_import(lake: DeletionLake, spelling: str, key: str) -> Value:
    """The value an old import staged for the repository's own blob `key`, spelled oddly."""
    address = spelling.format(scheme=lake.blocks.scheme, key=key)
    entry = ObjectEntry(
        address=address, size=1, checksum="c", mtime=lake.clock(), content_type="text/plain"
    )
    return to_value(entry)


def readable(lake: DeletionLake, ref: str, path: str) -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, ref, path)
    with reader:
        return reader.read()


def test_an_imported_url_is_no_blob_of_the_log_but_keeps_its_spelling(lake: DeletionLake) -> None:
    value = old_import(lake, SPELLINGS[0], "data/x")
    ref = entry_ref(value)
    assert ref.address == "" and ref.imported == f"{lake.blocks.scheme}:///lake/repo1/data/x"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_old_import_at_the_same_path_keeps_an_overwritten_blob(
    lake: DeletionLake, spelling: str
) -> None:
    original = lake.upload("orig", b"original")
    repository = lake.repository
    lake.graveler.create_branch(repository, "imported", "main")
    lake.graveler.set(repository, "imported", b"orig", old_import(lake, spelling, original.address))
    lake.upload("orig", b"overwritten")  # the original blob goes to the deletion log

    report = lake.settle()

    assert report.deleted == 0 and original.address in lake.data_blobs()
    assert readable(lake, "imported", "orig") == b"original"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_old_import_staged_anywhere_keeps_a_gc_candidate(
    lake: DeletionLake, spelling: str
) -> None:
    lake.blocks.put(lake.namespace, "data/old/1", b"old")
    lake.graveler.set(lake.repository, "main", b"copy/1", old_import(lake, spelling, "data/old/1"))
    GcMarks(lake.store).save("run1", [])

    log_candidates(lake.log, lake.repository, "run1", ["data/old/1"], started=lake.clock())
    report = lake.settle()

    assert report.deleted == 0 and "data/old/1" in lake.data_blobs()
    assert readable(lake, "main", "copy/1") == b"old"


def test_a_commit_holding_an_old_import_of_the_blob_keeps_it(lake: DeletionLake) -> None:
    """Replacing an entry by an old import of its own blob logs the blob (the import has no
    address of the log's); the commit that consumed the token holds it, so it stays."""
    original = lake.upload("orig", b"original")
    lake.graveler.set(
        lake.repository, "main", b"orig", old_import(lake, SPELLINGS[0], original.address)
    )
    lake.commit()

    report = lake.settle()

    assert report.deleted == 0 and original.address in lake.data_blobs()
    assert readable(lake, "main", "orig") == b"original"


def test_an_import_elsewhere_is_not_a_reference(lake: DeletionLake) -> None:
    """The canonical comparison is segment-wise: `lake/repo10` is not inside `lake/repo1`."""
    lake.blocks.put(lake.namespace, "data/old/1", b"old")
    value = old_import(lake, "{scheme}:///lake/repo10/{key}", "data/old/1")
    lake.graveler.set(lake.repository, "main", b"copy/1", value)
    GcMarks(lake.store).save("run1", [])

    log_candidates(lake.log, lake.repository, "run1", ["data/old/1"], started=lake.clock())
    report = lake.settle()

    assert report.deleted == 1 and "data/old/1" not in lake.data_blobs()
