"""open_store picks the driver by URL scheme, imports it lazily and never echoes the URL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kvlake.errors import ConfigError, UnavailableError
from kvlake.kv import open_store, register_store, url_scheme
from kvlake.kv import registry as registry_module
from kvlake.kv.memory import MemoryStore
from kvlake.kv.sqlite import SqliteStore

SECRET = "s3cr3t-pa55"


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test vanish after it."""
    monkeypatch.setattr(registry_module, "_STORES", dict(registry_module._STORES))


def test_mem_urls_open_a_new_empty_memory_store_each_time() -> None:
    with open_store("mem://") as first, open_store("mem://") as second:
        first.set(b"p", b"k", b"v")
        assert isinstance(first, MemoryStore)
        assert list(second.partitions()) == []


def test_sqlite_urls_open_the_sqlite_driver(tmp_path: Path) -> None:
    with open_store(f"sqlite://{tmp_path}/kv.db") as store:
        assert isinstance(store, SqliteStore)


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_both_postgres_schemes_reach_the_postgres_driver(scheme: str) -> None:
    # Port 1 refuses at once: the error proves the PostgreSQL driver parsed and tried the URL.
    with pytest.raises(UnavailableError, match="PostgreSQL at 127.0.0.1:1/db"):
        open_store(f"{scheme}://u:{SECRET}@127.0.0.1:1/db")


@pytest.mark.parametrize(
    "url", [f"redis://u:{SECRET}@host/0", f"u:{SECRET}@host/db", "", f"SQLITE://{SECRET}"]
)
def test_an_unknown_scheme_raises_config_error_listing_the_known_ones(url: str) -> None:
    with pytest.raises(
        ConfigError, match="KVLAKE_KV_URL.*mem://.*postgres://.*sqlite://"
    ) as caught:
        open_store(url)
    assert SECRET not in str(caught.value)


def test_url_scheme_returns_only_the_scheme() -> None:
    assert url_scheme(f"postgres://u:{SECRET}@h/db") == "postgres"
    assert url_scheme("no scheme here") == ""


@pytest.mark.usefixtures("scratch_registry")
def test_a_registered_scheme_opens_through_its_driver() -> None:
    register_store("scratch", "kvlake.kv.memory:MemoryStore")
    with open_store("scratch://anything") as store:
        assert isinstance(store, MemoryStore)


@pytest.mark.usefixtures("scratch_registry")
def test_registering_a_taken_scheme_is_refused() -> None:
    with pytest.raises(ConfigError, match="'sqlite' is already registered"):
        register_store("sqlite", "kvlake.kv.memory:MemoryStore")
    with open_store("mem://") as store:
        assert isinstance(store, MemoryStore)


@pytest.mark.usefixtures("scratch_registry")
def test_registering_a_path_without_a_class_is_refused() -> None:
    with pytest.raises(ConfigError, match="package.module:Class"):
        register_store("scratch", "kvlake.kv.memory.MemoryStore")
    with pytest.raises(ConfigError, match="scheme 'scratch'"):
        open_store("scratch://")


def test_psycopg_is_imported_only_for_postgres_urls(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from kvlake.kv import open_store\n"
        "open_store('mem://').close()\n"
        f"open_store('sqlite://{tmp_path}/kv.db').close()\n"
        "assert 'psycopg' not in sys.modules, 'psycopg was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
