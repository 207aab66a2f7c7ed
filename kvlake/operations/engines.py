"""Engines run operations; this is the seam where each one plugs in, by name or by kind.

A bulk delete names its engine (`local`, `spark`); every other kind has one.
Most kinds give only their `Steps` (`_STEPS`: an import, kvlake/catalog/import_runs.py;
a refs dump or restore; a GC commits preparation, kvlake/catalog/gc_prepare_runs.py),
the work between claim and finish, and `drive` (kvlake/operations/steps.py) does the
claim, heartbeat, cancel and finish for all of them; a GC run
(kvlake/pipelines/gc/runs.py) is an engine of its own (`_KINDS`). The runner calls
every engine through the one small interface, `run(operation_id, stop)`, and all
claim, renew and end their records through `Driver` (kvlake/operations/driver.py).

A bulk delete's engines differ only in where they process its work batches, so
each is a `BatchEngine`: `wave` (batches per call) and `process(operation,
repository, numbers)`. `BulkDeleteDriver` (kvlake/operations/bulk_delete_driver.py)
runs every bulk delete through one: it claims the lease, takes the delete lock,
enumerates the batches, hands them to the engine a wave at a time, counts each
wave with one `Ledger.fold`, reads cancellation between waves, commits and
finishes. The local engine (`LocalBatches`, kvlake/operations/local.py)
processes one batch at a time in the calling thread; the Spark engine
(`SparkBatches`, kvlake/pipelines/bulk_delete.py) a wave of them as a Spark job.
What a `BatchEngine` must keep, so that all give the same result on the same
data (docs/operations.md): it processes each batch it is given with
`BatchProcessor.process` (locks, filters, tombstones, failures, the batch's
stored outcome; safe to repeat), in any order and anywhere (executors may open
the lake from its settings), and returns once every one of them has its
outcome stored, or raises. It counts nothing: the driver's fold does.

Engines are named in `_ENGINES` as `module:factory`, a callable taking the
`EngineContext`, and imported on first use, so pyspark loads only when a Spark
operation runs. `spark` names the factory the pipelines package provides
(kvlake/pipelines/bulk_delete.py, `spark_engine`); where pyspark is missing,
asking for `spark` is a clear error and `auto` falls back to `local`.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from kvlake.config import OperationsSettings, Settings
from kvlake.errors import ConfigError, InvalidInputError
from kvlake.graveler import Graveler, Value
from kvlake.operations.driver import Driver
from kvlake.operations.steps import Steps, StepsEngine

if TYPE_CHECKING:
    from kvlake.deletion import DeletionLog
    from kvlake.graveler import Repository
    from kvlake.operations.ledger import Ledger
    from kvlake.operations.locks import ObjectLocks
    from kvlake.operations.records import Operation


_NO_METADATA: Final[Mapping[str, str]] = MappingProxyType({})


class ObjectInfo(NamedTuple):
    """What the filters and purges need of an entry: its blob, size, mtime and user
    metadata."""

    address: str
    size: int
    mtime: float
    metadata: Mapping[str, str] = _NO_METADATA


Describe = Callable[[Value], ObjectInfo]
"""Decodes a graveler value (the catalog's entry) into `ObjectInfo`; `Lake` passes it."""


@dataclass(frozen=True)
class EngineContext:
    """The parts of the lake an engine works with, and its settings."""

    graveler: Graveler
    ledger: Ledger
    locks: ObjectLocks
    deletion: DeletionLog | None
    describe: Describe
    settings: OperationsSettings
    owner: str
    """Who holds the leases this engine takes (one per server process)."""
    clock: Callable[[], float] = time.time
    lake_settings: Settings | None = None
    """The whole lake's settings, for engines whose workers open the lake themselves (Spark)."""
    lake: object | None = None
    """The `kvlake.lake.Lake` that built this context, for engines of upper layers that drive
    the lake's own jobs (a GC run); None where an engine is built without one (tests)."""

    def driver(self) -> Driver:
        """The driver of this context's leases: every engine claims, renews and ends its
        records through one."""
        return Driver(
            self.ledger, owner=self.owner, lease_time=self.settings.lease_time, clock=self.clock
        )


class Engine(Protocol):
    """Runs one operation to its end, or until `stop`; safe to call again to resume."""

    def run(self, operation_id: str, stop: threading.Event) -> Operation: ...


EngineFactory = Callable[[EngineContext], Engine]


class BatchEngine(Protocol):
    """Where and how a bulk delete's work batches are processed: what its engines differ in.

    `BulkDeleteDriver` calls `process` with up to `wave` consecutive batch numbers
    and folds their outcomes once it returns (the module docstring says what an
    implementation must keep).
    """

    wave: int
    """Batches handed over per call: one fold (and one cancellation check) per wave."""

    def process(self, operation: Operation, repository: Repository, numbers: range) -> None:
        """Process batches `numbers` of `operation`, each storing its outcome, in any order."""


_ENGINES: Final = {
    "local": "kvlake.operations.local:local_engine",
    "spark": "kvlake.pipelines.bulk_delete:spark_engine",
}
ENGINE_NAMES: Final = ("auto", "local", "spark")
"""The names a request may give; engines registered later are accepted by name too."""
_KINDS: Final = {
    "gc-run": "kvlake.pipelines.gc.runs:GcRunEngine",
}
"""The engine of each kind other than `bulk-delete` (whose request names its engine) that
runs its own record: a GC run also ends its repository's GC lease and writes error.json."""
_STEPS: Final = {
    "import": "kvlake.catalog.import_runs:ImportSteps",
    "dump": "kvlake.operations.refs_tasks:RefsTaskSteps",
    "restore": "kvlake.operations.refs_tasks:RefsTaskSteps",
    "gc-prepare-commits": "kvlake.catalog.gc_prepare_runs:GcPrepareSteps",
}
"""The kinds given by their `Steps` (built as `Class(context)`): `drive` claims, beats,
cancels and finishes them all alike (kvlake/operations/steps.py)."""


def register_engine(name: str, dotted_path: str) -> None:
    """Make `name` an engine, built by `module:factory(context)` (plugins and tests): a
    bulk delete's factory returns `BulkDeleteDriver(context, its BatchEngine)`.

    Raises:
        ConfigError: the name is taken, or the path is not `package.module:factory`.
    """
    if name in _ENGINES or name == "auto":
        raise ConfigError(f"engine {name!r} is already registered")
    if ":" not in dotted_path:
        raise ConfigError(f"engine path {dotted_path!r} must look like 'package.module:factory'")
    _ENGINES[name] = dotted_path


def engine_available(name: str) -> bool:
    """Whether the named engine's module (and, for spark, pyspark) can be imported."""
    module = _ENGINES[name].split(":", 1)[0]
    try:
        if importlib.util.find_spec(module) is None:
            return False
    except ModuleNotFoundError:
        return False
    return name != "spark" or importlib.util.find_spec("pyspark") is not None


def select_engine(name: str, *, threshold: int, estimate: int | None = None) -> str:
    """The engine to record for a request: `auto` becomes `spark` when Spark is installed
    and the estimated object count reaches `threshold`, else `local`.

    Raises:
        InvalidInputError: an unknown engine, or `spark` where it is not installed.
    """
    if name != "auto" and name not in _ENGINES:
        known = ", ".join(["auto", *sorted(_ENGINES)])
        raise InvalidInputError(f"engine {name!r} is unknown; use one of {known}")
    if name == "auto":
        big = estimate is not None and estimate >= threshold
        return "spark" if big and engine_available("spark") else "local"
    if not engine_available(name):
        raise InvalidInputError(
            f"engine {name!r} is not installed here (it needs kvlake.pipelines and pyspark);"
            " install kvlake with its spark extra, or use engine=local"
        )
    return name


def open_engine_for(operation: Operation, context: EngineContext) -> Engine:
    """The engine that runs `operation`: a bulk delete's chosen one, else its kind's.

    Raises:
        ConfigError: a record of a kind this kvlake does not know (written by a newer one).
    """
    if operation.kind == "bulk-delete":
        return open_engine(operation.options.engine, context)
    if operation.kind in _STEPS:
        steps: Callable[[EngineContext], Steps] = load_dotted(_STEPS[operation.kind])
        return StepsEngine(context.driver(), steps(context))
    if operation.kind not in _KINDS:
        raise ConfigError(
            f"operation {operation.id} is of kind {operation.kind!r}, which this kvlake cannot"
            " run; upgrade it, or run the operation where it was created"
        )
    factory: EngineFactory = load_dotted(_KINDS[operation.kind])
    return factory(context)


def open_engine(name: str, context: EngineContext) -> Engine:
    """Build the named engine over `context` (imports its module on first use)."""
    factory: EngineFactory = load_dotted(_ENGINES[name])
    return factory(context)


def load_dotted(dotted_path: str) -> Any:
    """The attribute `package.module:name` names, its module imported now: how an engine
    in an upper layer (kvlake/pipelines) is reached without importing upward."""
    module, _, attribute = dotted_path.partition(":")
    return getattr(importlib.import_module(module), attribute)
