"""Refs dump and restore: a repository's branches, tags and commits as files, and back.

A dump writes JSON lines under `_lakefs/refs_manifest/<dump id>/` in the
storage namespace (`branches.jsonl`, `tags.jsonl`, `commits.jsonl`), then
`manifest.json` last, so a dump without a manifest is known to be incomplete.
Branches and tags are read from the KV store before commits: every commit a
dumped ref names was stored before that ref pointed at it, so the dump is
closed even while commits race. Commits keep their ids (content addresses), so
a restore into a bare repository over the same `_lakefs/` files gives the same
history and contents. Files are streamed both ways; memory holds one line,
plus the set of commit ids the refs name while a restore is checked.

A restore checks the whole dump first (every commit hashes to its id, every
ref names a dumped commit, the default branch is there) and writes nothing if
any check fails; then it writes commits, tags and branches, in that order.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Final, TypeVar

import msgspec

from kvlake import ids
from kvlake.blockstore.chunks import ChunkReader
from kvlake.blockstore.store import BlockStore
from kvlake.errors import BlobNotFoundError, InvalidInputError, NotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import Branch, CommitRecord, DumpedRef, RefsManifest, Repository, Tag
from kvlake.graveler.refs.store import Refs, commit_id

DUMP_PREFIX: Final = "_lakefs/refs_manifest/"

_T = TypeVar("_T")
_encode = msgspec.json.Encoder().encode


def dump_key(dump_id: str, name: str) -> str:
    return f"{DUMP_PREFIX}{dump_id}/{name}"


class RefsDumper:
    """Dumps and restores the refs of one graveler's repositories. Thread-safe."""

    def __init__(
        self,
        *,
        refs: Refs,
        blockstore: BlockStore,
        clock: Callable[[], float],
        on_restored: Callable[[Repository, RefsManifest], None] = lambda _r, _m: None,
    ) -> None:
        self._refs = refs
        self._blockstore = blockstore
        self._clock = clock
        self._on_restored = on_restored

    def dump(self, repository: Repository) -> RefsManifest:
        """Write the repository's branches, tags and commits to its storage namespace.

        Returns the manifest; its `dump_id` names the dump for `restore`.
        """
        dump_id = ids.new_uid()
        counts = {"branches": 0, "tags": 0, "commits": 0}

        def lines(kind: str, records: Iterator[msgspec.Struct]) -> Iterator[bytes]:
            for record in records:
                counts[kind] += 1
                yield _encode(record) + b"\n"

        refs, where = self._refs, repository
        branches = (DumpedRef(name=n, commit_id=b.commit_id) for n, b in refs.list_branches(where))
        tags = (DumpedRef(name=n, commit_id=t.commit_id) for n, t in refs.list_tags(repository))
        commits = (CommitRecord(id=i, commit=c) for i, c in refs.list_commits(repository))
        for kind, records in (("branches", branches), ("tags", tags), ("commits", commits)):
            self._put(repository, dump_key(dump_id, f"{kind}.jsonl"), lines(kind, records))
        manifest = RefsManifest(
            dump_id=dump_id,
            repository=repository.name,
            instance_uid=repository.instance_uid,
            default_branch=repository.default_branch,
            created=self._clock(),
            commits=counts["commits"],
            branches=counts["branches"],
            tags=counts["tags"],
        )
        self._put(repository, dump_key(dump_id, "manifest.json"), iter([_encode(manifest)]))
        return manifest

    def restore(self, repository: Repository, dump_id: str) -> RefsManifest:
        """Write a dump's commits, tags and branches into a bare repository.

        Branches get fresh, empty staging. The repository's storage namespace
        must hold the dump and the `_lakefs/` files its commits name.

        Raises:
            InvalidInputError: the repository is not bare, or the dump is
                inconsistent (nothing is written then).
            NotFoundError: no complete dump with that id in the storage namespace.
        """
        manifest = self.load_manifest(repository, dump_id)
        if not self.is_bare(repository):
            raise InvalidInputError(
                f"repository {repository.name!r} already has branches, tags or commits; "
                f"restore refs only into a bare repository (create_bare_repository)"
            )
        self._check(repository, manifest)
        self._refs.add_commits(
            repository, ((r.id, r.commit) for r in self._read_commits(repository, manifest))
        )
        for tag in self._read_refs(repository, manifest, "tags"):
            self._refs.create_tag(repository, tag.name, Tag(commit_id=tag.commit_id))
        for ref in self._read_refs(repository, manifest, "branches"):
            token = keys.new_staging_token(repository.instance_uid)
            self._refs.create_branch(
                repository, ref.name, Branch(commit_id=ref.commit_id, staging_token=token)
            )
        # Only now are the dumped instance's blobs referenced here: its kept data is ours.
        self._on_restored(repository, manifest)
        return manifest

    def is_bare(self, repository: Repository) -> bool:
        """Whether the repository has no branch, tag or commit (what a restore needs)."""
        return not self._refs.has_refs(repository)

    @staticmethod
    def check_dump_id(dump_id: str) -> None:
        """Raises InvalidInputError unless `dump_id` has the shape of a dump's id."""
        if not isinstance(dump_id, str) or len(dump_id) != ids.UID_LENGTH or not dump_id.isalnum():
            raise InvalidInputError(
                f"refs dump id {dump_id!r} is invalid; pass the dump_id a dump returned"
            )

    def load_manifest(self, repository: Repository, dump_id: str) -> RefsManifest:
        """Raises NotFoundError when there is no complete dump `dump_id`."""
        self.check_dump_id(dump_id)
        try:
            data = self._blockstore.get(
                repository.storage_namespace, dump_key(dump_id, "manifest.json")
            )
        except BlobNotFoundError:
            raise NotFoundError(
                f"no complete refs dump {dump_id!r} in storage namespace "
                f"{repository.storage_namespace!r}; dump the refs again"
            ) from None
        return msgspec.json.decode(data, type=RefsManifest)

    def _check(self, repository: Repository, manifest: RefsManifest) -> None:
        """Read the whole dump and refuse it, before any write, if it is inconsistent."""
        named: set[str] = set()
        names: dict[str, set[str]] = {"branches": set(), "tags": set()}
        for kind in ("branches", "tags"):
            for ref in self._read_refs(repository, manifest, kind):
                named.add(ref.commit_id)
                names[kind].add(ref.name)
        if manifest.default_branch not in names["branches"]:
            raise self._corrupt(manifest, f"default branch {manifest.default_branch!r} is missing")
        count = 0
        for record in self._read_commits(repository, manifest):
            count += 1
            if commit_id(record.commit) != record.id:
                raise self._corrupt(manifest, f"commit {record.id!r} does not match its content")
            named.discard(record.id)
        if named:
            raise self._corrupt(manifest, f"refs name missing commits, e.g. {min(named)!r}")
        sizes = (count, len(names["branches"]), len(names["tags"]))
        if sizes != (manifest.commits, manifest.branches, manifest.tags):
            raise self._corrupt(manifest, "its files do not hold what the manifest counts")

    def _read_commits(
        self, repository: Repository, manifest: RefsManifest
    ) -> Iterator[CommitRecord]:
        return self._read(repository, dump_key(manifest.dump_id, "commits.jsonl"), CommitRecord)

    def _read_refs(
        self, repository: Repository, manifest: RefsManifest, kind: str
    ) -> Iterator[DumpedRef]:
        return self._read(repository, dump_key(manifest.dump_id, f"{kind}.jsonl"), DumpedRef)

    def _read(self, repository: Repository, key: str, kind: type[_T]) -> Iterator[_T]:
        decoder = msgspec.json.Decoder(kind)
        try:
            reader = self._blockstore.open_reader(repository.storage_namespace, key)
        except BlobNotFoundError:
            raise NotFoundError(
                f"refs dump file {key!r} is missing from storage namespace "
                f"{repository.storage_namespace!r}; dump the refs again"
            ) from None
        with reader:
            for line in reader:
                yield decoder.decode(line)

    def _put(self, repository: Repository, key: str, lines: Iterator[bytes]) -> None:
        with io.BufferedReader(ChunkReader(lines), buffer_size=1 << 20) as stream:
            self._blockstore.put(repository.storage_namespace, key, stream)

    @staticmethod
    def _corrupt(manifest: RefsManifest, what: str) -> InvalidInputError:
        return InvalidInputError(
            f"refs dump {manifest.dump_id!r} is inconsistent: {what}; nothing was restored, "
            f"dump the refs again"
        )
