"""History: log, diffs, merge and merge base, reset, revert, cherry-pick.

Each handler maps one lakeFS operation onto one `Graveler` history method;
the facade checks branch protection and publishes by compare-and-swap, so the
API adds only translation between wire models and records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_branch, on_repository
from kvlake.api.routing import Call, Operation, json, no_content
from kvlake.api.wire import refs as wire
from kvlake.api.wire.common import pagination
from kvlake.auth import Permission, branch_arn
from kvlake.catalog.records import from_value
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler.records import DiffPage

TAG: Final = "refs"
BRANCH: Final = "/repositories/{repository}/branches/{branch}"
MERGE: Final = "/repositories/{repository}/refs/{sourceRef}/merge/{destinationBranch}"
_DIFF_PARAMS: Final = (
    params.text("after", "return items after this path"),
    params.Param("amount", "int", minimum=-1, maximum=1000, description="how many items"),
    params.text("prefix", "only paths under this prefix"),
    params.text("delimiter", "fold paths at this delimiter into common prefixes"),
)


def _diff_list(page: DiffPage, *, right_stats: bool = False) -> wire.DiffList:
    results = []
    for entry in page.entries:
        path = entry.path.decode()
        right = None
        size = None
        if entry.value is not None and entry.path_type == "object":
            stat = from_value(path, entry.value)
            size = stat.size
            if right_stats:
                right = wire.DiffObjectStat(
                    checksum=stat.checksum,
                    mtime=int(stat.mtime),
                    content_type=stat.content_type,
                    metadata=dict(stat.metadata),
                )
        results.append(
            wire.Diff(
                type=entry.type, path=path, path_type=entry.path_type, size_bytes=size, right=right
            )
        )
    next_offset = page.next_offset.decode()
    return wire.DiffList(
        pagination=pagination(len(results), has_more=page.has_more, next_offset=next_offset),
        results=results,
    )


def diff_branch(call: Call) -> Response:
    graveler, query = call.services.graveler, call.query
    repository = graveler.get_repository(call.path["repository"])
    page = graveler.diff_uncommitted(
        repository,
        call.path["branch"],
        prefix=query.text("prefix").encode(),
        delimiter=query.text("delimiter").encode(),
        after=query.text("after").encode(),
        amount=query.amount(),
    )
    return json(_diff_list(page))


def diff_refs(call: Call) -> Response:
    graveler, query = call.services.graveler, call.query
    repository = graveler.get_repository(call.path["repository"])
    mode = query.text("type", "three_dot")
    if mode not in ("two_dot", "three_dot"):
        raise InvalidInputError(f"diff type {mode!r} is invalid; use two_dot or three_dot")
    page = graveler.diff(
        repository,
        call.path["leftRef"],
        call.path["rightRef"],
        mode="two_dot" if mode == "two_dot" else "three_dot",
        prefix=query.text("prefix").encode(),
        delimiter=query.text("delimiter").encode(),
        after=query.text("after").encode(),
        amount=query.amount(),
    )
    return json(_diff_list(page, right_stats=query.flag("include_right_stats")))


def _since(text: str) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise InvalidInputError(f"since {text!r} is not an ISO 8601 date-time") from None


def log_commits(call: Call) -> Response:
    graveler, query = call.services.graveler, call.query
    if query.has("stop_at"):
        raise InvalidInputError("stop_at is not supported; page with after and amount instead")
    repository = graveler.get_repository(call.path["repository"])
    page = graveler.log(
        repository,
        call.path["ref"],
        after=query.text("after"),
        amount=query.amount(),
        limit=query.flag("limit"),
        first_parent=query.flag("first_parent"),
        since=_since(query.text("since")),
        paths=[params.check_object_path("objects", p).encode() for p in query.items("objects")],
        prefixes=[p.encode() for p in query.items("prefixes")],
    )
    results = [convert.commit(record.id, record.commit) for record in page.commits]
    return json(
        wire.CommitList(
            pagination=pagination(
                len(results), has_more=page.has_more, next_offset=page.next_offset
            ),
            results=results,
        )
    )


def merge_into_branch(call: Call) -> Response:
    request: wire.Merge = call.body or wire.Merge()
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    strategy = request.strategy or "none"
    commit_id = graveler.merge(
        repository,
        call.path["sourceRef"],
        call.path["destinationBranch"],
        committer=call.user_id,
        message=request.message or "",
        metadata=dict(request.metadata or {}),
        strategy="source-wins"
        if strategy == "source-wins"
        else "dest-wins"
        if strategy == "dest-wins"
        else "none",
        squash=bool(request.squash_merge),
        allow_empty=bool(request.allow_empty),
    )
    return json(wire.MergeResult(reference=commit_id))


def find_merge_base(call: Call) -> Response:
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    source, destination = call.path["sourceRef"], call.path["destinationBranch"]
    base = graveler.merge_base(repository, source, destination)
    if base is None:
        raise NotFoundError(f"{source!r} and {destination!r} have no common ancestor")
    return json(
        wire.FindMergeBaseResult(
            source_commit_id=graveler.resolve_ref(repository, source).commit_id,
            destination_commit_id=graveler.resolve_ref(repository, destination).commit_id,
            base_commit_id=base,
        )
    )


def reset_branch(call: Call) -> Response:
    request: wire.ResetCreation = call.body
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    branch = call.path["branch"]
    if request.type == "reset":
        graveler.reset_branch(repository, branch)
    elif not request.path:
        raise InvalidInputError(f"reset of type {request.type!r} needs a path")
    elif request.type == "object":
        graveler.reset_key(
            repository, branch, params.check_object_path("path", request.path).encode()
        )
    else:
        graveler.reset_prefix(repository, branch, request.path.encode())
    return no_content()


def hard_reset_branch(call: Call) -> Response:
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    graveler.reset_hard(repository, call.path["branch"], call.query.text("ref"))
    return no_content()


def revert_branch(call: Call) -> Response:
    request: wire.RevertCreation = call.body
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    overrides = request.commit_overrides
    if overrides is not None and overrides.message is not None:
        raise InvalidInputError("commit_overrides.message is not supported on revert; omit it")
    graveler.revert(
        repository,
        call.path["branch"],
        request.ref,
        committer=call.user_id,
        parent_number=request.parent_number,
        metadata=dict(overrides.metadata or {}) if overrides else None,
        allow_empty=bool(request.allow_empty),
    )
    return no_content()


def cherry_pick(call: Call) -> Response:
    request: wire.CherryPickCreation = call.body
    if request.commit_overrides is not None:
        raise InvalidInputError("commit_overrides is not supported on cherry-pick; omit it")
    graveler = call.services.graveler
    repository = graveler.get_repository(call.path["repository"])
    commit_id = graveler.cherry_pick(
        repository,
        call.path["branch"],
        request.ref,
        committer=call.user_id,
        parent_number=request.parent_number or 0,
    )
    return json(convert.commit(commit_id, graveler.get_commit(repository, commit_id)), 201)


def _merge_needs(call: Call) -> Sequence[Permission]:
    arn = branch_arn(call.path["repository"], call.path["destinationBranch"])
    return (Permission("fs:CreateCommit", arn),)


_LOG_PARAMS: Final = (
    params.text("after", "return commits after this id"),
    params.Param("amount", "int", minimum=-1, maximum=1000, description="how many commits"),
    params.Param("objects", "list", description="only commits that change these paths"),
    params.Param("prefixes", "list", description="only commits that change these prefixes"),
    params.flag("limit", "stop at the first page even if filters skip commits"),
    params.flag("first_parent", "follow only first parents"),
    params.text("since", "only commits at or after this ISO 8601 date-time"),
    params.text("stop_at", "not supported: must be absent"),
)

OPERATIONS: Final = (
    Operation(
        "logCommits",
        "GET",
        "/repositories/{repository}/refs/{ref}/commits",
        log_commits,
        TAG,
        params=_LOG_PARAMS,
        responses={200: wire.CommitList, 404: None},
        permissions=on_repository("fs:ReadCommit"),
    ),
    Operation(
        "diffRefs",
        "GET",
        "/repositories/{repository}/refs/{leftRef}/diff/{rightRef}",
        diff_refs,
        TAG,
        params=(
            *_DIFF_PARAMS,
            params.text("type", "two_dot or three_dot (default)"),
            params.flag("include_right_stats", "include the right side's object stats"),
        ),
        responses={200: wire.DiffList, 404: None},
        permissions=on_repository("fs:ListObjects"),
    ),
    Operation(
        "diffBranch",
        "GET",
        BRANCH + "/diff",
        diff_branch,
        "branches",
        params=_DIFF_PARAMS,
        responses={200: wire.DiffList, 404: None},
        permissions=on_repository("fs:ListObjects"),
    ),
    Operation(
        "mergeIntoBranch",
        "POST",
        MERGE,
        merge_into_branch,
        TAG,
        body=wire.Merge,
        optional_body=True,
        responses={200: wire.MergeResult, 400: None, 403: None, 404: None, 409: None},
        permissions=_merge_needs,
    ),
    Operation(
        "findMergeBase",
        "GET",
        MERGE,
        find_merge_base,
        TAG,
        responses={200: wire.FindMergeBaseResult, 404: None},
        permissions=on_repository("fs:ListCommits"),
    ),
    Operation(
        "resetBranch",
        "PUT",
        BRANCH,
        reset_branch,
        "branches",
        body=wire.ResetCreation,
        responses={204: None, 403: None, 404: None},
        permissions=on_branch("fs:RevertBranch"),
    ),
    Operation(
        "hardResetBranch",
        "PUT",
        BRANCH + "/hard_reset",
        hard_reset_branch,
        "branches",
        params=(
            params.text("ref", "the ref to point the branch at", required=True),
            params.flag("force", "reset even if protected"),
        ),
        responses={204: None, 403: None, 404: None},
        permissions=on_branch("fs:RevertBranch"),
    ),
    Operation(
        "revertBranch",
        "POST",
        BRANCH + "/revert",
        revert_branch,
        "branches",
        body=wire.RevertCreation,
        responses={204: None, 403: None, 404: None, 409: None},
        permissions=on_branch("fs:RevertBranch"),
    ),
    Operation(
        "cherryPick",
        "POST",
        BRANCH + "/cherry-pick",
        cherry_pick,
        "branches",
        body=wire.CherryPickCreation,
        responses={201: wire.Commit, 403: None, 404: None, 409: None},
        permissions=on_branch("fs:CreateCommit"),
    ),
)
