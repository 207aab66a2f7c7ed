"""The command line does real work and reports every kvlake error as one line, exit status 2."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from kvlake.blockstore import open_blockstore
from kvlake.catalog import Catalog, entry_ref
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.cli import main
from kvlake.config import load_settings
from kvlake.deletion import DeletionLog, StagingLogHooks
from kvlake.errors import InvalidInputError
from kvlake.graveler import RangeTombstone, keys
from kvlake.graveler.committed import CommittedManager, RangeInfo
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, decode_value, encode
from kvlake.graveler.staging.range_tombstones import encode_record, record_key
from kvlake.kv import open_store
from kvlake.lake import Lake
from tests.support import wait_until

pytestmark = pytest.mark.usefixtures("lake_env")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_user_error(result: Result, *fragments: str) -> None:
    """Exit 2, one `kvlake: error:` line on stderr, nothing else, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvlake: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


def fill_sqlite(url: str, partitions: dict[bytes, int]) -> None:
    with open_store(url) as store:
        for partition, count in partitions.items():
            store.set_many(partition, [(b"k%05d" % i, b"v%d" % i) for i in range(count)])


def test_kv_migrate_copies_and_verifies(tmp_path: Path) -> None:
    src, dst = f"sqlite://{tmp_path}/src.db", f"sqlite://{tmp_path}/dst.db"
    fill_sqlite(src, {b"a": 3, b"b": 1500})
    result = run("kv", "migrate", src, dst)
    assert result.exit_code == 0, result.output
    assert "migrated 2 partitions, 1503 entries" in result.stdout
    assert f"from {src} to {dst}" in result.stdout
    assert "verified: destination matches the source, sha256 " in result.stdout
    with open_store(src) as source, open_store(dst) as destination:
        for partition in (b"a", b"b"):
            assert list(destination.scan(partition)) == list(source.scan(partition))
    rerun = run("kv", "migrate", "--quiet", src, dst)
    assert rerun.exit_code == 0 and rerun.stdout == result.stdout


def test_kv_migrate_into_a_store_with_extra_keys_fails_clearly(tmp_path: Path) -> None:
    src, dst = f"sqlite://{tmp_path}/src.db", f"sqlite://{tmp_path}/dst.db"
    fill_sqlite(src, {b"a": 2})
    fill_sqlite(dst, {b"a": 3})
    assert_user_error(
        run("kv", "migrate", src, dst), "partition b'a' holds 3 entries but the source has 2"
    )


@pytest.mark.parametrize(
    ("src", "dst", "fragments"),
    [
        ("ftp://x/y", "mem://", ("source store:", "scheme 'ftp'", "sqlite://")),
        ("mem://", "sqlite:///proc/no/such/kv.db", ("destination store:", "cannot be created")),
        ("sqlite:///tmp/same.db", "sqlite:///tmp/same.db", ("same store",)),
    ],
    ids=["wrong-scheme", "unwritable-sqlite", "same-store"],
)
def test_kv_migrate_bad_urls_are_one_line_errors(src: str, dst: str, fragments: tuple[str]) -> None:
    assert_user_error(run("kv", "migrate", src, dst), *fragments)


def test_kv_migrate_to_unreachable_postgres_hides_the_password() -> None:
    url = "postgres://kvlake:hunter2@127.0.0.1:1/kv"
    result = run("kv", "migrate", "mem://", url)
    assert_user_error(result, "destination store:", "unreachable")
    assert "hunter2" not in result.output


def test_config_show_prints_loadable_yaml_without_passwords(tmp_path: Path) -> None:
    env = {"KVLAKE_KV_URL": "postgres://kv:hunter2@db/kv?table=t", "KVLAKE_PORT": "9000"}
    result = CliRunner().invoke(main, ["config", "show"], env=env)
    assert result.exit_code == 0, result.output
    assert "hunter2" not in result.stdout
    shown = yaml.safe_load(result.stdout)
    assert shown["kv_url"] == "postgres://kv:***@db/kv?table=t"
    assert (shown["port"], shown["data_dir"]) == (9000, str(tmp_path / "data"))
    path = tmp_path / "shown.yaml"
    path.write_text(result.stdout, encoding="utf-8")
    expected = load_settings({**os.environ, **env}).redacted()
    assert load_settings({"KVLAKE_CONFIG": str(path)}) == expected


def test_config_show_with_a_bad_variable_names_it() -> None:
    result = CliRunner().invoke(main, ["config", "show"], env={"KVLAKE_PORT": "abc"})
    assert_user_error(result, "KVLAKE_PORT is 'abc'", "set it to a valid int")


def test_kv_check_runs_a_smoke_test_on_the_configured_store_and_cleans_up(
    tmp_path: Path,
) -> None:
    url = f"sqlite://{tmp_path}/serve.db"
    result = CliRunner().invoke(
        main, ["kv", "check", "--entries", "300"], env={"KVLAKE_KV_URL": url}
    )
    assert result.exit_code == 0, result.output
    for step in ("set", "get", "set_if", "set_many", "scan", "delete", "drop_partition"):
        assert f"  {step} " in result.stdout
    assert "ok: every call answered correctly" in result.stdout
    with open_store(url) as store:
        assert list(store.partitions()) == []


def test_kv_check_uses_the_embedded_default_store(tmp_path: Path) -> None:
    result = run("kv", "check", "--entries", "10")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "kv.db").exists()


def test_serve_with_a_bad_port_option_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["serve", "--port", "abc"])
    assert result.exit_code == 2 and "'abc' is not a valid integer" in result.stderr
    assert "Traceback" not in result.output


def test_serve_answers_health_checks_and_stops_cleanly_on_interrupt(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = Path(sys.executable).parent / "kvlake"
    env = {**os.environ, "KVLAKE_DATA_DIR": str(tmp_path / "data")}
    env.pop("KVLAKE_KV_URL", None)
    server = subprocess.Popen(
        [str(command), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until(lambda: _healthcheck(port) == 204, interval=0.1, message="the server to answer")
        assert (tmp_path / "data" / "kv.db").exists()  # embedded defaults, no configuration
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output
    assert "access key" in output.lower()  # the first start prints the admin's key once


def _healthcheck(port: int) -> int | None:
    """The status of the server's healthcheck, or None while nothing answers on the port."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/healthcheck", timeout=1) as r:
            return int(r.status)
    except OSError:
        return None


def test_serve_with_an_unwritable_store_is_a_one_line_error() -> None:
    result = CliRunner().invoke(
        main, ["serve"], env={"KVLAKE_KV_URL": "sqlite:///proc/no/such/kv.db"}
    )
    assert_user_error(result, "cannot be created or written")


def test_installed_command_reports_errors_in_one_line(tmp_path: Path) -> None:
    command = Path(sys.executable).parent / "kvlake"
    assert command.exists(), f"{command} is missing: run `make install`"
    completed = subprocess.run(
        [str(command), "kv", "migrate", "nope://x", "mem://"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        "kvlake: error: source store: KVLAKE_KV_URL has scheme 'nope'; "
        "use one of mem://, postgres://, postgresql://, sqlite://"
    ]


@pytest.mark.postgres
def test_kv_migrate_from_sqlite_to_postgres(tmp_path: Path, postgres_url: str) -> None:
    src = f"sqlite://{tmp_path}/src.db"
    fill_sqlite(src, {b"a": 10, b"b": 20})
    result = run("kv", "migrate", "--quiet", src, postgres_url)
    assert result.exit_code == 0, result.output
    assert "migrated 2 partitions, 30 entries" in result.stdout
    with open_store(postgres_url) as destination:
        assert list(destination.partitions()) == [b"a", b"b"]


def make_repository(namespace: str, paths: int) -> tuple[set[str], str]:
    """A repository `repo1` with `paths` objects, each overwritten once while staged."""
    settings = load_settings()
    with open_store(settings.kv_url) as store, open_blockstore(settings.blockstore_url) as blocks:
        log = DeletionLog(store, settings.deletion)
        graveler = Graveler(
            store,
            CommittedManager(blocks),
            check_namespace=blocks.check_namespace,
            staging_hooks=StagingLogHooks(log, entry_ref),
        )
        repository = graveler.create_repository("repo1", storage_namespace=namespace)
        catalog = Catalog(graveler, blocks, deletion=log)
        for i in range(paths):
            catalog.upload(repository, "main", f"p{i}", io.BytesIO(b"1"))
        kept = {
            catalog.upload(repository, "main", f"p{i}", io.BytesIO(b"2")).address
            for i in range(paths)
        }
        return kept, graveler.get_repository("repo1").instance_uid


def blobs(namespace: str) -> set[str]:
    """The keys of every blob in the namespace, read through the configured blockstore."""
    with open_blockstore(load_settings().blockstore_url) as blocks:
        return set(blocks.list_keys(namespace))


def test_config_show_includes_the_deletion_section() -> None:
    result = CliRunner().invoke(main, ["config", "show"], env={"KVLAKE_DELETION_SEND_DELAY": "0"})
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)["deletion"]
    assert shown["send_delay"] == 0.0 and shown["partitions"] == 4 and shown["enabled"] is True


def test_deletion_status_and_run_show_and_do_the_work(
    namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KVLAKE_DELETION_SEND_DELAY", "0")
    kept, _ = make_repository(namespace, 5)
    status = run("deletion", "status")
    assert status.exit_code == 0, status.output
    assert "pending: 5," in status.stdout and "dead letters: 0" in status.stdout
    done = run("deletion", "run")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("deleted 5, retried 0, kept 0, dead-lettered 0")
    assert {b for b in blobs(namespace) if b.startswith("data/")} == kept
    assert "pending: 0," in run("deletion", "status").stdout


def test_dead_letters_are_listed_requeued_and_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVLAKE_DELETION_SEND_DELAY", "0")
    settings = load_settings()
    with open_store(settings.kv_url) as store:
        log = DeletionLog(store, settings.deletion)
        bad = Repository(
            name="gone",
            storage_namespace="local://lake/gone",
            default_branch="main",
            creation_date=0.0,
            state="deleted",
            instance_uid="0" * 26,
        )
        log.append([log.new_record(bad, "data/x", "deleted_staged", path=b"x")])
    assert run("deletion", "dlq", "list").stdout == "no dead letters\n"
    assert run("deletion", "purges").stdout == "no purges\n"
    assert "dead-lettered 1" in run("deletion", "run").stdout
    listed = run("deletion", "dlq", "list")
    assert listed.exit_code == 0 and "deleted_staged gone/" in listed.stdout
    assert "is unknown" in listed.stdout
    letter = listed.stdout.split()[0]
    assert run("deletion", "dlq", "requeue", letter).stdout == "requeued 1 dead letters\n"
    assert "pending: 1," in run("deletion", "status").stdout
    run("deletion", "run")
    assert run("deletion", "dlq", "drop", "--all").stdout == "dropped 1 dead letters\n"
    assert_user_error(run("deletion", "dlq", "drop", "nope"), "no dead letter with id 'nope'")
    assert_user_error(run("deletion", "dlq", "requeue"), "name dead letter ids, or pass --all")


def test_repo_untangle_range_tombstones_repairs_a_wedged_branch(namespace: str) -> None:
    """Issue 22 #4: a branch holding overlapping range tombstones (two bulk deletes
    from two commits, before tokens were guarded) fails every commit until untangled."""
    with Lake.open(load_settings()) as lake:
        graveler = lake.graveler
        repository = graveler.create_repository("repo1", storage_namespace=namespace)
        raw = encode(
            to_value(
                ObjectEntry(address="data/x", size=1, checksum="c", mtime=1.0, content_type="x")
            )
        )
        token = graveler.get_branch(repository, "main").staging_token
        paths = [f"d/{i:05d}".encode() for i in range(12_000)]
        lake.store.set_many(keys.staging_partition(token), ((path, raw) for path in paths))
        graveler.commit(repository, "main", committer="t", message="filled")
        old = _ranges(graveler, repository)[1]
        graveler.set(repository, "main", old.min_key + b"x", decode_value(raw))
        graveler.commit(repository, "main", committer="t", message="a range changes")
        changed = next(
            r for r in _ranges(graveler, repository) if r.min_key <= old.min_key + b"x" <= r.max_key
        )
        head = graveler.get_commit(repository, graveler.get_branch(repository, "main").commit_id)
        graveler.stage_range_tombstones(
            repository, "main", [_record(changed)], metarange_id=head.metarange_id
        )
        token = graveler.get_branch(repository, "main").staging_token
        stale = _record(old)  # another bulk delete's, from the older commit
        lake.store.set(keys.staging_partition(token), record_key(stale), encode_record(stale))
        with pytest.raises(InvalidInputError):
            graveler.commit(repository, "main", committer="t", message="wedged")

    result = run("repo", "untangle-range-tombstones", "repo1", "main")
    assert result.exit_code == 0, result.output
    assert result.stdout == "repo1/main: 1 overlapping range tombstones rewritten\n"
    with Lake.open(load_settings()) as lake:
        repository = lake.graveler.get_repository("repo1")
        lake.graveler.commit(repository, "main", committer="t", message="deleted")
        left = [key for key, _ in lake.graveler.list(repository, "main")]
        assert left and not {*range_keys(lake, repository, old), old.min_key + b"x"} & set(left)
    assert_user_error(run("repo", "untangle-range-tombstones", "nope", "main"), "nope")


def _ranges(graveler: Graveler, repository: Repository) -> list[RangeInfo]:
    head = graveler.get_commit(repository, graveler.get_branch(repository, "main").commit_id)
    return graveler.committed.ranges(repository.storage_namespace, head.metarange_id)


def _record(info: RangeInfo) -> RangeTombstone:
    return RangeTombstone(range_id=info.id, min_key=info.min_key, max_key=info.max_key)


def range_keys(lake: Lake, repository: Repository, info: RangeInfo) -> set[bytes]:
    columns = lake.graveler.committed.range_columns(repository.storage_namespace, info.id)
    return set(columns.key_list())
