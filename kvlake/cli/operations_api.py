"""`kvlake operations list|status|failures|cancel|watch`: long-running work of every kind,
over the HTTP API with the user's own credentials (the server's policies decide what they
see: their own operations, or all of them for an admin).

Where the server is and who the user is come from lakectl's settings:
`LAKECTL_SERVER_ENDPOINT_URL`, `LAKECTL_CREDENTIALS_ACCESS_KEY_ID`,
`LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY`, else `~/.lakectl.yaml` (or the file
`LAKECTL_CONFIG_FILE` names). `open_api` is this module's own small reader of
them; the CLI's shared client (issue 27) reads the same ones.

Every command prints text, or the API's JSON with `--json`; `watch` draws a
tqdm progress bar on stderr until the operation ends, and exits 1 if it failed
or completed with errors (as `kvlake delete --wait` does).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import click
import httpx
import yaml
from tqdm import tqdm

from kvlake.errors import (
    ConfigError,
    ConflictError,
    InvalidInputError,
    KvlakeError,
    NotFoundError,
    PermissionDeniedError,
    UnavailableError,
)

ENDPOINT_ENV: Final = "LAKECTL_SERVER_ENDPOINT_URL"
ACCESS_KEY_ENV: Final = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID"
SECRET_KEY_ENV: Final = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"
CONFIG_FILE_ENV: Final = "LAKECTL_CONFIG_FILE"
DEFAULT_ENDPOINT: Final = "http://127.0.0.1:8000"
FINISHED: Final = frozenset({"completed", "completed_with_errors", "failed", "cancelled"})
REFRESH: Final = 0.5
"""Seconds between two status reads of `watch`."""
_ERRORS: Final[Mapping[int, type[KvlakeError]]] = {
    400: InvalidInputError,
    401: PermissionDeniedError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    503: UnavailableError,
}


def open_api(env: Mapping[str, str] | None = None) -> httpx.Client:
    """An HTTP client on the server's `/api/v1` as the configured user.

    Raises:
        ConfigError: no credentials configured, or a malformed file or endpoint.
    """
    env = os.environ if env is None else env
    named = env.get(CONFIG_FILE_ENV, "")
    path = Path(named) if named else Path(env.get("HOME", "~")).expanduser() / ".lakectl.yaml"
    document: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {exc}") from None
        document = loaded if isinstance(loaded, dict) else {}
    server, credentials = document.get("server") or {}, document.get("credentials") or {}
    endpoint = env.get(ENDPOINT_ENV) or str(server.get("endpoint_url") or DEFAULT_ENDPOINT)
    key = env.get(ACCESS_KEY_ENV) or str(credentials.get("access_key_id") or "")
    secret = env.get(SECRET_KEY_ENV) or str(credentials.get("secret_access_key") or "")
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"server endpoint {endpoint!r} is not an http(s) URL; set {ENDPOINT_ENV}")
    if not key or not secret:
        raise ConfigError(
            f"no credentials: set {ACCESS_KEY_ENV} and {SECRET_KEY_ENV}, or"
            f" credentials.access_key_id and credentials.secret_access_key in {path}"
        )
    base = endpoint.rstrip("/")
    base = base if base.endswith("/api/v1") else f"{base}/api/v1"
    return httpx.Client(base_url=base, auth=(key, secret), timeout=httpx.Timeout(60, connect=10))


def call(api: httpx.Client, method: str, path: str, **query: str) -> Any:
    """The decoded JSON answer, or the server's message raised as the matching error."""
    try:
        answer = api.request(method, path, params={k: v for k, v in query.items() if v})
    except httpx.TransportError as exc:
        raise UnavailableError(f"the server at {api.base_url} cannot be reached: {exc}") from None
    if answer.is_success:
        return answer.json()
    try:
        message = str(answer.json().get("message") or answer.text)
    except ValueError:
        message = answer.text
    raise _ERRORS.get(answer.status_code, KvlakeError)(message)


def describe(status: Mapping[str, Any]) -> str:
    """One line: id, kind, status, path and counters; a dry run says "would delete"."""
    deleted = "would delete" if status.get("dry_run") else "deleted"
    total = status.get("total_count")
    line = (
        f"{status['operation_id']}  {status['kind']:<11} {status['status']:<22}"
        f" {status['path']}  {deleted} {status['deleted_count']}"
        f" failed {status['failed_count']} skipped {status['skipped_count']}"
        f" of {'?' if total is None else total}  by {status['created_by']}"
    )
    if status.get("commit_id"):
        line += f"  commit {status['commit_id']}"
    if status.get("error"):
        line += f"  error: {status['error']}"
    return line


def _echo(value: Any, as_json: bool, text: str) -> None:
    click.echo(json.dumps(value, indent=2) if as_json else text)


_JSON = click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")


@click.command("list")
@click.option("--status", default="", help="Only operations in this status.")
@click.option("--kind", default="", help="Only operations of this kind (bulk-delete, gc-run).")
@click.option("--repository", default="", help="Only operations on this repository.")
@click.option("--creator", default="", help="Only operations this user (id) created.")
@_JSON
def list_operations(status: str, kind: str, repository: str, creator: str, as_json: bool) -> None:
    """Your operations of every kind (an admin's: everyone's), oldest first."""
    results: list[Any] = []
    after = ""
    with open_api() as api:
        while True:
            page = call(
                api,
                "GET",
                "/operations",
                status=status,
                kind=kind,
                repository=repository,
                creator=creator,
                after=after,
                amount="1000",
            )
            results += page["results"]
            if not page["pagination"]["has_more"]:
                break
            after = page["pagination"]["next_offset"]
    _echo(results, as_json, "\n".join(describe(status) for status in results))


@click.command("status")
@click.argument("operation_id")
@_JSON
def operation_status(operation_id: str, as_json: bool) -> None:
    """An operation's status, counters, rate and ETA, whatever its kind."""
    with open_api() as api:
        status = call(api, "GET", f"/operations/{operation_id}")
    _echo(status, as_json, describe(status))


@click.command("failures")
@click.argument("operation_id")
@click.option("--after", default="", help="Paths after this one.")
@click.option("--amount", default=100, show_default=True, help="How many.")
@_JSON
def operation_failures(operation_id: str, after: str, amount: int, as_json: bool) -> None:
    """The paths a bulk delete failed or skipped, and why."""
    with open_api() as api:
        page = call(
            api,
            "GET",
            f"/operations/bulk-delete/status/{operation_id}/failures",
            after=after,
            amount=str(amount),
        )
    rows = page["results"]
    _echo(page, as_json, "\n".join(f"{r['outcome']}\t{r['path']}\t{r['reason']}" for r in rows))
    if page["pagination"]["has_more"] and not as_json:
        click.echo(f"more: --after {page['pagination']['next_offset']}", err=True)


@click.command("cancel")
@click.argument("operation_id")
@_JSON
def cancel_operation(operation_id: str, as_json: bool) -> None:
    """Cancel at the next batch boundary; what is done stays done. A finished operation
    cannot be cancelled: the error names its final status."""
    with open_api() as api:
        status = call(api, "DELETE", f"/operations/{operation_id}")
    _echo(status, as_json, f"{operation_id}: cancel requested ({status['status']})")


@click.command("watch")
@click.argument("operation_id")
@_JSON
def watch_operation(operation_id: str, as_json: bool) -> None:
    """Draw the operation's progress until it ends; exit 1 if it failed or had errors."""
    with open_api() as api:
        status = call(api, "GET", f"/operations/{operation_id}")
        with tqdm(desc=str(status["kind"]), unit=" obj", file=sys.stderr) as bar:
            while True:
                _draw(bar, status)
                if status["status"] in FINISHED:
                    break
                time.sleep(REFRESH)
                status = call(api, "GET", f"/operations/{operation_id}")
    _echo(status, as_json, describe(status))
    if status["status"] in ("failed", "completed_with_errors"):
        raise SystemExit(1)


def _draw(bar: tqdm[Any], status: Mapping[str, Any]) -> None:
    """Move the bar to the processed count (never back) and show the counters."""
    processed = status["deleted_count"] + status["failed_count"] + status["skipped_count"]
    bar.total = status["total_count"]
    bar.n = max(bar.n, processed)
    word = "would delete" if status["dry_run"] else "deleted"
    bar.set_postfix_str(
        f"{status['status']}; {word} {status['deleted_count']}, failed"
        f" {status['failed_count']}, skipped {status['skipped_count']}",
        refresh=False,
    )
    bar.refresh()


COMMANDS: Final = (
    list_operations,
    operation_status,
    operation_failures,
    cancel_operation,
    watch_operation,
)
"""The `kvlake operations` commands that go over the API (`run` works on the lake)."""
