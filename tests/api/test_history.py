"""History through the SDKs: log, diff, merge (with and without conflicts), revert,
cherry-pick, reset, hard reset, branch protection, refs dump and restore."""

from __future__ import annotations

import uuid

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException, BadRequestException

from tests.api.server import Server


def _commit(
    sdk: LakeFSClient, repo: str, branch: str, files: dict[str, bytes], message: str
) -> str:
    for path, data in files.items():
        sdk.objects_api.upload_object(repo, branch, path, content=data)
    return str(sdk.commits_api.commit(repo, branch, lakefs_sdk.CommitCreation(message=message)).id)


def _branch(sdk: LakeFSClient, repo: str, name: str, source: str = "main") -> None:
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name=name, source=source))


def _read(sdk: LakeFSClient, repo: str, ref: str, path: str) -> bytes:
    return bytes(sdk.objects_api.get_object(repo, ref, path))


def test_log_pages_newest_first(sdk: LakeFSClient, repo: str) -> None:
    ids = [_commit(sdk, repo, "main", {f"f{i}": b"x"}, f"commit {i}") for i in range(3)]
    page = sdk.refs_api.log_commits(repo, "main", amount=2)
    assert [c.id for c in page.results] == ids[::-1][:2]
    assert page.pagination.has_more
    rest = sdk.refs_api.log_commits(repo, "main", after=page.pagination.next_offset)
    assert [c.message for c in rest.results] == ["commit 0", "Repository created"]


def test_the_wrapper_pages_through_a_merged_history_once_each(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    """next_offset is a cursor (the last id and the walk's frontier); clients pass it back."""
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="side", source="main"))
    for i in range(6):
        _commit(sdk, repo, "main", {f"m{i}": b"x"}, f"main {i}")
        _commit(sdk, repo, "side", {f"s{i}": b"x"}, f"side {i}")
    sdk.refs_api.merge_into_branch(repo, "side", "main")
    whole = [c.id for c in sdk.refs_api.log_commits(repo, "main", amount=1000).results]
    assert len(whole) == 14  # 6 + 6, the merge and the first commit
    paged = [
        c.id
        for c in lakefs.Repository(repo, client=server.client())
        .branch("main")
        .log(max_amount=None, amount=2)
    ]
    assert paged == whole


def test_log_filtered_by_object(sdk: LakeFSClient, repo: str) -> None:
    _commit(sdk, repo, "main", {"a": b"1"}, "touch a")
    _commit(sdk, repo, "main", {"b": b"1"}, "touch b")
    page = sdk.refs_api.log_commits(repo, "main", objects=["a"])
    assert [c.message for c in page.results] == ["touch a"]


def test_uncommitted_diff_and_diff_between_refs(sdk: LakeFSClient, repo: str) -> None:
    _commit(sdk, repo, "main", {"keep": b"1", "gone": b"1", "edit": b"1"}, "base")
    sdk.objects_api.upload_object(repo, "main", "new", content=b"2")
    sdk.objects_api.upload_object(repo, "main", "edit", content=b"2")
    sdk.objects_api.delete_object(repo, "main", "gone")
    diff = sdk.branches_api.diff_branch(repo, "main")
    assert {(d.path, d.type) for d in diff.results} == {
        ("new", "added"),
        ("edit", "changed"),
        ("gone", "removed"),
    }
    head = sdk.commits_api.commit(repo, "main", lakefs_sdk.CommitCreation(message="change")).id
    between = sdk.refs_api.diff_refs(repo, f"{head}~1", head, type="two_dot")
    assert {(d.path, d.type) for d in between.results} == {
        ("new", "added"),
        ("edit", "changed"),
        ("gone", "removed"),
    }


def test_merge_without_conflicts(server: Server, sdk: LakeFSClient, repo: str) -> None:
    _branch(sdk, repo, "feature")
    _commit(sdk, repo, "feature", {"feature.txt": b"f"}, "feature work")
    _commit(sdk, repo, "main", {"main.txt": b"m"}, "main work")
    base = sdk.refs_api.find_merge_base(repo, "feature", "main")
    assert base.base_commit_id == sdk.refs_api.log_commits(repo, "feature").results[1].id
    result = sdk.refs_api.merge_into_branch(
        repo, "feature", "main", merge=lakefs_sdk.Merge(message="merge")
    )
    assert len(result.reference) == 64
    assert _read(sdk, repo, "main", "feature.txt") == b"f"
    # The high-level client merges the same way.
    repository = lakefs.Repository(repo, client=server.client())
    _commit(sdk, repo, "feature", {"more.txt": b"x"}, "more")
    repository.branch("feature").merge_into(repository.branch("main"))
    assert _read(sdk, repo, "main", "more.txt") == b"x"


def test_merge_with_conflicts_is_409_and_changes_nothing(sdk: LakeFSClient, repo: str) -> None:
    _commit(sdk, repo, "main", {"shared": b"base"}, "base")
    _branch(sdk, repo, "left")
    _commit(sdk, repo, "left", {"shared": b"left"}, "left edit")
    head = _commit(sdk, repo, "main", {"shared": b"main"}, "main edit")
    with pytest.raises(ApiException) as conflict:
        sdk.refs_api.merge_into_branch(repo, "left", "main")
    assert conflict.value.status == 409
    assert sdk.branches_api.get_branch(repo, "main").commit_id == head
    resolved = sdk.refs_api.merge_into_branch(
        repo, "left", "main", merge=lakefs_sdk.Merge(strategy="source-wins")
    )
    assert resolved.reference and _read(sdk, repo, "main", "shared") == b"left"


def test_revert_and_cherry_pick(sdk: LakeFSClient, repo: str) -> None:
    _commit(sdk, repo, "main", {"file": b"v1"}, "v1")
    bad = _commit(sdk, repo, "main", {"file": b"v2"}, "v2")
    sdk.branches_api.revert_branch(
        repo, "main", lakefs_sdk.RevertCreation(ref=bad, parent_number=0)
    )
    assert _read(sdk, repo, "main", "file") == b"v1"
    _branch(sdk, repo, "other", source=f"{bad}~1")
    picked = sdk.branches_api.cherry_pick(repo, "other", lakefs_sdk.CherryPickCreation(ref=bad))
    assert picked.parents and _read(sdk, repo, "other", "file") == b"v2"


def test_reset_object_prefix_branch_and_hard_reset(
    sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    first = _commit(sdk, repo, "main", {"a": b"1", "dir/b": b"1"}, "first")
    for path in ("a", "dir/b", "c"):
        sdk.objects_api.upload_object(repo, "main", path, content=b"dirty")
    sdk.branches_api.reset_branch(repo, "main", lakefs_sdk.ResetCreation(type="object", path="a"))
    assert _read(sdk, repo, "main", "a") == b"1"
    sdk.branches_api.reset_branch(
        repo, "main", lakefs_sdk.ResetCreation(type="common_prefix", path="dir/")
    )
    assert _read(sdk, repo, "main", "dir/b") == b"1"
    sdk.branches_api.reset_branch(repo, "main", lakefs_sdk.ResetCreation(type="reset"))
    assert sdk.branches_api.diff_branch(repo, "main").results == []
    _commit(sdk, repo, "main", {"later": b"x"}, "later")
    response = http.put(f"/repositories/{repo}/branches/main/hard_reset", params={"ref": first})
    assert response.status_code == 204
    assert sdk.branches_api.get_branch(repo, "main").commit_id == first


def test_protected_branches_refuse_direct_writes_but_accept_merges(
    sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    _branch(sdk, repo, "work")
    sdk.repositories_api.set_branch_protection_rules(
        repo, [lakefs_sdk.BranchProtectionRule(pattern="main")]
    )
    assert [r.pattern for r in sdk.repositories_api.get_branch_protection_rules(repo)] == ["main"]
    with pytest.raises(ApiException) as refused:
        sdk.commits_api.commit(
            repo, "main", lakefs_sdk.CommitCreation(message="direct", allow_empty=True)
        )
    assert refused.value.status == 403
    _commit(sdk, repo, "work", {"via-merge": b"x"}, "work")
    sdk.refs_api.merge_into_branch(repo, "work", "main")
    assert _read(sdk, repo, "main", "via-merge") == b"x"
    stale = http.get(f"/repositories/{repo}/settings/branch_protection").headers["ETag"]
    sdk.repositories_api.set_branch_protection_rules(repo, [])
    late = http.put(
        f"/repositories/{repo}/settings/branch_protection",
        json=[{"pattern": "x*"}],
        headers={"If-Match": stale},
    )
    assert late.status_code == 412
    sdk.objects_api.upload_object(repo, "main", "direct", content=b"x")


def test_dump_and_restore_refs_into_a_bare_repository(
    sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    _commit(sdk, repo, "main", {"f": b"data"}, "data")
    sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref="main"))
    dump = sdk.internal_api.dump_refs(repo)
    dump_tag = sdk.tags_api.get_tag(repo, "v1").commit_id
    namespace = sdk.repositories_api.get_repository(repo).storage_namespace
    copy = f"copy-{uuid.uuid4().hex[:8]}"
    bare = {"name": copy, "storage_namespace": namespace}
    # A live repository's namespace is its own: a copy there could read its objects,
    # and deleting the source's branches would delete blobs the copy references.
    refused = http.post("/repositories", params={"bare": "true"}, json=bare)
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"].startswith("storage namespace already in use")
    assert http.get(f"/repositories/{copy}").status_code == 404
    # Deleted without purge, its data stays, and a bare repository may take it over.
    assert http.delete(f"/repositories/{repo}").status_code == 204
    created = http.post("/repositories", params={"bare": "true"}, json=bare)
    assert created.status_code == 201, created.text
    sdk.internal_api.restore_refs(
        copy,
        lakefs_sdk.RefsRestore(
            commits_meta_range_id=dump.commits_meta_range_id,
            tags_meta_range_id=dump.tags_meta_range_id,
            branches_meta_range_id=dump.branches_meta_range_id,
        ),
    )
    assert sdk.tags_api.get_tag(copy, "v1").commit_id == dump_tag
    assert _read(sdk, copy, "main", "f") == b"data"


def test_bad_history_requests_are_400(sdk: LakeFSClient, repo: str) -> None:
    with pytest.raises(BadRequestException):
        sdk.refs_api.diff_refs(repo, "main", "main", type="sideways")
    with pytest.raises(ApiException) as missing:
        sdk.refs_api.merge_into_branch(repo, "no-such-ref", "main")
    assert missing.value.status in (400, 404)


def test_protected_branches_refuse_direct_uploads(sdk: LakeFSClient, repo: str) -> None:
    sdk.repositories_api.set_branch_protection_rules(
        repo, [lakefs_sdk.BranchProtectionRule(pattern="main")]
    )
    with pytest.raises(ApiException) as refused:
        sdk.objects_api.upload_object(repo, "main", "direct", content=b"x")
    assert refused.value.status == 403


def test_force_bypasses_no_branch_protection_as_in_lakefs(
    sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    """lakeFS's `force` overrides read-only repositories only; kvlake has none."""
    _branch(sdk, repo, "kept")
    sdk.repositories_api.set_branch_protection_rules(
        repo,
        [
            lakefs_sdk.BranchProtectionRule(pattern="main"),
            lakefs_sdk.BranchProtectionRule(pattern="kept"),
        ],
    )
    forced = {"force": "true"}
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects",
        params={"path": "p", **forced},
        content=b"x",
    )
    assert upload.status_code == 403, upload.text
    deleted = http.delete(f"/repositories/{repo}/branches/kept", params=forced)
    assert deleted.status_code == 403, deleted.text
    sdk.repositories_api.set_branch_protection_rules(repo, [])
    assert http.delete(f"/repositories/{repo}/branches/kept", params=forced).status_code == 204
