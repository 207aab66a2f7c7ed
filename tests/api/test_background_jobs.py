"""A server runs its background jobs (cleaner, deletion worker, bulk operations) at the
interval its settings name."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from kvlake.api.app import create_app
from kvlake.api.services import Services
from tests.api.inprocess import settings_in


def test_the_jobs_wait_the_configured_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intervals: list[float] = []
    start = Services.start_background_jobs

    def recorded(services: Services, interval: float = 0.0) -> None:
        intervals.append(interval)
        start(services, interval)

    monkeypatch.setattr(Services, "start_background_jobs", recorded)
    app = create_app(settings_in(tmp_path, KVLAKE_SERVER_JOB_INTERVAL="0.25"))

    async def serve_and_stop() -> None:
        async with app.router.lifespan_context(app):
            pass

    anyio.run(serve_and_stop)
    assert intervals == [0.25]
