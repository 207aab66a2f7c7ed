"""importStart checks `fs:ImportFromStorage` on the source's canonical form (issue 23 #6):
a deny on a folder holds for every spelling the blockstore reads as that folder."""

from __future__ import annotations

import uuid

import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from tests.api.server import Server


def _denied_user(server: Server, sdk: LakeFSClient, denied: str) -> httpx.Client:
    """A user who may do everything but import from `denied` (an ARN resource)."""
    name = f"imp-{uuid.uuid4().hex[:8]}"
    statements = [
        lakefs_sdk.Statement(effect="allow", action=["fs:*"], resource="*"),
        lakefs_sdk.Statement(effect="deny", action=["fs:ImportFromStorage"], resource=denied),
    ]
    sdk.auth_api.create_policy(lakefs_sdk.Policy(id=name, statement=statements))
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=name))
    sdk.auth_api.attach_policy_to_user(name, name)
    keys = sdk.auth_api.create_credentials(name)
    return server.http(keys.access_key_id, keys.secret_access_key)


@pytest.mark.parametrize(
    "spelling",
    [
        "{scheme}://{root}secret/",
        "{scheme}:///{root}secret/",
        "{scheme}:////{root}secret/",
        "{scheme}://./{root}/secret/",
        "{scheme}://{root}/./secret//",
        "{scheme}://{root}//secret/x",
    ],
)
def test_a_deny_on_a_source_folder_holds_for_every_spelling(
    server: Server, sdk: LakeFSClient, repo: str, spelling: str
) -> None:
    scheme, _, root = server.storage.namespace("").partition("://")
    denied = f"arn:lakefs:fs:::namespace/{scheme}://{root}secret/*"
    source = spelling.format(scheme=scheme, root=root)
    with _denied_user(server, sdk, denied) as client:
        refused = client.post(
            f"/repositories/{repo}/branches/main/import",
            json={
                "paths": [{"type": "common_prefix", "path": source, "destination": "d/"}],
                "commit": {"message": "m"},
            },
        )
    assert refused.status_code == 401, refused.text  # lakeFS's answer to a missing permission
    canonical = f"fs:ImportFromStorage on arn:lakefs:fs:::namespace/{scheme}://{root}secret/"
    assert canonical in refused.json()["detail"]
