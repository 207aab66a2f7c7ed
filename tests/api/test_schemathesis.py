"""Schemathesis, driven by the served OpenAPI document, finds no server error (5xx).

One real server (SQLite, its own data directory) serves `/api/v1/openapi.json`;
schemathesis loads it and runs property-based cases, valid and invalid, against
every operation as the admin (HTTP Basic). Each response must not be a 5xx, and
a response whose status the operation declares must match the declared schema.
The run is bounded and deterministic: a fixed seed, derandomized generation and
a few examples per operation. `path.repository` is pinned to a real repository
with a `main` branch, so operations inside a repository get past the lookup.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import httpx
import hypothesis
import pytest
import requests
import schemathesis
from schemathesis import APIOperation, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.api.conftest import SERVERS, served
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

REPOSITORY = "fuzzed"
PINNED = {
    "repository": REPOSITORY,
    "branch": "main",
    "ref": "main",
    "sourceRef": "main",
    "leftRef": "main",
    "destinationBranch": "main",
}
"""Valid cases use the real repository and its `main` branch, to get past the lookups."""
Operation = APIOperation[Any, Any, Any, Any]
"""An operation of an OpenAPI schema, typed as schemathesis's get_all_operations types it."""
UNPINNED = "DELETE /repositories/{repository}"
"""Pinned, it would delete the repository every later operation needs."""
AUTH = (ACCESS_KEY_ID, SECRET_ACCESS_KEY)
CHECKS = [not_a_server_error, response_schema_conformance]
SETTINGS = hypothesis.settings(
    max_examples=4,  # per operation and mode: 134 operations take about 35 s
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)


@pytest.fixture(scope="module", params=SERVERS)
def fuzzed_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server of its own (fuzzing leaves junk behind) on each pair the suite runs: SQLite
    over a local folder, PostgreSQL over S3, where presign and import are on."""
    with served(request, tmp_path_factory, "schemathesis") as server:
        server.storage.prepare()
        with server.http() as http:
            namespace = server.storage.namespace(REPOSITORY)
            response = http.post(
                "/repositories", json={"name": REPOSITORY, "storage_namespace": namespace}
            )
            assert response.status_code == 201, response.text
        yield server
        status = server.stop()
    assert status in (0, -signal.SIGTERM), f"server did not stop ({status}):\n{server.output()}"
    assert "Traceback" not in server.output(), server.output()


def _run(
    operation: Operation, mode: GenerationMode, session: requests.Session, found: dict[str, str]
) -> None:
    """Run one mode's cases of `operation`; keep the first report of each failure kind."""
    pin = mode == GenerationMode.POSITIVE and operation.label != UNPINNED
    # An operation that declares 501 answers it for a lakeFS feature kvlake has off
    # (external principals): lakeFS's answer, not a fault. Its schema is still checked.
    responses = operation.definition.raw.get("responses", {})
    checks = [response_schema_conformance] if "501" in responses else CHECKS

    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis.settings(SETTINGS)
    def check(case: schemathesis.Case[Operation]) -> None:
        path = case.path_parameters or {}
        if pin:
            case.path_parameters = path | {k: v for k, v in PINNED.items() if k in path}
        try:
            case.call_and_validate(session=session, checks=checks, auth=AUTH, timeout=60)
        except FailureGroup as group:
            # Collected, not raised: one run reports every failing operation at once.
            for failure in group.exceptions:
                found.setdefault(f"{operation.label}: {failure.title}", str(group))

    try:
        check()
    except hypothesis.errors.Unsatisfiable:
        # Only an operation without parameters or body has no invalid input at all.
        assert mode == GenerationMode.NEGATIVE, operation.label


def test_no_operation_answers_with_a_server_error_or_breaks_its_schema(
    fuzzed_server: Server,
) -> None:
    url = f"{fuzzed_server.url}/api/v1/openapi.json"
    schema = schemathesis.openapi.from_url(url)
    schema.config.update(base_url=f"{fuzzed_server.url}/api/v1")
    declared = sum(len(methods) for methods in httpx.get(url).json()["paths"].values())
    tested: list[str] = []
    failures: dict[str, str] = {}
    with requests.Session() as session:
        for result in schema.get_all_operations():
            if isinstance(result, Err):
                raise result.err()  # an operation schemathesis cannot read
            operation = result.ok()
            tested.append(operation.label)
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                _run(operation, mode, session, failures)
    assert len(tested) == declared > 50
    assert not failures, "\n\n".join(f"{k}\n{v}" for k, v in sorted(failures.items()))
