"""open_blockstore picks an adapter by URL scheme; register_blockstore adds, never replaces."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import pytest

from kvlake.blockstore import open_blockstore, register_blockstore, registry
from kvlake.blockstore.local import LocalBlockStore
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.errors import ConfigError


class PluginBlockStore(MemoryBlockStore):
    """A plugin adapter, registered by dotted path the way a third-party package would be."""

    scheme = "plugin"

    @classmethod
    def from_url(cls, url: str) -> Self:
        return cls()


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Let a test register schemes without leaking them into the others."""
    monkeypatch.setattr(registry, "_BLOCKSTORES", dict(registry._BLOCKSTORES))
    yield


def test_mem_url_opens_a_memory_blockstore() -> None:
    with open_blockstore("mem://") as opened:
        assert isinstance(opened, MemoryBlockStore)
        assert opened.scheme == "mem"


def test_local_url_opens_a_local_blockstore_at_its_root(tmp_path: Path) -> None:
    with open_blockstore(f"local://{tmp_path}/data") as opened:
        assert isinstance(opened, LocalBlockStore)
        assert opened.root == str(tmp_path / "data")


@pytest.mark.parametrize("url", ["gs://key:secret@bucket/prefix", "/var/lib/kvlake", ""])
def test_unknown_scheme_names_the_setting_and_hides_the_rest(url: str) -> None:
    with pytest.raises(ConfigError, match="KVLAKE_BLOCKSTORE_URL") as caught:
        open_blockstore(url)
    assert "local://, mem://, s3://" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_memory_url_with_a_path_is_refused() -> None:
    with pytest.raises(ConfigError, match="just mem://"):
        open_blockstore("mem://somewhere")


@pytest.mark.usefixtures("scratch_registry")
def test_registered_scheme_opens_its_adapter() -> None:
    register_blockstore("plugin", f"{__name__}:PluginBlockStore")
    assert isinstance(open_blockstore("plugin://"), PluginBlockStore)


@pytest.mark.usefixtures("scratch_registry")
@pytest.mark.parametrize("scheme", ["local", "mem", "s3"])
def test_register_refuses_a_taken_scheme(scheme: str) -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_blockstore(scheme, f"{__name__}:PluginBlockStore")
    assert open_blockstore("mem://").scheme == "mem"


@pytest.mark.usefixtures("scratch_registry")
@pytest.mark.parametrize(
    ("scheme", "path"), [("x", "no_colon"), ("x", ":Class"), ("x", "module:"), ("", "a:B")]
)
def test_register_refuses_a_malformed_entry(scheme: str, path: str) -> None:
    with pytest.raises(ConfigError):
        register_blockstore(scheme, path)


@pytest.mark.usefixtures("scratch_registry")
def test_unimportable_adapter_is_a_config_error() -> None:
    register_blockstore("gone", "kvlake.no_such_module:GoneBlockStore")
    with pytest.raises(ConfigError, match="cannot be imported"):
        open_blockstore("gone://bucket")


def test_importing_the_package_imports_no_adapter() -> None:
    code = (
        "import sys, kvlake.blockstore\n"
        "adapters = ('kvlake.blockstore.local', 'kvlake.blockstore.memory',"
        " 'kvlake.blockstore.s3', 'boto3', 'botocore')\n"
        "loaded = [m for m in adapters if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
