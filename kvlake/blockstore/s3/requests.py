"""How the s3 blockstore makes each request: under the shared rate, retried, translated.

kvlake, not botocore, retries: every attempt first takes a slot from the
process's `AdaptiveRateLimiter` for the endpoint, and a throttled answer lowers
that shared rate, so a large delete slows down instead of failing. What an
error means is `errors.py`'s table; what is finally raised is a kvlake error.
`S3Requests` is the base of the adapter and of its client uploads, so both
send every request through the one `_call`.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, TypeVar

import botocore.exceptions

from kvlake.blockstore.s3.errors import Outcome, classify, endpoint_host, translate
from kvlake.blockstore.throttle import AdaptiveRateLimiter
from kvlake.errors import BlobNotFoundError, InvalidInputError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

T = TypeVar("T")

MAX_THROTTLED_ATTEMPTS: Final = 30
"""Attempts at a throttled request: with the shared rate falling and back-offs of up to
MAX_BACKOFF, a request gives up only after minutes of throttling."""
BASE_BACKOFF: Final = 0.05
MAX_BACKOFF: Final = 5.0


class S3Requests:
    """One boto3 client's requests under a shared rate limiter. Thread-safe."""

    def __init__(
        self, client: S3Client, *, limiter: AdaptiveRateLimiter, max_attempts: int
    ) -> None:
        self._client = client
        self._limiter = limiter
        self._max_attempts = max_attempts
        self._known_buckets: set[str] = set()
        self._buckets_lock = threading.Lock()

    def _call(self, doing: str, request: Callable[[], T]) -> T:
        """Run one S3 request under the shared rate, retrying throttles and transient errors."""
        failures = throttles = 0
        while True:
            round_ = self._limiter.acquire()
            try:
                result = request()
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                outcome = classify(exc)
                if outcome is Outcome.THROTTLED and throttles + 1 < MAX_THROTTLED_ATTEMPTS:
                    throttles += 1
                    self._limiter.throttled_in(round_)
                    self._limiter.pause(_backoff(throttles))
                    continue
                if outcome is Outcome.TRANSIENT and failures + 1 < self._max_attempts:
                    failures += 1
                    self._limiter.pause(_backoff(failures))
                    continue
                if outcome is Outcome.THROTTLED:
                    self._limiter.throttled_in(round_)
                raise translate(exc, doing, self._client.meta.endpoint_url) from exc
            self._limiter.succeeded()
            return result

    def _check_bucket(self, bucket: str) -> None:
        """Refuse a bucket that is missing or out of reach, once per bucket and process.

        Raises:
            InvalidInputError: the bucket does not exist.
            ConfigError, UnavailableError: the credentials or the endpoint fail.
        """
        if bucket in self._known_buckets:
            return
        try:
            self._call(f"check bucket {bucket!r}", lambda: self._client.head_bucket(Bucket=bucket))
        except BlobNotFoundError as exc:
            where = endpoint_host(self._client.meta.endpoint_url)
            raise InvalidInputError(
                f"bucket {bucket!r} does not exist at {where};"
                " create it, or choose a storage namespace in an existing bucket"
            ) from exc
        with self._buckets_lock:
            self._known_buckets.add(bucket)

    @staticmethod
    def _locate(namespace: str, key: str = "") -> tuple[str, str]:
        """The bucket and object key in a checked namespace (key "": the prefix, ending in /)."""
        bucket, _, prefix = namespace.removeprefix("s3://").partition("/")
        return bucket, f"{prefix}/{key}" if prefix else key

    def _presign(
        self,
        method: str,
        namespace: str,
        key: str,
        expires: int,
        extra: Mapping[str, object] | None = None,
    ) -> str:
        """Sign locally (no request, so no rate slot). Only the host header is signed:
        clients may send Content-Type and Content-Length as they please."""
        bucket, object_key = self._locate(namespace, key)
        try:
            params = {"Bucket": bucket, "Key": object_key, **(extra or {})}
            return self._client.generate_presigned_url(method, Params=params, ExpiresIn=expires)
        except botocore.exceptions.BotoCoreError as exc:
            raise translate(
                exc, f"presign blob {key!r} in {namespace!r}", self._client.meta.endpoint_url
            ) from exc


def _backoff(attempt: int) -> float:
    """Exponential back-off with jitter, so retrying workers do not move in lockstep."""
    return min(MAX_BACKOFF, BASE_BACKOFF * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.0)
