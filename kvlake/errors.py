"""Every error kvlake raises on purpose, in one tree.

The category an error belongs to tells the caller what to do about it; the
specific class names what went wrong. The HTTP layer maps categories to status
codes in one table, so a new specific error needs no API change.

    KvlakeError
    ├── NotFoundError (LookupError)          the thing does not exist
    │   ├── KeyNotFoundError                 no such key in the KV store
    │   ├── BlobNotFoundError                no such blob in the blockstore
    │   ├── ObjectGoneError                  the path exists, its blob was deleted (410)
    │   ├── RepositoryNotFoundError
    │   ├── BranchNotFoundError
    │   ├── TagNotFoundError
    │   ├── CommitNotFoundError
    │   ├── RefNotFoundError                 no branch, tag or commit by that name
    │   ├── EntryNotFoundError               no such path on the ref / in the metarange
    │   ├── MetarangeNotFoundError           no metarange file with that id
    │   ├── RangeNotFoundError               no range file with that id
    │   ├── OperationNotFoundError           no such operation (or not yours to see)
    │   ├── TaskNotFoundError                no dump or restore task with that id
    │   ├── PullRequestNotFoundError         no pull request with that id
    │   └── ImportNotFoundError              no import with that id in the repository
    ├── RepositoryDeletingError              the repository is being deleted
    ├── ProtectedBranchError                 a branch protection rule blocks the action
    │   └── DefaultBranchError               the default branch cannot be deleted
    ├── ConflictError                        it already exists (not unique)
    │   ├── MergeConflictError               both sides changed the same paths differently
    │   └── LockedError                      another holder's lock covers the path
    ├── PreconditionFailedError              changed underneath you: re-read, retry
    │   ├── HookAbortedError                 a pre-event hook refused the operation
    │   └── TooManyTriesError                kept losing races: retry later
    ├── InvalidInputError (ValueError)       fix the request; nothing was changed
    │   ├── MissingArgumentError             a required argument was empty or None
    │   ├── NoChangesError                   nothing to commit / merge
    │   ├── DirtyBranchError                 the branch has uncommitted changes
    │   ├── CommitIdError                    a commit id is not its content's address
    │   ├── PullRequestIdError               not a pull request id
    │   ├── SameBranchError                  a pull request's source is its destination
    │   ├── PullRequestClosedError           only an open pull request can be merged
    │   └── AclPermissionError               not an ACL level (Read, Write, Super, Admin)
    ├── ClosedError (RuntimeError)           the object was closed; open a new one
    ├── ConfigError                          fix the named setting
    ├── UnavailableError                     a backend is down or overloaded: retry later
    ├── AuthenticationError                  no or bad credentials: sign in again
    ├── PermissionDeniedError (PermissionError)  signed in, but a policy does not allow it
    ├── RateLimitedError                     too many failed attempts: wait, then retry
    └── FeatureOffError                      a lakeFS feature kvlake does not have (501)
"""

from __future__ import annotations


class KvlakeError(Exception):
    """Base of every error kvlake raises on purpose."""


class NotFoundError(KvlakeError, LookupError):
    """The named thing does not exist."""


class KeyNotFoundError(NotFoundError):
    """A KV get found no value under the key."""


class BlobNotFoundError(NotFoundError):
    """No blob is stored under the key."""


class ObjectGoneError(NotFoundError):
    """The object's entry exists at the ref but its blob is gone: garbage collection
    deleted it once every commit that kept it had expired (lakeFS answers 410 Gone)."""


class RepositoryNotFoundError(NotFoundError):
    """No active repository has that name."""


class BranchNotFoundError(NotFoundError):
    """The repository has no branch of that name."""


class TagNotFoundError(NotFoundError):
    """The repository has no tag of that name."""


class CommitNotFoundError(NotFoundError):
    """The repository has no commit with that id."""


class RefNotFoundError(NotFoundError):
    """No branch, tag or commit matches the ref."""


class EntryNotFoundError(NotFoundError):
    """No entry (object) is stored under that path."""


class MetarangeNotFoundError(NotFoundError):
    """No metarange with that id is stored in the storage namespace."""


class RangeNotFoundError(NotFoundError):
    """No range with that id is stored in the storage namespace."""


class TaskNotFoundError(NotFoundError):
    """No dump or restore task of that kind with that id in the repository."""


class PullRequestNotFoundError(NotFoundError):
    """No pull request with that id in the repository."""


class ImportNotFoundError(NotFoundError):
    """No import with that id in the repository."""


class RepositoryDeletingError(KvlakeError):
    """The repository is being deleted; its name is free once the record is gone."""


class ConflictError(KvlakeError):
    """Something with that name already exists."""


class StaleReadError(ConflictError):
    """A long read's snapshot lost data it needed (a branch was committed meanwhile)."""


class PreconditionFailedError(KvlakeError):
    """Changed underneath you: re-read, then retry."""


class TooManyTriesError(PreconditionFailedError):
    """An operation kept losing races with concurrent writers; retry later."""


class HookAbortedError(PreconditionFailedError):
    """A pre-event hook (lakeFS action) refused the operation, or its action files are
    invalid; nothing was changed. The message names the run, action, hook and cause."""


class InvalidInputError(KvlakeError, ValueError):
    """Fix the request; nothing was changed."""


class UploadRefusedError(InvalidInputError):
    """A multipart upload's parts were refused, or the upload is unknown; `code` is S3's
    name for the refusal (NoSuchUpload, InvalidPart, InvalidPartOrder, EntityTooSmall),
    which every blockstore reports alike and the S3 gateway answers as it is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class StorageNamespaceInUseError(InvalidInputError):
    """Another repository holds the storage namespace, or one inside or around it."""


class MissingArgumentError(InvalidInputError):
    """A required argument was None or empty; nothing was changed."""


class NoChangesError(InvalidInputError):
    """There is nothing to commit or merge; nothing was changed."""


class DirtyBranchError(InvalidInputError):
    """The branch has uncommitted changes; commit or reset them first."""


class CommitIdError(InvalidInputError):
    """A commit given with its id (a restored record) does not hash to that id."""


class PullRequestIdError(InvalidInputError):
    """The text cannot be a pull request id."""


class SameBranchError(InvalidInputError):
    """A pull request must merge one branch into another."""


class PullRequestClosedError(InvalidInputError):
    """The pull request is closed or merged already."""


class AclPermissionError(InvalidInputError):
    """Not one of the ACL levels Read, Write, Super and Admin."""


class ClosedError(KvlakeError, RuntimeError):
    """The object was closed and cannot be used again; open a new one."""


class ConfigError(KvlakeError):
    """A setting is wrong: the message names it and says how to fix it."""


class UnavailableError(KvlakeError):
    """A backend is down, unreachable or overloaded: retry later."""


class AuthenticationError(KvlakeError):
    """The request carries no credentials, or wrong or expired ones: sign in again."""


class PermissionDeniedError(KvlakeError, PermissionError):
    """The caller is signed in, but no policy attached to them allows the action."""


class RateLimitedError(KvlakeError):
    """Too many failed attempts in a short time; wait for the time the message names."""


class FeatureOffError(KvlakeError):
    """A lakeFS feature kvlake does not have, answered as lakeFS answers with it off."""


class ProtectedBranchError(KvlakeError):
    """A branch protection rule of the repository blocks this action on the branch."""


class DefaultBranchError(ProtectedBranchError):
    """The repository's default branch cannot be deleted: make another branch the default."""


class LockedError(ConflictError):
    """An object lock held by someone else covers the path: wait for it, or for its expiry."""


class BlobReplacedError(ConflictError):
    """The blob under an entry is no longer the one linked: its store ETag changed since."""


class OperationNotFoundError(NotFoundError):
    """No operation has that id, or it is not the caller's to see."""


class MergeConflictError(ConflictError):
    """Both sides of a merge changed the same paths differently; `paths` lists them."""

    def __init__(self, message: str, *, paths: tuple[bytes, ...]) -> None:
        super().__init__(message)
        self.paths = paths
