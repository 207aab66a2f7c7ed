"""`inline` reads run on the event loop only where the stores answer in-process and the
caller is already known from the authenticator's cache; everything else takes a thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from starlette.responses import Response

from kvlake.api.app import OPERATIONS, create_app, reads_on_this_machine
from kvlake.api.routing import Call, Executors, Operation, json_response
from kvlake.api.services import Services
from kvlake.auth import User
from kvlake.config import Settings
from tests.api.inprocess import client_of, services_in, settings_in
from tests.api.server import ACCESS_KEY_ID


def _thread(call: Call[None]) -> Response:
    return json_response({"thread": threading.current_thread().name})


PROBE = Operation("probeThread", "GET", "/probe-thread", _thread, "internal", inline=True)


def _watch_checks(services: Services) -> list[str]:
    """The names of the threads that run the caller's full credential checks, from now on."""
    checked: list[str] = []
    authenticate = services.authenticator.authenticate

    def watched(*args: Any, **kwargs: Any) -> User:
        checked.append(threading.current_thread().name)
        return authenticate(*args, **kwargs)

    services.authenticator.authenticate = watched  # type: ignore[method-assign]
    return checked


def _threads(
    tmp_path: Path, *, inline: bool, auth: tuple[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """Where three probe requests ran (`loop` or a request thread's name, or the status of
    a refusal), and where their callers' full credential checks ran."""
    services = services_in(tmp_path)
    checked = _watch_checks(services)
    app = create_app(services.settings, operations=(*OPERATIONS, PROBE), background_jobs=False)
    app.state.services = services
    app.state.executors = Executors(4, inline=inline)
    seen: list[str] = []

    loop_thread = ""

    async def probe() -> None:
        nonlocal loop_thread
        loop_thread = threading.current_thread().name
        async with client_of(app) as api:
            if auth is not None:
                api.auth = auth
            for _ in range(3):
                response = await api.get("/probe-thread")
                if response.status_code != 200:
                    seen.append(str(response.status_code))
                    continue
                name = msgspec.json.decode(response.content)["thread"]
                seen.append("loop" if name == loop_thread else name)

    try:
        anyio.run(probe)
    finally:
        app.state.executors.shutdown()
        services.close()
    return seen, ["loop" if name == loop_thread else name for name in checked]


def test_a_known_caller_reads_on_the_loop_after_its_first_check(tmp_path: Path) -> None:
    (first, *rest), checked = _threads(tmp_path, inline=True)
    assert first.startswith("kvlake-request")  # checked afresh: off the loop
    assert rest == ["loop", "loop"]
    assert len(checked) == 1 and checked[0].startswith("kvlake-request")


def test_a_wrong_secret_is_never_checked_on_the_loop(tmp_path: Path) -> None:
    # Each refusal is written down (the failed-login limiter): never on the event loop.
    seen, checked = _threads(tmp_path, inline=True, auth=(ACCESS_KEY_ID, "wrong"))
    assert seen == ["401"] * 3
    assert len(checked) == 3
    assert all(name.startswith("kvlake-request") for name in checked), checked


def test_without_in_process_stores_every_read_takes_a_thread(tmp_path: Path) -> None:
    seen, _ = _threads(tmp_path, inline=False)
    assert all(name.startswith("kvlake-request") for name in seen), seen


@pytest.mark.parametrize(
    ("variables", "inline"),
    [
        ({}, True),  # SQLite in the data folder, local blocks
        ({"KVLAKE_KV_URL": "mem://"}, True),
        ({"KVLAKE_KV_URL": "postgresql://db/kv"}, False),
        ({"KVLAKE_KV_URL": "postgresql://u@127.0.0.1:5432/kv"}, True),  # on this machine
        ({"KVLAKE_KV_URL": "postgres://localhost/kv", "KVLAKE_BLOCKSTORE_URL": "s3://b/p"}, False),
        ({"KVLAKE_BLOCKSTORE_URL": "s3://bucket/prefix"}, False),
    ],
)
def test_reads_run_inline_only_over_stores_on_this_machine(
    tmp_path: Path, variables: dict[str, str], inline: bool
) -> None:
    settings: Settings = settings_in(tmp_path, **variables)
    assert reads_on_this_machine(settings) is inline


def test_a_known_caller_s_json_operation_needs_no_thread_to_authenticate(
    tmp_path: Path,
) -> None:
    """A branch creation is authenticated before its body is read: from the cache, on the
    loop, once the caller is known; a caller not in the cache is checked on a thread."""
    services = services_in(tmp_path)
    app = create_app(services.settings, background_jobs=False)
    app.state.services = services
    app.state.executors = Executors(4, inline=False)  # true over any stores: no I/O
    checked = _watch_checks(services)

    counts: list[int] = []

    async def create() -> None:
        async with client_of(app) as api:
            repo = {"name": "inline", "storage_namespace": "local://inline"}
            assert (await api.post("/repositories", json=repo)).status_code == 201
            for name in ("b1", "b2"):
                created = await api.post(
                    "/repositories/inline/branches", json={"name": name, "source": "main"}
                )
                assert created.status_code == 201, created.text
                counts.append(len(checked))

    try:
        anyio.run(create)
    finally:
        app.state.executors.shutdown()
        services.close()
    # b1 is checked afresh (the repository's creation wrote to the auth store, which clears
    # its cache); b2's caller is then known on the loop.
    assert counts[1] == counts[0], checked
    assert all(name.startswith("kvlake-request") for name in checked), checked
