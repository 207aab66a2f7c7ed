"""The Starlette application: the operation table, error handlers and lifespan.

`create_app(settings)` builds an app that opens its services at start-up (and
creates the first admin on a first start), runs the cleaner in a background
thread, and on shutdown stops the cleaner after its current pass and closes the
stores. It answers 503 beyond `max_connections` requests in flight
(`inflight.py`), and its lifespan hands the process's connection guards to
uvicorn's protocols (`connections.py`) through the lifespan state.
`app_from_environment` is the factory uvicorn's worker processes call.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from typing import Any, Final

import msgspec
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kvlake.api import errors, metrics, observability, openapi
from kvlake.api.collector import tune_for_serving
from kvlake.api.connections import CONNECTIONS_STATE, ClientConnections
from kvlake.api.hook_calls import HookCalls
from kvlake.api.inflight import InFlightLimit
from kvlake.api.routes import (
    actions,
    branches,
    commits,
    diffs,
    external,
    gc_prepare,
    gc_runs,
    groups,
    history,
    imports,
    internal,
    locks,
    metadata,
    objects,
    operations,
    policies,
    presign_multipart,
    pulls,
    purges,
    repositories,
    retention,
    settings,
    setup,
    staging,
    tags,
    uploads,
    users,
)
from kvlake.api.routing import BodyLimits, Executors, Operation, routes
from kvlake.api.services import Services
from kvlake.config import Settings, load_settings
from kvlake.errors import KvlakeError
from kvlake.gateway import Gateway, GatewayRoute, is_virtual_hosted
from kvlake.http import ClientGoneError
from kvlake.kv.registry import url_scheme

log = logging.getLogger(__name__)

SETTINGS_ENV: Final = "_KVLAKE_SERVE_SETTINGS"
"""Settings handed from `serve` to uvicorn's worker processes, as JSON."""

OPERATIONS: Final[tuple[Operation[Any], ...]] = (
    *setup.OPERATIONS,
    *repositories.OPERATIONS,
    *branches.OPERATIONS,
    *commits.OPERATIONS,
    *diffs.OPERATIONS,
    *history.OPERATIONS,
    *settings.OPERATIONS,
    *retention.OPERATIONS,
    *gc_runs.OPERATIONS,
    *purges.OPERATIONS,
    *gc_prepare.OPERATIONS,
    *tags.OPERATIONS,
    *objects.OPERATIONS,
    *metadata.OPERATIONS,
    *staging.OPERATIONS,
    *uploads.OPERATIONS,
    *staging.OPERATIONS,
    *presign_multipart.OPERATIONS,
    *imports.OPERATIONS,
    *users.OPERATIONS,
    *groups.OPERATIONS,
    *policies.OPERATIONS,
    *pulls.OPERATIONS,
    *actions.OPERATIONS,
    *internal.OPERATIONS,
    *operations.OPERATIONS,
    *locks.OPERATIONS,
    *external.OPERATIONS,
)


def print_installation(services: Services) -> None:
    """Create the first admin if needed; print a newly made secret once, to stdout."""
    made = services.install()
    if made is None:
        return
    print(f"kvlake: created the admin user {made.user_name!r}", flush=True)
    print(f"  access key id:     {made.access_key_id}", flush=True)
    if made.secret:
        print(f"  secret access key: {made.secret}", flush=True)
        print("  (shown only this once: store it now)", flush=True)
    # What the `kvlake` CLI and lakeFS's clients read (lakectl's names), ready to paste.
    settings = services.settings
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    print("  for the kvlake CLI and lakeFS clients:", flush=True)
    print(f"  export LAKECTL_SERVER_ENDPOINT_URL=http://{host}:{settings.port}", flush=True)
    print(f"  export LAKECTL_CREDENTIALS_ACCESS_KEY_ID={made.access_key_id}", flush=True)
    secret = made.secret or "<the KVLAKE_INSTALLATION_SECRET_ACCESS_KEY you set>"
    print(f"  export LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY={secret}", flush=True)


IN_PROCESS_KV: Final = frozenset({"sqlite", "mem"})
POSTGRES_KV: Final = frozenset({"postgres", "postgresql"})
IN_PROCESS_BLOCKS: Final = frozenset({"local", "mem"})


def reads_on_this_machine(settings: Settings) -> bool:
    """The KV and the blockstore answer reads without a network wait: the `inline`
    operations may run on the event loop (routing.py's `Executors.inline`).

    SQLite and memory stores answer in-process; a PostgreSQL on this machine (a Unix
    socket or loopback) answers a stat's one point read in tens of microseconds, on the
    loop's own connection (kvlake/kv/postgres.py), and that costs less than the hop to a
    request thread and back (docs/performance.md). A server elsewhere keeps the thread."""
    scheme = url_scheme(settings.kv_url)
    if scheme in POSTGRES_KV:
        from kvlake.kv.postgres import on_this_machine  # psycopg only where it is used

        local_kv = on_this_machine(settings.kv_url)
    else:
        local_kv = scheme in IN_PROCESS_KV
    return local_kv and url_scheme(settings.blockstore_url) in IN_PROCESS_BLOCKS


def create_app(
    settings: Settings,
    *,
    operations: tuple[Operation[Any], ...] = OPERATIONS,
    background_jobs: bool = True,
) -> Starlette:
    """The kvlake HTTP application over the stores `settings` names; it runs the background
    jobs every `settings.server.job_interval` seconds unless `background_jobs` or
    `settings.server.background` (KVLAKE_SERVER_BACKGROUND) is false: `kvlake worker`
    processes then run them."""
    # The UI's pages call these operations (kvlake/ui imports kvlake.api.routing): imported
    # here, not at the top, so importing kvlake.ui first does not meet a half-built kvlake.api.
    from kvlake.ui import UIRoute

    spec = msgspec.json.encode(openapi.document(operations))

    async def openapi_json(request: Request) -> Response:
        return Response(spec, media_type="application/json")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        services = Services.open(settings)
        inline = reads_on_this_machine(settings)
        executors = Executors(settings.server.max_connections, inline=inline)
        try:
            print_installation(services)
            # Lua hooks' `lakefs` module calls these operations in-process (hook_calls.py).
            services.lake.actions.connect_api(HookCalls(services, operations))
            services.lake.actions.observe_hooks(metrics.count_hook)
            if background_jobs and settings.server.background:
                services.start_background_jobs(settings.server.job_interval)
            app.state.services = services
            app.state.executors = executors
            tune_for_serving()  # last: what start-up made is never walked again
            yield {CONNECTIONS_STATE: ClientConnections(settings.server)}
        finally:
            executors.shutdown()  # handlers still running finish before the stores close
            services.close()
            print("kvlake: stopped: requests finished, cleaner stopped, stores closed", flush=True)

    def store_collectors() -> list[Collector]:
        services: Services | None = getattr(app.state, "services", None)
        if services is None:
            return []
        return [
            observability.DeletionCollector(services.lake.deletion_log),
            observability.OperationsCollector(services.lake.ledger),
        ]

    app = Starlette(
        routes=[
            routes(operations),
            Route("/api/v1/openapi.json", openapi_json),
            Route("/metrics", observability.metrics_endpoint(store_collectors)),
            # The web UI (/ui, and / for a browser) over the same operations (docs/ui.md).
            UIRoute(
                operations,
                foreign_host=lambda host: is_virtual_hosted(host, settings.gateway),
            ),
            # Last: S3 clients reach everything the REST API does not own (docs/gateway.md).
            GatewayRoute(
                Gateway(settings.gateway, body_read_timeout=settings.server.body_read_timeout)
            ),
        ],
        exception_handlers={
            ClientGoneError: errors.client_gone,
            KvlakeError: errors.kvlake_error,
            HTTPException: errors.http_error,
            Exception: errors.internal_error,
        },
        lifespan=lifespan,
        middleware=[
            # Outermost: a request refused for load is counted and logged as well.
            Middleware(observability.Observed, access_log=settings.server.access_log),
            Middleware(InFlightLimit, limit=settings.server.max_connections),
        ],
    )
    app.state.body_limits = BodyLimits(settings.server)
    return app


def app_from_environment() -> Starlette:
    """The app for a uvicorn worker: settings from `serve`, else from KVLAKE_* variables."""
    raw = os.environ.get(SETTINGS_ENV)
    settings = msgspec.json.decode(raw, type=Settings) if raw else load_settings()
    observability.configure_logging(settings)
    return create_app(settings)
