"""HTTP benchmark: kvlake's API under wrk, beside a bare Starlette endpoint.

Starts `python -m kvlake serve --workers 2` on loopback (SQLite, then PostgreSQL
when reachable), prepares a repository, and drives it with wrk at 32
connections: stat, 1 KiB upload, a 1000-entry listing and branch creation. A
bare Starlette JSON endpoint on 2 uvicorn workers runs in the same script, so
the figures show kvlake's own cost. Prints throughput, p50/p99 latency, the
ratio to the bare endpoint, the server's CPU time per request (its processes' user +
system seconds over the run, from /proc, divided by the requests answered: less noisy
than req/s on a shared machine), and the KV calls one warm request makes (counted
in-process through `FaultyStore`, which logs every driver call).

    .venv/bin/python benchmarks/api_bench.py [--seconds 10] [--connections 32]
        [--backends sqlite,postgres] [--json PATH]

`--json PATH` also writes the figures as `{scenario: {metric: number}}`, the form
benchmarks/compare_commits.py reads to compare the current tree with an earlier commit.

Needs wrk (`apt-get install -y wrk`); without it the script says so and exits 0.
Goals: stat >= 8000 req/s, uploads >= 3000 req/s, p99 < 25 ms.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kvlake.api.protocols import protocol_path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "api_bench.lua"
KEY, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
DSN = os.environ.get("KVLAKE_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


async def _bare(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "version": "0.1.0"})


bare_app = Starlette(routes=[Route("/", _bare)])
"""The baseline: a Starlette endpoint returning a small JSON document, served by the same
uvicorn protocol as kvlake (TCP_NODELAY set; httptools when installed)."""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wrk(
    url: str, *, seconds: int, connections: int, mode: str = "get", path: str = ""
) -> dict[str, Any]:
    """Run wrk once; returns requests/s, p50 and p99 in ms, and the error count."""
    env = {**os.environ, "BENCH_MODE": mode, "BENCH_PATH": path}
    auth = "Basic " + base64.b64encode(f"{KEY}:{SECRET}".encode()).decode()
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(SCRIPT)]
    command += ["-H", f"Authorization: {auth}", url]
    finished = subprocess.run(command, env=env, capture_output=True, text=True)
    if finished.returncode != 0:
        raise RuntimeError(f"wrk failed: {finished.stderr or finished.stdout}")
    output = finished.stdout
    report = json.loads(output.strip().splitlines()[-1])
    return {
        "rps": report["requests"] / report["seconds"],
        "p50_ms": report["p50_us"] / 1000,
        "p99_ms": report["p99_us"] / 1000,
        "errors": report["errors"],
    }


def _server_cpu(process: subprocess.Popen[bytes]) -> float:
    """CPU seconds (user + system) used so far by the server and its worker processes, from
    /proc (Linux); NaN elsewhere."""
    total = 0.0
    try:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        for pid in [process.pid, *map(int, children)]:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return float("nan")
    return total


def _measured(process: subprocess.Popen[bytes], url: str, **run: Any) -> dict[str, Any]:
    """`wrk` against the server, with the server's CPU microseconds per request."""
    before = _server_cpu(process)
    figures = wrk(url, **run)
    requests = figures["rps"] * run["seconds"]
    figures["cpu_us"] = (_server_cpu(process) - before) * 1e6 / requests if requests else 0.0
    return figures


def _prepare(api: httpx.Client) -> str:
    repo = f"bench-{uuid.uuid4().hex[:8]}"
    response = api.post(
        "/repositories", json={"name": repo, "storage_namespace": f"local://{repo}"}
    )
    response.raise_for_status()
    objects = f"/repositories/{repo}/branches/main/objects"
    api.post(objects, params={"path": "stat/me"}, content=b"x" * 1024).raise_for_status()
    for i in range(1000):
        api.post(objects, params={"path": f"list/{i:04d}"}, content=b"y").raise_for_status()
    api.post(f"/repositories/{repo}/branches/main/commits", json={"message": "bench data"})
    return repo


def bench_kvlake(
    name: str, kv_url: str, args: argparse.Namespace
) -> list[tuple[str, dict[str, Any]]]:
    port = _free_port()
    data_dir = tempfile.mkdtemp(prefix=f"kvlake-bench-{name}-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KVLAKE_")}
    env |= {
        "KVLAKE_INSTALLATION_ACCESS_KEY_ID": KEY,
        "KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET,
    }
    if kv_url:
        env["KVLAKE_KV_URL"] = kv_url
    command = [sys.executable, "-m", "kvlake", "serve", "--port", str(port), "--data-dir", data_dir]
    process = subprocess.Popen(command + ["--workers", "2"], env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/v1"
    results = []
    try:
        _wait(f"{base}/healthcheck", process)
        with httpx.Client(base_url=base, auth=(KEY, SECRET), timeout=60) as api:
            repo = _prepare(api)
        run = {"seconds": args.seconds, "connections": args.connections}
        read = f"{base}/repositories/{repo}/refs/main/objects"
        results.append((f"{name}: stat", _measured(process, f"{read}/stat?path=stat/me", **run)))
        results.append(
            (
                f"{name}: upload 1 KiB",
                _measured(
                    process,
                    base,
                    mode="upload",
                    path=f"/api/v1/repositories/{repo}/branches/main/objects",
                    **run,
                ),
            )
        )
        listing = f"{read}/ls?prefix=list/&amount=1000"
        results.append((f"{name}: list 1000", _measured(process, listing, **run)))
        branches = f"/api/v1/repositories/{repo}/branches"
        results.append(
            (
                f"{name}: create branch",
                _measured(process, base, mode="branch", path=branches, **run),
            )
        )
    finally:
        _stop(process)
        shutil.rmtree(data_dir, ignore_errors=True)
    return results


def kv_calls(kv_url: str) -> dict[str, int]:
    """KV calls of one warm request per scenario, served in-process over `kv_url`."""
    from kvlake.api.app import create_app
    from kvlake.api.services import Services
    from kvlake.blockstore import open_blockstore
    from kvlake.config import load_settings
    from kvlake.kv import open_store
    from kvlake.kv.faults import FaultyStore
    from kvlake.lake import Lake

    data_dir = tempfile.mkdtemp(prefix="kvlake-bench-calls-")
    environ = {"KVLAKE_DATA_DIR": data_dir, "KVLAKE_KV_URL": kv_url}
    environ |= {"KVLAKE_INSTALLATION_ACCESS_KEY_ID": KEY}
    environ |= {"KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET}
    settings = load_settings({k: v for k, v in environ.items() if v})
    store = FaultyStore(open_store(settings.kv_url), [])
    services = Services(Lake(settings, store, open_blockstore(settings.blockstore_url)))
    services.install()
    app = create_app(settings, background_jobs=False)
    app.state.services = services
    counts: dict[str, int] = {}

    async def measure() -> None:
        transport = httpx.ASGITransport(app=app)
        base = "http://kvlake/api/v1"
        async with httpx.AsyncClient(transport=transport, base_url=base, auth=(KEY, SECRET)) as api:
            repo = f"calls-{uuid.uuid4().hex[:8]}"
            namespace = {"name": repo, "storage_namespace": f"local://{repo}"}
            (await api.post("/repositories", json=namespace)).raise_for_status()
            objects = f"/repositories/{repo}/branches/main/objects"
            read = f"/repositories/{repo}/refs/main/objects"
            (await api.post(objects, params={"path": "stat/me"}, content=b"x")).raise_for_status()
            branches = f"/repositories/{repo}/branches"
            sends: dict[str, Callable[[int], Awaitable[httpx.Response]]] = {
                "stat": lambda n: api.get(f"{read}/stat", params={"path": "stat/me"}),
                "upload 1 KiB": lambda n: api.post(
                    objects, params={"path": f"u/{n}"}, content=b"x" * 1024
                ),
                "list 1000": lambda n: api.get(f"{read}/ls", params={"prefix": "stat/"}),
                "create branch": lambda n: api.post(
                    branches, json={"name": f"b{n}", "source": "main"}
                ),
            }
            for scenario, send in sends.items():
                (await send(0)).raise_for_status()  # warm: caches, connections
                before = len(store.calls)
                (await send(1)).raise_for_status()
                counts[scenario] = len(store.calls) - before

    try:
        anyio.run(measure)
    finally:
        services.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return counts


def bench_bare(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    port = _free_port()
    code = (
        f"import uvicorn; uvicorn.run('api_bench:bare_app', host='127.0.0.1', port={port},"
        f" workers=2, log_level='warning', access_log=False, app_dir={str(HERE)!r},"
        f" http={protocol_path()!r})"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    try:
        _wait(f"http://127.0.0.1:{port}/", process)
        return "bare Starlette JSON", wrk(
            f"http://127.0.0.1:{port}/", seconds=args.seconds, connections=args.connections
        )
    finally:
        _stop(process)


def _postgres_url() -> str:
    import psycopg

    try:
        with psycopg.connect(DSN, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        print(f"PostgreSQL unreachable ({' '.join(str(exc).split())}): skipping it")
        return ""
    return f"{DSN}{'&' if '?' in DSN else '?'}table=kv_bench_{uuid.uuid4().hex[:10]}"


def _drop(kv_url: str) -> None:
    import psycopg

    table = kv_url.rsplit("table=", 1)[1]
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}"')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install -y wrk); skipping the API benchmark")
        return 0
    backends = args.backends.split(",")
    results = [bench_bare(args)]
    calls: dict[str, int] = {}
    if "sqlite" in backends:
        calls |= {f"sqlite: {k}": v for k, v in kv_calls("").items()}
        results += bench_kvlake("sqlite", "", args)
    postgres = _postgres_url() if "postgres" in backends else ""
    if postgres:
        counted = _postgres_url()  # its own table: another data folder, another server key
        try:
            calls |= {f"postgres: {k}": v for k, v in kv_calls(counted).items()}
            results += bench_kvlake("postgres", postgres, args)
        finally:
            _drop(counted)
            _drop(postgres)
    bare = results[0][1]["rps"]
    print(f"\n{args.connections} connections, {args.seconds} s each, 2 server processes, wrk -t2")
    header = [("req/s", 10), ("x bare", 8), ("p50 ms", 9), ("p99 ms", 9), ("errors", 8)]
    header.append(("CPU us", 8))
    print(f"{'scenario':<28}" + "".join(f"{t:>{w}}" for t, w in header) + f"{'KV calls':>10}")
    for name, figures in results:
        cpu = f"{figures['cpu_us']:,.0f}" if "cpu_us" in figures else ""
        print(
            f"{name:<28}{figures['rps']:>10,.0f}{figures['rps'] / bare:>8.2f}"
            f"{figures['p50_ms']:>9.2f}{figures['p99_ms']:>9.2f}{figures['errors']:>8}"
            f"{cpu:>8}{calls.get(name, ''):>10}"
        )
    if args.json is not None:
        figures = {name: dict(row) for name, row in results}
        for name, count in calls.items():
            figures.setdefault(name, {})["kv_calls"] = count
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
