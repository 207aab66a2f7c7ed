"""Graveler's repository methods: creating, reading, listing and deleting repositories.

A part of `Graveler` (kvlake/graveler/graveler.py) kept apart so that module stays
readable; `Graveler` inherits it, so callers see one class. Creation writes the
record first (`initial`), claims the namespace, writes the first commit and default
branch, then activates the record (invariant 1: nothing reads a half-made instance).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kvlake.errors import InvalidInputError
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.lifecycle.namespaces import Namespaces
from kvlake.graveler.lifecycle.repositories import Repositories
from kvlake.graveler.records import Branch, Commit, Repository, commit_time
from kvlake.graveler.refs.branch_reads import BranchRead, StagedGuess, TokenMemory
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.validation import check_branch_name, check_path, check_repository_name


class RepositoryMethods:
    """Repositories: create (whole or bare), get, read with a branch, list, delete; and
    their storage namespaces' claims. Mixed into `Graveler`, which sets these fields."""

    committed: CommittedManager
    _check_namespace: Callable[[str], str]
    _repositories: Repositories
    _namespaces: Namespaces
    _refs: Refs
    _branch_tokens: TokenMemory

    def create_repository(
        self, name: str, *, storage_namespace: str, default_branch: str = "main"
    ) -> Repository:
        """Create a repository with its first commit and default branch.

        A creation that fails after writing its record releases the name and the
        namespace at once (the half-made instance goes to the cleaner), so a retry
        is not refused as "already exists" until the abandonment timeout.

        Raises:
            InvalidInputError: bad name, namespace or branch name (nothing written).
            StorageNamespaceInUseError: another repository holds the namespace, or
                one inside or around it.
            ConflictError: the name is taken.
        """
        return self._create(name, storage_namespace, default_branch, bare=False)

    def create_bare_repository(
        self, name: str, *, storage_namespace: str, default_branch: str = "main"
    ) -> Repository:
        """An active repository with no commit and no branch, for restoring refs into.

        It may take over the namespace of a repository deleted without purge, whose
        refs it then restores (its data stays where it is); otherwise the namespace
        rules of `create_repository` apply.
        """
        return self._create(name, storage_namespace, default_branch, bare=True)

    def _create(
        self, name: str, storage_namespace: str, default_branch: str, *, bare: bool
    ) -> Repository:
        check_repository_name(name)
        check_branch_name(default_branch)
        namespace = self._check_namespace(storage_namespace)
        repository, predicate = self._repositories.begin_create(
            name, storage_namespace=namespace, default_branch=default_branch
        )
        try:
            self._namespaces.claim(repository, bare=bare)
            if not bare:
                self._populate(repository, namespace, default_branch)
            return self._repositories.activate(repository, predicate)
        except BaseException:
            self._repositories.release_failed_creation(repository, predicate)
            raise

    def _populate(self, repository: Repository, namespace: str, default_branch: str) -> None:
        seconds, nanos = commit_time(repository.creation_date)
        first = Commit(
            committer="",
            message="Repository created",
            metarange_id=self.committed.empty_metarange(namespace),
            creation_date=seconds,
            creation_nanos=nanos,
            parents=(),
            metadata={},
            generation=1,
        )
        commit_id = self._refs.add_commit(repository, first)
        token = keys.new_staging_token(repository.instance_uid)
        self._refs.create_branch(
            repository, default_branch, Branch(commit_id=commit_id, staging_token=token)
        )

    def get_repository(self, name: str) -> Repository:
        check_repository_name(name)
        return self._repositories.get(name)

    def read_branch(self, name: str, branch: str, *, path: str | None = None) -> BranchRead:
        """The repository (as `get_repository`), one of its branches and its protection
        rules, read in one round trip once the process knows the instance (see
        `Repositories.get_with`). For one request only (kvlake/graveler/refs/branch_reads.py).

        With `path`, the same statement also reads the path's staged entry in the tokens
        this process last saw on the branch (`BranchRead.staged`, kept only if the branch
        still names exactly those tokens), so a stat of a known branch is one round trip.
        An invalid path reads nothing more; the stat reports it as before.
        """
        check_repository_name(name)
        wanted = BranchRead.instance_keys(branch)
        key = _path_key(path)
        tokens = self._branch_tokens.get(name, branch) if key is not None else ()
        partitions = {keys.staging_partition(token): token for token in tokens}
        repository, rows, found = self._repositories.get_with(
            name, wanted, beside=list(partitions), beside_key=key or b""
        )
        staged = None
        if key is not None and tokens and found is not None:
            values = {partitions[partition]: value for partition, value in found.items()}
            staged = StagedGuess(key=key, tokens=tokens, values=values)
        read = BranchRead.from_rows(repository, branch, rows, staged)
        if key is not None and read.branch is not None:
            self._branch_tokens.remember(name, branch, read.branch.tokens())
        return read

    def list_repositories(self, *, after: str = "", prefix: str = "") -> Iterator[Repository]:
        """Active repositories in name order after `after`; with `prefix`, only names
        starting with it, read from the prefix on."""
        return self._repositories.list(after=after, prefix=prefix)

    def delete_repository(self, name: str, *, purge: bool = False) -> None:
        """Hide the repository now; the cleaner removes its metadata later.

        Its namespace stays taken, by the data kept there, unless `purge` says the
        data is going (the deletion layer deletes it, then calls `release_namespace`).
        """
        check_repository_name(name)
        self._repositories.delete(
            name, before=lambda repository: self._namespaces.settle(repository, purge=purge)
        )

    def adopt_namespaces(self) -> list[str]:
        """Claim the namespaces of active repositories created before namespaces had owners.

        Idempotent and cheap to repeat (one scan of the repository records); the
        server runs it at start. Returns one line per repository it could not
        claim for (it shares storage with another; purge refuses to delete either).
        """
        problems: list[str] = []
        for repository in self._repositories.list():
            problem = self._namespaces.adopt(repository)
            if problem:
                problems.append(f"repository {repository.name!r}: {problem}")
        return problems

    def release_namespace(self, namespace: str, instance_uid: str) -> None:
        """Free the namespace of a purged instance once its purge has finished."""
        self._namespaces.release(namespace, instance_uid)


def _path_key(path: str | None) -> bytes | None:
    """The KV key of `path`, or None for no path or an invalid one (its reader says why)."""
    if path is None:
        return None
    try:
        return check_path(path)
    except InvalidInputError:
        return None
