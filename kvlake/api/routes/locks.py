"""kvlake's object locks extension: leases on object paths, with an owner and an expiry.

The caller is the owner. A lock makes other owners' uploads to the path fail
(409) and makes bulk deletes skip the path; it lasts `ttl` seconds unless
renewed (taken again by its owner) or released. An admin may release
another owner's lock with `force`.
"""

from __future__ import annotations

import itertools
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_object, on_repository
from kvlake.api.routes.operations import is_admin
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import operations as wire
from kvlake.api.wire.common import pagination
from kvlake.errors import PermissionDeniedError
from kvlake.operations import Lock

API_GROUP: Final = "operations"
_PATH: Final = "/repositories/{repository}/locks"


def _wire(lock: Lock) -> wire.ObjectLock:
    return wire.ObjectLock(
        path=lock.path, kind=lock.kind, owner=lock.owner_name, expires_at=lock.expires
    )


def acquire_lock(call: Call[None]) -> Response:
    lock = call.services.lake.locks.acquire(
        call.repository,
        call.query.text("path"),
        owner=call.principal,
        ttl=float(call.query.number("ttl", 300)),
    )
    return json_response(_wire(lock))


def release_lock(call: Call[None]) -> Response:
    force = call.query.flag("force")
    if force and not is_admin(call):
        raise PermissionDeniedError(
            "insufficient permissions: only an admin may release another owner's lock (force)"
        )
    call.services.lake.locks.release(
        call.repository, call.query.text("path"), owner=call.principal, force=force
    )
    return no_content()


def list_locks(call: Call[None]) -> Response:
    after, amount = call.query.text("after"), call.query.amount() or 1
    locks = call.services.lake.locks.list_locks(call.repository, prefix=call.query.text("prefix"))
    page = list(itertools.islice((lock for lock in locks if lock.path > after), amount + 1))
    more = len(page) > amount
    page = page[:amount]
    meta = pagination(len(page), has_more=more, next_offset=page[-1].path if more else "")
    return json_response(
        wire.ObjectLockList(pagination=meta, results=[_wire(lock) for lock in page])
    )


OPERATIONS: Final = (
    Operation(
        "acquireObjectLock",
        "PUT",
        _PATH,
        acquire_lock,
        API_GROUP,
        summary="take or renew a write lock on an object path for ttl seconds",
        params=(
            params.PATH,
            params.Param("ttl", "int", minimum=1, maximum=7 * 24 * 3600, description="seconds"),
        ),
        responses={200: wire.ObjectLock, 409: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "releaseObjectLock",
        "DELETE",
        _PATH,
        release_lock,
        API_GROUP,
        summary="release a write lock (an admin may force another owner's)",
        params=(params.PATH, params.flag("force", "release another owner's lock (admins)")),
        responses={204: None, 409: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "listObjectLocks",
        "GET",
        _PATH,
        list_locks,
        API_GROUP,
        summary="live write locks (explicit and uploads') on paths under a prefix",
        params=params.PAGE,
        responses={200: wire.ObjectLockList},
        permissions=on_repository("fs:ListObjects"),
    ),
)
