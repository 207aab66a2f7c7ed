"""Blockstore fixtures: every adapter runs the same contract through one parametrized fixture.

A new adapter adds one line to ADAPTERS: a function from the test's request and
a temporary folder to the blockstore URL that opens it (a fixture it asks for
may start a server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.blockstore.local import LocalBlockStore
from tests.support.s3server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, MotoS3

ADAPTERS: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "local": lambda request, tmp: f"local://{tmp}/blocks",
    "mem": lambda request, tmp: "mem://",
    "s3": lambda request, tmp: str(request.getfixturevalue("s3_url")),
}

CONTRACT_BUCKETS = ("lake", "never", "empty")
"""The buckets the contract's namespaces name (`s3://lake/repo1`, `s3://never/used`, ...)."""


@pytest.fixture(params=sorted(ADAPTERS))
def blockstore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    with open_blockstore(ADAPTERS[request.param](request, tmp_path)) as store:
        yield store


@pytest.fixture
def namespace(blockstore: BlockStore) -> str:
    return f"{blockstore.scheme}://lake/repo1"


@pytest.fixture
def local_store(tmp_path: Path) -> Iterator[LocalBlockStore]:
    with LocalBlockStore.from_url(f"local://{tmp_path}/root") as store:
        yield store


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """The standard AWS variables, pointing at nothing of the machine's own configuration."""
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


@pytest.fixture
def s3_url(s3_server: MotoS3) -> str:
    """A root serving every bucket, reached through the standard AWS variables alone."""
    return "s3://"
