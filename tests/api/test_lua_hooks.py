"""Lua hooks against a real server: lakeFS's own example gates commits, and `lakefs` calls
go through the API as the user who triggered the hook.

The action files are uploaded to `_lakefs_actions/` and committed like any
file; commits go through the official `lakefs` wrapper, which must see
lakeFS's 412 and the text lakeFS builds around a failing hook.
"""

from __future__ import annotations

import io
import json
import uuid

import httpx
import lakefs
import lakefs_sdk
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lakefs.exceptions import ServerException
from lakefs_sdk.client import LakeFSClient
from prometheus_client.parser import text_string_to_metric_families

from tests.api.server import Server

METADATA_ACTION = """name: pre commit metadata field check
on:
  pre-commit:
    branches:
    - main
    - dev
hooks:
  - id: ensure_commit_metadata
    type: lua
    properties:
      args:
        notebook_url: {"pattern": "my-jupyter.example.com/.*"}
        spark_version:  {}
      script: |
        regexp = require("regexp")
        for k, props in pairs(args) do
          current_value = action.commit.metadata[k]
          if current_value == nil then
            error("missing mandatory metadata field: " .. k)
          end
          if props.pattern and not regexp.match(props.pattern, current_value) then
            error("current value for commit metadata field " .. k .. " does not match pattern: " .. props.pattern .. " - got: " .. current_value)
          end
        end
"""  # noqa: E501 -- lakeFS's example (docs/howto/hooks/lua.md), as its documentation prints it
GOOD_METADATA = {"notebook_url": "https://my-jupyter.example.com/nb/7", "spark_version": "3.5.1"}


def _upload(http: httpx.Client, repo: str, path: str, data: bytes) -> None:
    response = http.post(
        f"/repositories/{repo}/branches/main/objects",
        params={"path": path},
        files={"content": ("file", data)},
    )
    assert response.status_code == 201, response.text


def _head(http: httpx.Client, repo: str) -> str:
    return str(http.get(f"/repositories/{repo}/branches/main").json()["commit_id"])


def _hook_counts(server: Server) -> dict[str, float]:
    """kvlake_action_hooks_total's pre-commit lua samples, by outcome."""
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    return {
        sample.labels["outcome"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "kvlake_action_hooks_total"
        and sample.labels["event"] == "pre-commit"
        and sample.labels["type"] == "lua"
    }


def test_lakefs_s_metadata_hook_refuses_a_commit_without_metadata_and_passes_one_with_it(
    server: Server, http: httpx.Client, repo: str
) -> None:
    counted = _hook_counts(server)
    _upload(http, repo, "_lakefs_actions/metadata.yaml", METADATA_ACTION.encode())
    main = lakefs.Repository(repo, client=server.client()).branch("main")
    main.commit(message="add the metadata check", metadata=GOOD_METADATA)

    _upload(http, repo, "tables/events.csv", b"a,b\n1,2\n")
    before = _head(http, repo)
    with pytest.raises(ServerException) as refused:
        main.commit(
            message="no spark version",
            metadata={"notebook_url": "https://my-jupyter.example.com/nb/8"},
        )
    assert refused.value.status_code == 412
    message = refused.value.body["message"]
    run_id = message.split("'")[1]
    assert message == (
        f"pre-commit hook aborted, run id '{run_id}': 1 error occurred:\n"
        "\t* hook run id '0000_0000' failed on action 'pre commit metadata field check'"
        " hook 'ensure_commit_metadata': action failed: lua script failed:"
        ' [string "lua"]:5: missing mandatory metadata field: spark_version\n\n'
    )
    assert _head(http, repo) == before  # nothing committed; the file stays staged

    with pytest.raises(ServerException) as refused:
        main.commit(
            message="wrong notebook",
            metadata={"notebook_url": "https://elsewhere.example.com/", "spark_version": "3"},
        )
    assert (
        "does not match pattern: my-jupyter.example.com/.* - got: https://elsewhere"
        in (refused.value.body["message"])
    )

    committed = main.commit(message="with metadata", metadata=GOOD_METADATA)
    assert _head(http, repo) == committed.get_commit().id
    runs = http.get(f"/repositories/{repo}/actions/runs", params={"branch": "main"}).json()
    assert [run["status"] for run in runs["results"]] == [
        "completed", "failed", "failed", "completed"
    ]  # fmt: skip
    output = http.get(f"/repositories/{repo}/actions/runs/{run_id}/hooks/0000_0000/output")
    assert "missing mandatory metadata field: spark_version" in output.text
    now = _hook_counts(server)  # the session server's tests run one at a time
    assert now.get("passed", 0) - counted.get("passed", 0) == 2
    assert now.get("failed", 0) - counted.get("failed", 0) == 2


GATE_ACTION = """name: table gate
on:
  pre-commit:
    branches: [main]
hooks:
  - id: owner_and_tag
    type: lua
    properties:
      script: |
        local lakefs = require("lakefs")
        local json = require("encoding/json")
        local code, body = lakefs.get_object(action.repository_id, action.branch_id, "conf/table.json")
        if code ~= 200 then error("cannot read conf/table.json: " .. code) end
        if json.unmarshal(body).owner == nil then error("conf/table.json names no owner") end
        local tag = action.commit.metadata.tag
        local made, answer = lakefs.create_tag(action.repository_id, action.branch_id, tag)
        print("tag", made, answer.id or answer.message)
        if made ~= 201 then error("tag " .. tag .. " not created: " .. made .. " " .. answer.message) end
"""  # noqa: E501


def _committer(server: Server, sdk: LakeFSClient, repo: str) -> lakefs.Client:
    """A user who may read, write and commit in `repo`, but not create tags."""
    user = f"writer-{uuid.uuid4().hex[:8]}"
    policy = f"commit-only-{uuid.uuid4().hex[:8]}"
    sdk.auth_api.create_policy(
        lakefs_sdk.Policy(
            id=policy,
            statement=[
                lakefs_sdk.Statement(
                    effect="allow",
                    action=["fs:Read*", "fs:List*", "fs:WriteObject", "fs:CreateCommit"],
                    resource="*",
                )
            ],
        )
    )
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.attach_policy_to_user(user, policy)
    key = sdk.auth_api.create_credentials(user)
    return server.client(key.access_key_id, key.secret_access_key)


def test_the_lakefs_module_reads_and_writes_through_the_api_as_the_committer(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "conf/table.json", json.dumps({"owner": "ana"}).encode())
    _upload(http, repo, "_lakefs_actions/gate.yaml", GATE_ACTION.encode())
    admin = lakefs.Repository(repo, client=server.client()).branch("main")
    admin.commit(message="add the gate", metadata={"tag": "t1"})
    assert http.get(f"/repositories/{repo}/tags/t1").status_code == 200

    # The hook reads the staged file through the API: no owner, no commit.
    _upload(http, repo, "conf/table.json", json.dumps({"team": "data"}).encode())
    with pytest.raises(ServerException) as refused:
        admin.commit(message="drop the owner", metadata={"tag": "t2"})
    assert "conf/table.json names no owner" in refused.value.body["message"]
    assert http.get(f"/repositories/{repo}/tags/t2").status_code == 404

    # A user who may commit but not tag: the hook's create_tag is refused as that user.
    _upload(http, repo, "conf/table.json", json.dumps({"owner": "bo"}).encode())
    writer = lakefs.Repository(repo, client=_committer(server, sdk, repo)).branch("main")
    with pytest.raises(ServerException) as refused:
        writer.commit(message="by a writer", metadata={"tag": "t3"})
    assert refused.value.status_code == 412
    assert "tag t3 not created: 401 insufficient permissions" in refused.value.body["message"]
    assert http.get(f"/repositories/{repo}/tags/t3").status_code == 404

    committed = admin.commit(message="by the admin", metadata={"tag": "t4"})
    tag = http.get(f"/repositories/{repo}/tags/t4").json()
    assert tag["commit_id"] != committed.get_commit().id  # tagged the head before the commit


BRANCH_ACTION = """name: branch gate
on:
  pre-create-branch:
hooks:
  - id: list_source
    type: lua
    properties:
      script: |
        local code, listing = require("lakefs").list_objects(action.repository_id, action.source_ref)
        if code ~= 200 then error("listing answered " .. code .. ": " .. listing.message) end
        for _, entry in ipairs(listing.results) do
          if entry.path == "FROZEN" then error("the source is frozen") end
        end
        -- lakeFS's globals: every action field (empty ones ""), the run, who acts
        if username ~= args.admin or action.tag_id ~= "" or action.run_id == "" then
          error("globals: " .. username .. " " .. action.tag_id .. " " .. action.run_id)
        end
        if not action.storage_namespace:find("://") then error("no namespace") end
"""  # noqa: E501


def test_a_hook_on_an_event_without_a_committer_acts_as_the_requesting_user(
    http: httpx.Client, repo: str
) -> None:
    # Creating a branch names no committer: the `lakefs` calls act as the request's user.
    admin = http.get("/user").json()["user"]["id"]
    action = BRANCH_ACTION.replace(
        "    properties:\n", f"    properties:\n      args: {{admin: {admin}}}\n"
    )
    _upload(http, repo, "_lakefs_actions/branch.yaml", action.encode())
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "m"}
    ).is_success
    created = http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    assert created.status_code == 201, created.text
    _upload(http, repo, "FROZEN", b"")
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "m"}
    ).is_success
    refused = http.post(f"/repositories/{repo}/branches", json={"name": "dev2", "source": "main"})
    assert refused.status_code == 412
    assert "the source is frozen" in refused.json()["message"]


CHAIN_ACTION = """name: tag chain
on:
  pre-create-tag:
hooks:
  - id: tag_again
    type: lua
    properties:
      script: |
        local name = action.tag_id .. "x"
        local code, answer = require("lakefs").create_tag(action.repository_id, action.commit_id, name)
        if code ~= 201 then error("create_tag " .. name .. ": " .. code .. " " .. answer.message) end
"""  # noqa: E501


def test_hooks_that_trigger_each_other_stop_at_the_nesting_limit(
    http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "_lakefs_actions/chain.yaml", CHAIN_ACTION.encode())
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "m"}
    ).is_success
    refused = http.post(f"/repositories/{repo}/tags", json={"id": "a", "ref": "main"})
    assert refused.status_code == 412
    message = refused.json()["message"]
    assert "create_tag ax: 412" in message
    assert "lua hook not run: lua hooks nested 3 deep" in message
    tags = http.get(f"/repositories/{repo}/tags").json()["results"]
    assert tags == []


SIZE_ACTION = """name: size gate
on:
  pre-commit:
    branches: [main]
hooks:
  - id: read_big
    type: lua
    properties:
      script: |
        local code, body = require("lakefs").get_object(action.repository_id, action.branch_id, "big.bin")
        if code ~= 200 then error("get_object answered " .. code) end
        if #body ~= args.size then error("read " .. #body .. " bytes") end
        local code, stat = require("lakefs").stat_object(action.repository_id, action.branch_id, "big.bin")
        print(code, require("encoding/json").unmarshal(stat).size_bytes)
"""  # noqa: E501


def test_a_hook_reads_an_object_the_api_streams(http: httpx.Client, repo: str) -> None:
    size = (1 << 20) + 4097  # past the size the API answers in one piece
    _upload(http, repo, "big.bin", bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    action = SIZE_ACTION.replace(
        "    properties:\n", f"    properties:\n      args: {{size: {size}}}\n"
    )
    _upload(http, repo, "_lakefs_actions/size.yaml", action.encode())
    committed = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert committed.status_code == 201, committed.text
    runs = http.get(f"/repositories/{repo}/actions/runs").json()["results"]
    output = http.get(
        f"/repositories/{repo}/actions/runs/{runs[0]['run_id']}/hooks/0000_0000/output"
    )
    assert output.text.startswith(f"200\t{size}")


SCHEMA_GATE = """name: schema gate
on:
  pre-merge:
    branches: [main]
hooks:
  - id: check_schema
    type: lua
    properties:
      args:
        table: tables/users.parquet
        required: [user_id]
      script: |
        local lakefs = require("lakefs")
        local parquet = require("encoding/parquet")
        local code, body = lakefs.get_object(action.repository_id, action.source_ref, args.table)
        if code ~= 200 then error("cannot read " .. args.table .. ": " .. code) end
        local columns = {}
        for _, column in ipairs(parquet.get_schema(body)) do columns[column.name] = true end
        for _, name in ipairs(args.required) do
          if not columns[name] then error(args.table .. " has no column " .. name) end
        end
"""


def _parquet(**columns: list[int]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def test_a_lua_pre_merge_gate_refuses_a_table_without_a_required_column(
    server: Server, http: httpx.Client, repo: str
) -> None:
    _upload(http, repo, "_lakefs_actions/schema.yaml", SCHEMA_GATE.encode())
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "m"}
    ).is_success
    http.post(f"/repositories/{repo}/branches", json={"name": "etl", "source": "main"})
    etl = lakefs.Repository(repo, client=server.client()).branch("etl")
    etl.object("tables/users.parquet").upload(_parquet(name_id=[1, 2]))
    etl.commit(message="a table without user_id")
    before = _head(http, repo)
    with pytest.raises(ServerException) as refused:
        etl.merge_into("main")
    assert refused.value.status_code == 412
    message = refused.value.body["message"]
    assert message.startswith("pre-merge hook aborted, run id '")
    assert message.endswith(
        "failed on action 'schema gate' hook 'check_schema': action failed: lua script failed:"
        ' [string "lua"]:8: tables/users.parquet has no column user_id\n\n'
    )
    assert _head(http, repo) == before

    etl.object("tables/users.parquet").upload(_parquet(user_id=[1, 2]))
    etl.commit(message="fixed")
    merged = etl.merge_into("main")
    assert _head(http, repo) == merged
