"""S3 gateway benchmark: the same work through the gateway, the REST API and the blockstore.

Starts `python -m kvlake serve --workers 2` on loopback (SQLite over a local
folder), then times, in one run:

- GetObject and PutObject of 4 KiB and 8 MiB objects, one client: the gateway
  (presigned SigV4 URLs, so the client's signing cost is paid once), the REST
  API (getObject / uploadObject with Basic auth) and the local blockstore alone
  (in this process, no HTTP);
- a ListObjectsV2 walk of 10,000 keys (1,000 a page) beside the REST API's
  listObjects walk;
- small GETs from `--threads` clients at once, in requests per second;
- the server workers' peak RSS before and after a `--large-mib` download and
  upload through the gateway.

    .venv/bin/python benchmarks/gateway_bench.py [--repeat 200] [--threads 16]
        [--large-mib 512]

Goals (issue 24): the gateway within 1.1x of the REST API's time per
operation; small GETs >= 5,000/s on SQLite over two workers; RSS flat for a
large transfer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import httpx

from kvlake.blockstore import BlockStore, open_blockstore

KEY, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
REPO = "bench"
SMALL, LARGE = 4 << 10, 8 << 20


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KVLAKE_")}
    env |= {
        "KVLAKE_INSTALLATION_ACCESS_KEY_ID": KEY,
        "KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET,
        "KVLAKE_INSTALLATION_USER_NAME": "admin",
    }
    command = [sys.executable, "-m", "kvlake", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--workers", "2"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v1/healthcheck", timeout=1).status_code == 204:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError("the server did not start")


def _timed(work: Callable[[], object], repeat: int) -> float:
    """Median seconds of `work` over `repeat` runs (after one warm-up)."""
    work()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _workers_rss_kib(server: subprocess.Popen[bytes]) -> int:
    """The peak RSS (VmHWM) summed over the server's worker processes."""
    total = 0
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    for pid in children:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return total


def _chunks(size: int, piece: int = 1 << 20) -> Iterator[bytes]:
    while size > 0:
        yield bytes(min(piece, size))
        size -= piece


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--large-mib", type=int, default=512)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kvlake-gateway-bench-") as folder:
        data = Path(folder)
        server, url = _serve(data / "server")
        try:
            return _run(args, server, url, data)
        finally:
            server.terminate()
            server.wait(30)


def _run(args: argparse.Namespace, server: subprocess.Popen[bytes], url: str, data: Path) -> int:
    rest = httpx.Client(base_url=f"{url}/api/v1", auth=(KEY, SECRET), timeout=120)
    namespace = f"local://{REPO}"
    rest.post("/repositories", json={"name": REPO, "storage_namespace": namespace})
    s3 = boto3.client(
        "s3",
        endpoint_url=url,
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        region_name="us-east-1",
        config=botocore.config.Config(s3={"addressing_style": "path"}, signature_version="s3v4"),
    )
    gateway = httpx.Client(timeout=120)
    blocks = open_blockstore(f"local://{data / 'blocks'}")
    print(f"{'operation':<24}{'gateway ms':>12}{'REST ms':>10}{'blockstore ms':>15}{'x REST':>8}")
    for size, label in ((SMALL, "4 KiB"), (LARGE, "8 MiB")):
        _objects(args, s3, rest, gateway, blocks, size, label)
    _listing(args, s3, rest, gateway)
    _throughput(args, s3, gateway)
    _large(args, server, s3, gateway)
    return 0


def _objects(
    args: argparse.Namespace,
    s3: Any,
    rest: httpx.Client,
    gateway: httpx.Client,
    blocks: BlockStore,
    size: int,
    label: str,
) -> None:
    """PutObject and GetObject of `size` bytes: gateway, REST API, blockstore alone."""
    body = bytes(size)
    key = f"obj-{size}"
    put_url = s3.generate_presigned_url(
        "put_object", Params={"Bucket": REPO, "Key": f"main/{key}"}, ExpiresIn=3600
    )
    get_url = s3.generate_presigned_url(
        "get_object", Params={"Bucket": REPO, "Key": f"main/{key}"}, ExpiresIn=3600
    )
    repeat = args.repeat if size == SMALL else max(args.repeat // 20, 5)
    puts = (
        _timed(lambda: gateway.put(put_url, content=body).raise_for_status(), repeat),
        _timed(
            lambda: rest.post(
                f"/repositories/{REPO}/branches/main/objects",
                params={"path": key},
                content=body,
                headers={"Content-Type": "application/octet-stream"},
            ).raise_for_status(),
            repeat,
        ),
        _timed(lambda: blocks.put("local://bench", key, body), repeat),
    )
    gets = (
        _timed(lambda: gateway.get(get_url).raise_for_status(), repeat),
        _timed(
            lambda: rest.get(
                f"/repositories/{REPO}/refs/main/objects", params={"path": key}
            ).raise_for_status(),
            repeat,
        ),
        _timed(lambda: blocks.get("local://bench", key), repeat),
    )
    for name, (g, r, b) in ((f"PutObject {label}", puts), (f"GetObject {label}", gets)):
        print(f"{name:<24}{g * 1e3:>12.2f}{r * 1e3:>10.2f}{b * 1e3:>15.2f}{g / r:>8.2f}")


def _listing(args: argparse.Namespace, s3: Any, rest: httpx.Client, gateway: httpx.Client) -> None:
    put = s3.generate_presigned_url

    def upload(i: int) -> None:
        url = put("put_object", Params={"Bucket": REPO, "Key": f"main/many/{i:05d}"})
        gateway.put(url, content=b"x").raise_for_status()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, range(10_000)))

    def walk_gateway() -> None:
        # Presigned pages fetched raw, as the REST walk fetches JSON: neither pays a client's
        # parsing, so the figures compare the servers.
        token, seen = "", 0
        while True:
            params = {"Bucket": REPO, "Prefix": "main/many/", "MaxKeys": 1000}
            if token:
                params["ContinuationToken"] = token
            url = put("list_objects_v2", Params=params)
            page = gateway.get(url).text
            seen += page.count("<Contents>")
            if "<IsTruncated>true</IsTruncated>" not in page:
                break
            token = page.split("<NextContinuationToken>")[1].split("<")[0]
        assert seen == 10_000

    def walk_rest() -> None:
        after, seen = "", 0
        while True:
            page = rest.get(
                f"/repositories/{REPO}/refs/main/objects/ls",
                params={"prefix": "many/", "after": after, "amount": 1000},
            ).json()
            seen += len(page["results"])
            if not page["pagination"]["has_more"]:
                break
            after = page["pagination"]["next_offset"]
        assert seen == 10_000

    g, r = _timed(walk_gateway, 3), _timed(walk_rest, 3)
    print(f"{'ListObjectsV2 10,000':<24}{g * 1e3:>12.1f}{r * 1e3:>10.1f}{'-':>15}{g / r:>8.2f}")


def _throughput(args: argparse.Namespace, s3: Any, gateway: httpx.Client) -> None:
    url = s3.generate_presigned_url(
        "get_object", Params={"Bucket": REPO, "Key": f"main/obj-{SMALL}"}, ExpiresIn=3600
    )
    per_thread = max(args.repeat, 100)

    def client(_: int) -> None:
        with httpx.Client() as http:
            for _ in range(per_thread):
                http.get(url).raise_for_status()

    started = time.perf_counter()
    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(client, range(args.threads)))
    rate = args.threads * per_thread / (time.perf_counter() - started)
    print(f"small GETs, {args.threads} clients: {rate:,.0f}/s (client threads share the machine)")


def _large(
    args: argparse.Namespace, server: subprocess.Popen[bytes], s3: Any, gateway: httpx.Client
) -> None:
    size = args.large_mib << 20
    before = _workers_rss_kib(server)
    put = s3.generate_presigned_url(
        "put_object", Params={"Bucket": REPO, "Key": "main/large"}, ExpiresIn=3600
    )
    gateway.put(put, content=_chunks(size)).raise_for_status()
    get = s3.generate_presigned_url(
        "get_object", Params={"Bucket": REPO, "Key": "main/large"}, ExpiresIn=3600
    )
    received = 0
    with gateway.stream("GET", get) as response:
        for chunk in response.iter_bytes(1 << 20):
            received += len(chunk)
    assert received == size
    after = _workers_rss_kib(server)
    print(
        f"workers' peak RSS: {before / 1024:.0f} MiB before, {after / 1024:.0f} MiB after"
        f" a {args.large_mib} MiB upload and download through the gateway"
    )


if __name__ == "__main__":
    sys.exit(main())
