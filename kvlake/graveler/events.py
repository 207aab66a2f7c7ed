"""Events graveler announces around the operations that move refs, for lakeFS-style actions.

Graveler is the one place every door (REST API, S3 gateway, pull requests)
commits, merges and moves branches and tags, so it is where hooks are called,
as lakeFS's graveler calls its hooks handler. The handler lives above
(`kvlake/actions`) and is given to graveler as `EventHooks`. Every call is made
outside any KV compare-and-swap loop and holds no lock, so a slow hook never
blocks writers (invariant 3): a pre-event runs before the operation reads the
state it will change, a post-event after its last write.
"""

from __future__ import annotations

from typing import Final, Protocol

import msgspec

from kvlake.graveler.records import Repository

EVENT_TYPES: Final = (
    "prepare-commit",
    "pre-commit",
    "post-commit",
    "pre-merge",
    "post-merge",
    "pre-create-branch",
    "post-create-branch",
    "pre-delete-branch",
    "post-delete-branch",
    "pre-create-tag",
    "post-create-tag",
    "pre-delete-tag",
    "post-delete-tag",
    "pre-revert",
    "post-revert",
    "pre-cherry-pick",
    "post-cherry-pick",
)
"""lakeFS's event names (pkg/graveler/hooks_handler.go), the `on:` keys of action files."""


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """One event: the fields lakeFS's hook record carries, by its payload names.

    `source_ref` is the ref the actions are read from (lakeFS reads each event's
    action files there): the branch before a commit, the merge source before a
    merge, the new commit after either.
    """

    event_type: str
    repository_id: str
    source_ref: str
    branch_id: str = ""
    tag_id: str = ""
    commit_id: str = ""
    commit_message: str = ""
    committer: str = ""
    commit_metadata: dict[str, str] = msgspec.field(default_factory=dict)
    merge_source: str = ""
    extra: dict[str, object] = {}
    """kvlake's fields beyond lakeFS's (JSON values only), added to the payload beside
    lakeFS's: a bulk delete's operation id, prefix, filters and counts. lakeFS's field
    names are never taken from here."""


class EventHooks(Protocol):
    """What graveler calls around its operations (kvlake/actions implements it)."""

    def pre(self, repository: Repository, event: Event) -> None:
        """Run the pre-event's hooks. Raises HookAbortedError to refuse the operation."""

    def post(self, repository: Repository, event: Event) -> None:
        """Run the post-event's hooks; failures are recorded, never raised."""

    def queue_post(self, repository: Repository, event: Event, *, key: str) -> None:
        """Queue the post-event for a background pass to run its hooks, once per `key`
        while it waits: for callers that are background work themselves (the operations
        runner) and must not wait on hooks. Raises UnavailableError (retry: same key)."""
