"""Graveler: kvlake's versioning core (repositories, branches, tags, commits, entries).

Other layers import from here, never from graveler's modules: its key schema
and storage engines are private to it (tests/test_layers.py checks that).
"""

from kvlake.graveler.committed import CommittedManager, Piece, RangeInfo
from kvlake.graveler.events import EVENT_TYPES, Event, EventHooks
from kvlake.graveler.graveler import TOKEN_DROP_DELAY, Graveler, data_size
from kvlake.graveler.history.diff import prefix_end
from kvlake.graveler.lifecycle.cleaner import Cleaner, CleanerHooks, CleanerReport
from kvlake.graveler.lifecycle.gcrules import MAX_DAYS, make_rules
from kvlake.graveler.lifecycle.namespaces import NamespaceClaim
from kvlake.graveler.lifecycle.repositories import INITIAL_TIMEOUT
from kvlake.graveler.lifecycle.retention import DAY, Retention
from kvlake.graveler.records import (
    Branch,
    BranchProtection,
    Commit,
    CommitRecord,
    DeletedRepository,
    DiffEntry,
    DiffPage,
    GarbageCollectionRules,
    LogPage,
    MultipartUpload,
    ProtectedAction,
    PullRequest,
    RefsManifest,
    Repository,
    RetainedCommit,
    Tag,
    TokenState,
    Value,
)
from kvlake.graveler.references import LiveTokens
from kvlake.graveler.refs.branch_reads import BranchRead
from kvlake.graveler.refs.protection import Rules
from kvlake.graveler.refs.refexpr import ResolvedRef
from kvlake.graveler.spans import RefState, Span, SpanChange
from kvlake.graveler.staging.range_tombstones import RangeTombstone
from kvlake.graveler.staging.writer import StagingHooks
from kvlake.graveler.validation import (
    check_branch_name,
    check_path,
    check_repository_name,
    check_tag_name,
)

__all__ = [
    "DAY",
    "EVENT_TYPES",
    "INITIAL_TIMEOUT",
    "MAX_DAYS",
    "TOKEN_DROP_DELAY",
    "Branch",
    "BranchProtection",
    "BranchRead",
    "Cleaner",
    "CleanerHooks",
    "CleanerReport",
    "Commit",
    "CommitRecord",
    "CommittedManager",
    "DeletedRepository",
    "DiffEntry",
    "DiffPage",
    "Event",
    "EventHooks",
    "GarbageCollectionRules",
    "Graveler",
    "LiveTokens",
    "LogPage",
    "MultipartUpload",
    "NamespaceClaim",
    "Piece",
    "ProtectedAction",
    "PullRequest",
    "RangeInfo",
    "RangeTombstone",
    "RefState",
    "RefsManifest",
    "Repository",
    "ResolvedRef",
    "RetainedCommit",
    "Retention",
    "Rules",
    "Span",
    "SpanChange",
    "StagingHooks",
    "Tag",
    "TokenState",
    "Value",
    "check_branch_name",
    "check_path",
    "check_repository_name",
    "check_tag_name",
    "data_size",
    "make_rules",
    "prefix_end",
]
