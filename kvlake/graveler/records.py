"""The records graveler keeps in the KV store, as frozen msgspec structs.

Values are opaque to graveler: the catalog encodes an object's metadata into
`data`, and an identity hash over everything except the physical address, so
that two writes of the same content compare equal in diffs, merges and retries.
Records are encoded as MessagePack; `encode`/`decode_*` are the only codecs.
"""

from __future__ import annotations

from typing import Literal

import msgspec

RepositoryState = Literal["initial", "active", "deleting", "deleted"]
DiffType = Literal["added", "removed", "changed"]
PathType = Literal["object", "common_prefix"]
ProtectedAction = Literal["staging_write", "commit", "delete"]
TokenState = Literal["staging", "sealed", "consumed", "dropped"]
"""What a staging token is to its repository (see `Graveler.references.token_states`)."""


class Value(msgspec.Struct, frozen=True, kw_only=True, array_like=True, gc=False):
    """What graveler stores under a key: an identity for comparisons and opaque data.

    `gc=False`: a Value holds bytes only, so it can never be part of a reference
    cycle; a commit decodes millions of them, and tracking each one made Python's
    cyclic collector half the cost of reading staged entries.
    """

    identity: bytes
    data: bytes


class Repository(msgspec.Struct, frozen=True, kw_only=True):
    """A repository record, under `repos/<name>` in the `graveler` partition.

    `instance_uid` is new for every creation, so a repository created again under
    an old name reads a different instance partition and sees nothing of the old.
    A `deleted` record is a tombstone: the name is free, and creating it again
    replaces the tombstone with compare-and-swap (no unguarded delete can race a
    new creation).
    """

    name: str
    storage_namespace: str
    default_branch: str
    creation_date: float
    state: RepositoryState
    instance_uid: str
    state_changed: float = 0.0


class Branch(msgspec.Struct, frozen=True, kw_only=True):
    """A branch: its commit, the staging token writers use, and tokens being committed.

    `sealed_tokens` are newest first; each is a staging partition whose writes
    are not yet in `commit_id` but are visible to readers. `hidden` is lakeFS's
    hidden branch (listings leave it out). `tombstone_tokens` lists the tokens
    that may hold range tombstones (kvlake/graveler/staging/range_tombstones.py), listed
    before the first is written, so readers look for them only there.
    """

    commit_id: str
    staging_token: str
    sealed_tokens: tuple[str, ...] = ()
    hidden: bool = False
    # Stored as "hiding" (range tombstones' first name): records on disk keep reading.
    tombstone_tokens: tuple[str, ...] = msgspec.field(default=(), name="hiding")

    def tokens(self) -> tuple[str, ...]:
        """Every staging token, in the order readers consult them (newest first)."""
        return (self.staging_token, *self.sealed_tokens)

    def tombstone_tokens_among(self, tokens: tuple[str, ...]) -> tuple[str, ...]:
        """The tokens of `tombstone_tokens` that are among `tokens`."""
        return tuple(token for token in self.tombstone_tokens if token in tokens)

    def with_tokens(
        self,
        *,
        commit_id: str | None = None,
        staging_token: str | None = None,
        sealed_tokens: tuple[str, ...] | None = None,
    ) -> Branch:
        """This branch with another commit or other tokens (None: as they are): the one
        way a new record is made from an old one, so none forgets `hidden` (lakeFS's
        hidden branch) or keeps listing in `tombstone_tokens` a token the branch no longer names."""
        staging = self.staging_token if staging_token is None else staging_token
        sealed = self.sealed_tokens if sealed_tokens is None else sealed_tokens
        return Branch(
            commit_id=self.commit_id if commit_id is None else commit_id,
            staging_token=staging,
            sealed_tokens=sealed,
            hidden=self.hidden,
            tombstone_tokens=self.tombstone_tokens_among((staging, *sealed)),
        )


class Commit(msgspec.Struct, frozen=True, kw_only=True):
    """An immutable commit; its id is the hash of these fields (see `commit_id`), but
    `creation_nanos`.

    `creation_date` is in whole seconds, as lakeFS's API carries it; `creation_nanos`
    (the nanoseconds past that second, 0 for commits dated by a caller or stored
    before it existed) only orders commits made in one second, as lakeFS's own
    sub-second commit times do. It stays out of the id, so the ids of commits, old
    and new, and of restored commit records (whose dates are whole seconds) are what
    their whole-second fields make them.

    `depth`, `skip` and `merge_depth` stay out of the id too: they are what walks of
    the history jump by (`kvlake.graveler.refs.lineage`), set as the commit is
    stored, and 0 or empty on records stored before kvlake recorded them.
    """

    committer: str
    message: str
    metarange_id: str
    creation_date: int
    parents: tuple[str, ...]
    metadata: dict[str, str]
    generation: int
    creation_nanos: int = 0
    depth: int = 0
    skip: str = ""
    merge_depth: int = 0


def commit_time(now: float) -> tuple[int, int]:
    """A clock reading as a commit's (`creation_date`, `creation_nanos`)."""
    seconds = int(now)
    return seconds, min(int((now - seconds) * 1_000_000_000), 999_999_999)


class Tag(msgspec.Struct, frozen=True, kw_only=True):
    """A tag names one commit forever (until deleted)."""

    commit_id: str


class DeletedRepository(msgspec.Struct, frozen=True, kw_only=True):
    """A repository instance waiting for the cleaner (partition `graveler_deleted`)."""

    name: str
    instance_uid: str
    storage_namespace: str


class DroppedToken(msgspec.Struct, frozen=True, kw_only=True):
    """A staging partition no branch references any more, to drop once due."""

    repository: str
    instance_uid: str
    token: str
    branch: str = ""
    """The branch whose record named the token when it was queued ("" if unknown: older
    entries). A token is named by one branch only (each is made fresh for one branch,
    and seals move it within that branch), so the cleaner reads that branch's record
    alone to tell whether the token is still referenced, not every branch."""


class ConsumedToken(msgspec.Struct, frozen=True, kw_only=True):
    """Commits about to publish the entries of a staging token, under `consumed_tokens/<token>`.

    Each commit adds its id before its publishing compare-and-swap (a rebuild adds
    the new id), so racing commits never erase each other's claim and a commit
    can later tell whether one that the branch history holds took its tokens.
    An id may name a commit that lost its publish: it then only makes the
    token's blobs garbage collection's, which is safe. The deletion worker reads
    it through `Graveler.references.token_states` instead of walking history.
    """

    commit_ids: tuple[str, ...] = ()
    empty_over: tuple[str, ...] = ()
    """Parents over which a commit found these tokens (with older sealed ones) to change
    nothing, and unsealed them: not consumed, so their blobs are logged as dropped."""


class BranchProtection(msgspec.Struct, frozen=True, kw_only=True):
    """Branch protection rules of a repository, under `settings/branch_protection`.

    `rules` maps an fnmatch-style branch name pattern to the actions it blocks.
    """

    rules: dict[str, tuple[ProtectedAction, ...]] = {}


class RepositoryMetadata(msgspec.Struct, frozen=True, kw_only=True):
    """A repository's metadata (free-form strings), under `settings/repository_metadata`."""

    metadata: dict[str, str] = {}


class GarbageCollectionRules(msgspec.Struct, frozen=True, kw_only=True):
    """A repository's garbage collection rules, under `settings/gc_rules`.

    Days a branch's history stays retained (see retention.py): `branch_retention_days`
    for the branches named there, `default_retention_days` for the others and for
    commits no branch holds. 0 retains only the branch heads.
    """

    default_retention_days: int
    branch_retention_days: dict[str, int] = {}


PullRequestStatus = Literal["open", "closed", "merged"]


class PullRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A pull request (lakeFS's): merge `source` into `destination` once reviewed."""

    title: str
    description: str
    author: str
    source: str
    destination: str
    creation_date: float
    status: PullRequestStatus = "open"
    closed_date: float | None = None
    merged_commit_id: str | None = None


class MultipartUpload(msgspec.Struct, frozen=True, kw_only=True):
    """An S3 multipart upload in progress, under `uploads/<key>\\0<uid>` in its repository
    instance's partition, so ListMultipartUploads can find it (the upload id the client
    holds carries the same fields, so no other call reads this record).

    `key` is the gateway's `<branch>/<path>`; `uid` the sortable uid of `address`, so
    one key's uploads list in the order they were started.
    """

    key: str
    uid: str
    address: str
    store_upload_id: str
    initiated: float
    initiator: str = ""
    content_type: str = ""
    metadata: dict[str, str] = {}
    checksum_algorithm: str = ""


class DumpedRef(msgspec.Struct, frozen=True, kw_only=True):
    """A branch or tag in a refs dump: its name and commit (staging is not dumped)."""

    name: str
    commit_id: str


class RefsManifest(msgspec.Struct, frozen=True, kw_only=True):
    """The manifest of a refs dump, written last: a dump without one is incomplete."""

    dump_id: str
    repository: str
    default_branch: str
    created: float
    commits: int
    branches: int
    tags: int
    instance_uid: str = ""
    """The dumped repository instance ("" in dumps made before it was recorded): restoring
    it into a bare repository that took over its namespace makes its kept data that
    repository's own (`Namespaces.restored`)."""


# -- results of history operations (returned to callers, never stored in the KV) --


class CommitRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A commit with its id, as a log returns it."""

    id: str
    commit: Commit


class LogPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a log; `next_offset` is the `after` that fetches the next page."""

    commits: list[CommitRecord]
    has_more: bool
    next_offset: str


class RetainedCommit(msgspec.Struct, frozen=True, kw_only=True):
    """A commit garbage collection must keep, with the metarange whose data it keeps."""

    commit_id: str
    metarange_id: str


class DiffEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One difference: a path added, removed or changed, or a common prefix holding some.

    `value` is the new value (None when removed, and for a common prefix);
    `size` is its size as the graveler's `value_size` tells it; for a removal
    between commits the size the object had, for a staged removal 0 (lakeFS's).
    """

    type: DiffType
    path: bytes
    path_type: PathType
    size: int
    value: Value | None


class DiffPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a diff; `next_offset` is the `after` that fetches the next page."""

    entries: list[DiffEntry]
    has_more: bool
    next_offset: bytes


_encoder = msgspec.msgpack.Encoder()
encode = _encoder.encode

decode_value = msgspec.msgpack.Decoder(Value).decode
decode_repository = msgspec.msgpack.Decoder(Repository).decode
decode_branch = msgspec.msgpack.Decoder(Branch).decode
decode_commit = msgspec.msgpack.Decoder(Commit).decode
decode_tag = msgspec.msgpack.Decoder(Tag).decode
decode_deleted_repository = msgspec.msgpack.Decoder(DeletedRepository).decode
decode_dropped_token = msgspec.msgpack.Decoder(DroppedToken).decode
decode_consumed_token = msgspec.msgpack.Decoder(ConsumedToken).decode
decode_branch_protection = msgspec.msgpack.Decoder(BranchProtection).decode
decode_repository_metadata = msgspec.msgpack.Decoder(RepositoryMetadata).decode
decode_gc_rules = msgspec.msgpack.Decoder(GarbageCollectionRules).decode
decode_pull_request = msgspec.msgpack.Decoder(PullRequest).decode
decode_multipart_upload = msgspec.msgpack.Decoder(MultipartUpload).decode
