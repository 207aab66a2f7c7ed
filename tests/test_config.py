"""Settings come from defaults, a YAML file and KVLAKE_* variables, and say what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import pytest

from kvlake.config import (
    ENV_PREFIX,
    Settings,
    _build,
    _Origin,
    _read_yaml,
    load_settings,
    redact_url,
)
from kvlake.errors import ConfigError


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "kvlake.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_defaults_need_no_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = load_settings({})
    home = tmp_path.absolute()
    assert settings.data_dir == f"{home}/.kvlake"
    assert settings.kv_url == f"sqlite://{home}/.kvlake/kv.db"
    assert settings.blockstore_url == f"local://{home}/.kvlake/blocks"
    assert settings.kv_url.startswith("sqlite:///") and settings.blockstore_url.startswith(
        "local:///"
    )
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert load_settings({}) == Settings()


def test_data_dir_moves_the_derived_urls(tmp_path: Path) -> None:
    settings = load_settings({"KVLAKE_DATA_DIR": str(tmp_path / "lake")})
    assert settings.kv_url == f"sqlite://{tmp_path}/lake/kv.db"
    assert settings.blockstore_url == f"local://{tmp_path}/lake/blocks"


def test_environment_sets_every_value() -> None:
    settings = load_settings(
        {
            "KVLAKE_KV_URL": "postgres://kv@db/kv",
            "KVLAKE_BLOCKSTORE_URL": "s3://bucket/prefix",
            "KVLAKE_HOST": "0.0.0.0",
            "KVLAKE_PORT": "9000",
            "UNRELATED": "x",
        }
    )
    assert settings.kv_url == "postgres://kv@db/kv"
    assert settings.blockstore_url == "s3://bucket/prefix"
    assert (settings.host, settings.port) == ("0.0.0.0", 9000)


def test_yaml_file_is_read_and_environment_wins(tmp_path: Path) -> None:
    path = write(tmp_path, "port: 9001\nhost: 10.0.0.1\nkv_url: mem://\n")
    settings = load_settings({"KVLAKE_CONFIG": path, "KVLAKE_PORT": "9002"})
    assert (settings.host, settings.port, settings.kv_url) == ("10.0.0.1", 9002, "mem://")


def test_empty_variable_counts_as_unset(tmp_path: Path) -> None:
    path = write(tmp_path, "port: 9001\n")
    assert load_settings({"KVLAKE_CONFIG": path, "KVLAKE_PORT": ""}).port == 9001


def test_empty_yaml_file_means_defaults(tmp_path: Path) -> None:
    assert load_settings({"KVLAKE_CONFIG": write(tmp_path, "")}) == load_settings({})


@pytest.mark.parametrize(
    ("value", "reason"),
    [("abc", "expected `int`, got `str`"), ("70000", "<= 65535"), ("-1", ">= 0"), ("8.5", "int")],
)
def test_bad_port_variable_names_it_and_the_fix(value: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"KVLAKE_PORT": value})
    message = str(caught.value)
    assert message.startswith(f"KVLAKE_PORT is '{value}'")
    assert reason in message and "set it to a valid int" in message


def test_bad_yaml_value_names_the_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, "port: lots\n")
    with pytest.raises(ConfigError, match=f"config file '{path}': key 'port' is 'lots'"):
        load_settings({"KVLAKE_CONFIG": path})


def test_yaml_text_value_must_be_text(tmp_path: Path) -> None:
    path = write(tmp_path, "host: 12\n")
    with pytest.raises(ConfigError, match="key 'host' is 12; write it as text"):
        load_settings({"KVLAKE_CONFIG": path})


def test_unknown_yaml_key_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "port: 1\nprot: 2\n")
    known = "known keys are actions, auth, blockstore_url"
    with pytest.raises(ConfigError, match=f"key 'prot' is unknown; {known}"):
        load_settings({"KVLAKE_CONFIG": path})


@pytest.mark.parametrize(
    ("text", "problem"),
    [("port: [1\n", "not valid YAML at line 2"), ("- 1\n- 2\n", "holds a list")],
)
def test_malformed_yaml_file_is_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_settings({"KVLAKE_CONFIG": write(tmp_path, text)})


def test_missing_config_file_names_the_variable(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=f"KVLAKE_CONFIG names '{missing}', which cannot be read"):
        load_settings({"KVLAKE_CONFIG": missing})


def test_url_without_scheme_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"KVLAKE_KV_URL": "admin:hunter2@db/kv"})
    assert "KVLAKE_KV_URL has no scheme" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_redacted_hides_passwords_and_secret_query_values() -> None:
    settings = load_settings(
        {"KVLAKE_KV_URL": "postgres://kv:hunter2@db:5432/kv?table=t&sslpassword=s3cret"}
    )
    shown = settings.redacted()
    assert shown.kv_url == "postgres://kv:***@db:5432/kv?table=t&sslpassword=***"
    assert "hunter2" not in msgspec.json.encode(shown).decode()
    assert settings.kv_url.endswith("s3cret")  # the original is untouched


@pytest.mark.parametrize(
    "url",
    ["sqlite:///var/lib/kv.db", "local:///srv/blocks", "postgres://kv@db/kv", "mem://"],
)
def test_redact_url_leaves_urls_without_secrets_unchanged(url: str) -> None:
    assert redact_url(url) == url


class _Deletion(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    workers: int = 4
    dry_run: bool = False


class _Extended(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    port: int = 8000
    deletion: _Deletion = msgspec.field(default_factory=_Deletion)


def test_a_nested_section_reads_its_own_prefix_and_yaml_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "deletion:\n  workers: 8\n")
    env = {"KVLAKE_DELETION_DRY_RUN": "yes"}
    built = _build(_Extended, _read_yaml(Path(path)), env, ENV_PREFIX, _Origin("f", ""))
    assert built.deletion == _Deletion(workers=8, dry_run=True)
    with pytest.raises(ConfigError, match="KVLAKE_DELETION_DRY_RUN is 'maybe'; set it to true"):
        _build(_Extended, {}, {"KVLAKE_DELETION_DRY_RUN": "maybe"}, ENV_PREFIX, _Origin("f", ""))
    with pytest.raises(ConfigError, match="key 'deletion.speed' is unknown"):
        _build(_Extended, {"deletion": {"speed": 1}}, {}, ENV_PREFIX, _Origin("f", ""))


def test_deletion_settings_have_defaults_and_read_their_own_variables(tmp_path: Path) -> None:
    defaults = load_settings({}).deletion
    assert (defaults.enabled, defaults.partitions, defaults.max_attempts) == (True, 4, 10)
    assert (defaults.send_delay, defaults.reconsume_delay) == (60.0, 600.0)
    assert defaults.lease_time > 0 and defaults.batch_size == 1000
    path = write(tmp_path, "deletion:\n  partitions: 8\n  send_delay: 5\n")
    env = {
        "KVLAKE_CONFIG": path,
        "KVLAKE_DELETION_SEND_DELAY": "0",
        "KVLAKE_DELETION_ENABLED": "no",
    }
    settings = load_settings(env).deletion
    assert (settings.partitions, settings.send_delay, settings.enabled) == (8, 0.0, False)


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [("PARTITIONS", "0", ">= 1"), ("BATCH_SIZE", "20000", "<= 10000"), ("LEASE_TIME", "0", "> 0")],
)
def test_bad_deletion_settings_name_their_variable(name: str, value: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({f"KVLAKE_DELETION_{name}": value})
    assert str(caught.value).startswith(f"KVLAKE_DELETION_{name} is '{value}'")
    assert reason in str(caught.value)


def test_cleaner_settings_have_defaults_and_reach_the_lakes_cleaner(tmp_path: Path) -> None:
    defaults = load_settings({}).cleaner
    assert (defaults.sweep_slice, defaults.tombstone_grace) == (10_000, 30 * 86400.0)
    path = write(tmp_path, "cleaner:\n  sweep_slice: 500\n")
    env = {"KVLAKE_CONFIG": path, "KVLAKE_CLEANER_TOMBSTONE_GRACE": "7200"}
    settings = load_settings(env).cleaner
    assert (settings.sweep_slice, settings.tombstone_grace) == (500, 7200.0)


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("SWEEP_SLICE", "0", ">= 100; set it to a valid int"),
        ("SWEEP_SLICE", "2000000", "<= 1000000"),
        ("SWEEP_SLICE", "many", "expected `int`"),
        ("TOMBSTONE_GRACE", "60", ">= 3600"),
    ],
)
def test_bad_cleaner_settings_name_their_variable_and_the_fix(
    name: str, value: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({f"KVLAKE_CLEANER_{name}": value})
    assert str(caught.value).startswith(f"KVLAKE_CLEANER_{name} is '{value}'")
    assert reason in str(caught.value)


def test_spark_settings_come_from_the_environment_and_bad_pairs_are_refused() -> None:
    settings = load_settings(
        {
            "KVLAKE_SPARK_MASTER": "local[2]",
            "KVLAKE_SPARK_CONF": "spark.executor.memory=4g; spark.sql.shuffle.partitions=8",
        }
    )
    assert settings.spark.master == "local[2]"
    assert settings.spark.options() == {
        "spark.executor.memory": "4g",
        "spark.sql.shuffle.partitions": "8",
    }
    with pytest.raises(ConfigError, match="write key=value pairs separated by ';'"):
        load_settings({"KVLAKE_SPARK_CONF": "spark.executor.memory"})


def test_a_pipeline_without_pyspark_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kvlake.config import SparkSettings
    from kvlake.pipelines import open_spark

    monkeypatch.setitem(sys.modules, "pyspark.sql", None)  # what an import sees when absent
    with pytest.raises(ConfigError, match=r"pip install 'kvlake\[spark\]'"):
        open_spark(SparkSettings())
