"""Imports: a metarange of entries made elsewhere, committed onto a branch as one commit.

lakeFS's import: the catalog lists an external location and writes its entries
as a metarange (`CommittedManager.write_metarange`, streamed: memory holds one
range), then `commit_metarange` publishes one commit on the branch's head whose
content is the head's with each destination replaced by the import's entries
there. A prefix destination is replaced whole (what the head held under it and
the import does not is gone in the new commit), an object destination is one
key. Like a merge it needs a clean branch, and is rebuilt on a new head when a
racing commit wins, from the stored metarange, never by listing again.

The import's status lives in the repository instance's partition
(`imports/<id>`) and changes by compare-and-swap only, so a cancel is never lost
under a progress update; it dies with the repository instance.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import Change, CommittedManager
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.records import Commit, Repository, Value, commit_time
from kvlake.kv import Store


class Imports:
    """Commits import metaranges and keeps import statuses. Thread-safe."""

    def __init__(
        self,
        store: Store,
        *,
        committed: CommittedManager,
        committer: Committer,
        clock: Callable[[], float],
    ) -> None:
        self._store = store
        self._committed = committed
        self._committer = committer
        self._clock = clock

    def commit_metarange(
        self,
        repository: Repository,
        branch: str,
        metarange_id: str,
        *,
        prefixes: Sequence[bytes],
        objects: Sequence[bytes],
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        keep_staged: bool = False,
        precondition: Callable[[str, Commit], None] | None = None,
        above: str = "",
    ) -> str:
        """Publish one commit on the clean branch: its head with the destinations replaced.

        `prefixes` are replaced whole by the metarange's entries under them and
        `objects` key by key; the metarange holds nothing outside them. No
        destination may start with another (`check_destinations`).

        With `keep_staged`, the branch may have uncommitted changes: the commit
        holds only the head and the metarange, and what is staged stays staged
        on top of it (a Spark job's commit while others write to the branch).
        `precondition(head_id, head)` runs before each build, on the head the
        commit will be swapped onto; what it raises aborts the commit (a
        streaming micro-batch that the branch's history already holds).
        `above` (with `keep_staged`) names a filled staging token published in
        the same swap, above what is staged (`Committer.publish_token`): the
        tombstones that unstage what the commit replaces.

        Raises:
            DirtyBranchError: the branch has uncommitted changes (without `keep_staged`).
            BranchNotFoundError: no such branch.
            InvalidInputError: overlapping destinations.
            TooManyTriesError: racing commits kept winning.
        """
        self.check_destinations(prefixes, objects)
        namespace = repository.storage_namespace

        def build(head_id: str, head: Commit) -> Commit:
            if precondition is not None:
                precondition(head_id, head)
            changes = _replacing(
                self._committed.scan(namespace, metarange_id),
                self._existing(namespace, head.metarange_id, sorted(prefixes)),
            )
            seconds, nanos = commit_time(self._clock())
            return Commit(
                committer=committer,
                message=message,
                metarange_id=self._committed.apply(namespace, head.metarange_id, changes),
                creation_date=seconds,
                creation_nanos=nanos,
                parents=(head_id,),
                metadata=dict(metadata or {}),
                generation=head.generation + 1,
            )

        if keep_staged and above:
            return self._committer.publish_token(repository, branch, above, build)
        if keep_staged:
            return self._committer.commit_under_staged(repository, branch, build)
        return self._committer.commit_on_clean_head(repository, branch, build)

    @staticmethod
    def check_destinations(prefixes: Sequence[bytes], objects: Sequence[bytes]) -> None:
        """Refuse destinations of which one starts with another: their entries would mix.

        Raises:
            InvalidInputError: two destinations overlap.
        """
        destinations = sorted((*prefixes, *objects))
        for before, after in zip(destinations, destinations[1:], strict=False):
            if after.startswith(before):
                raise InvalidInputError(
                    f"import destinations {before.decode()!r} and {after.decode()!r} overlap;"
                    " import into destinations of which none starts with another"
                )

    def _existing(
        self, namespace: str, metarange_id: str, prefixes: list[bytes]
    ) -> Iterator[bytes]:
        """The head's keys under the (sorted, disjoint) prefixes, ascending."""
        for prefix in prefixes:
            for key, _ in self._committed.scan(namespace, metarange_id, prefix):
                if not key.startswith(prefix):
                    break
                yield key


def _replacing(
    imported: Iterator[tuple[bytes, Value]], existing: Iterator[bytes]
) -> Iterator[Change]:
    """Changes that make the destinations hold exactly the imported entries, by key."""
    marked: Iterator[tuple[bytes, int, Value | None]] = heapq.merge(
        ((key, 0, value) for key, value in imported),
        ((key, 1, None) for key in existing),
        key=lambda item: (item[0], item[1]),
    )
    last = None
    for key, _, value in marked:
        if key != last:  # imported (0) sorts before existing (1): the import wins
            yield key, value
        last = key
