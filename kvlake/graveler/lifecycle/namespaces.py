"""Storage namespace ownership: one repository instance per namespace, never nested.

A namespace's blobs belong to exactly one repository instance, so a purge can
delete everything under it and a bare repository cannot read another's objects.
Each namespace has a claim record (partition `graveler_namespaces`, key
`<normalised namespace>/`, so a namespace inside another has a key that starts
with the outer one's). A claim moves by compare-and-swap only:

    owned   -> kept      the instance was deleted without purge: its data stays
    owned   -> purging   the instance was deleted with purge: its data is going
    purging -> free      the purge finished
    kept    -> owned     a bare repository takes the namespace over (restoring the
                         refs of the deleted repository, lakeFS's migration path)
    free    -> owned     any new repository

A claim `owned` by an instance that is no longer live (its creation failed or
was abandoned) holds nothing; a creation that crashes therefore never needs its
claim released. Deletions settle the claim *before* the repository record
stops being live, so a dead owner with an `owned` claim is always a creation
that never finished.

Nesting is checked after writing the claim: two racing creations of nested
namespaces each see the other's claim (at least one of them does), so at most
one of them succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

import msgspec

from kvlake.blockstore import parse_address
from kvlake.errors import PreconditionFailedError, StorageNamespaceInUseError
from kvlake.graveler import keys
from kvlake.graveler.records import RefsManifest, Repository
from kvlake.kv import Predicate, Store, get_or_none, update

ClaimState = Literal["owned", "kept", "purging", "free"]


class NamespaceClaim(msgspec.Struct, frozen=True, kw_only=True):
    """Which repository instance a storage namespace belongs to, and in what state."""

    repository: str
    instance_uid: str
    state: ClaimState
    since: float
    kept: tuple[str, ...] = ()
    """Instances (`<repository>/<uid>`) deleted without purge whose data this namespace still
    holds and whose refs the owner never restored: a purge by the owner would delete data
    no ref of its own names, so it is refused while this is not empty (issue 23 #7)."""

    def describe_kept(self) -> str:
        """The kept instances for an error message: `'repo1' (instance 0123...)`."""
        return ", ".join(
            f"{name!r} (instance {uid})" for name, _, uid in (k.rpartition("/") for k in self.kept)
        )


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(NamespaceClaim).decode

IsLive = Callable[[str, str], bool]
"""(repository name, instance uid) -> whether that instance is still being created or is active."""


class Namespaces:
    """Claims on storage namespaces. Safe for many threads and processes."""

    def __init__(self, store: Store, *, clock: Callable[[], float], is_live: IsLive) -> None:
        self._store = store
        self._clock = clock
        self._is_live = is_live

    def owner(self, namespace: str) -> NamespaceClaim | None:
        """The namespace's claim record, in any state; None if it was never claimed."""
        loaded = self._load(keys.namespace_key(namespace))
        return loaded[0] if loaded else None

    def claim(self, repository: Repository, *, bare: bool) -> None:
        """Make `repository` (an instance not yet active) the owner of its namespace.

        Raises:
            StorageNamespaceInUseError: another instance holds the namespace, or one
                inside or around it (nothing is left claimed).
            TooManyTriesError: other creations kept moving first (nothing claimed).
        """
        namespace = repository.storage_namespace

        def take(raw: bytes | None) -> bytes:
            # Run again on the claim of another creation that moved first.
            kept: tuple[str, ...] = ()
            if raw is not None:
                current = _decode(raw)
                if self._holds(current, taking_over=bare):
                    raise StorageNamespaceInUseError(_in_use(namespace, namespace, current))
                kept = _still_kept(current)
            return _encode(
                NamespaceClaim(
                    repository=repository.name,
                    instance_uid=repository.instance_uid,
                    state="owned",
                    since=self._clock(),
                    kept=kept,
                )
            )

        key = keys.namespace_key(namespace)
        what = f"claiming storage namespace {namespace!r}"
        mine = _decode(update(self._store, keys.NAMESPACES, key, take, what=what))
        for other, claim in self._nested(namespace):
            if self._holds(claim, taking_over=False):
                self._settle(key, mine, "free")
                raise StorageNamespaceInUseError(_in_use(namespace, other, claim))

    def adopt(self, repository: Repository) -> str:
        """Claim the namespace of an active repository created before namespaces had owners.

        Returns "" when it now owns it (or already did), else why not: another
        instance holds it, or one inside or around it (the two repositories then
        share storage; purge keeps refusing to delete either's data).
        """
        loaded = self._load(keys.namespace_key(repository.storage_namespace))
        if loaded is not None:
            claim = loaded[0]
            if claim.instance_uid == repository.instance_uid and claim.state != "free":
                return ""
        try:
            self.claim(repository, bare=False)
        except (StorageNamespaceInUseError, PreconditionFailedError) as exc:
            return str(exc)
        return ""

    def settle(self, repository: Repository, *, purge: bool) -> None:
        """Record that `repository` is being deleted: its data is kept, or purged.

        Called before the repository record stops being live, and again by a retried
        deletion (which may now ask for the purge). Does nothing when the instance
        does not own the namespace (a repository created before namespaces had
        owners, or one taken over since).
        """
        key = keys.namespace_key(repository.storage_namespace)
        loaded = self._load(key)
        if loaded is None:
            return
        claim, predicate = loaded
        if claim.instance_uid != repository.instance_uid or claim.state in ("free", "purging"):
            return  # not ours, or a purge was asked for: that intent is never taken back
        if claim.state == "owned" and repository.state != "active":
            return  # a creation that never finished: its claim holds nothing
        state: ClaimState = "purging" if purge else "kept"
        if claim.state != state:
            self._settle(key, claim, state, predicate)

    def restored(self, repository: Repository, manifest: RefsManifest) -> None:
        """Record that `manifest`'s refs were restored into `repository`: the data that
        instance kept in the namespace is now referenced by `repository`'s own refs.

        A dump made before dumps named their instance matches by repository name.
        """
        dumped = f"{manifest.repository}/{manifest.instance_uid}"

        def forget_dumped(raw: bytes | None) -> bytes | None:
            # Run again on the claim as settled meanwhile.
            if raw is None:
                return None
            claim = _decode(raw)
            if claim.instance_uid != repository.instance_uid:
                return None  # not ours (taken over since): nothing of ours to record
            left = tuple(
                k
                for k in claim.kept
                if k != dumped
                and not (not manifest.instance_uid and k.rpartition("/")[0] == manifest.repository)
            )
            return (
                None if left == claim.kept else _encode(msgspec.structs.replace(claim, kept=left))
            )

        key = keys.namespace_key(repository.storage_namespace)
        what = f"recording the restore into {repository.name!r} in its namespace's claim"
        update(self._store, keys.NAMESPACES, key, forget_dumped, what=what)

    def release(self, namespace: str, instance_uid: str) -> None:
        """Free a namespace whose purge by `instance_uid` finished. Idempotent."""
        key = keys.namespace_key(namespace)
        loaded = self._load(key)
        if loaded is not None:
            claim, predicate = loaded
            if claim.instance_uid == instance_uid and claim.state == "purging":
                self._settle(key, claim, "free", predicate)

    # -- internals ----------------------------------------------------------------

    def _holds(self, claim: NamespaceClaim, *, taking_over: bool) -> bool:
        """Whether `claim` keeps the namespace from a new owner (a bare one if `taking_over`)."""
        if claim.state == "free":
            return False
        if claim.state == "purging":
            return True
        live = self._is_live(claim.repository, claim.instance_uid)
        if claim.state == "owned":
            return live
        return live or not taking_over  # kept: only a bare repository may take it over

    def _nested(self, namespace: str) -> Iterator[tuple[str, NamespaceClaim]]:
        """Claims on namespaces around `namespace` (ancestors) and inside it."""
        for outer in _ancestors(namespace):
            loaded = self._load(keys.namespace_key(outer))
            if loaded is not None:
                yield outer, loaded[0]
        prefix = keys.namespace_key(namespace)
        with self._store.scan(keys.NAMESPACES, prefix + b"\0") as scan:
            for key, raw in scan:
                if not key.startswith(prefix):
                    break
                yield key[:-1].decode(), _decode(raw)

    def _load(self, key: bytes) -> tuple[NamespaceClaim, Predicate] | None:
        loaded = get_or_none(self._store, keys.NAMESPACES, key)
        return None if loaded is None else (_decode(loaded[0]), loaded[1])

    def _settle(
        self,
        key: bytes,
        claim: NamespaceClaim,
        state: ClaimState,
        predicate: Predicate | None = None,
    ) -> None:
        """Move `claim` to `state`; a claim changed meanwhile is left as it is."""
        expected = predicate or Predicate(_encode(claim))
        moved = msgspec.structs.replace(claim, state=state, since=self._clock())
        try:
            self._store.set_if(keys.NAMESPACES, key, _encode(moved), expected)
        except PreconditionFailedError:
            pass  # taken over or settled by someone else: theirs is the newer truth


def _still_kept(current: NamespaceClaim) -> tuple[str, ...]:
    """What a new owner of a namespace inherits from the claim it replaces: the instances
    whose data stays there unrestored (a kept instance itself, and what it had inherited)."""
    if current.state == "kept":
        return (*current.kept, f"{current.repository}/{current.instance_uid}")
    # An owner that never finished its creation, or a claim freed by a refused creation,
    # passes its inheritance on; a finished purge's is empty (a purge is refused otherwise).
    return current.kept


def _ancestors(namespace: str) -> Iterator[str]:
    """`s3://b/x/y` -> `s3://b`, `s3://b/x`: every namespace that would contain it."""
    address = parse_address(namespace, what="storage namespace")
    for end in range(1, len(address.segments)):
        yield str(address._replace(segments=address.segments[:end]))


def _in_use(wanted: str, held: str, claim: NamespaceClaim) -> str:
    owner = f"repository {claim.repository!r}"
    where = (
        f"storage namespace {wanted!r}"
        if held == wanted
        else f"storage namespace {wanted!r} overlaps {held!r}, which"
    )
    if claim.state == "purging":
        why = f"is being purged with deleted {owner}; retry once the purge finishes"
    elif claim.state == "kept":
        why = (
            f"holds the data of deleted {owner} (deleted without purge). Choose another"
            f" namespace, or create a bare repository on {held!r} and restore that repository's"
            " refs into it"
        )
    else:
        why = f"belongs to {owner}; choose another namespace"
    return f"storage namespace already in use: {where} {why}"
