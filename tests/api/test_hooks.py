"""Actions against a real server: `_lakefs_actions/` webhooks called on a local HTTP server.

The receiver is a real HTTP server on loopback (the only host webhooks reach
by default). It records every event and answers as the test tells it; the
pre-merge gate reads a Parquet file through the API while the merge waits,
as a user's quality gate does. Commits and merges go through the official
`lakefs` wrapper, which must see lakeFS's status codes and texts.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import lakefs
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lakefs.exceptions import ServerException

from tests.api.server import Server

Answer = Callable[[dict[str, Any], str], int]
"""Given an event and the request path, the status to answer."""


class Receiver:
    """A loopback HTTP server that records webhook calls and answers with `answer`."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.answer: Answer = lambda event, path: 200
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                event = json.loads(body)
                receiver.events.append(event)
                receiver.paths.append(self.path)
                receiver.headers.append(dict(self.headers))
                if self.path.startswith("/hang"):
                    receiver.release.wait(30)  # longer than the hook's timeout
                status = receiver.answer(event, self.path)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def _upload(http: httpx.Client, repo: str, branch: str, path: str, data: bytes) -> None:
    response = http.post(
        f"/repositories/{repo}/branches/{branch}/objects",
        params={"path": path},
        files={"content": ("file", data)},
    )
    assert response.status_code == 201, response.text


def _action(http: httpx.Client, repo: str, branch: str, name: str, text: str) -> None:
    _upload(http, repo, branch, f"_lakefs_actions/{name}.yaml", text.encode())


def _commit(http: httpx.Client, repo: str, branch: str, message: str = "m") -> httpx.Response:
    return http.post(f"/repositories/{repo}/branches/{branch}/commits", json={"message": message})


def _parquet(columns: dict[str, list[int]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def test_pre_merge_gate_reads_parquet_through_the_api(
    server: Server, http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "gate",
        f"""name: schema gate
description: refuse tables without user_id
on:
  pre-merge:
    branches: [main]
hooks:
  - id: check_schema
    type: webhook
    properties:
      url: {receiver.url}/gate
      timeout: 20s
""",
    )
    assert _commit(http, repo, "main", "add the gate").status_code == 201

    def gate(event: dict[str, Any], path: str) -> int:
        # The webhook reads the source ref's table through the API while the merge waits.
        with server.http() as client:
            data = client.get(
                f"/repositories/{event['repository_id']}/refs/{event['source_ref']}/objects",
                params={"path": "tables/users.parquet"},
            ).content
        names = pq.read_schema(io.BytesIO(data)).names
        return 200 if "user_id" in names else 400

    receiver.answer = gate
    http.post(f"/repositories/{repo}/branches", json={"name": "etl", "source": "main"})
    _upload(http, repo, "etl", "tables/users.parquet", _parquet({"name_id": [1, 2]}))
    assert _commit(http, repo, "etl").status_code == 201
    main_before = http.get(f"/repositories/{repo}/branches/main").json()["commit_id"]

    client = server.client()
    source = lakefs.Repository(repo, client=client).branch("etl")
    with pytest.raises(ServerException) as refused:
        source.merge_into("main")
    assert refused.value.status_code == 412
    message = refused.value.body["message"]
    assert message.startswith("pre-merge hook aborted, run id '")
    assert (
        "hook run id '0000_0000' failed on action 'schema gate' hook 'check_schema':"
        " action failed: webhook request failed (status code: 400)" in message
    )
    # Nothing changed: main is where it was.
    assert http.get(f"/repositories/{repo}/branches/main").json()["commit_id"] == main_before

    _upload(http, repo, "etl", "tables/users.parquet", _parquet({"user_id": [1, 2]}))
    assert _commit(http, repo, "etl", "fix the schema").status_code == 201
    merged = source.merge_into("main")
    assert http.get(f"/repositories/{repo}/branches/main").json()["commit_id"] == merged
    assert [e["event_type"] for e in receiver.events] == ["pre-merge", "pre-merge"]
    assert receiver.events[-1]["merge_source"] == "etl"
    assert receiver.events[-1]["branch_id"] == "main"


def test_post_commit_receives_one_event_per_commit_with_every_field(
    http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "notify",
        f"""name: notify
on:
  post-commit:
    branches: ["ma*"]
hooks:
  - id: notify_catalog
    type: webhook
    properties:
      url: {receiver.url}/commits
      query_params:
        team: data
        tags: [a, b]
      headers:
        X-Token: secret-token
""",
    )
    first = http.post(
        f"/repositories/{repo}/branches/main/commits",
        json={"message": "first", "metadata": {"owner": "ana"}},
    )
    assert first.status_code == 201, first.text
    _upload(http, repo, "main", "a.txt", b"a")
    second = _commit(http, repo, "main", "second")
    assert second.status_code == 201
    assert len(receiver.events) == 2  # exactly one per commit
    event = receiver.events[0]
    commit_id = first.json()["id"]
    assert event["event_type"] == "post-commit"
    assert event["action_name"] == "notify" and event["hook_id"] == "notify_catalog"
    assert event["repository_id"] == repo and event["branch_id"] == "main"
    assert event["commit_id"] == commit_id and event["source_ref"] == commit_id
    assert event["commit_message"] == "first" and event["committer"] == "admin"
    assert event["commit_metadata"] == {"owner": "ana"}
    assert time.strptime(event["event_time"], "%Y-%m-%dT%H:%M:%SZ")
    assert "tag_id" not in event and "merge_source" not in event  # empty: left out
    assert receiver.events[1]["commit_id"] == second.json()["id"]
    assert receiver.paths[0] == "/commits?team=data&tags=a&tags=b"
    assert receiver.headers[0]["X-Token"] == "secret-token"
    # A branch the pattern does not match runs nothing.
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    _upload(http, repo, "dev", "b.txt", b"b")
    assert _commit(http, repo, "dev").status_code == 201
    assert len(receiver.events) == 2


def test_post_hook_failure_is_recorded_and_never_undoes(
    http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "after",
        f"""name: after
on:
  post-create-branch:
hooks:
  - id: fails
    type: webhook
    properties:
      url: {receiver.url}/x
""",
    )
    receiver.answer = lambda event, path: 500
    assert _commit(http, repo, "main").status_code == 201
    created = http.post(f"/repositories/{repo}/branches", json={"name": "b1", "source": "main"})
    assert created.status_code == 201
    assert http.get(f"/repositories/{repo}/branches/b1").status_code == 200
    assert [e["event_type"] for e in receiver.events] == ["post-create-branch"]
    runs = http.get(f"/repositories/{repo}/actions/runs").json()["results"]
    assert [(r["event_type"], r["status"]) for r in runs] == [("post-create-branch", "failed")]


def test_invalid_action_file_fails_the_commit_naming_file_and_line(
    http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "bad",
        """name: bad
on:
  pre-commit:
hooks:
  - id: h1
    type: shell
""",
    )
    refused = _commit(http, repo, "main")
    assert refused.status_code == 412
    message = refused.json()["message"]
    assert "action file '_lakefs_actions/bad.yaml' line 6" in message
    assert "type 'shell' unknown" in message
    assert http.get(f"/repositories/{repo}/branches/main/diff").json()["results"]  # still staged


def test_hanging_webhook_times_out_and_a_disallowed_host_is_refused(
    http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "slow",
        f"""name: slow
on:
  pre-create-tag:
hooks:
  - id: hangs
    type: webhook
    properties:
      url: {receiver.url}/hang
      timeout: 1s
""",
    )
    _action(
        http,
        repo,
        "main",
        "internal",
        """name: internal
on:
  pre-delete-branch:
hooks:
  - id: metadata_service
    type: webhook
    properties:
      url: http://169.254.169.254/latest/meta-data
""",
    )
    commit = _commit(http, repo, "main").json()["id"]
    tag = http.post(f"/repositories/{repo}/tags", json={"id": "v1", "ref": commit})
    assert tag.status_code == 412
    assert "(timeout)" in tag.json()["message"]
    assert http.get(f"/repositories/{repo}/tags/v1").status_code == 404
    receiver.release.set()

    http.post(f"/repositories/{repo}/branches", json={"name": "b1", "source": "main"})
    deleted = http.delete(f"/repositories/{repo}/branches/b1")
    assert deleted.status_code == 412
    assert "webhook host '169.254.169.254' is not allowed" in deleted.json()["message"]
    assert http.get(f"/repositories/{repo}/branches/b1").status_code == 200
    assert len(receiver.events) == 1  # the hanging call only; nothing reached the other host


def test_runs_endpoints_answer_recorded_runs(
    server: Server, http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    _action(
        http,
        repo,
        "main",
        "audit",
        f"""name: audit
on:
  pre-commit:
  post-commit:
  pre-revert:
hooks:
  - id: first
    type: webhook
    properties:
      url: {receiver.url}/a
  - id: second
    type: webhook
    properties:
      url: {receiver.url}/b
""",
    )
    receiver.answer = lambda event, path: 500 if event["event_type"] == "pre-revert" else 200
    commit_id = _commit(http, repo, "main", "with audit").json()["id"]
    reverted = http.post(
        f"/repositories/{repo}/branches/main/revert", json={"ref": commit_id, "parent_number": 1}
    )
    assert reverted.status_code == 412
    assert reverted.json()["message"].startswith("pre-revert hook aborted")
    sdk = server.sdk()
    runs = sdk.actions_api.list_repository_runs(repo).results
    # Newest first: the refused revert, then the commit's post and pre runs.
    assert [(r.event_type, r.status) for r in runs] == [
        ("pre-revert", "failed"),
        ("post-commit", "completed"),
        ("pre-commit", "completed"),
    ]
    assert runs[1].commit_id == commit_id and runs[1].branch == "main"
    by_commit = sdk.actions_api.list_repository_runs(repo, commit=commit_id).results
    assert [r.event_type for r in by_commit] == ["post-commit"]
    assert sdk.actions_api.list_repository_runs(repo, branch="other").results == []
    page = sdk.actions_api.list_repository_runs(repo, amount=1)
    assert page.pagination.has_more and page.results[0].run_id == runs[0].run_id
    after = sdk.actions_api.list_repository_runs(repo, after=page.pagination.next_offset)
    assert [r.run_id for r in after.results] == [r.run_id for r in runs[1:]]

    run = sdk.actions_api.get_run(repo, runs[0].run_id)
    assert run.event_type == "pre-revert" and run.status == "failed"
    hooks = sdk.actions_api.list_run_hooks(repo, runs[0].run_id).results
    # lakeFS stops an action at its first failing hook.
    assert [(h.hook_run_id, h.hook_id, h.status) for h in hooks] == [
        ("0000_0000", "first", "failed")
    ]
    output = sdk.actions_api.get_run_hook_output(repo, runs[0].run_id, "0000_0000")
    assert b"webhook request failed (status code: 500)" in bytes(output)
    keys = server.storage.keys(server.storage.namespace(repo))
    assert f"_lakefs/actions/log/{runs[0].run_id}/0000_0000.log" in keys
    assert f"_lakefs/actions/log/{runs[0].run_id}/run.manifest" in keys


def test_a_pre_commit_hook_holds_no_branch_lock(
    server: Server, http: httpx.Client, repo: str, receiver: Receiver
) -> None:
    """The webhook writes to the branch being committed while the commit waits for it: a
    hook run under a branch lock or inside the commit's compare-and-swap would deadlock
    here (the write waits for the commit, the commit for the hook)."""
    _action(
        http,
        repo,
        "main",
        "writer",
        f"""name: writer
on:
  pre-commit:
hooks:
  - id: writes
    type: webhook
    properties:
      url: {receiver.url}/w
      timeout: 20s
""",
    )
    statuses: list[int] = []

    def write_meanwhile(event: dict[str, Any], path: str) -> int:
        with server.http() as client:
            response = client.post(
                f"/repositories/{event['repository_id']}/branches/main/objects",
                params={"path": "written-by-hook.txt"},
                files={"content": ("file", b"hook")},
            )
        statuses.append(response.status_code)
        return 200

    receiver.answer = write_meanwhile
    assert _commit(http, repo, "main").status_code == 201
    assert statuses == [201]
    listed = http.get(f"/repositories/{repo}/refs/main/objects/ls").json()["results"]
    assert "written-by-hook.txt" in [entry["path"] for entry in listed]
