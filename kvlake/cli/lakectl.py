"""The CLI's client configuration, read the way lakectl reads it, so lakeFS habits carry over.

Where the server is and who the user is come from `~/.lakectl.yaml`
(`server.endpoint_url`, `credentials.access_key_id`, `credentials.secret_access_key`),
overridden by `LAKECTL_SERVER_ENDPOINT_URL`, `LAKECTL_CREDENTIALS_ACCESS_KEY_ID` and
`LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY`: the file and variables lakeFS's own clients read.
This is the user's side only; the server's settings stay in `kvlake.config` (`KVLAKE_*`).
A file that is not valid YAML, or not the expected shape, is a `ConfigError` naming the
file and the fix, never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import msgspec
import yaml

from kvlake.errors import ConfigError

DEFAULT_ENDPOINT: Final = "http://127.0.0.1:8000"
"""Where `kvlake serve` listens with no settings."""
CONFIG_FILE_ENV: Final = "LAKECTL_CONFIG_FILE"
"""Names another file than ~/.lakectl.yaml (tests, several installations)."""
ENDPOINT_ENV: Final = "LAKECTL_SERVER_ENDPOINT_URL"
ACCESS_KEY_ENV: Final = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
SECRET_KEY_ENV: Final = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"


class LakectlConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Where the server is and the user's key; `source` says where they were read."""

    endpoint_url: str = DEFAULT_ENDPOINT
    access_key_id: str = ""
    secret_access_key: str = ""
    source: str = "defaults"

    @property
    def api_url(self) -> str:
        """The `/api/v1` root, whether or not the endpoint names it (lakectl accepts both)."""
        url = self.endpoint_url.rstrip("/")
        return url if url.endswith("/api/v1") else f"{url}/api/v1"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """The lakectl file to read and write: LAKECTL_CONFIG_FILE, else ~/.lakectl.yaml."""
    env = os.environ if env is None else env
    named = env.get(CONFIG_FILE_ENV, "")
    return (
        Path(named).expanduser()
        if named
        else Path(env.get("HOME", "~")).expanduser() / (".lakectl.yaml")
    )


def load_lakectl_config(env: Mapping[str, str] | None = None) -> LakectlConfig:
    """The file's values, each overridden by its LAKECTL_* variable when set.

    Raises:
        ConfigError: the file is unreadable, not YAML, or not lakectl's shape.
    """
    env = os.environ if env is None else env
    path = config_path(env)
    document = _read(path)
    server = _section(document, "server", path)
    credentials = _section(document, "credentials", path)
    endpoint = env.get(ENDPOINT_ENV) or _text(server, "endpoint_url", path) or DEFAULT_ENDPOINT
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(
            f"server endpoint {endpoint!r} is not an http(s) URL; set {ENDPOINT_ENV} or "
            f"server.endpoint_url in {path} to e.g. {DEFAULT_ENDPOINT}"
        )
    return LakectlConfig(
        endpoint_url=endpoint,
        access_key_id=env.get(ACCESS_KEY_ENV) or _text(credentials, "access_key_id", path),
        secret_access_key=env.get(SECRET_KEY_ENV) or _text(credentials, "secret_access_key", path),
        source=str(path) if document else "LAKECTL_* variables and defaults",
    )


def save_lakectl_config(path: Path, config: LakectlConfig) -> None:
    """Write `config` as lakectl's YAML, readable by the user only (it holds a secret)."""
    document = {
        "credentials": {
            "access_key_id": config.access_key_id,
            "secret_access_key": config.secret_access_key,
        },
        "server": {"endpoint_url": config.endpoint_url},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        yaml.safe_dump(document, file, sort_keys=False)
    path.chmod(0o600)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}; fix its permissions") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            f"{path} is not valid YAML{where}; fix it or write it again with `kvlake config`"
        ) from exc
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"{path} must be a YAML mapping (server:, credentials:); "
            "write it again with `kvlake config`"
        )
    return document


def _section(document: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    section = document.get(name) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: `{name}` must be a mapping; see `kvlake config --help`")
    return section


def _text(section: dict[str, Any], key: str, path: Path) -> str:
    value = section.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str | int):
        raise ConfigError(f"{path}: `{key}` must be a string; fix the file")
    return str(value)
