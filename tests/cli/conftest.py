"""The CLI driven as a user drives it, against a real `kvlake serve` (one server per test
module, SQLite over a local folder; many commands per server) over real HTTP.

`cli(...)` runs a command in this process through click's runner (an interpreter start
costs seconds on a busy CI machine); `cli.process(...)` runs `python -m kvlake` as a
subprocess, for what only a process shows (exit codes as a shell sees them, the
environment, tracebacks). Each test gets a HOME of its own, so no ~/.lakectl.yaml leaks in.

The operator's commands (kv, deletion, repo untangle, operations run) open the lake
themselves, with no server: `lake_env` gives them the test's data dir, `namespace` a
repository namespace on a local folder, then on S3 (test_operator.py, test_operations_run.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kvlake.cli import main
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.support import backends
from tests.support.backends import BLOCKSTORES

TIMEOUT = 120.0
IMPORTS = "local://imports"
"""The folder below the server's blockstore root that `kvlake import` may read."""


@dataclass(frozen=True)
class Run:
    """One finished command: its exit status and what it printed."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.code == 0, self
        return json.loads(self.stdout)

    def ok(self) -> Run:
        assert self.code == 0, self
        return self

    def error(self, code: int, *fragments: str) -> Run:
        """Exit `code`, one `kvlake: error:` line on stderr naming each fragment, no traceback."""
        assert self.code == code, self
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("kvlake: error: "), self.stderr
        for fragment in fragments:
            assert fragment in lines[0], lines[0]
        assert "Traceback" not in self.stdout + self.stderr
        return self


@dataclass
class Cli:
    """Runs `kvlake` with the environment a user would have: HOME and `env`, no KVLAKE_*."""

    home: Path
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, *args: str, stdin: str | bytes | None = None) -> Run:
        """Run `kvlake ARGS` in this process (click's runner, real HTTP to the server)."""
        cleared: dict[str, str | None] = {
            k: None for k in os.environ if k.startswith(("KVLAKE_", "LAKECTL_"))
        }
        cleared.pop("KVLAKE_TEST_POSTGRES_DSN", None)
        runner = CliRunner(env=cleared | {"HOME": str(self.home)} | self.env)
        result = runner.invoke(main, list(args), input=stdin)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    def process(self, *args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> Run:
        """Run `python -m kvlake ARGS` as a subprocess with the user's environment."""
        environment = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("KVLAKE_", "LAKECTL_")) or k.startswith("KVLAKE_TEST_")
        }
        environment |= {"HOME": str(self.home), "COLUMNS": "200"} | self.env
        data = stdin.encode() if isinstance(stdin, str) else stdin
        done = subprocess.run(
            [sys.executable, "-m", "kvlake", *args],
            input=data,
            capture_output=True,
            env=environment,
            cwd=cwd,
            timeout=TIMEOUT,
            check=False,
        )
        return Run(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode())


def module_server(
    factory: pytest.TempPathFactory, name: str, env: dict[str, str]
) -> Iterator[Server]:
    """A server for one module's tests, stopped after them. A module that needs other
    settings defines its own `cli_server` fixture with this; `cli` then talks to it."""
    server = Server(factory.mktemp(name), env=env)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module's tests (they use repositories of their own)."""
    yield from module_server(
        tmp_path_factory,
        "cli-server",
        {"KVLAKE_IMPORTS_LOCAL_ENABLED": "true", "KVLAKE_IMPORTS_LOCAL_PREFIXES": IMPORTS},
    )


@pytest.fixture
def cli(cli_server: Server, tmp_path: Path) -> Cli:
    """`kvlake` as the admin, configured through LAKECTL_* variables."""
    home = tmp_path / "home"
    home.mkdir()
    return Cli(
        home,
        {
            "LAKECTL_SERVER_ENDPOINT_URL": cli_server.url,
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        },
    )


@pytest.fixture
def lake_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """For the operator's commands run in this process on a lake they open themselves: no
    KVLAKE_* setting leaks in from the developer's shell, and the data dir is the test's."""
    for name in os.environ:
        if name.startswith("KVLAKE_") and not name.startswith("KVLAKE_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KVLAKE_DATA_DIR", str(tmp_path / "data"))
    return monkeypatch


@pytest.fixture(params=sorted(BLOCKSTORES))
def namespace(request: pytest.FixtureRequest, lake_env: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """For the operator's commands, which open the lake themselves: the namespace of their
    repository `repo1`, in the data dir's folder, then in the bucket `lake` of the session's
    S3 server (KVLAKE_BLOCKSTORE_URL and AWS_* set for the test)."""
    backend = backends.on(request.param)
    if backend.blocks == "s3":
        from tests.support.s3server import lake_bucket_env  # moto loads only for S3

        for name, value in lake_bucket_env(request, tmp_path / "aws").items():
            lake_env.setenv(name, value)
    return backend.namespace("repo1")


@pytest.fixture
def repository(cli: Cli, cli_server: Server) -> str:
    """A fresh repository with a `main` branch, created through the CLI."""
    name = f"cli-{uuid.uuid4().hex[:10]}"
    cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name)).ok()
    return name
