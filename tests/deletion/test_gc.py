"""Garbage-collection candidates are deleted only if unmarked by their run and not staged."""

from __future__ import annotations

import pytest

from kvlake.catalog import entry_ref
from kvlake.deletion import (
    DeadLetters,
    GcMarks,
    ReferenceChecker,
    SubtractedMarks,
    gc_records,
    log_candidates,
)
from kvlake.deletion import keys as deletion_keys
from kvlake.errors import InvalidInputError, PreconditionFailedError
from tests.deletion.helpers import DeletionLake


def put(lake: DeletionLake, *keys: str) -> None:
    for key in keys:
        lake.blocks.put(lake.namespace, key, b"x")


def test_unmarked_candidates_go_and_marked_ones_stay(lake: DeletionLake) -> None:
    put(lake, "data/old/1", "data/old/2", "data/old/3")
    GcMarks(lake.store).save("run1", ["data/old/2"])
    assert (
        log_candidates(
            lake.log, lake.repository, "run1", ["data/old/1", "data/old/2"], started=lake.clock()
        )
        == 2
    )
    report = lake.settle()
    assert (report.deleted, report.kept) == (1, 1)
    assert lake.data_blobs() == {"data/old/2", "data/old/3"}


def test_a_candidate_staged_since_the_run_is_kept_in_use(lake: DeletionLake) -> None:
    stat = lake.upload("a")
    GcMarks(lake.store).save("run1", [])
    log_candidates(lake.log, lake.repository, "run1", [stat.address], started=lake.clock())
    lake.clock.advance(60)
    assert lake.worker().run_once().retried == 1
    assert stat.address in lake.data_blobs()


def test_a_candidate_copied_after_its_run_started_is_kept_even_once_committed(
    lake: DeletionLake,
) -> None:
    old = lake.upload("old")
    lake.commit()
    lake.graveler.delete(lake.repository, "main", b"old")
    lake.commit()
    started = lake.clock()
    GcMarks(lake.store).save("run1", [])  # the run saw "old" only in an expired commit
    lake.clock.advance(1)
    lake.catalog.copy_object(lake.repository, "main~1", "old", "main", "copy")
    lake.commit()  # the copy is no longer staged when the candidate is checked

    log_candidates(lake.log, lake.repository, "run1", [old.address], started=started)
    report = lake.settle()

    assert report.kept == 1 and old.address in lake.data_blobs()


def test_a_copy_made_before_its_run_started_does_not_keep_a_candidate(lake: DeletionLake) -> None:
    old = lake.upload("old")
    lake.commit()
    lake.catalog.copy_object(lake.repository, "main", "old", "main", "copy")
    lake.graveler.delete(lake.repository, "main", b"old")
    lake.graveler.delete(lake.repository, "main", b"copy")
    lake.commit()
    lake.clock.advance(1)
    GcMarks(lake.store).save("run1", [])

    log_candidates(lake.log, lake.repository, "run1", [old.address], started=lake.clock())
    report = lake.settle()

    assert report.deleted == 1 and old.address not in lake.data_blobs()


def test_a_run_without_a_saved_mark_set_dead_letters_its_candidates(lake: DeletionLake) -> None:
    put(lake, "data/old/1")
    log_candidates(lake.log, lake.repository, "never-saved", ["data/old/1"], started=lake.clock())
    assert lake.settle().dead_lettered == 1
    (letter,) = DeadLetters(lake.log).scan()
    assert "has no saved mark set" in letter.reason
    assert lake.data_blobs() == {"data/old/1"}


def test_marks_can_be_dropped_and_bad_run_ids_are_refused(lake: DeletionLake) -> None:
    marks = GcMarks(lake.store)
    marks.save("run1", ["data/a"])
    assert marks.exists("run1") and marks.marked("run1", ["data/a", "data/b"]) == {"data/a"}
    marks.drop("run1")
    assert not marks.exists("run1")
    for bad in ("", "a/b", "a\0b"):
        with pytest.raises(InvalidInputError, match="GC run id"):
            log_candidates(lake.log, lake.repository, bad, ["data/a"], started=lake.clock())
    assert lake.pending() == 0


def test_a_link_racing_a_gc_check_is_refused_once_the_candidate_is_claimed(
    lake: DeletionLake,
) -> None:
    put(lake, "data/old/1")
    started = lake.clock()
    checker = ReferenceChecker(
        lake.graveler, lake.blocks, lake.lake.purges, entry_ref, gc_marks=SubtractedMarks()
    )
    records = list(gc_records(lake.log, lake.repository, "run1", started, ["data/old/1"]))

    (verdict,) = checker.check(records)  # claims, then reads the marks: no link yet, so delete

    assert verdict.action == "delete"
    with pytest.raises(PreconditionFailedError):
        lake.catalog.links.link(
            lake.repository,
            "main",
            "linked",
            f"{lake.namespace}/data/old/1",
            size=1,
            checksum="c",
            content_type="x",
            metadata={},
        )


def test_a_bulk_delete_marking_after_a_run_started_keeps_the_candidate(
    lake: DeletionLake,
) -> None:
    """Issue 22 (e): a bulk delete without purge marks its addresses shared at the real
    time, so a GC run that started before the marks keeps them (a mark written as time 0
    looked older than every run, and the candidate went)."""
    old = lake.upload("old")
    lake.commit()
    started = lake.clock()
    GcMarks(lake.store).save("run1", [])
    lake.clock.advance(1)
    lake.log.mark_shared_many(lake.repository.instance_uid, [old.address])
    raw, _ = lake.store.get(
        deletion_keys.SHARED, deletion_keys.shared_key(lake.repository.instance_uid, old.address)
    )
    assert deletion_keys.shared_since(raw) == lake.clock()

    log_candidates(lake.log, lake.repository, "run1", [old.address], started=started)
    report = lake.settle()

    assert report.kept == 1 and old.address in lake.data_blobs()
