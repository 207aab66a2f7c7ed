"""Garbage collection rules through the SDK and raw HTTP, answered as lakeFS answers them."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server

RULES = lakefs_sdk.GarbageCollectionRules(
    default_retention_days=7,
    branches=[
        lakefs_sdk.GarbageCollectionRule(branch_id="main", retention_days=30),
        lakefs_sdk.GarbageCollectionRule(branch_id="dev", retention_days=0),
    ],
)


def _sorted(rules: lakefs_sdk.GarbageCollectionRules) -> list[tuple[str, int]]:
    return sorted((rule.branch_id, rule.retention_days) for rule in rules.branches)


def test_rules_are_set_read_and_deleted_through_the_sdk(sdk: LakeFSClient, repo: str) -> None:
    api = sdk.repositories_api
    with pytest.raises(ApiException) as missing:
        api.get_gc_rules(repo)
    assert missing.value.status == 404 and '"message":"not found"' in str(missing.value.body)
    api.set_gc_rules(repo, RULES)
    got = api.get_gc_rules(repo)
    assert got.default_retention_days == 7
    assert _sorted(got) == [("dev", 0), ("main", 30)]
    api.set_gc_rules(repo, lakefs_sdk.GarbageCollectionRules(default_retention_days=0, branches=[]))
    assert api.get_gc_rules(repo) == lakefs_sdk.GarbageCollectionRules(
        default_retention_days=0, branches=[]
    )
    api.delete_gc_rules(repo)
    with pytest.raises(ApiException) as gone:
        api.get_gc_rules(repo)
    assert gone.value.status == 404
    api.delete_gc_rules(repo)  # none to delete: still 204, as lakeFS


def test_the_deprecated_internal_routes_and_the_preflight(sdk: LakeFSClient, repo: str) -> None:
    internal = sdk.internal_api
    internal.set_garbage_collection_rules_preflight(repo)
    with pytest.warns(DeprecationWarning):  # the SDK's own warning: lakeFS deprecated them
        internal.internal_set_garbage_collection_rules(repo, RULES)
    with pytest.warns(DeprecationWarning):
        assert _sorted(internal.internal_get_garbage_collection_rules(repo)) == _sorted(RULES)
    assert _sorted(sdk.repositories_api.get_gc_rules(repo)) == _sorted(RULES)
    with pytest.warns(DeprecationWarning):
        internal.internal_delete_garbage_collection_rules(repo)
    with pytest.raises(ApiException) as gone:
        sdk.repositories_api.get_gc_rules(repo)
    assert gone.value.status == 404


def test_bad_rules_are_refused_and_change_nothing(http: httpx.Client, repo: str) -> None:
    path = f"/repositories/{repo}/settings/gc_rules"
    good = {"default_retention_days": 3, "branches": [{"branch_id": "main", "retention_days": 9}]}
    assert http.put(path, json=good).status_code == 204
    unknown_rule_field = {"branch_id": "m", "retention_days": 1, "y": 0}
    bodies: list[object] = [
        {"default_retention_days": -1, "branches": []},
        {"default_retention_days": 1, "branches": [{"branch_id": "main", "retention_days": -5}]},
        {"default_retention_days": 1, "branches": [], "extra": True},
        {"default_retention_days": 1, "branches": [unknown_rule_field]},
        {"default_retention_days": 1},
        {"default_retention_days": "1", "branches": []},
        {"default_retention_days": 1.5, "branches": []},
        {"default_retention_days": 1, "branches": [{"branch_id": "a/b", "retention_days": 1}]},
        {
            "default_retention_days": 1,
            "branches": [
                {"branch_id": "x", "retention_days": 1},
                {"branch_id": "x", "retention_days": 2},
            ],
        },
        [],
    ]
    for body in bodies:
        response = http.put(path, json=body)
        assert response.status_code == 400, (body, response.text)
    negative = http.put(path, json={"default_retention_days": -1, "branches": []})
    assert "negative retention" in negative.json()["message"]
    assert http.get(path).json() == good


def test_a_missing_repository_is_404_repository_not_found(http: httpx.Client) -> None:
    path = "/repositories/no-such-repo/settings/gc_rules"
    for response in (
        http.get(path),
        http.put(path, json={"default_retention_days": 1, "branches": []}),
        http.delete(path),
    ):
        assert response.status_code == 404
        assert response.json()["message"] == "repository not found"


def test_rules_do_not_survive_their_repository(
    server: Server, http: httpx.Client, repo: str
) -> None:
    path = f"/repositories/{repo}/settings/gc_rules"
    assert http.put(path, json={"default_retention_days": 5, "branches": []}).status_code == 204
    assert http.delete(f"/repositories/{repo}").status_code == 204
    body = {"name": repo, "storage_namespace": server.storage.namespace(f"{repo}-again")}
    again = http.post("/repositories", json=body)
    assert again.status_code == 201, again.text
    assert http.get(path).status_code == 404


def test_permissions_are_lakefs_retention_actions(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    auth = sdk.auth_api
    sdk.repositories_api.set_gc_rules(repo, RULES)
    reader, reader_policy = "gc-reader", "gc-rules-read"
    auth.create_policy(
        lakefs_sdk.Policy(
            id=reader_policy,
            statement=[
                lakefs_sdk.Statement(
                    effect="allow",
                    action=["retention:GetGarbageCollectionRules"],
                    resource=f"arn:lakefs:fs:::repository/{repo}",
                )
            ],
        )
    )
    auth.create_user(lakefs_sdk.UserCreation(id=reader))
    auth.attach_policy_to_user(reader, reader_policy)
    keys = auth.create_credentials(reader)
    client = server.sdk(keys.access_key_id, keys.secret_access_key)
    assert _sorted(client.repositories_api.get_gc_rules(repo)) == _sorted(RULES)
    denied_calls: list[Callable[[], object]] = [
        lambda: client.repositories_api.set_gc_rules(repo, RULES),
        lambda: client.repositories_api.delete_gc_rules(repo),
        lambda: client.internal_api.set_garbage_collection_rules_preflight(repo),
    ]
    for denied_call in denied_calls:
        with pytest.raises(ApiException) as denied:
            denied_call()
        assert denied.value.status == 401
    assert _sorted(sdk.repositories_api.get_gc_rules(repo)) == _sorted(RULES)
    # Without the policy, reading is denied too.
    auth.detach_policy_from_user(reader, reader_policy)
    with pytest.raises(ApiException) as denied_read:
        client.repositories_api.get_gc_rules(repo)
    assert denied_read.value.status == 401


def test_the_openapi_document_describes_the_operations(server: Server) -> None:
    document = httpx.get(f"{server.url}/api/v1/openapi.json").json()
    paths = document["paths"]
    rules = paths["/repositories/{repository}/settings/gc_rules"]
    assert {m: op["operationId"] for m, op in rules.items()} == {
        "get": "getGCRules",
        "put": "setGCRules",
        "delete": "deleteGCRules",
    }
    preflight = paths["/repositories/{repository}/gc/rules/set_allowed"]["get"]
    assert preflight["operationId"] == "setGarbageCollectionRulesPreflight"
    schema = document["components"]["schemas"]["GarbageCollectionRules"]
    assert set(schema["required"]) == {"default_retention_days", "branches"}
    assert "GarbageCollectionRule" in document["components"]["schemas"]
