"""The lake as a Spark task sees it: opened once per Python worker from the job's settings.

A task cannot receive the driver's open stores; it gets the settings (as JSON)
and opens the same KV store and blockstore the server uses. Python workers are
reused across tasks, so each process keeps one open lake per settings.

Settings that read the same can still reach another store in a task's process (a
relative SQLite path from another working folder, another host's database behind
the same name), and a task on an empty store would see no repository, or worse, no
reference to a blob. So the JSON carries the driver's store identity too
(kvlake/kv/identity.py), and a task refuses a store whose identity differs.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import Final

import msgspec

from kvlake.config import Settings, load_settings
from kvlake.errors import ConfigError
from kvlake.kv import open_store, read_store_identity, store_identity, url_scheme
from kvlake.lake import Lake

SETTINGS_OPTION: Final = "kvlake.settings"
"""The option (or job argument) carrying the lake's settings as JSON to tasks."""

_lakes: dict[str, Lake] = {}
_lock = threading.Lock()


class TaskSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What a task gets: the lake's settings and the identity of the driver's KV store."""

    settings: Settings
    store_id: str


def encode_settings(settings: Settings, *, store_id: str | None = None) -> str:
    """The JSON a task gets (passwords included: tasks must connect). `store_id` is the
    identity of the store the driver uses (`Lake.store_id`); without it the settings'
    store is opened here to read it."""
    if store_id is None:
        with contextlib.closing(open_store(settings.kv_url)) as store:
            store_id = store_identity(store)
    return msgspec.json.encode(TaskSettings(settings=settings, store_id=store_id)).decode()


def task_lake(settings_json: str) -> Lake:
    """This process's lake for the settings (`""`: the task's own KVLAKE_* environment).

    Raises:
        ConfigError: the settings open another KV store here than the driver's.
    """
    with _lock:
        lake = _lakes.get(settings_json)
        if lake is None:
            if not settings_json:
                lake = Lake.open(load_settings())
            else:
                task = msgspec.json.decode(settings_json, type=TaskSettings)
                lake = Lake.open(task.settings)
                try:
                    _check_same_store(lake, task)
                except BaseException:
                    lake.close()
                    raise
            _lakes[settings_json] = lake
        return lake


def _check_same_store(lake: Lake, task: TaskSettings) -> None:
    found = read_store_identity(lake.store)  # never written here: this may be a stray store
    if found != task.store_id:
        raise ConfigError(
            f"this Spark task opened another KV store than its job's driver:"
            f" the {url_scheme(task.settings.kv_url)}:// store its settings name has identity"
            f" {found or '(none: a new or empty store)'}"
            f" here, the driver's is {task.store_id}; give the job settings that reach the same"
            " store from every executor (an absolute SQLite path on a shared disk, or the same"
            " PostgreSQL database)"
        )


@atexit.register
def _close_all() -> None:
    with _lock:
        for lake in _lakes.values():
            lake.close()
        _lakes.clear()
