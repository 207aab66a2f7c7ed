"""One test per difference from lakeFS's API description that docs/api.md documents.

`test_lakefs_fields.py` allows each difference by naming a heading of docs/api.md
("Differences from lakeFS's API description"); these tests pin what each heading
says the server does, on the suite's servers, so a documented reason cannot go
stale while its allow-list entry still matches.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.server import Server


def _nulls(value: Any, where: str = "") -> list[str]:
    """Where `value` (parsed JSON) holds a null."""
    if value is None:
        return [where or "."]
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _nulls(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [n for i, v in enumerate(value) for n in _nulls(v, f"{where}[{i}]")]
    return []


def test_error_statuses_lakefs_lists_carry_its_error_body(server: Server) -> None:
    """ "Error statuses and `default`": a 401 kvlake's document leaves to `default`."""
    answer = httpx.get(f"{server.url}/api/v1/repositories", timeout=60)
    assert answer.status_code == 401
    assert isinstance(answer.json()["message"], str)


def test_an_error_has_lakefs_message_and_kvlakes_detail(http: httpx.Client, repo: str) -> None:
    """ "The error's `detail`"."""
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    body = http.post(f"/repositories/{repo}/refs/dev/merge/main", json={}).json()
    assert body["message"] == "no changes" and "allow_empty" in body["detail"]


def test_requests_may_send_null_and_responses_never_do(http: httpx.Client, repo: str) -> None:
    """ "Requests may send `null` for an optional field": null is "not given"; responses
    leave absent optional fields out."""
    objects = f"/repositories/{repo}/branches/main/objects"
    for path in ("a", "b"):
        assert http.post(objects, params={"path": path}, content=b"1").status_code == 201
    commit = http.post(
        f"/repositories/{repo}/branches/main/commits",
        json={"message": "m", "metadata": None, "date": None},
    )
    assert commit.status_code == 201, commit.text
    http.delete(objects, params={"path": "a"})
    answers = [
        http.get(
            f"/repositories/{repo}/refs/main/objects/stat",
            params={"path": "b", "user_metadata": "false"},
        ),
        http.get(f"/repositories/{repo}/branches/main/diff"),
        http.get(f"/repositories/{repo}/refs/main/objects/ls", params={"user_metadata": "false"}),
        http.get("/auth/users"),
        http.get("/auth/groups"),
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert _nulls(answer.json()) == [], answer.url


def test_a_commit_always_carries_generation_and_metadata(http: httpx.Client, repo: str) -> None:
    """ "Fields kvlake always sends"."""
    commit = http.get(f"/repositories/{repo}/commits/main").json()
    assert commit["metadata"] == {} and commit["generation"] == 1


def test_what_kvlake_does_not_have_is_refused_or_absent(http: httpx.Client) -> None:
    """ "What kvlake does not have": policy conditions, update checks."""
    statement = {"action": ["fs:ReadObject"], "effect": "allow", "resource": "*"}
    conditioned = {"id": "p-conditioned", "statement": [{**statement, "condition": {}}]}
    refused = http.post("/auth/policies", json=conditioned)
    assert refused.status_code == 400 and "condition" in refused.text
    version = http.get("/config/version").json()
    assert "kvlake_version" in version and "upgrade_url" not in version


def test_a_feature_kvlake_has_off_answers_501(http: httpx.Client) -> None:
    """ "Operations answered as lakeFS with the feature off"."""
    answer = http.post("/sts/login", json={"code": "c", "state": "s", "redirect_uri": "r"})
    assert answer.status_code == 501


def test_a_body_lakefs_calls_optional_is_required(http: httpx.Client) -> None:
    """ "Bodies kvlake requires": no body is a 400 that says so, and nothing is made."""
    answer = http.post("/auth/users")
    assert answer.status_code == 400 and "body" in answer.json()["message"].lower()


def test_values_the_document_leaves_free_are_checked(http: httpx.Client, repo: str) -> None:
    """ "Values and types the document does not spell out"."""
    metadata = http.get(f"/repositories/{repo}/metadata/object/bogus/some-id")
    assert metadata.status_code == 400
    namespace = http.get(f"/repositories/{repo}").json()["storage_namespace"]
    part = http.put(
        f"/repositories/{repo}/branches/main/staging/pmpu/upload-id/parts/abc",
        params={"path": "x"},
        json={"physical_address": f"{namespace}/data/x"},
    )
    assert part.status_code == 400 and "part number" in part.text
    merge = http.post(f"/repositories/{repo}/refs/main/merge/main", json={"strategy": "bogus"})
    assert merge.status_code == 400


def test_status_codes_that_follow_lakefs_server_not_its_document(
    http: httpx.Client, repo: str
) -> None:
    """ "Status codes and bodies of a few operations": 204 for metadata updates, and a merge
    conflict is 409 with the Error body."""
    objects = f"/repositories/{repo}/branches/main/objects"
    http.post(objects, params={"path": "k"}, content=b"base")
    http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "base"})
    updated = http.put(
        f"{objects}/stat/user_metadata", params={"path": "k"}, json={"set": {"a": "b"}}
    )
    assert updated.status_code == 204, updated.text
    http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "meta"})
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    for branch, text in (("dev", b"dev"), ("main", b"main")):
        path = f"/repositories/{repo}/branches/{branch}/objects"
        http.post(path, params={"path": "k"}, content=text)
        http.post(f"/repositories/{repo}/branches/{branch}/commits", json={"message": branch})
    conflict = http.post(f"/repositories/{repo}/refs/dev/merge/main", json={})
    assert conflict.status_code == 409 and conflict.json()["message"] == "conflict found"
