"""Committed blobs are garbage collection's alone, through the HTTP API (issue 9's rule).

Served in-process over every KV driver, with a clock the test moves: a branch
deleted (or hard-reset) a moment after its commit has its staging tokens
dropped and the deletion worker run, yet `GET .../refs/<commit id>/objects`
still answers. What was only staged on that branch is deleted, not orphaned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx

from kvlake.api.services import Services
from kvlake.blockstore import open_blockstore
from kvlake.kv import Store
from kvlake.lake import Lake
from tests.api.inprocess import app_over, client_of, settings_in
from tests.support import FakeClock

REPO = "rule"
DAY = 86400.0


@asynccontextmanager
async def _served(tmp_path: Path, store: Store) -> AsyncIterator[tuple[httpx.AsyncClient, Lake]]:
    settings = settings_in(tmp_path, KVLAKE_DELETION_SEND_DELAY="0")
    clock = FakeClock()
    lake = Lake(settings, store, open_blockstore(settings.blockstore_url), clock=clock)
    services = Services(lake)
    services.install()
    async with client_of(app_over(services)) as client:
        created = await client.post(
            "/repositories", json={"name": REPO, "storage_namespace": f"local://{REPO}"}
        )
        assert created.status_code == 201, created.text
        yield client, lake


def _settle(lake: Lake) -> None:
    """Let every delay pass, then drop the due tokens and work the log, twice over."""
    for _ in range(2):
        assert isinstance(lake.clock, FakeClock)
        lake.clock.advance(DAY)
        assert not lake.cleaner().clean_once().failures
        assert not lake.deletion_worker().run_once().failures


async def _upload(client: httpx.AsyncClient, branch: str, path: str, body: bytes) -> None:
    url = f"/repositories/{REPO}/branches/{branch}/objects"
    response = await client.post(url, params={"path": path}, content=body)
    assert response.status_code == 201, response.text


async def _commit(client: httpx.AsyncClient, branch: str) -> str:
    url = f"/repositories/{REPO}/branches/{branch}/commits"
    response = await client.post(url, json={"message": "m"})
    assert response.status_code == 201, response.text
    commit_id: str = response.json()["id"]
    return commit_id


async def _read(client: httpx.AsyncClient, ref: str, path: str) -> httpx.Response:
    return await client.get(f"/repositories/{REPO}/refs/{ref}/objects", params={"path": path})


def _data_files(tmp_path: Path) -> int:
    return sum(1 for p in (tmp_path / "blocks" / REPO / "data").rglob("*") if p.is_file())


async def _deleted_branch(tmp_path: Path, store: Store) -> None:
    async with _served(tmp_path, store) as (client, lake):
        branch = await client.post(
            f"/repositories/{REPO}/branches", json={"name": "dev", "source": "main"}
        )
        assert branch.status_code == 201, branch.text
        await _upload(client, "dev", "a", b"committed")
        commit_id = await _commit(client, "dev")
        await _upload(client, "dev", "staged-only", b"staged")
        files = _data_files(tmp_path)
        assert (await client.delete(f"/repositories/{REPO}/branches/dev")).status_code == 204
        _settle(lake)
        read = await _read(client, commit_id, "a")
        assert read.status_code == 200 and read.content == b"committed"
        assert _data_files(tmp_path) == files - 1  # the staged-only blob went


async def _hard_reset(tmp_path: Path, store: Store) -> None:
    async with _served(tmp_path, store) as (client, lake):
        await _upload(client, "main", "base", b"base")
        base = await _commit(client, "main")
        await _upload(client, "main", "b", b"committed")
        later = await _commit(client, "main")
        await _upload(client, "main", "staged-only", b"staged")
        reset = await client.put(
            f"/repositories/{REPO}/branches/main/hard_reset", params={"ref": base}
        )
        assert reset.status_code == 204, reset.text
        _settle(lake)
        read = await _read(client, later, "b")
        assert read.status_code == 200 and read.content == b"committed"
        assert (await _read(client, "main", "b")).status_code == 404


def _run(scenario: Callable[[Path, Store], object], tmp_path: Path, store: Store) -> None:
    anyio.run(scenario, tmp_path, store)  # type: ignore[arg-type]


def test_a_branch_deleted_right_after_its_commit_keeps_the_commit_readable(
    tmp_path: Path, any_store: Store
) -> None:
    _run(_deleted_branch, tmp_path, any_store)


def test_a_hard_reset_keeps_the_commits_it_left_behind_readable(
    tmp_path: Path, any_store: Store
) -> None:
    _run(_hard_reset, tmp_path, any_store)
