"""KV round trips per request on the hot paths: a regression guard, counted, never timed.

Served in-process over a SQLite store wrapped in `FaultyStore` (which logs every
driver call and fails none). After a first request has warmed the auth cache,
a stat reads the repository, the branch and the path's staged entry in one round trip
(the process knows the instance and the branch's tokens), nothing else.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
import pytest

from kvlake.api.services import Services
from kvlake.blockstore import open_blockstore
from kvlake.kv import open_store
from kvlake.kv.faults import FaultyStore
from kvlake.lake import Lake
from tests.api.inprocess import app_over, client_of, settings_in

Scenario = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]

BUDGETS: dict[str, int] = {"stat": 1, "list": 2, "create branch": 4, "upload": 11}
"""Most KV calls a warm request may make (auth answered from its cache). An upload's four
lock calls (take its implicit lock, read the path's explicit lock, scan the delete locks,
release) are what lets bulk deletes write tombstones blind (kvlake/operations/locks.py);
its three intent calls (append the blob's record before the put, then withdraw it: a get
and a delete) are what leaves no orphan when its process dies mid-upload (issue 22). A
branch creation's two index writes (its visible-branch key before and after its record)
are what lets listBranches read past no hidden branch (issue 33, graveler/refs/visible.py)."""


async def _stat(client: httpx.AsyncClient, repo: str) -> httpx.Response:
    return await client.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "a"})


async def _list(client: httpx.AsyncClient, repo: str) -> httpx.Response:
    return await client.get(f"/repositories/{repo}/refs/main/objects/ls", params={"prefix": ""})


async def _branch(client: httpx.AsyncClient, repo: str) -> httpx.Response:
    name = f"b-{uuid.uuid4().hex[:8]}"
    return await client.post(
        f"/repositories/{repo}/branches", json={"name": name, "source": "main"}
    )


async def _upload(client: httpx.AsyncClient, repo: str) -> httpx.Response:
    path = f"u/{uuid.uuid4().hex[:8]}"
    url = f"/repositories/{repo}/branches/main/objects"
    return await client.post(url, params={"path": path}, content=b"x" * 1024)


SCENARIOS: dict[str, Scenario] = {
    "stat": _stat,
    "list": _list,
    "create branch": _branch,
    "upload": _upload,
}


async def _calls_of(tmp_path: Path, scenario: Scenario) -> list[str]:
    settings = settings_in(tmp_path)
    store = FaultyStore(open_store(settings.kv_url), [])
    services = Services(Lake(settings, store, open_blockstore(settings.blockstore_url)))
    try:
        services.install()
        async with client_of(app_over(services)) as client:
            repo = f"r-{uuid.uuid4().hex[:8]}"
            created = await client.post(
                "/repositories", json={"name": repo, "storage_namespace": f"local://{repo}"}
            )
            assert created.status_code == 201, created.text
            await _upload_one(client, repo)
            (await scenario(client, repo)).raise_for_status()  # warm: auth cache, commit LRU
            before = len(store.calls)
            (await scenario(client, repo)).raise_for_status()
            return [f"{call.op} {call.partition!r}" for call in store.calls[before:]]
    finally:
        services.close()


async def _upload_one(client: httpx.AsyncClient, repo: str) -> None:
    url = f"/repositories/{repo}/branches/main/objects"
    (await client.post(url, params={"path": "a"}, content=b"a")).raise_for_status()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_warm_request_stays_within_its_kv_call_budget(tmp_path: Path, name: str) -> None:
    calls = anyio.run(_calls_of, tmp_path, SCENARIOS[name])
    assert len(calls) <= BUDGETS[name], "\n".join(calls)


def test_a_warm_stat_reads_repository_branch_and_staged_entry_together(
    tmp_path: Path,
) -> None:
    calls = anyio.run(_calls_of, tmp_path, _stat)
    assert [call.split()[0] for call in calls] == ["get_across"], "\n".join(calls)
    assert "auth/" not in " ".join(calls)
