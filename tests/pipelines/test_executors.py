"""A Spark task works on its driver's KV store or not at all (kvlake/kv/identity.py).

`task_lake` is what each task calls; it runs here in the test's process, as it runs
in a Spark Python worker, with the JSON the driver would send.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.config import Settings
from kvlake.errors import ConfigError
from kvlake.kv import open_store, read_store_identity, store_identity
from kvlake.kv.identity import KEY, PARTITION
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.pipelines import executors
from kvlake.pipelines.executors import encode_settings, task_lake


@pytest.fixture(autouse=True)
def _no_cached_lakes() -> Iterator[None]:
    yield
    executors._close_all()


def _settings(folder: Path, kv_url: str = "") -> Settings:
    return Settings(data_dir=str(folder), kv_url=kv_url)


def test_a_task_opens_the_drivers_store(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with Lake.open(settings) as lake:
        namespace = f"local://{settings.data_dir}/blocks/repo1"
        lake.graveler.create_repository("repo1", storage_namespace=namespace)
        task = task_lake(encode_settings(settings, store_id=lake.store_id))
        assert task.store_id == lake.store_id
        assert task.graveler.get_repository("repo1").name == "repo1"


def test_without_an_identity_the_settings_store_gives_its_own(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with Lake.open(settings) as lake:
        encoded = encode_settings(settings)  # read from the store: the same one the lake has
        assert lake.store_id in encoded
        assert task_lake(encoded).store_id == lake.store_id


def test_a_relative_sqlite_path_from_another_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver, executor = tmp_path / "driver", tmp_path / "executor"
    driver.mkdir()
    executor.mkdir()
    monkeypatch.chdir(driver)
    settings = _settings(tmp_path, kv_url="sqlite://kv.db")
    encoded = encode_settings(settings)
    monkeypatch.chdir(executor)  # the task's working folder: kv.db there is another file
    with pytest.raises(ConfigError, match="another KV store than its job's driver") as raised:
        task_lake(encoded)
    assert "(none: a new or empty store)" in str(raised.value)
    assert "kv.db" not in str(raised.value)  # settings may hold passwords: never echoed
    with contextlib.closing(open_store("sqlite://kv.db")) as stray:
        assert read_store_identity(stray) == ""  # the refused store got nothing written
    assert not executors._lakes  # nothing cached: the next task checks again


def test_a_store_with_another_identity_is_refused(tmp_path: Path) -> None:
    first, second = _settings(tmp_path / "a"), _settings(tmp_path / "b")
    with Lake.open(first) as lake_a, Lake.open(second) as lake_b:
        wrong = encode_settings(second, store_id=lake_a.store_id)
        with pytest.raises(ConfigError, match=f"the driver's is {lake_a.store_id}"):
            task_lake(wrong)
        assert lake_a.store_id != lake_b.store_id


def test_the_first_identity_written_holds() -> None:
    class Racing(MemoryStore):
        """Another process writes its identity between this one's read and write."""

        def _set_if(self, partition: bytes, key: bytes, value: bytes, predicate: object) -> None:
            if partition == PARTITION and not self.get_many(PARTITION, [KEY]):
                self.set(PARTITION, KEY, b"theirs")
            super()._set_if(partition, key, value, predicate)  # type: ignore[arg-type]

    store = Racing()
    assert store_identity(store) == "theirs"
    assert store_identity(store) == "theirs"
    fresh = MemoryStore()
    assert store_identity(fresh) == store_identity(fresh) != ""
