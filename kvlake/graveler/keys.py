"""Graveler's KV key schema: the only place that spells partitions and keys.

Every name is built so that no two different inputs give the same bytes:
repository names use `[a-z0-9-]` and end the partition name before a fixed-width
instance uid; branch, tag and commit names contain no `/`; staging partitions
carry a prefix no repository partition can have (`/` is not allowed in
repository names); dropped tokens start with a fixed-width due key. The uid and
due key encodings themselves are kvlake/ids.py's.
"""

from __future__ import annotations

import re

from kvlake import ids
from kvlake.blockstore import canonical_address

REPOSITORIES = b"graveler"
DELETED_REPOSITORIES = b"graveler_deleted"
DROPPED_TOKENS = b"graveler_dropped_tokens"
DROPPED_BY_TOKEN = b"graveler_dropped_by_token"
"""`<token>` -> its `DROPPED_TOKENS` key: the queue looked up by token, so the orphan sweep
asks about its slice's tokens with point reads, not a scan of the queue (issue 33)."""
NAMESPACES = b"graveler_namespaces"
"""`<normalised namespace>/` -> the repository instance that owns it (see namespaces.py)."""
CREATIONS = b"graveler_creations"
"""`<repository name>/<instance uid>` -> "": a creation that may still be `initial`, so the
cleaner's search for crashed creations reads these, not every repository record."""
ORPHANS = b"graveler_orphans"
"""`<partition name>` -> when the cleaner first found that partition orphaned (see orphans.py)."""
LIVE_REPOSITORIES = b"graveler_live"
"""`<repository name>\\0<instance uid>` -> "": an instance not yet deleted (initial, active or
deleting), so a listing scans these, not the tombstones that keep deleted names (issue 33)."""
INSTANCES = b"graveler_instances"
"""`<instance uid>` -> repository name: every instance a creation indexed, until the cleaner
has removed it, so the orphan sweep finds the owner of a staging partition (named by uid)
with point reads, not a scan of every repository record (issue 33)."""
TOMBSTONES = b"graveler_tombstones"
"""`<due ms>/<repository name>/<instance uid>` -> "": a cleaned instance whose `deleted`
record (its tombstone) goes once due, if nothing needs it any more (tombstones.py)."""
INDEXES = b"graveler_indexes"
"""`<index name>` -> "": that index was built over the records older than it (see
`LIVE_INDEX_BUILT`)."""
LIVE_INDEX_BUILT = b"live-repositories"
INSTANCES_INDEX_BUILT = b"instance-names"
DROPPED_INDEX_BUILT = b"dropped-by-token"
"""In `INDEXES`: the queue entries older than `DROPPED_BY_TOKEN` were indexed."""
TOMBSTONES_QUEUED = b"tombstones-queued"
"""In `INDEXES`: the tombstones older than their queue (`TOMBSTONES`) were queued."""
SWEEP = b"graveler_sweep"
"""`SWEEP_CURSOR` -> the last partition the orphan sweep looked at (see orphans.py)."""
SWEEP_CURSOR = b"cursor"

BRANCH_PREFIX = b"branches/"
COMMIT_PREFIX = b"commits/"
TAG_PREFIX = b"tags/"
SETTING_PREFIX = b"settings/"
CONSUMED_TOKEN_PREFIX = b"consumed_tokens/"
GC_RULES = SETTING_PREFIX + b"gc_rules"
"""In the instance partition: the repository's garbage collection rules (see gcrules.py)."""
PULL_PREFIX = b"pulls/"
OPEN_PULLS_PREFIX = b"open_pulls/"
"""`open_pulls/<repo>-<uid>`: the instance's index of pull requests that may be open,
`<id>` -> "", so listing the open ones reads past no closed one (see pulls.py). A partition
of its own, dropped by the cleaner with the instance."""
VISIBLE_BRANCHES_PREFIX = b"visible_branches/"
"""`visible_branches/<repo>-<uid>`: the instance's visible-branch index, `<name>` -> "" (see
visible.py). A partition of its own, so its scans read nothing else and no other scan
reads it; the cleaner drops it with the instance."""
VISIBLE_BRANCHES_BUILT = b"indexes/visible_branches"
"""In the instance partition: the visible-branches index was built over the older records."""
OPEN_PULLS_BUILT = b"indexes/open_pulls"
"""In the instance partition: the open-pulls index was built over the older records."""
SEALING_PREFIX = b"sealing/"
"""In the instance partition: `sealing/<token>` -> branch name, a token a commit seals or
sealed, written before the seal's swap (see kvlake/graveler/refs/sealing.py)."""
SEALING_BUILT = b"indexes/sealing"
"""In the instance partition: the sealing index was built over the older records."""
UPLOAD_PREFIX = b"uploads/"
UPLOAD_PART_PREFIX = b"upload_parts/"

STAGING_PREFIX = b"staging/"

_INSTANCE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def creation_key(name: str, instance_uid: str) -> bytes:
    return f"{name}/{instance_uid}".encode()


def parse_creation_key(key: bytes) -> tuple[str, str]:
    """(repository name, instance uid) of a `creation_key`."""
    name, _, uid = key.decode().rpartition("/")
    return name, uid


def parse_staging_partition(partition: bytes) -> tuple[str, str] | None:
    """(instance uid, token) of a staging partition's name, or None for another partition."""
    if not partition.startswith(STAGING_PREFIX):
        return None
    token = partition[len(STAGING_PREFIX) :].decode(errors="replace")
    instance_uid, _, token_uid = token.partition("_")
    if len(instance_uid) != ids.UID_LENGTH or len(token_uid) != ids.UID_LENGTH:
        return None
    return instance_uid, token


def parse_instance_partition(partition: bytes) -> tuple[str, str] | None:
    """(repository name, instance uid) of an instance partition's name, or None."""
    name, dash, uid = partition.decode(errors="replace").rpartition("-")
    if not dash or not _INSTANCE_NAME.fullmatch(name) or not ids.is_uid(uid):
        return None
    return name, uid


def repository_key(name: str) -> bytes:
    return b"repos/" + name.encode()


def namespace_key(namespace: str) -> bytes:
    """`<canonical namespace>/`: a namespace nested inside another has a key starting with the
    outer's, and every spelling of one place (`s3:///b/p`, `s3://b/p`) has one key."""
    return canonical_address(namespace, what="storage namespace").encode() + b"/"


def tombstone_key(due: float, name: str, instance_uid: str) -> bytes:
    """`<due ms>/<name>/<uid>`: ordered by due time, so a pass stops at the first not due."""
    return ids.due_key(due) + b"/" + creation_key(name, instance_uid)


def parse_tombstone_key(key: bytes) -> tuple[float, str, str]:
    """(due time, repository name, instance uid) of a `tombstone_key`."""
    name, uid = parse_creation_key(key[ids.DUE_WIDTH + 1 :])
    return ids.due_of(key), name, uid


def live_repository_key(name: str, instance_uid: str) -> bytes:
    """`<name>\\0<uid>`: names hold no NUL and NUL sorts before every name character, so
    these keys sort as the names do, and each instance has its own key (dropping one never
    drops a newer instance's)."""
    return name.encode() + b"\0" + instance_uid.encode()


def live_repository_prefix(name_prefix: str) -> bytes:
    """The first `live_repository_key` a name starting with `name_prefix` can have."""
    return name_prefix.encode()


def parse_live_repository_key(key: bytes) -> tuple[str, str]:
    """(repository name, instance uid) of a `live_repository_key`."""
    name, _, uid = key.partition(b"\0")
    return name.decode(), uid.decode()


def deleted_repository_key(name: str, instance_uid: str) -> bytes:
    return b"repo/" + name.encode() + b"/" + instance_uid.encode()


def instance_partition(name: str, instance_uid: str) -> bytes:
    """`<name>-<uid>`: unambiguous because the uid has a fixed width and comes last."""
    return name.encode() + b"-" + instance_uid.encode()


def staging_partition(token: str) -> bytes:
    return STAGING_PREFIX + token.encode()


def staging_prefix(instance_uid: str) -> bytes:
    """What every staging partition of that instance starts with (`new_staging_token`)."""
    return STAGING_PREFIX + instance_uid.encode() + b"_"


def new_staging_token(instance_uid: str) -> str:
    """A fresh token; it embeds the instance uid so leftovers can be traced to their owner."""
    return instance_uid + "_" + ids.new_uid()


def branch_key(name: str) -> bytes:
    return BRANCH_PREFIX + name.encode()


def sealing_key(token: str) -> bytes:
    return SEALING_PREFIX + token.encode()


def commit_key(commit_id: str) -> bytes:
    return COMMIT_PREFIX + commit_id.encode()


def tag_key(name: str) -> bytes:
    return TAG_PREFIX + name.encode()


def setting_key(name: str) -> bytes:
    return SETTING_PREFIX + name.encode()


def pull_key(pull_id: str) -> bytes:
    return PULL_PREFIX + pull_id.encode()


def visible_branches_partition(name: str, instance_uid: str) -> bytes:
    """Repository names hold no `/`, so this never names an instance or staging partition."""
    return VISIBLE_BRANCHES_PREFIX + instance_partition(name, instance_uid)


def open_pulls_partition(name: str, instance_uid: str) -> bytes:
    return OPEN_PULLS_PREFIX + instance_partition(name, instance_uid)


def upload_key(key: str, uid: str) -> bytes:
    """`uploads/<key>\\0<uid>` in the instance partition: an S3 multipart upload in progress.

    A key holds no NUL (check_path), so one key's uploads sort together, by uid,
    before any longer key's.
    """
    return UPLOAD_PREFIX + key.encode() + b"\0" + uid.encode()


def upload_part_key(uid: str, part: int, etag: str) -> bytes:
    """`upload_parts/<uid>/<part, 5 digits>/<etag>`: one sent part's S3 checksum.

    Keyed by the part's ETag too, so a part sent again never takes the earlier
    one's checksum: Complete names parts by number and ETag.
    """
    return upload_parts_prefix(uid) + b"%05d/" % part + etag.encode()


def upload_parts_prefix(uid: str) -> bytes:
    return UPLOAD_PART_PREFIX + uid.encode() + b"/"


def consumed_token_key(token: str) -> bytes:
    """In the instance partition: which commit consumed a staging token (see commits.py)."""
    return CONSUMED_TOKEN_PREFIX + token.encode()


def dropped_token_key(due: float, token: str) -> bytes:
    """`<due ms>/<token>`: ordered by due time, so the cleaner's scan stops at the first not due.

    The due time is clamped to what `ids.due_key` can represent.
    """
    return ids.due_key(due) + b"/" + token.encode()


def dropped_token_of(dropped_key: bytes) -> str:
    """The token a `dropped_token_key` names."""
    return dropped_key[ids.DUE_WIDTH + 1 :].decode()


def due_time(dropped_key: bytes) -> float:
    """The due time (seconds) a `dropped_token_key` was written with."""
    return ids.due_of(dropped_key)
