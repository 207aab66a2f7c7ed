"""The operator's GC job (kvlake/pipelines/gc/job.py): same job, any master, summary as JSON."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from pyspark.sql import SparkSession

from kvlake.config import Settings
from kvlake.graveler import DAY, make_rules
from kvlake.lake import Lake
from kvlake.pipelines.gc.collector import GarbageCollector
from kvlake.pipelines.gc.job import gc_job
from kvlake.pipelines.runs import GcSummary, RunFiles
from tests.pipelines.conftest import TEST_CONF
from tests.pipelines.test_gc import build, namespace_of
from tests.support import FakeClock

ORPHAN = "data/20250101T00/orphan"


def _env(settings: Settings, master: str = "local[2]") -> dict[str, str]:
    """The command's settings: the lake's data dir and blockstore (the AWS variables of an
    S3 lake are the test's own), Spark on `master`."""
    env = {
        "KVLAKE_DATA_DIR": settings.data_dir,
        "KVLAKE_SPARK_MASTER": master,
        "KVLAKE_SPARK_CONF": TEST_CONF,
    }
    if settings.blockstore_url:
        env["KVLAKE_BLOCKSTORE_URL"] = settings.blockstore_url
    return env


def _candidates(lake: Lake, summary: GcSummary) -> set[str]:
    files = RunFiles(lake.blockstore, summary.storage_namespace, summary.run_id)
    return {a for batch in files.rows("candidates") for a in batch.column("address").to_pylist()}


def test_mark_only_then_sweep_from_the_command_line(
    spark: SparkSession, lake: Lake, settings: Settings
) -> None:
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.graveler.retention.set_rules(repo, make_rules(7))
    lake.catalog.upload(repo, "main", "kept", io.BytesIO(b"referenced"))
    lake.blockstore.put(repo.storage_namespace, ORPHAN, b"orphan")
    runner = CliRunner()

    marked = runner.invoke(gc_job, ["repo1", "--mark-only", "--json"], env=_env(settings))
    assert marked.exit_code == 0, marked.output
    summary = msgspec.json.decode(marked.stdout.splitlines()[-1], type=GcSummary)
    assert summary.state == "marked" and summary.counts.candidates == 1
    assert lake.blockstore.exists(repo.storage_namespace, ORPHAN)

    swept = runner.invoke(gc_job, ["repo1", "--sweep", summary.run_id], env=_env(settings))
    assert swept.exit_code == 0, swept.output
    assert "deleted 1 (6 bytes)" in swept.stdout
    assert not lake.blockstore.exists(repo.storage_namespace, ORPHAN)
    assert lake.catalog.stat(repo, "main", "kept").size == len(b"referenced")


@pytest.mark.parametrize("blockstore_kind", ["local"])  # refused before a blob is read
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mark-only", "--sweep", "01m8a1b2c3d4e5f6g7h8j9k0m1"], "exclude each other"),
        (["--sweep", "01m8a1b2c3d4e5f6g7h8j9k0m1", "--grace-period", "5"], "belong to the mark"),
        (["--grace-period", "-5"], "uploaded in the future"),
    ],
)
def test_contradictory_options_are_refused(
    lake: Lake, settings: Settings, args: list[str], message: str
) -> None:
    lake.graveler.create_repository(
        "repo1", storage_namespace=f"local://{settings.data_dir}/blocks/repo1"
    )
    result = CliRunner().invoke(gc_job, ["repo1", *args], env=_env(settings))
    assert result.exit_code == 2 and message in result.stderr


# Local only: about Spark's partitions of the work (one core against two), not the store;
# GC on S3 is test_gc.py's. A second JVM beside the session's costs a minute a run.
@pytest.mark.parametrize("blockstore_kind", ["local"])
def test_local1_in_its_own_process_finds_what_local2_finds(
    spark: SparkSession, clocked_lake: Lake, clock: FakeClock, settings: Settings
) -> None:
    built = build(clocked_lake, clock)
    here = GarbageCollector(spark, clocked_lake).run("repo1", grace_period=DAY, dry_run=True)

    process = subprocess.run(
        [sys.executable, "-m", "kvlake.pipelines.gc.job", "repo1", "--dry-run", "--json"],
        env={**os.environ, **_env(settings, master="local[1]")},
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).parent,
    )

    assert process.returncode == 0, process.stderr
    there = msgspec.json.decode(process.stdout.splitlines()[-1], type=GcSummary)
    assert there.run_id != here.run_id
    assert _candidates(clocked_lake, there) == _candidates(clocked_lake, here)
    assert json.loads(msgspec.json.encode(there.counts)) == json.loads(
        msgspec.json.encode(here.counts)
    )
    assert built.named("d", "orphan") <= _candidates(clocked_lake, here)


@pytest.mark.parametrize("blockstore_kind", ["local"])  # refused before Spark or a blob
def test_an_unknown_repository_or_one_without_rules_is_refused_before_spark(
    lake: Lake, settings: Settings
) -> None:
    missing = CliRunner().invoke(gc_job, ["nosuch"], env=_env(settings))
    assert missing.exit_code == 2 and "repository 'nosuch' not found" in missing.stderr
    lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    bare = CliRunner().invoke(gc_job, ["repo1"], env=_env(settings))
    assert bare.exit_code == 2 and "has no garbage collection rules" in bare.stderr
    assert "SparkSession" not in bare.output


def test_the_summary_says_what_this_hour_left_alone(
    spark: SparkSession, lake: Lake, settings: Settings
) -> None:
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.graveler.retention.set_rules(repo, make_rules(0))
    hour = time.strftime("%Y%m%dT%H", time.gmtime())
    for name in ("a", "b"):
        lake.blockstore.put(repo.storage_namespace, f"data/{hour}/{name}", b"young")
    ran = CliRunner().invoke(
        gc_job, ["repo1", "--grace-period", "0", "--dry-run"], env=_env(settings)
    )
    assert ran.exit_code == 0, ran.output
    assert "candidates 0" in ran.stdout
    assert "left alone: 2 blobs in hour folders that end after the cutoff" in ran.stdout
