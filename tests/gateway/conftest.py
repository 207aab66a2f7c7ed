"""One real server per (KV driver, blockstore) pair for the package; S3 clients against it.

The gateway suite runs on the API suite's pairs: SQLite over a local folder and
PostgreSQL over S3 (moto's server). Its servers serve virtual-hosted requests
for `DOMAIN` too. Each test gets a repository of its own with a `main` branch.
"""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import duckdb
import httpx
import pytest

from tests.api.conftest import start_server
from tests.support.servers import SERVERS, admin_http, new_repository, session_server

__all__ = ["start_server"]  # the API suite's fixture, for servers with limits of their own
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

DOMAIN = "s3.kvlake.test"


@pytest.fixture(scope="package", params=SERVERS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield from session_server(
        request, tmp_path_factory, "gateway", {"KVLAKE_GATEWAY_DOMAIN": DOMAIN}
    )


def s3_client(
    server: Server,
    access_key_id: str = ACCESS_KEY_ID,
    secret: str = SECRET_ACCESS_KEY,
    **config: Any,
) -> Any:
    """boto3's S3 client on the server, path style, with boto3's defaults otherwise."""
    options: dict[str, Any] = {"s3": {"addressing_style": "path"}, "retries": {"max_attempts": 1}}
    return boto3.client(
        "s3",
        endpoint_url=server.url,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        config=botocore.config.Config(**(options | config)),
    )


@pytest.fixture
def s3(server: Server) -> Any:
    server.storage.prepare()
    return s3_client(server)


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    """The REST API, as the admin."""
    yield from admin_http(server)


@pytest.fixture
def repo(server: Server, http: httpx.Client) -> str:
    """A fresh repository with a `main` branch, named uniquely for the test."""
    return new_repository(server, http, "gw")


AWS = str(Path(sys.executable).parent / "aws")


@pytest.fixture
def aws(server: Server, tmp_path: Path) -> Any:
    """Run `aws <args>` against the server; returns the completed process (checked)."""
    config = tmp_path / "aws-config"
    config.write_text("[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
    }

    def run(*args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
        command = [AWS, "--endpoint-url", server.url, *args]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == status, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    return run


@pytest.fixture
def duck(server: Server) -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB with httpfs loaded from its PyPI package (no download at run time) and a
    SECRET for the server's S3."""
    connection = duckdb_with_httpfs()
    try:
        connection.execute(
            "CREATE SECRET gateway (TYPE s3, KEY_ID ?, SECRET ?, REGION 'us-east-1', "
            "ENDPOINT ?, URL_STYLE 'path', USE_SSL false)",
            [ACCESS_KEY_ID, SECRET_ACCESS_KEY, server.url.removeprefix("http://")],
        )
        yield connection
    finally:
        connection.close()


def duckdb_with_httpfs() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the httpfs extension of the `duckdb-extension-httpfs` package."""
    extension = (
        importlib.resources.files("duckdb_extension_httpfs")
        / "extensions"
        / f"v{duckdb.__version__}"
        / "httpfs.duckdb_extension"
    )
    connection = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    connection.execute(f"LOAD '{extension}'")
    return connection
