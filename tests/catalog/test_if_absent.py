"""`If-None-Match: *` (`upload(..., if_absent=True)`) is a compare-and-swap on the path's absence.

Of many conditional uploads of one path that all checked the path before any
of them wrote, exactly one succeeds and the others get PreconditionFailedError;
an object staged in a sealed token or committed counts as present. The races
are forced, not hoped for: a barrier holds every upload at its staging
compare-and-swap until all have passed their checks, and the two-upload race
is tried at every KV call of the first upload.
"""

from __future__ import annotations

import io
import threading

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import Catalog, ObjectStat
from kvlake.errors import PreconditionFailedError
from kvlake.graveler import keys
from kvlake.kv import Store
from kvlake.kv.faults import Call
from tests.deletion.helpers import DeletionLake
from tests.graveler.stepping import SteppingStore, calls_of, run_paused

UPLOADS = 16


def conditional(catalog: Catalog, body: bytes, path: str = "p") -> ObjectStat:
    repository = catalog.graveler.get_repository("repo1")
    return catalog.upload(repository, "main", path, io.BytesIO(body), if_absent=True)


def test_of_16_uploads_that_all_checked_first_exactly_one_succeeds(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    staging = keys.staging_partition(
        lake.graveler.get_branch(lake.repository, "main").staging_token
    )
    barrier = threading.Barrier(UPLOADS, timeout=60)
    waited = threading.local()

    def hold_first_swap(call: Call) -> None:
        # Every upload has passed its absence checks before any of them writes.
        if call.op == "set_if" and call.partition == staging and not getattr(waited, "x", 0):
            waited.x = 1
            barrier.wait()

    stepping.at_call = hold_first_swap
    results: list[ObjectStat | BaseException] = [PreconditionFailedError("not run")] * UPLOADS

    def upload(n: int) -> None:
        try:
            results[n] = conditional(lake.catalog, b"%d" % n)
        except BaseException as exc:  # noqa: BLE001 - checked in the test thread
            results[n] = exc

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(UPLOADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stepping.at_call = None
    won = [r for r in results if isinstance(r, ObjectStat)]
    lost = [r for r in results if not isinstance(r, ObjectStat)]
    assert len(won) == 1, results
    assert all(isinstance(r, PreconditionFailedError) for r in lost), lost
    assert lake.catalog.stat(lake.repository, "main", "p").address == won[0].address
    lake.settle()
    assert lake.data_blobs() == {won[0].address}  # the losers' blobs are gone, none orphaned


def test_a_second_upload_at_every_point_of_the_first_leaves_exactly_one_winner(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    total = calls_of(stepping, lambda: conditional(lake.catalog, b"probe", "probe"))
    for n in range(total):
        path = f"p{n}"
        second: list[ObjectStat | BaseException] = []

        def intrude(path: str = path, out: list[ObjectStat | BaseException] = second) -> None:
            try:
                out.append(conditional(lake.catalog, b"second", path))
            except PreconditionFailedError as exc:
                out.append(exc)

        try:
            first: ObjectStat | BaseException = run_paused(
                stepping,
                lambda path=path: conditional(lake.catalog, b"first", path),  # type: ignore[misc]
                at_call=n,
                intruder=intrude,
            )
        except PreconditionFailedError as exc:
            first = exc
        outcomes = [first, *second]
        winners = [o for o in outcomes if isinstance(o, ObjectStat)]
        assert len(winners) == 1, (n, outcomes)
        assert lake.catalog.stat(lake.repository, "main", path).address == winners[0].address


def test_an_object_sealed_by_a_running_commit_or_committed_counts_as_present(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    stepping = SteppingStore(any_store)
    lake = DeletionLake(stepping, lake_blocks)
    lake.upload("p", b"1")
    refused: list[PreconditionFailedError] = []

    def upload_while_sealed(call: Call) -> None:
        if lake.graveler.get_branch(lake.repository, "main").sealed_tokens and not refused:
            with pytest.raises(PreconditionFailedError, match="already exists on branch 'main'"):
                conditional(lake.catalog, b"2")
            refused.append(PreconditionFailedError("refused"))

    run_paused(stepping, lake.commit, at_each_call=upload_while_sealed)
    assert refused  # the commit was paused with the token sealed, and the upload refused
    with pytest.raises(PreconditionFailedError):
        conditional(lake.catalog, b"3")  # committed
    lake.catalog.delete_object(lake.repository, "main", "p")
    assert conditional(lake.catalog, b"4").size == 1  # a staged deletion is absence
