"""Issue 23's authorization side doors, attacked through a real `kvlake serve`.

Each attack is a user whose policies allow a lot but deny something, trying to reach
what is denied through a door that used to ask less than the plain request: a bulk
delete of a prefix holding denied objects, a bulk delete that commits, a stageObject
of a blob it may not read, an import of a folder into a destination or from a source
holding denied paths. Two server processes of two workers each: SQLite over a
local folder and PostgreSQL over S3 (`SERVERS`), so the policy holds whichever
worker answers and on both blockstores.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.api.conftest import SERVERS, backend_kv_url
from tests.api.server import Server
from tests.support import wait_until
from tests.support.backends import Backend
from tests.support.servers import server_storage

BULK = "/operations/bulk-delete"
OBJECTS = "arn:lakefs:fs:::repository/{repo}/object/"


@pytest.fixture(scope="module", params=SERVERS)
def hostile_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    backend: Backend = request.param
    data_dir = tmp_path_factory.mktemp(f"hostile-policies-{backend.id}")
    # Local imports read only from an allowed folder: `local://imports` of the blocks.
    env = {
        "KVLAKE_IMPORTS_LOCAL_ENABLED": "true",
        "KVLAKE_IMPORTS_LOCAL_PREFIXES": "local://imports",
    }
    storage, s3_env = server_storage(request, tmp_path_factory, backend.blocks)
    env = s3_env or env  # on S3, no local imports
    with backend_kv_url(request, "kv_hostile_policies", backend.kv) as kv_url:
        server = Server(data_dir, kv_url=kv_url, workers=2, env=env, storage=storage)
        try:
            yield server
            status = server.stop()
            assert status in (0, -signal.SIGTERM), server.output()
            assert "Traceback" not in server.output(), server.output()
        finally:
            server.stop()


@pytest.fixture
def admin(hostile_server: Server) -> Iterator[httpx.Client]:
    hostile_server.storage.prepare()
    with hostile_server.http() as client:
        yield client


@pytest.fixture
def repo(hostile_server: Server, admin: httpx.Client) -> str:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    namespace = hostile_server.storage.namespace(name)
    created = admin.post("/repositories", json={"name": name, "storage_namespace": namespace})
    assert created.status_code == 201, created.text
    return name


def _user(
    server: Server, admin: httpx.Client, *statements: dict[str, object], user_id: str = ""
) -> httpx.Client:
    """A new user (`user_id`, or a fresh one) holding one policy of `statements`, and a
    client acting as it."""
    user_id = user_id or f"u-{uuid.uuid4().hex[:10]}"
    assert admin.post("/auth/users", json={"id": user_id}).status_code == 201
    policy = admin.post("/auth/policies", json={"id": f"p-{user_id}", "statement": statements})
    assert policy.status_code == 201, policy.text
    attached = admin.put(f"/auth/users/{user_id}/policies/p-{user_id}")
    assert attached.status_code == 201, attached.text
    key = admin.post(f"/auth/users/{user_id}/credentials").json()
    return server.http(key["access_key_id"], key["secret_access_key"])


def _allow(actions: list[str], resource: str = "*") -> dict[str, object]:
    return {"effect": "allow", "action": actions, "resource": resource}


def _deny(actions: list[str], resource: str) -> dict[str, object]:
    return {"effect": "deny", "action": actions, "resource": resource}


def _upload(client: httpx.Client, repo: str, path: str, body: bytes = b"x") -> dict[str, object]:
    response = client.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": path}, content=body
    )
    assert response.status_code == 201, response.text
    stats: dict[str, object] = response.json()
    return stats


def _paths(client: httpx.Client, repo: str) -> list[str]:
    response = client.get(f"/repositories/{repo}/refs/main/objects/ls", params={"amount": 1000})
    return [row["path"] for row in response.json()["results"]]


def _finished(client: httpx.Client, operation_id: str) -> dict[str, object]:
    seen: dict[str, object] = {}

    def done() -> bool:
        response = client.get(f"{BULK}/status/{operation_id}")
        assert response.status_code == 200, response.text
        seen.update(response.json())
        return seen["status"] in ("completed", "completed_with_errors", "failed", "cancelled")

    wait_until(done, message=lambda: f"operation {operation_id} to finish: {seen}")
    return seen


@pytest.mark.parametrize("denied", ["secret/*", "secret/key.csv"], ids=["sub-prefix", "object"])
def test_a_bulk_delete_over_a_denied_path_is_refused(
    hostile_server: Server, admin: httpx.Client, repo: str, denied: str
) -> None:
    for path in ("public/a.csv", "secret/key.csv", "secret/more.csv"):
        _upload(admin, repo, path)
    objects = OBJECTS.format(repo=repo)
    user = _user(
        hostile_server,
        admin,
        _allow(["fs:ReadObject", "fs:ListObjects", "fs:ReadRepository", "fs:ReadBranch"]),
        _allow(["fs:DeleteObject"], objects + "*"),
        _deny(["fs:DeleteObject"], objects + denied),
    )
    with user:
        everything = user.put(BULK, params={"path": f"lakefs://{repo}/main/"})
        assert everything.status_code == 401, everything.text
        assert f"{objects}{denied}" in everything.text  # names the rule that refused it
        over_secret = user.put(BULK, params={"path": f"lakefs://{repo}/main/sec"})
        assert over_secret.status_code == 401, over_secret.text
        assert user.get("/operations").json()["results"] == []  # nothing recorded
        public = user.put(BULK, params={"path": f"lakefs://{repo}/main/public/"})
        assert public.status_code == 202, public.text
        assert _finished(user, public.json()["operation_id"])["status"] == "completed"
    assert _paths(admin, repo) == ["secret/key.csv", "secret/more.csv"]


def test_a_bulk_delete_that_commits_needs_create_commit(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    _upload(admin, repo, "data/a.csv")
    _upload(admin, repo, "others/work.csv")  # someone else's staged work
    objects = OBJECTS.format(repo=repo)
    user = _user(
        hostile_server,
        admin,
        _allow(["fs:ReadObject", "fs:ListObjects", "fs:ReadRepository", "fs:ReadBranch"]),
        _allow(["fs:DeleteObject"], objects + "*"),
    )
    path = {"path": f"lakefs://{repo}/main/data/"}
    with user:
        committing = user.put(BULK, params=path, json={"commit": {"message": "mine"}})
        assert committing.status_code == 401, committing.text
        assert "fs:CreateCommit" in committing.text
        assert user.get("/operations").json()["results"] == []
        staged_only = user.put(BULK, params=path, json={})
        assert staged_only.status_code == 202, staged_only.text
        assert _finished(user, staged_only.json()["operation_id"])["status"] == "completed"
    log = admin.get(f"/repositories/{repo}/refs/main/commits").json()["results"]
    assert [commit["message"] for commit in log] == ["Repository created"]
    assert _paths(admin, repo) == ["others/work.csv"]


def test_staging_a_blob_needs_proof_the_caller_may_read_it(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    secret = _upload(admin, repo, "secret/key.csv", b"the secret")
    objects = OBJECTS.format(repo=repo)
    user = _user(
        hostile_server,
        admin,
        _allow(["fs:*"]),
        _deny(["fs:ReadObject"], objects + "secret/*"),
    )
    body = {"physical_address": secret["physical_address"], "checksum": "c", "size_bytes": 10}
    with user:
        assert (
            user.get(
                f"/repositories/{repo}/refs/main/objects", params={"path": "secret/key.csv"}
            ).status_code
            == 401
        )
        staged = user.put(
            f"/repositories/{repo}/branches/main/objects", params={"path": "mine.csv"}, json=body
        )
        assert staged.status_code == 401, staged.text
        assert "getPhysicalAddress" in staged.text
        read = user.get(f"/repositories/{repo}/refs/main/objects", params={"path": "mine.csv"})
        assert read.status_code == 404, read.text
        # The caller's own upload is proof: the address getPhysicalAddress handed out for
        # this very branch and path.
        backing = f"/repositories/{repo}/branches/main/staging/backing"
        location = user.get(backing, params={"path": "own.csv"}).json()
        namespace = hostile_server.storage.namespace(repo)
        key = location["physical_address"].removeprefix(f"{namespace}/")
        hostile_server.storage.blocks.put(namespace, key, b"mine")
        own = {"physical_address": location["physical_address"], "checksum": "c", "size_bytes": 4}
        for_other_path = user.put(
            f"/repositories/{repo}/branches/main/objects", params={"path": "x.csv"}, json=own
        )
        assert for_other_path.status_code == 401, for_other_path.text
        linked = user.put(
            f"/repositories/{repo}/branches/main/objects", params={"path": "own.csv"}, json=own
        )
        assert linked.status_code == 201, linked.text
    # Whoever may read every object of the repository may stage any of its blobs.
    by_admin = admin.put(
        f"/repositories/{repo}/branches/main/objects", params={"path": "copy.csv"}, json=body
    )
    assert by_admin.status_code == 201, by_admin.text
    assert _paths(admin, repo) == ["copy.csv", "own.csv", "secret/key.csv"]


def _import(client: httpx.Client, repo: str, source: str, destination: str) -> httpx.Response:
    return client.post(
        f"/repositories/{repo}/branches/main/import",
        json={
            "paths": [{"type": "common_prefix", "path": source, "destination": destination}],
            "commit": {"message": "import"},
        },
    )


@pytest.mark.parametrize("side", ["destination", "source"])
def test_an_import_over_a_denied_sub_prefix_is_refused(
    hostile_server: Server, admin: httpx.Client, repo: str, side: str
) -> None:
    """An import writes every path under its destination and reads every blob under its
    source, so a deny anywhere below either refuses it, as it refuses a bulk delete."""
    folder = hostile_server.storage.namespace(f"imports/{uuid.uuid4().hex[:8]}")
    for key in ("data/a.csv", "data/secret/key.csv"):
        hostile_server.storage.blocks.put(folder, key, b"k")
    source = f"{folder}/data/"
    objects = OBJECTS.format(repo=repo)
    denied = (
        _deny(["fs:WriteObject"], objects + "data/secret/*")
        if side == "destination"
        else _deny(["fs:ImportFromStorage"], f"arn:lakefs:fs:::namespace/{source}secret/*")
    )
    user = _user(hostile_server, admin, _allow(["fs:*"]), denied)
    with user:
        refused = _import(user, repo, source, "data/")
        assert refused.status_code == 401, refused.text
        assert "secret/" in refused.text, refused.text  # names the rule that refused it
        assert _paths(admin, repo) == []
        # Nothing denied under either: the import goes ahead.
        allowed = _import(user, repo, f"{folder}/data/a", "public/")
        assert allowed.status_code == 202, allowed.text


def test_an_import_of_the_own_namespace_is_refused_however_spelled(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    """Issue 23 #6: a second spelling of the repository's own namespace (an empty host, an
    extra slash, a doubled one after the bucket) is compared as the canonical folder, so
    the repository cannot import its own blobs (`_lakefs/` included) as external entries.
    The deny-on-`fs:ImportFromStorage` spellings are test_import_spellings.py's."""
    _upload(admin, repo, "data/a.csv")
    # Committed, so nothing but the overlap refuses the import (a dirty branch would).
    committed = admin.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert committed.status_code == 201, committed.text
    scheme, _, root = hostile_server.storage.namespace("").partition("://")
    for spelling in (
        "{scheme}://{root}{repo}/_lakefs/",
        "{scheme}:///{root}{repo}/_lakefs/",
        "{scheme}:////{root}{repo}/",
        "{scheme}://{root}/{repo}/_lakefs/",
        "{scheme}://{root}{repo}//_lakefs/",
    ):
        source = spelling.format(scheme=scheme, root=root, repo=repo)
        refused = _import(admin, repo, source, "stolen/")
        assert refused.status_code == 400, (source, refused.text)
        assert f"namespace {hostile_server.storage.namespace(repo)}" in refused.text, source
    assert _paths(admin, repo) == ["data/a.csv"]


def test_purging_a_bare_repository_on_a_kept_namespace_is_refused(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    """Issue 23 #7: a repository deleted without purge keeps its blobs; a bare repository
    created on that namespace and purged would delete them, so the purge is refused."""
    kept = _upload(admin, repo, "kept.csv", b"keep me")
    committed = admin.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert committed.status_code == 201, committed.text
    assert admin.delete(f"/repositories/{repo}").status_code == 204
    namespace = hostile_server.storage.namespace(repo)
    bare = f"bare-{uuid.uuid4().hex[:12]}"
    created = admin.post(
        "/repositories",
        params={"bare": "true"},
        json={"name": bare, "storage_namespace": namespace},
    )
    assert created.status_code == 201, created.text
    purge = admin.delete(f"/repositories/{bare}", params={"purge": "true"})
    assert purge.status_code == 409, purge.text
    assert repo in purge.text  # names the kept repository whose data it would delete
    key = str(kept["physical_address"]).removeprefix(f"{namespace}/")
    assert key in hostile_server.storage.keys(namespace)
    # Deleting it without purge is still allowed, and deletes no blob either.
    assert admin.delete(f"/repositories/{bare}").status_code == 204
    assert key in hostile_server.storage.keys(namespace)


def test_bulk_delete_size_filters_beyond_int64_answer_400(admin: httpx.Client, repo: str) -> None:
    """A size the KV records cannot hold is a bad request, not a 500 with a traceback
    (the fixture's teardown checks the server's log)."""
    path = {"path": f"lakefs://{repo}/main/"}
    for field in ("min_size", "max_size"):
        for value in (2**63, 2**64 - 1, 2**64, 2**70):
            filters = {"dry_run": True, "filters": {field: value}}
            refused = admin.put(BULK, params=path, json=filters)
            assert refused.status_code == 400, (field, value, refused.text)
            assert field in refused.text
        largest = {"dry_run": True, "filters": {field: 2**63 - 1}}
        assert admin.put(BULK, params=path, json=largest).status_code == 202


def test_a_user_created_again_owns_nothing_of_the_old_one(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    """Operations and locks belong to the user as created: a new user with a deleted
    user's id neither sees nor cancels its operations, nor releases its locks."""
    _upload(admin, repo, "data/a.csv")
    _upload(admin, repo, "locked.csv", b"original")
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    with _user(hostile_server, admin, _allow(["fs:*"]), user_id=user_id) as old:
        operation = old.put(BULK, params={"path": f"lakefs://{repo}/main/data/"})
        assert operation.status_code == 202, operation.text
        operation_id = operation.json()["operation_id"]
        assert _finished(old, operation_id)["status"] == "completed"
        locked = old.put(f"/repositories/{repo}/locks", params={"path": "locked.csv"})
        assert locked.status_code == 200, locked.text
    assert admin.delete(f"/auth/users/{user_id}").status_code == 204
    assert admin.delete(f"/auth/policies/p-{user_id}").status_code == 204
    with _user(hostile_server, admin, _allow(["fs:*"]), user_id=user_id) as new:
        assert new.get(f"{BULK}/status/{operation_id}").status_code == 404
        assert new.get("/operations").json()["results"] == []
        cancel = new.delete(f"/operations/{operation_id}")
        assert cancel.status_code == 404, cancel.text
        release = new.delete(f"/repositories/{repo}/locks", params={"path": "locked.csv"})
        assert release.status_code == 409, release.text
        overwrite = new.post(
            f"/repositories/{repo}/branches/main/objects",
            params={"path": "locked.csv"},
            content=b"replaced",
        )
        assert overwrite.status_code == 409, overwrite.text
    assert admin.get(f"{BULK}/status/{operation_id}").status_code == 200
    locks = admin.get(f"/repositories/{repo}/locks").json()["results"]
    assert [lock["path"] for lock in locks] == ["locked.csv"]


def test_a_write_lock_covers_copies_deletes_and_resets(
    hostile_server: Server, admin: httpx.Client, repo: str
) -> None:
    """A write lock covers every write of its path, not only uploads: a copy onto it,
    deleting it (alone or in a list) and resetting it (as an object or under a prefix)."""
    _upload(admin, repo, "locked.csv", b"original")
    _upload(admin, repo, "source.csv", b"other bytes")
    with _user(hostile_server, admin, _allow(["fs:*"])) as owner:
        locked = owner.put(f"/repositories/{repo}/locks", params={"path": "locked.csv"})
        assert locked.status_code == 200, locked.text
    objects = f"/repositories/{repo}/branches/main/objects"
    with _user(hostile_server, admin, _allow(["fs:*"])) as other:
        for shallow in (True, False):
            copy = other.post(
                f"{objects}/copy",
                params={"dest_path": "locked.csv"},
                json={"src_path": "source.csv", "shallow": shallow},
            )
            assert copy.status_code == 409, copy.text
        deleted = other.delete(objects, params={"path": "locked.csv"})
        assert deleted.status_code == 409, deleted.text
        many = other.post(f"{objects}/delete", json={"paths": ["locked.csv"]})
        assert many.status_code == 200, many.text
        assert [error["status_code"] for error in many.json()["errors"]] == [409]
        for reset in (
            {"type": "object", "path": "locked.csv"},
            {"type": "common_prefix", "path": "lock"},
        ):
            refused = other.put(f"/repositories/{repo}/branches/main", json=reset)
            assert refused.status_code == 409, (reset, refused.text)
    read = admin.get(f"/repositories/{repo}/refs/main/objects", params={"path": "locked.csv"})
    assert read.status_code == 200
    assert read.content == b"original"
    assert _paths(admin, repo) == ["locked.csv", "source.csv"]


def test_cancelling_a_finished_operation_answers_409_with_its_status(
    admin: httpx.Client, repo: str
) -> None:
    _upload(admin, repo, "data/a.csv")
    created = admin.put(BULK, params={"path": f"lakefs://{repo}/main/data/"})
    assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]
    assert _finished(admin, operation_id)["status"] == "completed"
    cancel = admin.delete(f"/operations/{operation_id}")
    assert cancel.status_code == 409, cancel.text
    assert "'completed'" in cancel.text
    status = admin.get(f"{BULK}/status/{operation_id}").json()
    assert (status["status"], status["cancel_requested"]) == ("completed", False)
