"""`kvlake gc run` and `gc status` as a user runs them: over the API of a real `kvlake serve`
whose runner runs GC on its own Spark (local[1]); text, `--json` and exit codes.

One server for the module (its JVM starts once, on the first run). GC itself is tested on
a local folder and on S3 in tests/pipelines/test_gc*.py; here the command is the subject.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.server import Server
from tests.cli.conftest import Cli, module_server
from tests.pipelines.conftest import TEST_CONF

pytestmark = pytest.mark.spark

ORPHAN = "data/20250101T00/orphan"


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose runner runs GC on Spark local[1]."""
    yield from module_server(
        tmp_path_factory,
        "gc-cli-server",
        {"KVLAKE_SPARK_MASTER": "local[1]", "KVLAKE_SPARK_CONF": TEST_CONF},
    )


def _repository(cli: Cli, server: Server, *, rules: bool = True) -> str:
    name = f"gc-{uuid.uuid4().hex[:10]}"
    cli("repo", "create", f"lakefs://{name}", server.storage.namespace(name)).ok()
    if rules:
        cli("gc", "rules", "set", name, "--default-days", "7").ok()
    return name


def test_mark_then_sweep_then_status_through_the_server(
    cli: Cli, cli_server: Server, tmp_path: Path
) -> None:
    name = _repository(cli, cli_server)
    source = tmp_path / "kept"
    source.write_bytes(b"referenced")
    cli("fs", "upload", f"lakefs://{name}/main/kept", "-s", str(source)).ok()
    namespace = cli_server.storage.namespace(name)
    cli_server.storage.blocks.put(namespace, ORPHAN, b"orphan")

    marked = cli("gc", "run", f"lakefs://{name}", "--mark-only", "--json").json()
    assert marked["status"] == "marked", marked
    summary = marked["summary"]
    # The orphan is a candidate; the blob uploaded this hour is left alone, and counted.
    assert (summary["counts"]["candidates"], summary["counts"]["too_young"]) == (1, 1)
    assert cli_server.storage.blocks.exists(namespace, ORPHAN)
    run_id = marked["run_id"]

    cli("gc", "run", name, "--sweep", run_id, "--grace-period", "5").error(2, "belongs to the mark")
    swept = cli("gc", "run", name, "--sweep", run_id).ok()
    assert f"run {run_id}: swept;" in swept.stdout and "deleted 1 (6 bytes)" in swept.stdout
    assert "left alone: 1 blobs in hour folders that end after the cutoff" in swept.stdout
    assert not cli_server.storage.blocks.exists(namespace, ORPHAN)
    assert cli("fs", "cat", f"lakefs://{name}/main/kept").ok().stdout == "referenced"

    status = cli("gc", "status", name, run_id, "--json").json()
    assert status["status"] == "swept" and status["summary"]["counts"]["deleted"] == 1
    assert "deleted 1 (6 bytes)" in cli("gc", "status", name, run_id).ok().stdout


def test_a_run_not_followed_goes_on_and_its_status_says_how_it_went(
    cli: Cli, cli_server: Server
) -> None:
    name = _repository(cli, cli_server)
    started = cli("gc", "run", name, "--dry-run", "--no-wait").ok()
    run_id = started.stdout.split()[3]
    assert f"follow it with `kvlake gc status {name} {run_id}`" in started.stdout
    # The run is an operation: `operations watch` follows it to its end like any other.
    watched = cli("operations", "watch", run_id, "--json").json()
    assert watched["kind"] == "gc-run" and watched["status"] == "completed", watched
    done = cli("gc", "status", name, run_id).ok().stdout
    assert f"run {run_id}: dry_run;" in done and "would delete 0" in done


def test_refused_runs_are_one_line_before_spark_starts(cli: Cli, cli_server: Server) -> None:
    cli("gc", "run", "lakefs://no-such-repo").error(4, "no-such-repo")
    without_rules = _repository(cli, cli_server, rules=False)
    cli("gc", "run", without_rules).error(4, "garbage collection rules")
    name = _repository(cli, cli_server)
    cli("gc", "run", name, "--mark-only", "--sweep", "x").error(2, "exclude each other")
    cli("gc", "run", name, "--grace-period", "-1").error(2, "grace")
    cli("gc", "status", name, "01m8a1b2c3d4e5f6g7h8j9k0m1").error(4, "no garbage collection run")
    for refused in (without_rules, name):  # nothing was recorded for a refused run
        listed = cli("operations", "list", "--repository", refused, "--json").json()
        assert listed == []
