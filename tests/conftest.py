"""Fixtures every layer's tests share: a clock, KV stores, blockstores and a PostgreSQL database.

The backends are tests/support/backends.py's. `kv` is the memory store; `any_store` a fresh
store of each driver in turn, for the tests that must hold on every one. `lake_blocks` is
a fresh blockstore of each kind users run (local folder, S3), for the tests that store
blobs. A test that takes both runs once per driver, each paired with the blockstore it is
deployed with (`PAIRED`), so it meets every driver and every blockstore in three runs
rather than six. `s3_server` is the one S3 set-up: the session's moto server, reset, with
the buckets the tests name, and the AWS variables of the test process pointing at it.

prometheus_client is imported here, first: it picks per-process or multiprocess metric
values once, at import, from PROMETHEUS_MULTIPROC_DIR. The in-process `kvlake serve` tests
set that variable for the server's life; a first import inside one of them left every
later metric in that test process reading a folder that no longer exists.

Invariant: PostgreSQL tests never vanish silently in CI. Locally a missing server skips them with
a message saying how to enable them; with CI=true it fails the run instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import prometheus_client  # noqa: F401 - before any test: see the docstring
import psycopg
import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.kv import Store, open_store
from kvlake.kv.memory import MemoryStore
from tests.support import STORES, FakeClock, drop_postgres_table, store_params
from tests.support.backends import BLOCKSTORES, PAIRS, paired_params
from tests.support.postgres import DEFAULT_POSTGRES_DSN, POSTGRES_DSN_VARIABLE, postgres_target

if TYPE_CHECKING:
    from tests.support.s3server import MotoS3


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[MotoS3]:
    """One S3 protocol server (moto) on loopback for the session; tests reset or scope it."""
    from tests.support.s3server import MotoS3  # moto and boto3 load only for S3 tests

    server = MotoS3()
    yield server
    server.stop()


CONTRACT_BUCKETS = ("lake", "never", "empty")
"""The buckets `s3_server` creates: the namespaces of the blockstore contract and the
catalog tests name them (`s3://lake/repo1`, `s3://never/used`, ...)."""


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The standard AWS variables, pointing at nothing of the machine's own configuration."""
    from tests.support.s3server import ACCESS_KEY_ID, SECRET_ACCESS_KEY

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


@pytest.fixture
def s3_server(moto_s3: MotoS3, aws_env: pytest.MonkeyPatch) -> MotoS3:
    """The S3 server, empty but for the contract's buckets; AWS_ENDPOINT_URL points at it."""
    moto_s3.reset()
    for bucket in CONTRACT_BUCKETS:
        moto_s3.admin.create_bucket(Bucket=bucket)
    aws_env.setenv("AWS_ENDPOINT_URL", moto_s3.endpoint)
    return moto_s3


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Pair the driver and the blockstore of a test that takes both (see `PAIRS`).

    Done as a parametrize mark, before pytest parametrizes the fixtures itself, so that
    `store_url` and `lake_blocks` are not also parametrized one by one. A test that
    parametrizes either itself (narrowing the drivers, say) keeps its own choice.
    """
    names = set(metafunc.fixturenames)
    if not {"store_url", "lake_blocks"} <= names:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0] if mark.args else mark.kwargs["argnames"]
        if isinstance(argnames, str):
            argnames = [name.strip() for name in argnames.split(",")]
        if names & {"store_url", "lake_blocks"} & set(argnames):
            return
    metafunc.definition.add_marker(
        pytest.mark.parametrize(
            ("store_url", "lake_blocks"), paired_params(*sorted(PAIRS)), indirect=True
        )
    )


@pytest.fixture(params=sorted(BLOCKSTORES))
def lake_blocks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    """A fresh blockstore of each kind users run, in turn: a local folder, then S3 (moto's
    server on loopback). Its namespaces are `<scheme>://lake/<path>`."""
    with open_blockstore(BLOCKSTORES[request.param](request, tmp_path)) as blocks:
        yield blocks


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def kv() -> Iterator[MemoryStore]:
    with MemoryStore() as store:
        yield store


@pytest.fixture(params=store_params(*sorted(STORES)))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty store of each driver in turn."""
    return STORES[request.param](request, tmp_path)


@pytest.fixture
def any_store(store_url: str) -> Iterator[Store]:
    """A fresh, empty store of each driver in turn (memory, PostgreSQL, SQLite)."""
    with open_store(store_url) as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The test server's DSN; skips (fails when CI=true) if it cannot be reached."""
    dsn = os.environ.get(POSTGRES_DSN_VARIABLE, DEFAULT_POSTGRES_DSN)
    try:
        with psycopg.connect(dsn, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())
        message = (
            f"PostgreSQL at {postgres_target(dsn)} is unreachable ({reason}); start PostgreSQL"
            f" or set {POSTGRES_DSN_VARIABLE} to a database you may create tables in"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return dsn


@pytest.fixture
def postgres_table(postgres_dsn: str) -> Iterator[str]:
    """A table name no other test uses; the table is dropped after the test."""
    table = f"kv_test_{uuid.uuid4().hex[:16]}"
    yield table
    drop_postgres_table(postgres_dsn, table)


@pytest.fixture
def postgres_url(postgres_dsn: str, postgres_table: str) -> str:
    """A KV URL on the test server whose table is this test's alone."""
    return f"{postgres_dsn}{'&' if '?' in postgres_dsn else '?'}table={postgres_table}"


# A worker process that dies (a signal from outside, the kernel's OOM killer on a shared
# machine) takes the test it was running with it, whatever that test does. Its test runs
# once more on another worker: a crash that repeats fails the run as before; one that does
# not is still named in the summary, so it is seen and not mistaken for a pass.
_CRASHED: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    if crashitem in _CRASHED:
        return
    _CRASHED.append(crashitem)
    sched.mark_test_pending(crashitem)  # type: ignore[attr-defined]
    report.outcome = "rerun"  # type: ignore[assignment]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for nodeid in _CRASHED:
        terminalreporter.write_line(
            f"CRASHED: a worker died running {nodeid}; it was run once more", yellow=True
        )


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    if report.outcome == "rerun":  # type: ignore[comparison-overlap]
        return "rerun", "R", "RERUN"
    return None
