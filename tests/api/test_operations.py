"""The operations extension over HTTP: bulk delete, status, failures, cancel, object locks."""

from __future__ import annotations

import uuid

import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from kvlake.errors import InvalidInputError
from kvlake.uri import parse_uri
from tests.api.server import Server
from tests.support import wait_until

BULK = "/operations/bulk-delete"


def _upload(http: httpx.Client, repo: str, path: str, body: bytes = b"x") -> None:
    response = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": path}, content=body
    )
    assert response.status_code == 201, response.text


def _paths(http: httpx.Client, repo: str) -> list[str]:
    response = http.get(f"/repositories/{repo}/refs/main/objects/ls", params={"amount": 1000})
    return [row["path"] for row in response.json()["results"]]


def _finished(http: httpx.Client, operation_id: str) -> dict[str, object]:
    seen: dict[str, object] = {}

    def done() -> bool:
        response = http.get(f"{BULK}/status/{operation_id}")
        assert response.status_code == 200, response.text
        seen.update(response.json())
        return seen["status"] in ("completed", "completed_with_errors", "failed", "cancelled")

    wait_until(done, message=lambda: f"operation {operation_id} to finish: {seen}")
    return seen


def _user(server: Server, sdk: LakeFSClient, group: str) -> httpx.Client:
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user_id))
    sdk.auth_api.add_group_membership(group, user_id)
    key = sdk.auth_api.create_credentials(user_id)
    return server.http(key.access_key_id, key.secret_access_key)


def test_bulk_delete_runs_to_completion_and_reports(http: httpx.Client, repo: str) -> None:
    for i in range(7):
        _upload(http, repo, f"data/{i}")
    _upload(http, repo, "keep/1")
    lock = http.put(f"/repositories/{repo}/locks", params={"path": "data/3", "ttl": 600})
    assert lock.status_code == 200, lock.text
    created = http.put(
        BULK,
        params={"path": f"lakefs://{repo}/main/data/"},
        json={"commit": {"message": "bye", "metadata": {"why": "test"}}},
    )
    assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]
    status = _finished(http, operation_id)
    assert status["status"] == "completed_with_errors"
    assert (status["total_count"], status["deleted_count"], status["skipped_count"]) == (7, 6, 1)
    assert status["failed_count"] == 0 and status["commit_id"]
    assert _paths(http, repo) == ["data/3", "keep/1"]
    failures = http.get(f"{BULK}/status/{operation_id}/failures").json()
    assert [(f["path"], f["outcome"]) for f in failures["results"]] == [("data/3", "skipped")]
    listed = http.get("/operations", params={"status": "completed_with_errors"}).json()
    assert operation_id in [op["operation_id"] for op in listed["results"]]
    # The one status route of every kind shows what the bulk-delete view shows.
    one = http.get(f"/operations/{operation_id}")
    assert one.status_code == 200, one.text
    assert one.json() == status
    for query, found in (
        ({"repository": repo, "kind": "bulk-delete"}, True),
        ({"repository": f"{repo}-other"}, False),
        ({"creator": "admin", "repository": repo}, True),
        ({"creator": "someone-else"}, False),
        ({"kind": "gc-run", "repository": repo}, False),
    ):
        results = http.get("/operations", params=query).json()["results"]
        assert (operation_id in [op["operation_id"] for op in results]) is found, query


def test_a_metadata_filter_deletes_only_the_tagged_objects(http: httpx.Client, repo: str) -> None:
    for path, color in (("t/1", "blue"), ("t/2", "red"), ("t/3", "blue")):
        answer = http.post(
            f"/repositories/{repo}/branches/main/objects",
            params={"path": path},
            content=b"x",
            headers={"x-lakefs-meta-color": color},
        )
        assert answer.status_code == 201, answer.text
    created = http.put(
        BULK,
        params={"path": f"lakefs://{repo}/main/t/"},
        json={"filters": {"metadata": {"color": "blue"}}},
    )
    assert created.status_code == 202, created.text
    status = _finished(http, created.json()["operation_id"])
    assert (status["status"], status["deleted_count"]) == ("completed", 2)
    assert status["summary"] == "deleted 2 of 2, 0 failed, 0 skipped"
    assert _paths(http, repo) == ["t/2"]


def test_bad_requests_are_refused_and_record_nothing(http: httpx.Client, repo: str) -> None:
    _upload(http, repo, "a/1")
    before = http.get("/operations").json()["results"]
    cases = [
        ({"path": f"s3://{repo}/main/a/"}, None, 400),
        ({"path": f"lakefs://{repo}"}, None, 400),
        ({"path": f"lakefs://{repo}/nope/a/"}, None, 404),
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"min_size": 5, "max_size": 1}}, 400),
        ({"path": f"lakefs://{repo}/main/a/"}, {"surprise": True}, 400),
        # Issue 23: past what the record stores, a 400 and not the encoder's 500.
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"min_size": 2**64}}, 400),
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"max_size": 2**63}}, 400),
        # Issue 26: metadata filters are string maps.
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"metadata": {"a": 1}}}, 400),
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"metadata": ["a"]}}, 400),
        ({"path": f"lakefs://{repo}/main/a/"}, {"filters": {"metadata": "a=b"}}, 400),
    ]
    for query, body, status in cases:
        response = http.put(BULK, params=query, json=body)
        assert response.status_code == status, (query, body, response.text)
    assert http.get("/operations").json()["results"] == before
    assert http.get(f"{BULK}/status/01aaaaaaaaaaaaaaaaaaaaaaaa").status_code == 404
    assert http.get("/operations/01aaaaaaaaaaaaaaaaaaaaaaaa").status_code == 404
    for bad, named in (({"kind": "purge"}, "kind 'purge' is unknown"), ({"status": "done"}, "")):
        refused = http.get("/operations", params=bad)
        assert refused.status_code == 400 and named in refused.text, refused.text
    assert _paths(http, repo) == ["a/1"]


def test_another_user_cannot_see_or_cancel(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "a/1")
    with _user(server, sdk, "Developers") as developer, _user(server, sdk, "Developers") as other:
        _cannot_see(http, repo, developer, other)


def _cannot_see(
    http: httpx.Client, repo: str, developer: httpx.Client, other: httpx.Client
) -> None:
    created = developer.put(BULK, params={"path": f"lakefs://{repo}/main/a/"})
    assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]
    assert other.get(f"{BULK}/status/{operation_id}").status_code == 404
    assert other.get(f"/operations/{operation_id}").status_code == 404
    assert other.get(f"{BULK}/status/{operation_id}/failures").status_code == 404
    assert other.delete(f"/operations/{operation_id}").status_code == 404
    assert operation_id not in [
        o["operation_id"] for o in other.get("/operations").json()["results"]
    ]
    assert http.get(f"{BULK}/status/{operation_id}").status_code == 200  # the admin sees it
    _finished(developer, operation_id)


def test_delete_permission_is_checked_at_creation(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "a/1")
    with _user(server, sdk, "Viewers") as viewer:
        denied = viewer.put(BULK, params={"path": f"lakefs://{repo}/main/a/"})
    assert denied.status_code == 401, denied.text
    assert _paths(http, repo) == ["a/1"]


def test_another_owners_lock_refuses_uploads(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    with _user(server, sdk, "Developers") as developer:
        taken = developer.put(f"/repositories/{repo}/locks", params={"path": "p"})
    assert taken.status_code == 200, taken.text
    refused = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "p"}, content=b"x"
    )
    assert refused.status_code == 409 and "locked by" in refused.text
    locks = http.get(f"/repositories/{repo}/locks").json()["results"]
    assert [lock["path"] for lock in locks] == ["p"]
    assert http.delete(f"/repositories/{repo}/locks", params={"path": "p"}).status_code == 409
    assert (
        http.delete(f"/repositories/{repo}/locks", params={"path": "p", "force": True}).status_code
        == 204
    )
    _upload(http, repo, "p")


@pytest.mark.parametrize("dry_run", [True])
def test_dry_run_changes_nothing(http: httpx.Client, repo: str, dry_run: bool) -> None:
    _upload(http, repo, "a/1")
    created = http.put(BULK, params={"path": f"lakefs://{repo}/main/"}, json={"dry_run": dry_run})
    status = _finished(http, created.json()["operation_id"])
    assert status["deleted_count"] == 1 and status["dry_run"] is True
    assert _paths(http, repo) == ["a/1"]


def test_cancelling_a_finished_operation_answers_409_with_its_status(
    http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "a/1")
    created = http.put(BULK, params={"path": f"lakefs://{repo}/main/a/"})
    assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]
    assert _finished(http, operation_id)["status"] == "completed"
    refused = http.delete(f"/operations/{operation_id}")
    assert refused.status_code == 409, refused.text
    assert "'completed'" in refused.json()["message"]
    assert http.get(f"{BULK}/status/{operation_id}").json()["status"] == "completed"


def _named_user(server: Server, sdk: LakeFSClient, user_id: str, group: str) -> httpx.Client:
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user_id))
    sdk.auth_api.add_group_membership(group, user_id)
    key = sdk.auth_api.create_credentials(user_id)
    return server.http(key.access_key_id, key.secret_access_key)


def test_a_user_created_again_owns_none_of_the_old_ones_operations_or_locks(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    """Operations and locks are tied to the user's creation, not only its id: a new
    `alice` neither sees nor cancels the old alice's operation, nor writes under or
    releases her lock."""
    _upload(http, repo, "a/1")
    name = f"alice-{uuid.uuid4().hex[:8]}"
    with _named_user(server, sdk, name, "Developers") as old:
        taken = old.put(f"/repositories/{repo}/locks", params={"path": "b/1", "ttl": 600})
        assert taken.status_code == 200, taken.text
        assert taken.json()["owner"] == name  # shown by its id, as before
        created = old.put(BULK, params={"path": f"lakefs://{repo}/main/a/"}, json={"dry_run": True})
        assert created.status_code == 202, created.text
        operation_id = created.json()["operation_id"]
        assert old.get(f"{BULK}/status/{operation_id}").status_code == 200
    sdk.auth_api.delete_user(name)
    with _named_user(server, sdk, name, "Developers") as new:
        assert new.get(f"{BULK}/status/{operation_id}").status_code == 404
        assert new.delete(f"/operations/{operation_id}").status_code == 404
        listed = new.get("/operations").json()["results"]
        assert operation_id not in [o["operation_id"] for o in listed]
        refused = new.post(
            f"/repositories/{repo}/branches/main/objects", params={"path": "b/1"}, content=b"x"
        )
        assert refused.status_code == 409, refused.text
        released = new.delete(f"/repositories/{repo}/locks", params={"path": "b/1"})
        assert released.status_code == 409, released.text
    assert http.get(f"{BULK}/status/{operation_id}").status_code == 200  # the admin sees it
    _finished(http, operation_id)
    http.delete(f"/repositories/{repo}/locks", params={"path": "b/1", "force": "true"})


@pytest.mark.parametrize(
    "path", ["s3://{repo}/main/a/", "lakefs://{repo}", "lakefs:///main/a/", "lakefs://{repo}/"]
)
def test_a_bad_path_is_refused_in_the_uri_parsers_words(
    http: httpx.Client, repo: str, path: str
) -> None:
    """The API says what the CLI and the Spark source say of the same URI (kvlake/uri.py)."""
    path = path.format(repo=repo)
    with pytest.raises(InvalidInputError) as parsed:
        parse_uri(path, path=True)
    response = http.put(BULK, params={"path": path})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == str(parsed.value)
    assert "lakefs://<repository>/<ref>[/<path>]" in response.json()["message"]
