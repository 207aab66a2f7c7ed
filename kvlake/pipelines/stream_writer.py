"""The `kvlake` source as a Structured Streaming sink: each micro-batch one commit, once.

Tasks write a micro-batch's files as a batch job's tasks do
(kvlake/pipelines/dataset_writer.py); the driver commits them as one commit on
the branch whose metadata names the stream and the batch id. Spark replays a
micro-batch whose commit it did not record in its checkpoint (a query killed
between our commit and its own); the sink recognises the replay from the
branch's history (a commit of this stream with this batch id or a later one)
and commits nothing, and the replay's blobs are left to their deletion records.
The check runs again on the very head the commit is swapped onto, so even a
racing replay cannot commit a batch twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Final

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kvlake.errors import InvalidInputError, KvlakeError
from kvlake.graveler import Commit, Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_commit import WriteTarget, commit_job
from kvlake.pipelines.dataset_writer import WrittenFiles, decode_files, plan_target, write_files
from kvlake.pipelines.executors import task_lake

log = logging.getLogger(__name__)

STREAM_KEY: Final = "kvlake.stream_id"
BATCH_KEY: Final = "kvlake.batch_id"
MAX_HISTORY: Final = 10_000
"""First-parent commits looked through for a stream's last batch: a stream's commits are
near the head unless the branch took this many others since."""


class BatchCommittedError(KvlakeError):
    """The branch's history already holds this stream's micro-batch: commit nothing."""


def last_batch(lake: Lake, repository: Repository, head_id: str, stream_id: str) -> int | None:
    """The newest batch id the stream committed in the branch's first-parent history."""
    walk = lake.graveler.history.walk(repository, head_id, first_parent=True)
    for count, record in enumerate(walk):
        if count == MAX_HISTORY:
            return None
        if record.commit.metadata.get(STREAM_KEY) == stream_id:
            return int(record.commit.metadata.get(BATCH_KEY, "-1"))
    return None


def open_stream_writer(
    options: Mapping[str, str], schema: StructType, *, overwrite: bool, settings: str
) -> LakeStreamWriter:
    """The sink's writer, after the batch writer's checks.

    `stream_id` names the stream in the commits' metadata; by default the
    query's `checkpointLocation`, which Spark ties to one query.

    Raises:
        InvalidInputError: as `plan_target`, no `commit_message`, or no `stream_id` nor
            `checkpointLocation`.
    """
    stream_id = options.get("stream_id") or options.get("checkpointlocation", "")
    if not stream_id:
        raise InvalidInputError(
            "a kvlake streaming sink needs option('stream_id', ...) (or a checkpointLocation"
            " option): it recognises replayed micro-batches by it in the branch's history"
        )
    if not options.get("commit_message"):
        raise InvalidInputError(
            "a kvlake streaming sink needs option('commit_message', ...): each micro-batch"
            " lands as one commit, which is how a replayed batch is recognised"
        )
    target = plan_target(options, schema, settings)
    return LakeStreamWriter(target, settings, stream_id=stream_id, overwrite=overwrite)


class LakeStreamWriter(DataSourceStreamArrowWriter):
    """Writes a micro-batch's files in tasks, commits them once on the driver."""

    def __init__(
        self, target: WriteTarget, settings: str, *, stream_id: str, overwrite: bool
    ) -> None:
        self._target = target
        self._settings = settings
        self._stream_id = stream_id
        self._overwrite = overwrite

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        return write_files(task_lake(self._settings), self._target, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        lake = task_lake(self._settings)
        repository = lake.graveler.get_repository(self._target.repository)

        def not_replayed(head_id: str, head: Commit) -> None:
            done = last_batch(lake, repository, head_id, self._stream_id)
            if done is not None and done >= batchId:
                raise BatchCommittedError(
                    f"micro-batch {batchId} of stream {self._stream_id!r} is committed"
                    f" already (the branch holds batch {done})"
                )

        head = lake.graveler.get_branch(repository, self._target.branch).commit_id
        try:
            not_replayed(head, lake.graveler.get_commit(repository, head))
            commit_job(
                lake,
                self._target,
                decode_files(messages),
                overwrite=self._overwrite,
                job_metadata={STREAM_KEY: self._stream_id, BATCH_KEY: str(batchId)},
                precondition=not_replayed,
            )
        except BatchCommittedError as exc:
            # Its files are left to their deletion records (unless the race above marked
            # them shared first: then garbage collection takes them, unreferenced).
            log.info("skipping a replayed micro-batch: %s", exc)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        log.warning(
            "micro-batch %s of stream %s failed: its files are left to the deletion log",
            batchId,
            self._stream_id,
        )
