"""lakeFS's internal operations, answered as a lakeFS with those features off answers them."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from kvlake.api.app import create_app
from kvlake.api.services import Services
from kvlake.blockstore import open_blockstore
from kvlake.config import load_settings
from kvlake.kv import open_store
from kvlake.lake import Lake
from tests.api.server import Server


def test_auth_capabilities_need_no_credentials(server: Server) -> None:
    with httpx.Client(base_url=server.url + "/api/v1") as anonymous:
        response = anonymous.get("/auth/capabilities")
    assert response.status_code == 200 and response.json() == {"invite_user": False}


def test_usage_report_is_not_collected(sdk: LakeFSClient, server: Server) -> None:
    with pytest.raises(ApiException) as missing:
        sdk.internal_api.get_usage_report_summary()
    assert missing.value.status == 404
    with server.http() as http:
        assert http.get("/usage-report/summary").json()["message"] == "installation not found"
    with httpx.Client(base_url=server.url + "/api/v1") as anonymous:
        assert anonymous.get("/usage-report/summary").status_code == 401


def test_stats_events_are_checked_then_dropped(sdk: LakeFSClient, http: httpx.Client) -> None:
    event = lakefs_sdk.StatsEvent(var_class="ui-event", name="clicked", count=2)
    sdk.internal_api.post_stats_events(lakefs_sdk.StatsEventsList(events=[event]))
    for bad, text in (
        ({"class": "", "name": "n", "count": 1}, "invalid value: class is required"),
        ({"class": "c", "name": "", "count": 1}, "invalid value: name is required"),
        ({"class": "c", "name": "n", "count": -1}, "invalid value: count must be a non-negative"),
    ):
        response = http.post("/statistics", json={"events": [bad]})
        assert response.status_code == 400 and response.json()["message"].startswith(text)
    assert http.post("/statistics", json={"events": [{"class": "c"}]}).status_code == 400


def test_comm_prefs_are_never_missing(sdk: LakeFSClient, http: httpx.Client) -> None:
    assert sdk.internal_api.get_setup_state().comm_prefs_missing is False
    prefs = lakefs_sdk.CommPrefsInput(
        email="ada@example.com", feature_updates=True, security_updates=False
    )
    with pytest.raises(ApiException) as conflict:
        sdk.internal_api.setup_comm_prefs(prefs)
    assert conflict.value.status == 409
    response = http.post("/setup_comm_prefs", json={"featureUpdates": False})
    assert response.status_code == 400  # securityUpdates is required, as in lakeFS
    response = http.post(
        "/setup_comm_prefs", json={"featureUpdates": False, "securityUpdates": False}
    )
    assert response.status_code == 409
    assert response.json()["message"] == "communication preferences already set"


def test_comm_prefs_before_setup(tmp_path: Path) -> None:
    """A server always sets itself up as it starts, so this runs the app in-process on a
    store nobody set up: the answer is lakeFS's before its set-up."""
    settings = load_settings({"KVLAKE_DATA_DIR": str(tmp_path)})
    services = Services(
        Lake(settings, open_store(settings.kv_url), open_blockstore(settings.blockstore_url))
    )

    async def post() -> httpx.Response:
        app = create_app(settings, background_jobs=False)
        app.state.services = services
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://kvlake/api/v1"
        ) as client:
            body = {"featureUpdates": True, "securityUpdates": False}
            return await client.post("/setup_comm_prefs", json=body)

    try:
        response = anyio.run(post)
    finally:
        services.close()
    assert response.status_code == 412
    assert response.json()["message"] == "lakeFS is not initialized"


def test_preflights_answer_the_callers_permission(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    sdk.internal_api.create_branch_protection_rule_preflight(repo)
    sdk.internal_api.upload_object_preflight(repo, "main", "a/b.csv")
    user = "preflight-viewer"
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.add_group_membership("Viewers", user)
    credentials = sdk.auth_api.create_credentials(user)
    viewer = server.sdk(credentials.access_key_id, credentials.secret_access_key)
    with pytest.raises(ApiException) as denied:
        viewer.internal_api.create_branch_protection_rule_preflight(repo)
    assert denied.value.status == 401
    with pytest.raises(ApiException) as denied:
        viewer.internal_api.upload_object_preflight(repo, "main", "a/b.csv")
    assert denied.value.status == 401
