"""Real responses of a sample of operations validated against lakeFS's API description.

The field-by-field comparison (`test_lakefs_fields.py`) checks kvlake's document;
this checks what the server actually sends. schemathesis loads lakeFS's own
`swagger.yml` (vendored in `tests/data/lakefs/`) and calls each sampled read
operation on the suite's server, with its path pinned to real things (a
repository with commits, a tag, a branch with staged changes) and its query
generated; each response must match lakeFS's schema for its status, as lakeFS
declares it (required fields, types, values, no `null` where lakeFS has none).
Bounded: a fixed seed, derandomized generation, a few examples per operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import httpx
import hypothesis
import pytest
import requests
import schemathesis
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.api.lakefs_spec import load_lakefs
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

SAMPLE: Final = frozenset(
    {
        "diffBranch",
        "diffRefs",
        "findMergeBase",
        "getBranch",
        "getCommit",
        "getConfig",
        "getCurrentUser",
        "getLakeFSVersion",
        "getRepository",
        "getStorageConfig",
        "getTag",
        "listBranches",
        "listGroups",
        "listObjects",
        "listPolicies",
        "listRepositories",
        "listTags",
        "listUsers",
        "logCommits",
        "statObject",
    }
)
"""Read operations whose answers carry most of lakeFS's shapes (commits, diffs, objects,
refs, users, configuration); reads only, so the suite's shared server is left as it was."""
AUTH: Final = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)
SETTINGS: Final = hypothesis.settings(
    max_examples=3,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)


@pytest.fixture
def pinned(server: Server, http: httpx.Client, repo: str) -> Iterator[dict[str, str]]:
    """A repository with two commits, a tag and a branch with staged changes; the path
    parameters that name them."""
    objects = f"/repositories/{repo}/branches/main/objects"
    for path, data in (("a/one.csv", b"1,2\n"), ("a/two.csv", b"3\n"), ("gone", b"x")):
        assert http.post(objects, params={"path": path}, content=data).status_code == 201
    commits = f"/repositories/{repo}/branches/main/commits"
    assert http.post(commits, json={"message": "first", "metadata": {"k": "v"}}).is_success
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    http.delete(objects, params={"path": "gone"})
    http.post(objects, params={"path": "a/three"}, content=b"3")
    second = http.post(commits, json={"message": "second"}).json()["id"]
    http.post(f"/repositories/{repo}/tags", json={"id": "v1", "ref": second})
    dev = f"/repositories/{repo}/branches/dev/objects"
    http.post(dev, params={"path": "staged"}, content=b"s")
    http.delete(dev, params={"path": "gone"})
    yield {
        "repository": repo,
        "branch": "dev",
        "ref": "main",
        "leftRef": "dev",
        "rightRef": "main",
        "sourceRef": "dev",
        "destinationBranch": "main",
        "commitId": second,
        "tag": "v1",
    }


def _validate(
    server: Server, pinned: dict[str, str], doc: dict[str, Any], sample: frozenset[str]
) -> tuple[dict[str, str], dict[str, set[int]]]:
    """Failures (by operation and kind) and statuses seen, for `sample`'s operations of `doc`."""
    schema = schemathesis.openapi.from_dict(doc)
    schema.config.update(base_url=f"{server.url}/api/v1")
    failures: dict[str, str] = {}
    statuses: dict[str, set[int]] = {}
    with requests.Session() as session:
        for result in schema.get_all_operations():
            if isinstance(result, Err):
                raise result.err()
            operation = result.ok()
            if operation.definition.raw.get("operationId") not in sample:
                continue
            statuses[operation.label] = set()

            @hypothesis.given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
            @hypothesis.settings(SETTINGS)
            def check(case: schemathesis.Case[Any]) -> None:
                path = case.path_parameters or {}
                case.path_parameters = path | {k: v for k, v in pinned.items() if k in path}
                if "path" in (case.query or {}):
                    case.query = {**(case.query or {}), "path": "a/one.csv"}
                try:
                    response = case.call_and_validate(
                        session=session,
                        checks=[not_a_server_error, response_schema_conformance],
                        auth=AUTH,
                        timeout=60,
                    )
                    statuses[case.operation.label].add(response.status_code)
                except FailureGroup as group:
                    # Collected, not raised: one run reports every failing operation at once.
                    for failure in group.exceptions:
                        failures.setdefault(
                            f"{case.operation.label}: {failure.title}", str(failure)
                        )

            check()
    return failures, statuses


def test_sampled_responses_match_lakefs_schemas(server: Server, pinned: dict[str, str]) -> None:
    failures, statuses = _validate(server, pinned, load_lakefs(), SAMPLE)
    assert len(statuses) == len(SAMPLE)
    assert not failures, "\n\n".join(f"{k}\n{v}" for k, v in sorted(failures.items()))
    # Every sampled operation answered 200 at least once: its success body was validated.
    assert all(200 in codes for codes in statuses.values()), statuses


def test_the_check_finds_a_field_kvlake_does_not_send(
    server: Server, pinned: dict[str, str]
) -> None:
    """The check can fail: with a required field added to lakeFS's Diff, diffRefs breaks it."""
    doc = load_lakefs()
    diff = doc["components"]["schemas"]["Diff"]
    diff["properties"]["lakefs_only"] = {"type": "string"}
    diff["required"] = [*diff["required"], "lakefs_only"]
    failures, _ = _validate(server, pinned, doc, frozenset({"diffRefs"}))
    assert any(key.startswith("GET /repositories/{repository}/refs/") for key in failures)
    assert any("lakefs_only" in text for text in failures.values()), failures
