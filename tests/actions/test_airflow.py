"""Airflow hooks against a local HTTP server playing Airflow's REST API: a DAG run triggered
with lakeFS's body and basic auth, waited for, failing a pre-commit gate when it fails."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kvlake.actions import HookFailedError, airflow
from kvlake.actions.airflow import call_airflow
from kvlake.actions.records import AirflowHook
from kvlake.blockstore import BlockStore
from kvlake.errors import HookAbortedError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from tests.support import backends
from tests.support.lakes import lake_on


class FakeAirflow:
    """Airflow's `POST /api/v1/dags/{dag}/dagRuns` and `GET .../dagRuns/{run}` on loopback.

    A triggered run reports `states` in turn to each read (the last one repeats)."""

    def __init__(self) -> None:
        self.triggers: list[tuple[str, str, dict[str, Any]]] = []
        """(path, Authorization header, body) of every trigger."""
        self.reads: list[str] = []
        self.trigger_status = 200
        self.states = ["running", "success"]
        self.read_delay = 0.0
        """Seconds each read waits before answering."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.triggers.append((self.path, self.headers["Authorization"], body))
                answer = {"dag_run_id": body["dag_run_id"], "state": "queued"}
                self._answer(fake.trigger_status, answer)

            def do_GET(self) -> None:  # noqa: N802 -- http.server's name
                fake.reads.append(self.path)
                time.sleep(fake.read_delay)
                index = min(len(fake.reads), len(fake.states)) - 1
                self._answer(200, {"dag_run_id": self.path.rsplit("/", 1)[1],
                                   "state": fake.states[index]})  # fmt: skip

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeAirflow]:
    fake = FakeAirflow()
    yield fake
    fake.close()


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(airflow, "POLL_INTERVAL", 0.01)


def _hook(port: int, *, host: str = "127.0.0.1", **fields: Any) -> AirflowHook:
    values: dict[str, Any] = {
        "url": f"http://{host}:{port}/airflow",
        "dag_id": "example dag",
        "username": "admin",
        "password": "pw",
        "timeout": 10.0,
    }
    values.update(fields)
    return AirflowHook(**values)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_trigger_posts_lakefs_s_body_with_basic_auth(fake: FakeAirflow) -> None:
    hook = _hook(
        fake.port,
        password="{{ ENV.LAKEFSACTION_AIRFLOW_SECRET }}",
        dag_conf=(("some", "additional_conf"),),
    )
    event = {"event_type": "post-commit", "repository_id": "repo", "commit_id": "c1"}
    output = call_airflow(
        hook,
        event,
        dag_run_id="lakeFS_hook_dag_run1",
        allowed=(),
        environ={"LAKEFSACTION_AIRFLOW_SECRET": "s3cret"},
    )
    ((path, authorization, body),) = fake.triggers
    assert path == "/airflow/api/v1/dags/example%20dag/dagRuns"
    assert authorization == _basic("admin", "s3cret")
    assert body == {
        "dag_run_id": "lakeFS_hook_dag_run1",
        "conf": {"some": "additional_conf", "lakeFS_event": event},
    }
    assert fake.reads == []  # wait_for_dag is off: triggered is enough
    assert "Password: *******" in output and "s3cret" not in output


def test_a_missing_environment_variable_fails_before_any_request(fake: FakeAirflow) -> None:
    hook = _hook(fake.port, password="{{ ENV.LAKEFSACTION_NOT_SET }}")
    with pytest.raises(HookFailedError, match="'LAKEFSACTION_NOT_SET' not found"):
        call_airflow(hook, {}, dag_run_id="r", allowed=(), environ={})
    assert fake.triggers == []


def test_wait_for_dag_polls_until_the_run_ends(fake: FakeAirflow) -> None:
    fake.states = ["queued", "running", "success"]
    output = call_airflow(
        _hook(fake.port, wait_for_dag=True), {}, dag_run_id="lakeFS_hook_d_r", allowed=()
    )
    assert fake.reads == ["/airflow/api/v1/dags/example%20dag/dagRuns/lakeFS_hook_d_r"] * 3
    assert "DAG run state: success" in output

    fake.reads.clear()
    fake.states = ["running", "failed"]
    with pytest.raises(HookFailedError, match="airflow hook DAG failed.*state 'failed'"):
        call_airflow(_hook(fake.port, wait_for_dag=True), {}, dag_run_id="r2", allowed=())
    assert len(fake.reads) == 2


class SleeplessClock:
    """The hook's clock, advanced only by its sleeps between polls: the deadline passes
    after a fixed number of polls however slowly the machine answers them."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_run_that_never_ends_times_out(
    fake: FakeAirflow, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.states = ["running"]
    monkeypatch.setattr(airflow, "time", SleeplessClock())
    monkeypatch.setattr(airflow, "POLL_INTERVAL", 5.0)  # each request may take 5 real seconds
    with pytest.raises(HookFailedError, match=r"did not end within 30s \(timeout\)"):
        call_airflow(
            _hook(fake.port, wait_for_dag=True, timeout=30.0), {}, dag_run_id="r", allowed=()
        )
    # Polls every POLL_INTERVAL until the next would pass the deadline: 30 / 5 - 1.
    assert len(fake.reads) == int(30.0 / airflow.POLL_INTERVAL) - 1


def test_a_poll_cut_short_by_the_deadline_reports_the_run_did_not_end(
    fake: FakeAirflow,
) -> None:
    fake.states = ["running"]
    fake.read_delay = 10.0  # the poll outlives the deadline; the trigger has 3 s to answer
    with pytest.raises(HookFailedError, match=r"did not end within 3s \(timeout\)") as failed:
        call_airflow(
            _hook(fake.port, wait_for_dag=True, timeout=3.0), {}, dag_run_id="r", allowed=()
        )
    assert "GET http://127.0.0.1" in failed.value.output
    assert len(fake.reads) == 1


def test_a_trigger_not_answered_200_fails(fake: FakeAirflow) -> None:
    fake.trigger_status = 409  # Airflow's answer to a dag_run_id it already has
    with pytest.raises(HookFailedError, match=r"airflow hook request failed \(status code: 409\)"):
        call_airflow(_hook(fake.port), {}, dag_run_id="r", allowed=())


def test_a_host_not_allowed_is_never_called(fake: FakeAirflow) -> None:
    # 0.0.0.0 reaches this machine's listeners on Linux, yet is no loopback address.
    hook = _hook(fake.port, host="0.0.0.0")
    with pytest.raises(HookFailedError, match="airflow host '0.0.0.0' is not allowed"):
        call_airflow(hook, {}, dag_run_id="r", allowed=())
    assert fake.triggers == []
    call_airflow(hook, {}, dag_run_id="r", allowed=frozenset({"0.0.0.0"}))
    assert len(fake.triggers) == 1


GATE = """name: dag gate
on:
  pre-commit:
    branches: [main]
hooks:
  - id: run_checks
    type: airflow
    properties:
      url: http://127.0.0.1:{port}
      dag_id: checks
      username: admin
      password: admin
      dag_conf:
        table: users
      wait_for_dag: true
      timeout: 30s
"""


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with lake_on(lake_blocks) as lake:
        yield lake


def _repository(lake: Lake, port: int) -> Repository:
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        "repo", storage_namespace=backends.namespace(scheme, "a")
    )
    action = GATE.format(port=port).encode()
    lake.catalog.upload(repository, "main", "_lakefs_actions/gate.yaml", io.BytesIO(action))
    return repository


def test_a_failed_dag_run_refuses_the_commit(lake: Lake, fake: FakeAirflow) -> None:
    repository = _repository(lake, fake.port)
    head = lake.graveler.get_branch(repository, "main").commit_id
    fake.states = ["running", "failed"]
    with pytest.raises(HookAbortedError) as refused:
        lake.graveler.commit(repository, "main", committer="ana", message="m")
    message = str(refused.value)
    assert message.startswith("pre-commit hook aborted, run id '")
    assert (
        "hook run id '0000_0000' failed on action 'dag gate' hook 'run_checks': action failed:"
        " airflow hook DAG failed" in message
    )
    assert lake.graveler.get_branch(repository, "main").commit_id == head  # nothing committed
    ((path, _, body),) = fake.triggers
    assert path == "/api/v1/dags/checks/dagRuns"
    run_id = message.split("'")[1]
    assert body["dag_run_id"] == f"lakeFS_hook_run_checks_{run_id}"
    event = body["conf"]["lakeFS_event"]
    assert body["conf"]["table"] == "users"
    assert (event["event_type"], event["branch_id"], event["committer"]) == (
        "pre-commit",
        "main",
        "ana",
    )
    (run,) = lake.actions.runs.scan(repository)
    assert (run.run_id, run.passed) == (run_id, False)

    fake.reads.clear()
    fake.states = ["success"]
    commit_id = lake.graveler.commit(repository, "main", committer="ana", message="m")
    assert lake.graveler.get_branch(repository, "main").commit_id == commit_id
