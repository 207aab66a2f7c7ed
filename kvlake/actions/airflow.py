"""Airflow hooks: trigger a DAG run through Airflow's REST API, and optionally wait for it.

As lakeFS does (docs/howto/hooks/airflow.md): POST
`{url}/api/v1/dags/{dag_id}/dagRuns` with basic auth and a body
`{"dag_run_id": "lakeFS_hook_<hook id>_<run id>", "conf": {...dag_conf, "lakeFS_event": <event>}}`;
a 200 answer passes the hook. With `wait_for_dag` the hook then polls
`.../dagRuns/<dag_run_id>` until its `state` is `success` (pass) or `failed`
(fail), within the hook's `timeout`. The same host allow-list as webhooks
applies (a repository writer chooses the URL), checked before any packet.

`password` may name environment variables as lakeFS writes them,
`{{ ENV.NAME }}`; like lakeFS's default (`actions.env.prefix`), only names
starting with `LAKEFSACTION_` may be read, so an action file cannot send the
server's own secrets to an Airflow it names. A password read from the
environment is shown as `*******` in the hook's output.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import time
from collections.abc import Collection, Mapping
from typing import Final
from urllib.parse import quote, urlsplit

from kvlake.actions.records import AirflowHook
from kvlake.actions.webhook import HookFailedError, host_allowed, read_capped

ENV_PREFIX: Final = "LAKEFSACTION_"
"""Environment variables an action file may read (lakeFS's default `actions.env.prefix`)."""
ENV_REFERENCE: Final = re.compile(r"{{ ?ENV\.(.*?) ?}}")
"""lakeFS's `{{ ENV.NAME }}` reference in a secret property."""
POLL_INTERVAL = 5.0
"""Seconds between two reads of a DAG run's state while waiting for it (lakeFS: 5s); read at
each call, so tests shorten it."""
REQUEST_TIMEOUT: Final = 5.0
"""Seconds one request to Airflow may take (lakeFS's client timeout), within the hook's."""


def check_secret(text: str) -> str:
    """'' if every `{{ ENV.NAME }}` in `text` may be read, else what is wrong (for validation)."""
    for name in ENV_REFERENCE.findall(text):
        if not name.startswith(ENV_PREFIX):
            return (
                f"environment variable {name!r} may not be read by an action; only names"
                f" starting with {ENV_PREFIX} are (set {ENV_PREFIX}{name} on the server)"
            )
    return ""


def resolve_secret(text: str, environ: Mapping[str, str]) -> tuple[str, bool]:
    """The value with `{{ ENV.NAME }}` replaced, and whether it came from the environment.

    Raises:
        HookFailedError: a referenced variable is not set or may not be read.
    """
    problem = check_secret(text)
    if problem:
        raise HookFailedError(problem)
    missing: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            missing.append(name)
            return ""
        return environ[name]

    resolved, count = ENV_REFERENCE.subn(value, text)
    if missing:
        raise HookFailedError(f"environment variable {missing[0]!r} not found on the server")
    return resolved, count > 0


def call_airflow(
    hook: AirflowHook,
    event: Mapping[str, object],
    *,
    dag_run_id: str,
    allowed: Collection[str],
    environ: Mapping[str, str] | None = None,
) -> str:
    """Trigger the hook's DAG with the event in its conf; with `wait_for_dag`, wait for the
    run to end. Returns the log of the exchange.

    Raises:
        HookFailedError: the host is not allowed, a request failed or was not answered 200,
            the DAG run failed, or it did not end within the hook's timeout.
    """
    parts = urlsplit(hook.url)
    host = parts.hostname or ""
    if not host_allowed(host, allowed):
        raise HookFailedError(
            f"airflow host {host!r} is not allowed; an administrator may add it to"
            " KVLAKE_ACTIONS_WEBHOOK_ALLOWED_HOSTS (only loopback is allowed by default)"
        )
    password, secret = resolve_secret(hook.password, os.environ if environ is None else environ)
    deadline = time.monotonic() + hook.timeout
    token = base64.b64encode(f"{hook.username}:{password}".encode()).decode("ascii")
    headers = {"Content-Type": "application/json", "Authorization": f"Basic {token}"}
    runs_path = f"{parts.path.rstrip('/')}/api/v1/dags/{quote(hook.dag_id, safe='')}/dagRuns"
    conf: dict[str, object] = {**dict(hook.dag_conf), "lakeFS_event": dict(event)}
    body = json.dumps({"dag_run_id": dag_run_id, "conf": conf}).encode()
    log = [
        f"Request:\nPOST {parts.scheme}://{parts.netloc}{runs_path}",
        f"Username: {hook.username}, Password: {'*******' if secret else password}",
        f"Body: {body.decode()}\n",
    ]
    status, answer = _request(hook.url, "POST", runs_path, body, headers, deadline, log)
    if status != 200:
        raise HookFailedError(
            f"airflow hook request failed (status code: {status})", "\n".join(log)
        )
    if not hook.wait_for_dag:
        return "\n".join(log)
    log.append("\nWaiting for DAG to complete...")
    run_path = f"{runs_path}/{quote(dag_run_id, safe='')}"

    def did_not_end(output: str) -> HookFailedError:
        return HookFailedError(
            f"airflow DAG run {dag_run_id!r} did not end within {hook.timeout:g}s (timeout)",
            output,
        )

    while True:
        if time.monotonic() + POLL_INTERVAL >= deadline:
            raise did_not_end("\n".join(log))
        time.sleep(POLL_INTERVAL)
        log.append(f"Request:\nGET {parts.scheme}://{parts.netloc}{run_path}")
        try:
            status, answer = _request(hook.url, "GET", run_path, None, headers, deadline, log)
        except HookFailedError as failure:
            # A poll cut short by the hook's deadline means the run did not end in time.
            if time.monotonic() < deadline:
                raise
            raise did_not_end(failure.output) from None
        if status != 200:
            raise HookFailedError(
                f"airflow hook request failed (status code: {status})", "\n".join(log)
            )
        state = _state(answer)
        log.append(f"\nDAG run state: {state}")
        if state == "failed":
            raise HookFailedError(
                f"airflow hook DAG failed: DAG run {dag_run_id!r} ended in state 'failed'",
                "\n".join(log),
            )
        if state == "success":
            return "\n".join(log)


def _state(answer: bytes) -> str:
    try:
        decoded = json.loads(answer)
    except ValueError:
        return ""
    state = decoded.get("state") if isinstance(decoded, dict) else None
    return state if isinstance(state, str) else ""


def _request(
    url: str,
    method: str,
    target: str,
    body: bytes | None,
    headers: Mapping[str, str],
    deadline: float,
    log: list[str],
) -> tuple[int, bytes]:
    """One request to Airflow, bounded by REQUEST_TIMEOUT and the hook's deadline; the answer
    (status, up to OUTPUT_LIMIT bytes of body) is appended to `log`."""
    parts = urlsplit(url)
    connection_type = (
        http.client.HTTPSConnection
        if parts.scheme.lower() == "https"
        else http.client.HTTPConnection
    )

    def bound() -> float:
        left = min(deadline - time.monotonic(), REQUEST_TIMEOUT)
        if left <= 0:
            raise TimeoutError
        return left

    try:
        connection = connection_type(parts.hostname or "", parts.port, timeout=bound())
    except ValueError:
        raise HookFailedError(f"airflow url {url!r} has an invalid port") from None

    def settle() -> None:
        if connection.sock is not None:
            connection.sock.settimeout(bound())

    try:
        connection.request(method, target, body=body, headers=dict(headers))
        settle()
        response = connection.getresponse()
        kept = read_capped(response, settle)
    except TimeoutError:
        raise HookFailedError(
            f"airflow hook request failed: no complete answer to {method} {target} in time"
            " (timeout)",
            "\n".join(log),
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        raise HookFailedError(f"airflow hook request failed: {exc}", "\n".join(log)) from None
    finally:
        connection.close()
    log.append(f"Response: {response.status} {response.reason}")
    log.append(kept.decode("utf-8", "replace"))
    return response.status, kept
