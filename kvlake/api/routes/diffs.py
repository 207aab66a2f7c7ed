"""Log and diffs: commits reachable from a ref, changes between refs and on a branch.

Pages are cut by the graveler (after, amount); the API converts entries to
lakeFS's Diff and Commit shapes, with object sizes read from the stored values.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import refs as wire
from kvlake.api.wire.common import pagination
from kvlake.catalog.records import from_value
from kvlake.errors import InvalidInputError
from kvlake.graveler import DiffPage

API_GROUP: Final = "refs"
BRANCH: Final = "/repositories/{repository}/branches/{branch}"
_DIFF_PARAMS: Final = (
    params.text("after", "return items after this path"),
    params.Param("amount", "int", minimum=-1, maximum=1000, description="how many items"),
    params.text("prefix", "only paths under this prefix"),
    params.text("delimiter", "fold paths at this delimiter into common prefixes"),
)


def _diff_list(page: DiffPage, *, right_stats: bool = False) -> wire.DiffList:
    """lakeFS's DiffList of a page: objects carry the graveler's size (see `DiffEntry`:
    a staged removal 0, a removal between commits the size it had), prefixes none."""
    results = []
    for entry in page.entries:
        path = entry.path.decode()
        right = None
        size = entry.size if entry.path_type == "object" else None
        if entry.value is not None and entry.path_type == "object":
            stat = from_value(path, entry.value)
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


def diff_branch(call: Call[None]) -> Response:
    graveler, query = call.services.graveler, call.query
    repository = call.repository
    page = graveler.diffs.diff_uncommitted(
        repository,
        call.path["branch"],
        prefix=query.text("prefix").encode(),
        delimiter=query.text("delimiter").encode(),
        after=query.text("after").encode(),
        amount=query.amount(),
    )
    return json_response(_diff_list(page))


def diff_refs(call: Call[None]) -> Response:
    graveler, query = call.services.graveler, call.query
    repository = call.repository
    mode = query.text("type", "three_dot")
    if mode not in ("two_dot", "three_dot"):
        raise InvalidInputError(f"diff type {mode!r} is invalid; use two_dot or three_dot")
    page = graveler.diffs.diff(
        repository,
        call.path["leftRef"],
        call.path["rightRef"],
        mode="two_dot" if mode == "two_dot" else "three_dot",
        prefix=query.text("prefix").encode(),
        delimiter=query.text("delimiter").encode(),
        after=query.text("after").encode(),
        amount=query.amount(),
    )
    return json_response(_diff_list(page, right_stats=query.flag("include_right_stats")))


def _since(text: str) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise InvalidInputError(f"since {text!r} is not an ISO 8601 date-time") from None


def log_commits(call: Call[None]) -> Response:
    graveler, query = call.services.graveler, call.query
    repository = call.repository
    page = graveler.history.log(
        repository,
        call.path["ref"],
        after=query.text("after"),
        amount=query.amount(),
        limit=query.flag("limit"),
        first_parent=query.flag("first_parent"),
        since=_since(query.text("since")),
        stop_at=query.text("stop_at"),
        paths=[params.check_object_path("objects", p).encode() for p in query.items("objects")],
        prefixes=[p.encode() for p in query.items("prefixes")],
    )
    results = [convert.commit(record.id, record.commit) for record in page.commits]
    return json_response(
        wire.CommitList(
            pagination=pagination(
                len(results), has_more=page.has_more, next_offset=page.next_offset
            ),
            results=results,
        )
    )


_LOG_PARAMS: Final = (
    params.text("after", "return commits after this id"),
    params.Param("amount", "int", minimum=-1, maximum=1000, description="how many commits"),
    params.Param("objects", "list", description="only commits that change these paths"),
    params.Param("prefixes", "list", description="only commits that change these prefixes"),
    params.flag("limit", "stop at the first page even if filters skip commits"),
    params.flag("first_parent", "follow only first parents"),
    params.text("since", "only commits at or after this ISO 8601 date-time"),
    params.text("stop_at", "a ref: list commits down to its commit, included"),
)

OPERATIONS: Final = (
    Operation(
        "logCommits",
        "GET",
        "/repositories/{repository}/refs/{ref}/commits",
        log_commits,
        API_GROUP,
        params=_LOG_PARAMS,
        responses={200: wire.CommitList, 404: None},
        permissions=on_repository("fs:ReadCommit"),
    ),
    Operation(
        "diffRefs",
        "GET",
        "/repositories/{repository}/refs/{leftRef}/diff/{rightRef}",
        diff_refs,
        API_GROUP,
        params=(
            *_DIFF_PARAMS,
            params.choice("type", ("two_dot", "three_dot"), "two_dot or three_dot (default)"),
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
)
