"""A real kvlake server process for integration tests, clients pointed at it, and a view of
its blockstore (local folder or S3 bucket) that the tests read and write blobs through."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import httpx
import lakefs
import lakefs_sdk
from lakefs_sdk.client import LakeFSClient

from kvlake.blockstore import BlockStore, open_blockstore
from tests.support import wait_until
from tests.support.processes import python_dying_with_parent

if TYPE_CHECKING:
    from tests.support.s3server import MotoS3

ACCESS_KEY_ID: Final = "AKIAIOSFODNN7EXAMPLE"
SECRET_ACCESS_KEY: Final = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
START_SECONDS: Final = 90.0
"""How long a server may take to answer its first healthcheck: its workers import kvlake
and open the stores, which on a loaded 2-core CI machine took over 30 s once (stop 39)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Storage:
    """A server's blockstore as the tests see it: which kind, the namespace of a repository
    named `name`, and the same blockstore opened in the test process, so a test checks or
    plants blobs the same way on a local folder and on S3."""

    def __init__(
        self,
        kind: str,
        root: str,
        opener: Callable[[], BlockStore],
        prepare: Callable[[], None],
        unfinished: Callable[[str], list[str]],
    ) -> None:
        self.kind = kind
        """"local" or "s3"."""
        self._root = root
        self._opener = opener
        self._prepare = prepare
        self._unfinished = unfinished
        self._blocks: BlockStore | None = None

    @classmethod
    def local(cls, data_dir: Path) -> Storage:
        """The server's default blockstore, the folder `blocks` of its data dir."""
        blocks = data_dir / "blocks"

        def unfinished(name: str) -> list[str]:
            return [str(path) for path in (blocks / name).rglob(".kvlake-tmp-*")]

        return cls(
            "local",
            "local://",
            lambda: open_blockstore(f"local://{blocks}"),
            lambda: None,
            unfinished,
        )

    @classmethod
    def s3(cls, moto: MotoS3, bucket: str) -> Storage:
        """The bucket `bucket` of the session's S3 server (created now and whenever a test
        that resets the server emptied it: see `prepare`)."""
        from kvlake.blockstore.s3 import S3BlockStore
        from kvlake.blockstore.throttle import shared_limiter

        def unfinished(name: str) -> list[str]:
            uploads = moto.admin.list_multipart_uploads(Bucket=bucket, Prefix=f"{name}/")
            return [upload["Key"] for upload in uploads.get("Uploads", [])]

        moto.ensure_bucket(bucket)
        return cls(
            "s3",
            f"s3://{bucket}/",
            lambda: S3BlockStore(moto.client(), root=bucket, limiter=shared_limiter(moto.endpoint)),
            lambda: moto.ensure_bucket(bucket),
            unfinished,
        )

    def namespace(self, name: str) -> str:
        """The storage namespace of a repository named `name` on this blockstore."""
        return f"{self._root}{name}"

    def unfinished_writes(self, name: str) -> list[str]:
        """The partial writes left in repository `name`'s namespace: temporary files in the
        local folder, multipart uploads neither completed nor aborted on S3."""
        return self._unfinished(name)

    def prepare(self) -> None:
        """Make the blockstore usable for the next test (S3: re-create a reset bucket)."""
        self._prepare()

    @property
    def blocks(self) -> BlockStore:
        """The blockstore, opened in the test process on first use."""
        if self._blocks is None:
            self._blocks = self._opener()
        return self._blocks

    def keys(self, namespace: str, prefix: str = "") -> list[str]:
        """Every blob key below `prefix` of the namespace."""
        return list(self.blocks.list_keys(namespace, prefix))

    def close(self) -> None:
        """Close the test process's blockstore; the next use opens it again."""
        if self._blocks is not None:
            self._blocks.close()
            self._blocks = None


class Server:
    """`python -m kvlake serve` on a free port; `stop()` sends SIGTERM and waits."""

    def __init__(
        self,
        data_dir: Path,
        *,
        kv_url: str = "",
        workers: int = 1,
        env: dict[str, str] | None = None,
        storage: Storage | None = None,
    ) -> None:
        """`storage` describes the blockstore that `env` configures (default: local)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.log = data_dir / "server.log"
        data_dir.mkdir(parents=True, exist_ok=True)
        self.storage = storage or Storage.local(data_dir)
        extra_env = env or {}
        env = {k: v for k, v in os.environ.items() if not k.startswith("KVLAKE_")}
        env |= {
            "KVLAKE_INSTALLATION_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            "KVLAKE_INSTALLATION_USER_NAME": "admin",
        }
        if kv_url:
            env["KVLAKE_KV_URL"] = kv_url
        env |= extra_env
        command = python_dying_with_parent("-m", "kvlake", "serve", "--port", str(self.port))
        command += ["--data-dir", str(data_dir), "--workers", str(workers)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        try:
            wait_until(
                self._ready,
                timeout=START_SECONDS,
                interval=0.1,
                message=lambda: f"the server to answer its healthcheck:\n{self.output()}",
            )
        except AssertionError:
            self.stop()
            raise

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited at start:\n{self.output()}")
        try:
            return httpx.get(f"{self.url}/api/v1/healthcheck", timeout=1).status_code == 204
        except httpx.TransportError:
            return False

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        """Graceful stop: SIGTERM, then the exit status (killed after 30 s)."""
        self.storage.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
                return -9
        return self.process.returncode

    def sdk(
        self, access_key_id: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY
    ) -> LakeFSClient:
        configuration = lakefs_sdk.Configuration(
            host=f"{self.url}/api/v1", username=access_key_id, password=secret
        )
        return LakeFSClient(configuration)

    def client(
        self, access_key_id: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY
    ) -> lakefs.Client:
        return lakefs.Client(host=self.url, username=access_key_id, password=secret)

    def http(
        self, access_key_id: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY
    ) -> httpx.Client:
        return httpx.Client(base_url=f"{self.url}/api/v1", auth=(access_key_id, secret), timeout=60)
