"""Long-running operations of every kind (bulk deletes, imports, GC runs, lakeFS's tasks)
and object locks,
resumable from the KV."""

from kvlake.operations.batches import BatchProcessor
from kvlake.operations.bulk_delete import BulkDeletes, Progress, check_filters, progress_of
from kvlake.operations.bulk_delete_driver import OPERATION_METADATA_KEY, BulkDeleteDriver
from kvlake.operations.driver import Driver, LostLeaseError
from kvlake.operations.engines import (
    ENGINE_NAMES,
    BatchEngine,
    Describe,
    Engine,
    EngineContext,
    ObjectInfo,
    engine_available,
    load_dotted,
    open_engine,
    open_engine_for,
    register_engine,
    select_engine,
)
from kvlake.operations.heartbeat import Heartbeat
from kvlake.operations.ledger import FailurePage, Ledger
from kvlake.operations.local import LocalBatches, local_engine
from kvlake.operations.locks import ObjectLocks, UploadLock
from kvlake.operations.paths import BranchPath, parse_branch_path, parse_ref_path
from kvlake.operations.records import (
    FINISHED,
    KINDS,
    STATUSES,
    Batch,
    BulkDeleteOptions,
    Counters,
    Failure,
    Filters,
    GcRunRequest,
    ImportLocation,
    ImportRequest,
    Lock,
    Operation,
    OperationStatus,
    Outcome,
    PathBatch,
    RangeBatch,
)
from kvlake.operations.refs_tasks import RefsTaskSteps, submit_dump, submit_restore
from kvlake.operations.runner import OperationRunner
from kvlake.operations.steps import (
    INTERNAL_ERROR,
    Cancelled,
    Steps,
    StepsEngine,
    Stopped,
    drive,
    repository_of,
)
from kvlake.operations.tasks import TaskStatus, submit_task, task_status

__all__ = [
    "ENGINE_NAMES",
    "FINISHED",
    "INTERNAL_ERROR",
    "KINDS",
    "OPERATION_METADATA_KEY",
    "STATUSES",
    "Batch",
    "BatchEngine",
    "BatchProcessor",
    "BranchPath",
    "BulkDeleteDriver",
    "BulkDeleteOptions",
    "BulkDeletes",
    "Cancelled",
    "Counters",
    "Describe",
    "Driver",
    "Engine",
    "EngineContext",
    "Failure",
    "FailurePage",
    "Filters",
    "GcRunRequest",
    "Heartbeat",
    "ImportLocation",
    "ImportRequest",
    "Ledger",
    "LocalBatches",
    "Lock",
    "LostLeaseError",
    "ObjectInfo",
    "ObjectLocks",
    "Operation",
    "OperationRunner",
    "OperationStatus",
    "Outcome",
    "PathBatch",
    "Progress",
    "RangeBatch",
    "RefsTaskSteps",
    "Steps",
    "StepsEngine",
    "Stopped",
    "TaskStatus",
    "UploadLock",
    "check_filters",
    "drive",
    "engine_available",
    "load_dotted",
    "local_engine",
    "open_engine",
    "open_engine_for",
    "parse_branch_path",
    "parse_ref_path",
    "progress_of",
    "register_engine",
    "repository_of",
    "select_engine",
    "submit_dump",
    "submit_restore",
    "submit_task",
    "task_status",
]
