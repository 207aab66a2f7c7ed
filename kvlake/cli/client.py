"""The CLI's one HTTP client: every user-facing command talks to the server through it.

Commands go through the API with the user's credentials, so the server's policies apply
and it records who acted. Every failure becomes one `ApiError`: a one-line message that
names the problem and the fix, and the exit status of the documented table (docs/cli.md):

    0  success                      4  not found (404, 410 Gone)
    1  the server failed (5xx)      5  conflict: changed, locked or exists (409, 412, 423)
    2  bad input or usage (400)     6  the server cannot be reached, or is unavailable (503)
    3  not authenticated or not allowed (401, 403)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

import httpx

from kvlake.cli.lakectl import (
    ACCESS_KEY_ENV,
    ENDPOINT_ENV,
    SECRET_KEY_ENV,
    LakectlConfig,
    load_lakectl_config,
)
from kvlake.errors import KvlakeError

EXIT_SERVER: Final = 1
EXIT_USAGE: Final = 2
EXIT_AUTH: Final = 3
EXIT_NOT_FOUND: Final = 4
EXIT_CONFLICT: Final = 5
EXIT_UNREACHABLE: Final = 6

_EXIT_BY_STATUS: Final = {
    401: EXIT_AUTH,
    403: EXIT_AUTH,
    404: EXIT_NOT_FOUND,
    410: EXIT_NOT_FOUND,
    409: EXIT_CONFLICT,
    412: EXIT_CONFLICT,
    423: EXIT_CONFLICT,
    503: EXIT_UNREACHABLE,
}
TIMEOUT: Final = httpx.Timeout(300.0, connect=10.0)
"""Long reads (big downloads, merges of large branches) must not time out; connects should."""

Query = Mapping[str, str | int | bool | None]


class ApiError(KvlakeError):
    """A command failed; `exit_code` is its status in the documented table."""

    def __init__(self, message: str, exit_code: int, status: int = 0) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.status = status


class ApiClient:
    """A connection to the server as the configured user; close it (or use `with`)."""

    def __init__(self, config: LakectlConfig) -> None:
        self.config = config
        self._http = httpx.Client(
            base_url=config.api_url,
            auth=(config.access_key_id, config.secret_access_key),
            timeout=TIMEOUT,
            headers={"User-Agent": "kvlake-cli"},
        )

    @classmethod
    def open(cls) -> ApiClient:
        """A client from ~/.lakectl.yaml and LAKECTL_* variables.

        Raises:
            ConfigError: the configuration file is malformed.
            ApiError: no credentials are configured (exit 3).
        """
        config = load_lakectl_config()
        if not config.access_key_id or not config.secret_access_key:
            raise ApiError(
                f"no credentials configured (read {config.source}); run `kvlake config`, or "
                f"set {ACCESS_KEY_ENV} and {SECRET_KEY_ENV}",
                EXIT_AUTH,
            )
        return cls(config)

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Query | None = None,
        json: Any = None,
        content: bytes | Iterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request; a non-2xx answer or a transport failure raises `ApiError`."""
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        try:
            response = self._http.request(
                method, path, params=query, json=json, content=content, headers=headers
            )
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc
        if response.is_error:
            raise self._failure(response)
        return response

    def get(self, path: str, /, **params: str | int | bool | None) -> Any:
        """GET `path` with `params`; the decoded JSON body."""
        return self.request("GET", path, params=params).json()

    def pages(
        self, path: str, /, *, after: str = "", limit: int | None = None, **params: str | int | None
    ) -> Iterator[Any]:
        """The results of a lakeFS paginated listing after `after`, page by page (streamed),
        `limit` of them at most."""
        shown = 0
        while True:
            page = self.get(path, after=after or None, **params)
            for result in page.get("results", []):
                if limit is not None and shown >= limit:
                    return
                shown += 1
                yield result
            pagination = page.get("pagination") or {}
            if not pagination.get("has_more"):
                return
            after = pagination.get("next_offset", "")

    def stream(self, path: str, params: Query) -> Iterator[httpx.Response]:
        """A streamed GET (downloads); the response is closed when the iteration ends."""
        query = {k: _param(v) for k, v in params.items() if v is not None}
        try:
            with self._http.stream("GET", path, params=query) as response:
                if response.is_error:
                    response.read()
                    raise self._failure(response)
                yield response
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: httpx.TransportError) -> ApiError:
        kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "is not reachable"
        return ApiError(
            f"the server at {self.config.endpoint_url} {kind} ({type(exc).__name__}); start it "
            f"with `kvlake serve`, or point {ENDPOINT_ENV} (or server.endpoint_url in "
            "~/.lakectl.yaml) at it",
            EXIT_UNREACHABLE,
        )

    def _failure(self, response: httpx.Response) -> ApiError:
        status = response.status_code
        text = _server_message(response)
        code = _EXIT_BY_STATUS.get(status, EXIT_SERVER if status >= 500 else EXIT_USAGE)
        # lakeFS answers 401 for a policy refusal too; the server's text tells them apart.
        refused = "permission" in text.lower()
        if status == 401 and not refused:
            text = (
                f"{text}: the server refused the access key "
                f"{self.config.access_key_id!r}; check it with `kvlake config`, or get a new "
                "one from an admin (`kvlake superuser` on the server)"
            )
        elif status in (401, 403) and "admin" not in text:
            text = f"{text}: ask an admin for a policy that allows it"
        elif status >= 500 and status != 503:
            text = f"the server failed ({status}): {text}; see its log"
        return ApiError(text, code, status)


def _param(value: str | int | bool | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _server_message(response: httpx.Response) -> str:
    """The server's own words: kvlake's `detail` (what to do) before lakeFS's `message`."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        detail, message = body.get("detail"), body.get("message")
        if isinstance(detail, str) and detail:
            return " ".join(detail.split())
        if isinstance(message, str) and message:
            return " ".join(message.split())
    return f"{response.status_code} {response.reason_phrase}".strip()
