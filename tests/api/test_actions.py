"""Action runs, as a lakeFS with no actions defined answers them (through the SDK)."""

from __future__ import annotations

import httpx
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import NotFoundException


def test_a_repository_has_no_runs(sdk: LakeFSClient, repo: str) -> None:
    runs = sdk.actions_api.list_repository_runs(repo, amount=10, branch="main")
    assert runs.results == [] and runs.pagination.has_more is False
    hooks = sdk.actions_api.list_run_hooks(repo, "some-run")
    assert hooks.results == [] and hooks.pagination.results == 0
    with pytest.raises(NotFoundException):
        sdk.actions_api.get_run(repo, "some-run")
    with pytest.raises(NotFoundException):
        sdk.actions_api.get_run_hook_output(repo, "some-run", "some-hook")


def test_lakefs_texts(http: httpx.Client, repo: str) -> None:
    runs = f"/repositories/{repo}/actions/runs"
    run = http.get(f"{runs}/r1")
    assert run.status_code == 404 and run.json()["message"] == "not found: not found"
    output = http.get(f"{runs}/r1/hooks/h1/output")
    assert output.status_code == 404 and output.json()["message"] == "not found"
    for path in ("", "/r1", "/r1/hooks"):
        missing = http.get(f"/repositories/nope/actions/runs{path}")
        assert missing.status_code == 404 and missing.json()["message"] == "repository not found"
    assert http.get(runs, params={"amount": 1001}).status_code == 400
    assert http.get(runs, params={"prefix": "x"}).status_code == 400  # lakeFS has no prefix here
