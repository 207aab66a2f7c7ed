"""The lake as a Spark task sees it: opened once per Python worker from the job's settings.

A task cannot receive the driver's open stores; it gets the settings (as JSON)
and opens the same KV store and blockstore the server uses. Python workers are
reused across tasks, so each process keeps one open lake per settings.
"""

from __future__ import annotations

import atexit
import threading
from typing import Final

import msgspec

from kvlake.config import Settings, load_settings
from kvlake.lake import Lake

SETTINGS_OPTION: Final = "kvlake.settings"
"""The option (or job argument) carrying the lake's settings as JSON to tasks."""

_lakes: dict[str, Lake] = {}
_lock = threading.Lock()


def encode_settings(settings: Settings) -> str:
    """The settings as the JSON a task gets (passwords included: tasks must connect)."""
    return msgspec.json.encode(settings).decode()


def task_lake(settings_json: str) -> Lake:
    """This process's lake for the settings (`""`: the task's own KVLAKE_* environment)."""
    with _lock:
        lake = _lakes.get(settings_json)
        if lake is None:
            settings = (
                msgspec.json.decode(settings_json, type=Settings)
                if settings_json
                else load_settings()
            )
            lake = _lakes[settings_json] = Lake.open(settings)
        return lake


@atexit.register
def _close_all() -> None:
    with _lock:
        for lake in _lakes.values():
            lake.close()
        _lakes.clear()
