"""The operator's server: `/metrics` scraped and parsed with prometheus_client's parser after
a known workload on two worker processes, the access log's lines, and a busy port."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kvlake.cli.serve import METRICS_FOLDER, MULTIPROCESS_ENV, metrics_folder
from tests.api.server import Server
from tests.cli.conftest import Cli
from tests.support import wait_until


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(
        tmp_path_factory.mktemp("metrics-server"), workers=2, env={"KVLAKE_LOG_FORMAT": "json"}
    )
    try:
        yield server
    finally:
        server.stop()


def samples(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def count(
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_what_every_worker_did(two_workers: Server, tmp_path: Path) -> None:
    before = samples(two_workers)
    cli = Cli(tmp_path, {
        "LAKECTL_SERVER_ENDPOINT_URL": two_workers.url,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    })  # fmt: skip
    repo = f"metrics-{uuid.uuid4().hex[:8]}"
    cli("repo", "create", f"lakefs://{repo}", f"local://{repo}").ok()
    source = tmp_path / "f"
    source.write_bytes(b"12345")
    created = samples(two_workers)
    for number in range(5):
        cli("fs", "upload", f"lakefs://{repo}/main/{number}", "-s", str(source)).ok()
    uploaded = samples(two_workers)
    for _ in range(3):
        cli("fs", "stat", f"lakefs://{repo}/main/missing").error(4)
    for _ in range(2):
        cli("fs", "cat", f"lakefs://{repo}/main/0").ok()
    after = samples(two_workers)

    def delta(name: str, **labels: str) -> float:
        return count(after, name, **labels) - count(before, name, **labels)

    assert delta("kvlake_requests_total", operation="createRepository", status="201") == 1
    assert delta("kvlake_requests_total", operation="uploadObject", status="201") == 5
    assert delta("kvlake_requests_total", operation="statObject", status="404") == 3
    assert delta("kvlake_request_duration_seconds_count", operation="uploadObject") == 5
    assert delta("kvlake_response_bytes_total", operation="uploadObject") > 0
    # Every upload reads the repository and branch records and writes a staged entry.
    assert delta("kvlake_kv_calls_total", driver="sqlite", call="get", outcome="ok") >= 10
    assert delta("kvlake_kv_calls_total", driver="sqlite", call="set", outcome="ok") >= 5
    assert delta("kvlake_kv_call_duration_seconds_count", driver="sqlite", call="get") >= 10
    # Blockstore calls, by adapter, call and outcome: a blob per upload, reads for cats.
    puts = ("kvlake_blockstore_calls_total", {"adapter": "local", "call": "put", "outcome": "ok"})
    assert count(uploaded, puts[0], **puts[1]) - count(created, puts[0], **puts[1]) == 5
    reads = {"adapter": "local", "call": "open_reader", "outcome": "ok"}
    name = "kvlake_blockstore_calls_total"
    # At least the two reads (the workers' background passes may read range files too).
    assert count(after, name, **reads) - count(uploaded, name, **reads) >= 2
    timed = ("kvlake_blockstore_call_duration_seconds_count", {"adapter": "local", "call": "put"})
    assert count(uploaded, timed[0], **timed[1]) - count(created, timed[0], **timed[1]) == 5
    assert count(after, "kvlake_deletion_pending", partition="0") >= 0
    assert ("kvlake_deletion_dead_letters", ()) in after


def test_the_access_log_has_a_json_line_per_request(two_workers: Server) -> None:
    marker = f"/api/v1/repositories/no-such-{uuid.uuid4().hex[:8]}"
    answered = httpx.get(
        f"{two_workers.url}{marker}",
        auth=("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"),
    )
    assert answered.status_code == 404

    def logged() -> list[dict[str, object]]:
        lines = [line for line in two_workers.output().splitlines() if marker in line]
        return [json.loads(line) for line in lines]

    wait_until(
        lambda: len(logged()) == 1, timeout=10, interval=0.1, message=lambda: two_workers.output()
    )
    line = logged()[0]
    assert line["user"] == "admin" and line["operation"] == "getRepository"
    assert line["status"] == 404 and line["method"] == "GET"
    assert line["bytes"] == len(answered.content)
    assert isinstance(line["duration"], float) and "time" in line


def test_a_busy_port_fails_before_serving(two_workers: Server, tmp_path: Path) -> None:
    operator = Cli(tmp_path, {"KVLAKE_DATA_DIR": str(tmp_path / "data")})
    busy = operator.process("serve", "--port", str(two_workers.port))
    busy.error(2, f"cannot listen on 127.0.0.1:{two_workers.port}", "--port")
    assert "serving" not in busy.stdout
    typed = operator("serve", "--port", "eighty")
    assert typed.code == 2 and "'eighty' is not a valid integer" in typed.stderr


def test_operations_are_counted_by_kind_and_status(two_workers: Server) -> None:
    repo = f"ops-{uuid.uuid4().hex[:8]}"
    with two_workers.http() as http:
        made = http.post(
            "/repositories", json={"name": repo, "storage_namespace": f"local://{repo}"}
        )
        assert made.status_code == 201, made.text
        for number in range(3):
            put = http.post(
                f"/repositories/{repo}/branches/main/objects",
                params={"path": f"p/{number}"},
                content=b"x",
                headers={"Content-Type": "application/octet-stream"},
            )
            assert put.status_code == 201, put.text
        started = http.put("/operations/bulk-delete", params={"path": f"lakefs://{repo}/main/p/"})
        assert started.status_code in (200, 201, 202), started.text
        operation = started.json()["operation_id"]

        def finished() -> bool:
            status = http.get(f"/operations/bulk-delete/status/{operation}").json()["status"]
            return status in ("completed", "completed_with_errors", "failed", "cancelled")

        wait_until(finished, timeout=60, interval=0.2, message=lambda: two_workers.output())
        kind = http.get(f"/operations/bulk-delete/status/{operation}").json()["kind"]
    found = samples(two_workers)
    assert count(found, "kvlake_operations", kind=kind, status="completed") >= 1
    assert ("kvlake_operations_running_items", (("counter", "deleted"),)) in found


def test_a_killed_servers_metrics_folder_is_removed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MULTIPROCESS_ENV, raising=False)
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process now
    left = tmp_path / METRICS_FOLDER / str(gone.pid)
    left.mkdir(parents=True)
    (left / "counter_123.db").write_bytes(b"samples of a SIGKILLed server")
    alive = tmp_path / METRICS_FOLDER / "1"  # init: another server that still runs
    alive.mkdir()
    with metrics_folder(tmp_path):
        own = Path(os.environ[MULTIPROCESS_ENV])
        assert own == tmp_path / METRICS_FOLDER / str(os.getpid()) and own.is_dir()
        assert not left.exists() and alive.is_dir()
    assert not own.exists() and MULTIPROCESS_ENV not in os.environ
