"""Serving the API in-process: settings, an app over given services, and a client for it.

For tests that must control what a real server process hides: its clock, its
stores (a stepping or faulty one) or the threads its handlers run on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
from starlette.applications import Starlette

from kvlake.api.app import create_app
from kvlake.api.services import Services
from kvlake.blockstore import open_blockstore
from kvlake.config import Settings, load_settings
from kvlake.kv import open_store
from kvlake.lake import Lake
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY


def settings_in(data_dir: Path, **variables: str) -> Settings:
    """Settings over `data_dir`, the tests' admin credentials, and `KVLAKE_*` extras."""
    return load_settings(
        {
            "KVLAKE_DATA_DIR": str(data_dir),
            "KVLAKE_INSTALLATION_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            **variables,
        }
    )


def app_over(services: Services) -> Starlette:
    """The API over these services, without the lifespan's own stores and jobs."""
    app = create_app(services.settings, background_jobs=False)
    app.state.services = services
    return app


def client_of(app: Starlette) -> httpx.AsyncClient:
    """An async client that calls `app` directly, as the admin."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://kvlake/api/v1",
        auth=(ACCESS_KEY_ID, SECRET_ACCESS_KEY),
    )


def services_in(
    data_dir: Path, *, clock: Callable[[], float] = time.time, **variables: str
) -> Services:
    """Installed services over a fresh memory KV and `data_dir`'s local blockstore, on
    `clock`; close them with `services.close()`."""
    settings = settings_in(data_dir, **variables)
    lake = Lake(
        settings, open_store("mem://"), open_blockstore(settings.blockstore_url), clock=clock
    )
    services = Services(lake)
    services.install()
    return services
