"""The one settings object, read from defaults, an optional YAML file and `KVLAKE_*` variables.

Precedence is defaults < YAML file (path in `KVLAKE_CONFIG`) < environment, so
an embedded install needs no configuration at all and a deployment can pin
everything in a file yet override one value per process. Every value is
checked here, once: a bad one raises `ConfigError` naming the variable or key
that holds it and how to fix it, before any store is opened.

Sections are nested structs. A field `deletion: DeletionSettings` of `Settings`
is read from YAML `deletion: {name: ...}` and from `KVLAKE_DELETION_<NAME>`
with no change to the loader; scalar fields may be str, int, float or bool,
optionally `Annotated` with `msgspec.Meta` bounds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Final,
    Literal,
    NamedTuple,
    Self,
    TypeVar,
    get_args,
    get_origin,
)
from urllib.parse import parse_qsl, urlencode, urlsplit

import msgspec
import yaml

from kvlake.blockstore import canonical_address
from kvlake.errors import ConfigError, InvalidInputError

_S = TypeVar("_S", bound=msgspec.Struct)

ENV_PREFIX: Final = "KVLAKE_"
CONFIG_ENV: Final = "KVLAKE_CONFIG"
"""Names the YAML file to read; unset means defaults and environment only."""

_SECRET_WORDS: Final = ("password", "secret", "token")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


class DeletionSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The two-phase deletion log and its workers (`kvlake/deletion`, docs/deletion.md)."""

    enabled: bool = True
    """KVLAKE_DELETION_ENABLED: log blobs that lose their last reference; false leaves them."""
    partitions: Annotated[int, msgspec.Meta(ge=1, le=1024)] = 4
    """KVLAKE_DELETION_PARTITIONS: log partitions `deletion/<n>`; at most one worker each."""
    send_delay: Annotated[float, msgspec.Meta(ge=0)] = 60.0
    """KVLAKE_DELETION_SEND_DELAY: seconds before a logged blob may be deleted (readers finish)."""
    reconsume_delay: Annotated[float, msgspec.Meta(ge=0)] = 600.0
    """KVLAKE_DELETION_RECONSUME_DELAY: first back-off in seconds; doubles with each attempt."""
    max_attempts: Annotated[int, msgspec.Meta(ge=1)] = 10
    """KVLAKE_DELETION_MAX_ATTEMPTS: failed attempts before a record goes to the dead letters."""
    lease_time: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    """KVLAKE_DELETION_LEASE_TIME: seconds a worker owns a partition without renewing."""
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=10000)] = 1000
    """KVLAKE_DELETION_BATCH_SIZE: records a worker checks and deletes per batch."""


class CleanerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The metadata cleaner's background passes (kvlake/graveler/lifecycle/cleaner.py)."""

    sweep_slice: Annotated[int, msgspec.Meta(ge=100, le=1_000_000)] = 10_000
    """KVLAKE_CLEANER_SWEEP_SLICE: KV partitions one orphan sweep looks at (100 to 1,000,000);
    the next sweep goes on after them. Larger finds stray partitions sooner, for a longer sweep."""
    tombstone_grace: Annotated[float, msgspec.Meta(ge=3600)] = 30 * 86400.0
    """KVLAKE_CLEANER_TOMBSTONE_GRACE: seconds (at least 3600) a deleted repository's record is
    kept after the deletion, once its data is cleaned; deletion-log records naming it must be
    judged by then (docs/design.md, "Repository tombstones")."""


class OperationsSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Long-running operations: bulk deletes and object locks (docs/operations.md)."""

    enabled: bool = True
    """KVLAKE_OPERATIONS_ENABLED: run (and resume) operations in this server's background."""
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=100000)] = 10000
    """KVLAKE_OPERATIONS_BATCH_SIZE: paths per work batch (one KV record each)."""
    lease_time: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    """KVLAKE_OPERATIONS_LEASE_TIME: seconds a server holds an operation without renewing
    (renewed every batch); after it another server resumes it."""
    upload_lock_ttl: Annotated[float, msgspec.Meta(gt=0)] = 10.0
    """KVLAKE_OPERATIONS_UPLOAD_LOCK_TTL: seconds a server's upload lease (its uploads'
    implicit locks, renewed every twentieth of it) lasts if the server dies; a bulk delete
    waits about a tenth of it after taking its delete lock."""
    engine: str = "local"
    """KVLAKE_OPERATIONS_ENGINE: the default engine, `local`, `spark` or `auto`."""
    spark_threshold: Annotated[int, msgspec.Meta(ge=0)] = 10_000_000
    """KVLAKE_OPERATIONS_SPARK_THRESHOLD: objects above which `auto` picks Spark."""
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=256)] = msgspec.field(
        default_factory=lambda: default_operations_concurrency()
    )
    """KVLAKE_OPERATIONS_CONCURRENCY: operations one process runs at once (1 to 256; default:
    twice the CPUs, 2 to 16), shared fairly between their creators."""
    retention: Annotated[float, msgspec.Meta(gt=0)] = 30 * 86400.0
    """KVLAKE_OPERATIONS_RETENTION: seconds a finished operation's record (its status and
    failures) is kept after it ended; then the runners remove it."""


def default_operations_concurrency() -> int:
    """Twice the CPUs, 2 to 16: operations mostly wait on the KV and the blockstore."""
    return max(2, min(16, 2 * (os.cpu_count() or 1)))


class ImportSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Zero-copy imports (importStart): local folders, and where they list (docs/imports.md)."""

    local_enabled: bool = False
    """KVLAKE_IMPORTS_LOCAL_ENABLED: let a local blockstore import folders (lakeFS's
    `blockstore.local.import_enabled`); needs `local_prefixes`."""
    local_prefixes: str = ""
    """KVLAKE_IMPORTS_LOCAL_PREFIXES: the folders imports may read, `local://` paths below the
    blockstore root separated by `;` (lakeFS's `blockstore.local.allowed_external_prefixes`).
    No repository may have its storage namespace in or around one: kvlake never deletes there."""
    engine: Literal["auto", "local", "spark"] = "auto"
    """KVLAKE_IMPORTS_ENGINE: `local` lists in the server, `spark` on Spark, `auto` picks Spark
    for a source of `spark_threshold` objects or more when PySpark is installed."""
    spark_threshold: Annotated[int, msgspec.Meta(ge=1)] = 100_000
    """KVLAKE_IMPORTS_SPARK_THRESHOLD: objects from which `auto` imports on Spark (`auto`
    lists at most this many to decide)."""
    progress_every: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    """KVLAKE_IMPORTS_PROGRESS_EVERY: entries a local import lists between progress
    checkpoints of its operation record (where a cancel or a stop is read)."""

    def __post_init__(self) -> None:
        self.folders()  # refuse malformed prefixes at load time, not at the first import

    def folders(self) -> tuple[str, ...]:
        """`local_prefixes` as `local://path` folders (no trailing `/`).

        Raises:
            ConfigError: local imports are on without prefixes, or a prefix is malformed.
        """
        folders = []
        for part in filter(None, (p.strip() for p in self.local_prefixes.split(";"))):
            # The canonical form the blockstore reads (`local:///imports/` is local://imports),
            # so the checks against namespaces and import sources compare places, not spellings.
            try:
                folder = canonical_address(part) if part.startswith("local://") else ""
            except InvalidInputError:
                folder = ""
            if not folder:
                raise ConfigError(
                    f"KVLAKE_IMPORTS_LOCAL_PREFIXES has {part!r}; write local:// folders below"
                    " the blockstore root separated by ';', e.g. local://imports;local://raw/2026"
                )
            folders.append(folder)
        if self.local_enabled and not folders:
            raise ConfigError(
                "KVLAKE_IMPORTS_LOCAL_ENABLED is true but KVLAKE_IMPORTS_LOCAL_PREFIXES is empty;"
                " name the folders imports may read, e.g. local://imports"
            )
        return tuple(folders)


class AuthSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How the server protects stored credentials."""

    encrypt_secret_key: str = ""
    """KVLAKE_AUTH_ENCRYPT_SECRET_KEY: encrypts stored secrets; every server of one
    installation must share it. Empty: a key generated once in `data_dir`."""
    cache_ttl: Annotated[float, msgspec.Meta(ge=0, le=1)] = 1.0
    """KVLAKE_AUTH_CACHE_TTL: seconds a process reuses a successful credential and policy
    lookup (0 to 1; 0: none). A revoked key or detached policy takes effect within it."""


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What one server process lets its clients hold (connections, body memory, idle time),
    and how often its background jobs look for work."""

    max_connections: Annotated[int, msgspec.Meta(ge=1)] = 512
    """KVLAKE_SERVER_MAX_CONNECTIONS: requests in flight per process (from a complete head
    to the end of the response); more get 503. Idle connections do not count."""
    max_client_connections: Annotated[int, msgspec.Meta(ge=1)] = 64
    """KVLAKE_SERVER_MAX_CLIENT_CONNECTIONS: open connections one client address may hold
    per process; more are closed at once. Behind a proxy every client shares its address:
    raise this there and put the limit in the proxy."""
    head_timeout: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    """KVLAKE_SERVER_HEAD_TIMEOUT: seconds a connection has to send a whole request head,
    from its opening or from its previous response; then it is closed."""
    body_budget: Annotated[int, msgspec.Meta(ge=1 << 20)] = 64 << 20
    """KVLAKE_SERVER_BODY_BUDGET: bytes of request bodies a process holds at once; a request
    that would exceed it waits briefly, then gets 503 (retry later)."""
    public_body_budget: Annotated[int, msgspec.Meta(ge=64 << 10)] = 1 << 20
    """KVLAKE_SERVER_PUBLIC_BODY_BUDGET: bytes of bodies of operations without credentials
    (login, setup) a process holds at once, apart from `body_budget`, so anonymous clients
    cannot take it from users."""
    client_body_share: Annotated[float, msgspec.Meta(gt=0, le=1)] = 0.25
    """KVLAKE_SERVER_CLIENT_BODY_SHARE: the fraction of each body budget one client address
    may hold (1: no per-address cap, e.g. behind a proxy)."""
    access_log: bool = True
    """KVLAKE_SERVER_ACCESS_LOG: one line per request on stdout (time, user, operation,
    status, bytes, duration), as text or JSON after KVLAKE_LOG_FORMAT; false turns it off."""
    body_read_timeout: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    """KVLAKE_SERVER_BODY_READ_TIMEOUT: seconds a request body may send nothing before it is
    answered 408 and whatever it had written is disposed of."""
    body_min_rate: Annotated[int, msgspec.Meta(ge=1)] = 16 << 10
    """KVLAKE_SERVER_BODY_MIN_RATE: bytes per second a request body must average once its
    `body_rate_grace` is over, or it is answered 408: a trickle cannot hold budget."""
    body_rate_grace: Annotated[float, msgspec.Meta(gt=0)] = 10.0
    """KVLAKE_SERVER_BODY_RATE_GRACE: seconds every body has on top of what `body_min_rate`
    allows for the bytes it has sent (slow starts, small bodies)."""
    http: Literal["auto", "h11", "httptools"] = "auto"
    """KVLAKE_SERVER_HTTP: uvicorn's HTTP protocol; `auto` takes httptools when it is
    installed, else the pure-Python h11. Both carry the same connection guards."""
    presign_upload_expiry: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 60
    """KVLAKE_SERVER_PRESIGN_UPLOAD_EXPIRY: seconds getPhysicalAddress's presigned PUT URL
    is valid (1 to 3600). S3 checks it when an upload starts, so it need only cover the
    hop from the answer to the PUT; the URL still works after the link until then, and
    reads refuse a blob replaced through it."""
    background: bool = True
    """KVLAKE_SERVER_BACKGROUND: run the background work (operations, the deletion workers,
    the cleaner) in the API server; false leaves it to `kvlake worker` processes."""
    job_interval: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 10.0
    """KVLAKE_SERVER_JOB_INTERVAL: seconds the background jobs (cleaner, deletion worker, bulk
    operations) wait after a pass that found nothing to do: lower sees deletes sooner, for
    more idle KV scans."""


class InstallationSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The first admin user, created on the first start (scripts and tests set known keys)."""

    user_name: str = ""
    """KVLAKE_INSTALLATION_USER_NAME: the admin's name (empty: `admin`)."""
    access_key_id: str = ""
    """KVLAKE_INSTALLATION_ACCESS_KEY_ID: the admin's key id (empty: generated and printed)."""
    secret_access_key: str = ""
    """KVLAKE_INSTALLATION_SECRET_ACCESS_KEY: its secret (set it with the key id)."""


class SparkSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where kvlake's pipelines (garbage collection, bulk delete) run Spark."""

    master: str = "local[*]"
    """KVLAKE_SPARK_MASTER: the Spark master, e.g. `local[2]` or `spark://host:7077`."""
    remote: str = ""
    """KVLAKE_SPARK_REMOTE: a Spark Connect server (`sc://host:15002`); used instead of master."""
    conf: str = ""
    """KVLAKE_SPARK_CONF: more Spark settings, `key=value` pairs separated by `;`."""

    def __post_init__(self) -> None:
        self.options()  # refuse a malformed conf at load time, not when a job starts

    def options(self) -> dict[str, str]:
        """`conf` as a mapping. Raises ConfigError naming a malformed pair."""
        options: dict[str, str] = {}
        for pair in filter(None, (part.strip() for part in self.conf.split(";"))):
            key, equals, value = pair.partition("=")
            if not equals or not key.strip():
                raise ConfigError(
                    f"KVLAKE_SPARK_CONF has {pair!r}; write key=value pairs separated by ';',"
                    " e.g. spark.executor.memory=4g;spark.sql.shuffle.partitions=64"
                )
            options[key.strip()] = value.strip()
        return options


class GcSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Garbage collection: kvlake's runs on Spark (docs/spark.md) and what lakeFS's own GC
    client is served (docs/api.md)."""

    grace_period: Annotated[float, msgspec.Meta(ge=0)] = 86_400.0
    """KVLAKE_GC_GRACE_PERIOD: seconds a blob is left alone after its hour folder ends
    (uploads in flight, links to come): a run's default (`--grace-period` sets one run's),
    and the grace period lakeFS's GC client is told (getGarbageCollectionConfig)."""

    uncommitted_page_size: Annotated[int, msgspec.Meta(ge=1)] = 500_000
    """KVLAKE_GC_UNCOMMITTED_PAGE_SIZE: staged addresses one prepareGarbageCollectionUncommitted
    call writes (one Parquet file); the client calls again with the continuation token."""


class GatewaySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The S3 gateway served beside the REST API (`kvlake/gateway`, docs/gateway.md)."""

    domain: str = ""
    """KVLAKE_GATEWAY_DOMAIN: serve virtual-hosted requests too (`<repository>.<domain>`);
    empty serves path style only (`/<repository>/<ref>/<path>`)."""
    region: str = "us-east-1"
    """KVLAKE_GATEWAY_REGION: the region clients sign for and GetBucketLocation answers."""


class ActionsSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """lakeFS-style actions: hooks around commits, merges, branches and tags (docs/actions.md)."""

    enabled: bool = True
    """KVLAKE_ACTIONS_ENABLED: run the hooks of `_lakefs_actions/` files; false runs none."""
    webhook_allowed_hosts: str = ""
    """KVLAKE_ACTIONS_WEBHOOK_ALLOWED_HOSTS: host names or addresses webhooks and airflow hooks
    may call, separated by commas (`*` allows any); loopback is always allowed, so a
    repository writer cannot make the server call internal addresses until configured."""

    def allowed_hosts(self) -> frozenset[str]:
        """The configured hosts, lower-cased, without blanks."""
        return frozenset(
            part.strip().lower() for part in self.webhook_allowed_hosts.split(",") if part.strip()
        )


class Settings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything kvlake reads from its environment. Build it with `load_settings`.

    Empty `kv_url` and `blockstore_url` mean "inside `data_dir`"; the resolved
    URLs are filled in on construction, so readers never see an empty one.
    """

    data_dir: str = "~/.kvlake"
    """KVLAKE_DATA_DIR: where the embedded store and blobs live; `~` is expanded."""
    kv_url: str = ""
    """KVLAKE_KV_URL: the metadata store, e.g. `postgres://user@host/db`."""
    blockstore_url: str = ""
    """KVLAKE_BLOCKSTORE_URL: default object storage, e.g. `local:///srv/lake`."""
    host: str = "127.0.0.1"
    """KVLAKE_HOST: the address the server listens on."""
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 8000
    """KVLAKE_PORT: the TCP port the server listens on (0: any free port)."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """KVLAKE_LOG_LEVEL: the server's log threshold (the access log is apart)."""
    log_format: Literal["text", "json"] = "text"
    """KVLAKE_LOG_FORMAT: `text` lines, or one JSON object per line for log collectors."""
    deletion: DeletionSettings = msgspec.field(default_factory=DeletionSettings)
    """KVLAKE_DELETION_*: the deletion log; see `DeletionSettings`."""
    cleaner: CleanerSettings = msgspec.field(default_factory=CleanerSettings)
    """KVLAKE_CLEANER_*: the metadata cleaner; see `CleanerSettings`."""
    operations: OperationsSettings = msgspec.field(default_factory=OperationsSettings)
    """KVLAKE_OPERATIONS_*: bulk deletes and object locks; see `OperationsSettings`."""
    auth: AuthSettings = msgspec.field(default_factory=AuthSettings)
    """KVLAKE_AUTH_*: credential protection; see `AuthSettings`."""
    installation: InstallationSettings = msgspec.field(default_factory=InstallationSettings)
    """KVLAKE_INSTALLATION_*: the first admin user; see `InstallationSettings`."""
    server: ServerSettings = msgspec.field(default_factory=ServerSettings)
    """KVLAKE_SERVER_*: per-process limits on clients; see `ServerSettings`."""
    spark: SparkSettings = msgspec.field(default_factory=SparkSettings)
    """KVLAKE_SPARK_*: where pipelines run Spark; see `SparkSettings`."""
    gc: GcSettings = msgspec.field(default_factory=GcSettings)
    """KVLAKE_GC_*: what lakeFS's GC client is served; see `GcSettings`."""
    imports: ImportSettings = msgspec.field(default_factory=ImportSettings)
    """KVLAKE_IMPORTS_*: zero-copy imports; see `ImportSettings`."""
    gateway: GatewaySettings = msgspec.field(default_factory=GatewaySettings)
    """KVLAKE_GATEWAY_*: the S3 gateway; see `GatewaySettings`."""
    actions: ActionsSettings = msgspec.field(default_factory=ActionsSettings)
    """KVLAKE_ACTIONS_*: hooks and who webhooks may call; see `ActionsSettings`."""

    def __post_init__(self) -> None:
        data_dir = Path(self.data_dir).expanduser().absolute()
        msgspec.structs.force_setattr(self, "data_dir", str(data_dir))
        if not self.kv_url:
            msgspec.structs.force_setattr(self, "kv_url", f"sqlite://{data_dir / 'kv.db'}")
        if not self.blockstore_url:
            msgspec.structs.force_setattr(self, "blockstore_url", f"local://{data_dir / 'blocks'}")
        for name in ("kv_url", "blockstore_url"):
            if "://" not in getattr(self, name):
                variable = f"{ENV_PREFIX}{name.upper()}"
                # The value is not echoed: a malformed URL may still carry a password.
                raise ConfigError(
                    f"{variable} has no scheme; write a URL such as "
                    f"{'sqlite:///path/kv.db' if name == 'kv_url' else 'local:///path/blocks'}"
                )

    def redacted(self) -> Self:
        """A copy safe to print: passwords in URLs and secret-named fields become `***`."""
        return _redact_struct(self)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the YAML file named by `KVLAKE_CONFIG` (if set), then `KVLAKE_*` variables.

    `environ` defaults to `os.environ`. An empty variable counts as unset.

    Raises:
        ConfigError: an unreadable or malformed file, an unknown key, or a value
            of the wrong type or range; the message names the key or variable.
    """
    env = dict(os.environ if environ is None else environ)
    file_values: dict[str, Any] = {}
    path = env.get(CONFIG_ENV, "")
    if path:
        file_values = _read_yaml(Path(path))
    return _build(Settings, file_values, env, ENV_PREFIX, _Origin(f"config file {path!r}", ""))


def redact_url(url: str) -> str:
    """`url` with the password and secret-looking query values replaced by `***`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostinfo = netloc.rpartition("@")
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hostinfo}"
        query = urlencode(
            [(k, "***" if _is_secret(k) else v) for k, v in parse_qsl(parts.query, True)],
            safe="*/:",
        )
        # Rebuilt by hand: urlunsplit turns `local:///abs` into `local://abs`.
        return (
            f"{parts.scheme}://{netloc}{parts.path}"
            + (f"?{query}" if query else "")
            + (f"#{parts.fragment}" if parts.fragment else "")
        )
    except ValueError:
        return "<unparsable URL hidden>"


def _is_secret(name: str) -> bool:
    return any(word in name.lower() for word in _SECRET_WORDS)


def _redact_struct(struct: _S) -> _S:
    changes: dict[str, object] = {}
    for field in msgspec.structs.fields(struct):
        value = getattr(struct, field.name)
        if isinstance(value, msgspec.Struct):
            changes[field.name] = _redact_struct(value)
        elif isinstance(value, str) and _is_secret(field.name) and value:
            changes[field.name] = "***"
        elif isinstance(value, str) and "://" in value:
            changes[field.name] = redact_url(value)
    return msgspec.structs.replace(struct, **changes)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{CONFIG_ENV} names {str(path)!r}, which cannot be read ({exc.strerror}); "
            f"fix the path or unset {CONFIG_ENV}"
        ) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"config file {str(path)!r} is not valid YAML{where}; fix it") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {str(path)!r} holds a {type(data).__name__}; write a mapping "
            "of setting names to values, e.g. 'port: 8000'"
        )
    return data


class _Origin(NamedTuple):
    """Where file values of one section come from, for messages."""

    file: str
    section: str  # "" or "deletion." for a nested section

    def key(self, name: object) -> str:
        return f"{self.file}: key '{self.section}{name}'"


def _build(
    cls: type[_S], values: dict[str, Any], env: dict[str, str], prefix: str, origin: _Origin
) -> _S:
    """Convert one section, recursing into nested sections; env beats `values`."""
    fields = {field.name: field for field in msgspec.structs.fields(cls)}
    unknown = sorted(str(key) for key in values if key not in fields)
    if unknown:
        raise ConfigError(
            f"{origin.key(unknown[0])} is unknown; known keys are {', '.join(sorted(fields))}"
        )
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        variable = f"{prefix}{name.upper()}"
        if _is_section(field.type):
            section = values.get(name) or {}
            if not isinstance(section, dict):
                raise ConfigError(f"{origin.key(name)} must be a mapping of settings")
            inner = _Origin(origin.file, f"{origin.section}{name}.")
            kwargs[name] = _build(field.type, section, env, f"{variable}_", inner)
        elif env.get(variable, ""):
            kwargs[name] = _convert(env[variable], field.type, variable)
        elif name in values:
            kwargs[name] = _convert(values[name], field.type, origin.key(name))
    return cls(**kwargs)


def _is_section(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, msgspec.Struct)


def _convert(raw: object, annotation: object, source: str) -> object:
    base = get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation
    shown = "***" if _is_secret(source) else repr(raw)
    if base is bool and isinstance(raw, str):
        word = raw.strip().lower()
        if word not in _TRUE | _FALSE:
            raise ConfigError(f"{source} is {shown}; set it to true or false")
        raw = word in _TRUE
    if base is str and not isinstance(raw, str):
        raise ConfigError(f"{source} is {shown}; write it as text (quote it in YAML)")
    try:
        return msgspec.convert(raw, annotation, strict=False)
    except msgspec.ValidationError as exc:
        what = getattr(base, "__name__", str(base))
        reason = str(exc).replace("Expected", "expected").split(" - at ")[0]
        raise ConfigError(f"{source} is {shown}: {reason}; set it to a valid {what}") from exc
