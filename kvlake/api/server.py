"""Run the server: one or more uvicorn worker processes over one set of stores.

Workers share nothing but the stores, so they behave as one server. The first
start's admin is created here, before any worker starts, so its secret is
printed exactly once. uvicorn handles SIGINT and SIGTERM gracefully: it stops
accepting connections, lets in-flight requests finish (up to
`GRACEFUL_SECONDS`), then runs each worker's shutdown, which stops the cleaner.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Final

import msgspec
import uvicorn

from kvlake.api.app import SETTINGS_ENV, print_installation
from kvlake.api.observability import configure_logging
from kvlake.api.protocols import protocol_path
from kvlake.api.services import Services
from kvlake.config import Settings, redact_url
from kvlake.errors import ConfigError

log = logging.getLogger(__name__)

GRACEFUL_SECONDS: Final = 30


def serve(settings: Settings, *, workers: int = 1) -> None:
    """Serve /api/v1 on `settings.host:settings.port` until interrupted."""
    protocol = protocol_path(settings.server.http)  # a missing httptools fails before any store
    configure_logging(settings)
    check_port_free(settings.host, settings.port)
    services = Services.open(settings)
    try:
        print_installation(services)
    finally:
        services.close()
    print(
        f"kvlake: serving http://{settings.host}:{settings.port}/api/v1 with {workers}"
        f" worker(s) over {protocol.rpartition(':')[2]}; metadata in"
        f" {redact_url(settings.kv_url)}",
        flush=True,
    )
    os.environ[SETTINGS_ENV] = msgspec.json.encode(settings).decode()
    uvicorn.run(
        "kvlake.api.app:app_from_environment",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        # Not uvicorn's limit_concurrency: it counts idle sockets too (issue 23). Requests
        # in flight are limited by the app (inflight.py), connections by the protocol.
        log_level="warning",
        access_log=False,
        server_header=False,
        h11_max_incomplete_event_size=64 * 1024,
        http=protocol,
    )


def check_port_free(host: str, port: int) -> None:
    """Fail before the banner when the address is taken, instead of printing "serving"
    and then dying in uvicorn's bind.

    Raises:
        ConfigError: something already listens on `host:port`.
    """
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {host}:{port}: {exc.strerror}; stop what uses it (another "
                "kvlake serve?) or pick another port with --port or KVLAKE_PORT"
            ) from exc
