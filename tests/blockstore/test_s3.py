"""S3BlockStore specifics against moto's S3 server: the root wall, multipart, batches, faults.

Faults come from `FaultProxy` between the adapter and the server, and the rate
limiter runs on a fake clock, so the back-off is checked by what was retried and
how the rate moved, never by how long anything took.
"""

from __future__ import annotations

import io
import socket
import urllib.request
from collections.abc import Iterator

import httpx
import pytest

from kvlake.blockstore import READ_CHUNK, open_blockstore
from kvlake.blockstore.s3.client import S3Location, make_client
from kvlake.blockstore.s3.store import DELETE_BATCH, MAX_COPY_OBJECT, MIN_PART_SIZE, S3BlockStore
from kvlake.blockstore.throttle import AdaptiveRateLimiter, shared_limiter
from kvlake.errors import ConfigError, InvalidInputError, UnavailableError
from tests.support import FakeClock
from tests.support.s3server import Fault, FaultProxy, MotoS3

from .streams import PatternStream, SourceError, pattern

NS = "s3://lake/repos/repo1"


@pytest.fixture
def proxy(s3_server: MotoS3) -> Iterator[FaultProxy]:
    faulty = FaultProxy(s3_server.endpoint)
    yield faulty
    faulty.stop()


def open_store(
    endpoint: str,
    clock: FakeClock,
    *,
    root: str = "lake",
    max_attempts: int = 5,
    max_copy_object: int = MAX_COPY_OBJECT,
) -> S3BlockStore:
    """A store on `endpoint` with its own limiter on the fake clock and 5 MiB parts."""
    client = make_client(S3Location(root=root, endpoint_url=endpoint, addressing_style="path"))
    limiter = AdaptiveRateLimiter(max_rate=1000.0, clock=clock, sleep=clock.sleep)
    return S3BlockStore(
        client,
        root=root,
        limiter=limiter,
        part_size=MIN_PART_SIZE,
        max_attempts=max_attempts,
        max_copy_object=max_copy_object,
        copy_part_size=MIN_PART_SIZE,
    )


@pytest.fixture
def store(proxy: FaultProxy, clock: FakeClock) -> Iterator[S3BlockStore]:
    with open_store(proxy.endpoint, clock) as opened:
        yield opened


def deletes(method: str, path: str) -> bool:
    return method == "POST" and "?delete" in path


# -- namespaces: the root is a wall ------------------------------------------------------


def test_namespaces_must_be_below_the_root(s3_server: MotoS3) -> None:
    with open_blockstore("s3://lake/repos") as store:
        assert store.check_namespace("s3://lake/repos/repo1/") == "s3://lake/repos/repo1"
        for outside in (
            "s3://lake/repos",
            "s3://lake/repos2/x",
            "s3://lake/x",
            "s3://never/repos/x",
        ):
            with pytest.raises(
                InvalidInputError, match="not below the blockstore root 's3://lake/repos'"
            ):
                store.put(outside, "k", b"x")
    assert "Contents" not in s3_server.admin.list_objects_v2(Bucket="never")


def test_a_root_of_every_bucket_still_needs_a_valid_existing_bucket(s3_server: MotoS3) -> None:
    with open_blockstore("s3://") as store:
        with pytest.raises(InvalidInputError, match="not a valid S3 bucket name"):
            store.check_namespace("s3://Upper_Case/repo1")
        with pytest.raises(
            InvalidInputError,
            match="bucket 'missing' does not exist at http://127.0.0.1:.*create it",
        ):
            store.check_namespace("s3://missing/repo1")


def test_blobs_are_objects_under_the_namespace_prefix(
    store: S3BlockStore, s3_server: MotoS3
) -> None:
    store.put(NS, "data/a", b"blob")
    listed = s3_server.admin.list_objects_v2(Bucket="lake")["Contents"]
    assert [entry["Key"] for entry in listed] == ["repos/repo1/data/a"]


# -- opening: clear errors at start-up, nothing created ----------------------------------


def test_url_options_replace_the_aws_variables(
    s3_server: MotoS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.delenv("AWS_REGION")
    url = f"s3://lake?endpoint_url={s3_server.endpoint}&region=eu-west-1&addressing_style=path"
    with open_blockstore(url) as store:
        store.put("s3://lake/r", "k", b"via options")
        assert store.get("s3://lake/r", "k") == b"via options"


def test_a_missing_root_bucket_fails_at_start_up(s3_server: MotoS3) -> None:
    with pytest.raises(
        ConfigError,
        match="KVLAKE_BLOCKSTORE_URL cannot be served: bucket 'nobucket' does not exist",
    ):
        open_blockstore("s3://nobucket/prefix")
    assert sorted(b["Name"] for b in s3_server.admin.list_buckets()["Buckets"]) == [
        "empty",
        "lake",
        "never",
    ]


def test_missing_credentials_fail_at_start_up(
    s3_server: MotoS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ConfigError, match="no usable AWS credentials.*AWS_ACCESS_KEY_ID"):
        open_blockstore("s3://lake")


def test_an_unreachable_endpoint_fails_at_start_up(aws_env: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    # Nothing listens on that port any more.
    aws_env.setenv("AWS_ENDPOINT_URL", endpoint)
    with pytest.raises(ConfigError, match=f"{endpoint} cannot be reached.*AWS_ENDPOINT_URL"):
        open_blockstore("s3://lake?max_attempts=1")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("s3://key:secret@lake/prefix", "never the URL"),
        ("s3://lake?colour=blue", "unknown s3 options"),
        ("s3://lake?addressing_style=sideways", "addressing_style"),
        ("s3://lake?part_size_mib=many", "whole number"),
        ("s3://lake?part_size_mib=1", "at least 5 MiB"),
        ("s3://lake/../x", "root 'lake/../x' is invalid"),
        ("s3://BAD_bucket", "valid bucket name"),
    ],
)
def test_bad_urls_are_config_errors_that_hide_secrets(
    aws_env: pytest.MonkeyPatch, url: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        open_blockstore(url)
    assert "secret" not in str(caught.value)


def test_stores_of_one_endpoint_share_one_rate_limiter(s3_server: MotoS3) -> None:
    with open_blockstore("s3://lake") as first, open_blockstore("s3://never") as second:
        assert isinstance(first, S3BlockStore) and isinstance(second, S3BlockStore)
        assert first._limiter is second._limiter is shared_limiter(s3_server.endpoint)


# -- streaming uploads ---------------------------------------------------------------------


def test_a_large_put_is_a_streamed_multipart_upload(store: S3BlockStore, proxy: FaultProxy) -> None:
    size = 2 * MIN_PART_SIZE + 3 * READ_CHUNK // 2
    source = PatternStream(size)
    read_when_sent: list[int] = []

    def note_part(method: str, path: str) -> bool:
        if "partNumber=" in path:
            read_when_sent.append(source.position)
        return False  # forward it: this only watches

    proxy.inject(Fault(note_part, count=10**6))
    assert store.put(NS, "big", io.BufferedReader(source)) == size
    # Each part went out before the stream was read much further: never the whole body.
    assert len(read_when_sent) == 3
    assert read_when_sent[0] <= MIN_PART_SIZE + 2 * READ_CHUNK
    assert store.get(NS, "big") == pattern(0, size)
    with store.open_reader(NS, "big", start=MIN_PART_SIZE - 3, end=MIN_PART_SIZE + 3) as reader:
        assert reader.read() == pattern(MIN_PART_SIZE - 3, 6)


def test_a_failed_multipart_upload_is_aborted(store: S3BlockStore, s3_server: MotoS3) -> None:
    store.put(NS, "big", b"previous")
    source = PatternStream(3 * MIN_PART_SIZE, fail_at=2 * MIN_PART_SIZE)
    with pytest.raises(SourceError):
        store.put(NS, "big", io.BufferedReader(source))
    assert store.get(NS, "big") == b"previous"
    assert "Uploads" not in s3_server.admin.list_multipart_uploads(Bucket="lake")


def test_a_part_whose_connection_dropped_is_sent_again(
    store: S3BlockStore, proxy: FaultProxy
) -> None:
    size = MIN_PART_SIZE + READ_CHUNK
    proxy.inject(Fault(lambda method, path: "partNumber=1" in path, count=1, drop=True))
    assert store.put(NS, "big", io.BufferedReader(PatternStream(size))) == size
    assert proxy.log.answered == [proxy.log.answered[0]] and "dropped" in proxy.log.answered[0]
    assert store.get(NS, "big") == pattern(0, size)  # resent from kvlake's buffer, whole


def test_a_read_cut_off_midway_is_unavailable_not_short(
    store: S3BlockStore, proxy: FaultProxy
) -> None:
    store.put(NS, "k", pattern(0, 100_000))
    proxy.inject(Fault(lambda method, path: method == "GET", count=1, truncate=True))
    with store.open_reader(NS, "k") as reader, pytest.raises(UnavailableError, match="broke off"):
        reader.read()


def test_part_sizes_grow_so_ten_thousand_parts_hold_terabytes(store: S3BlockStore) -> None:
    assert store._part_size_for(1) == store._part_size_for(1000) == MIN_PART_SIZE
    assert store._part_size_for(1001) == 2 * MIN_PART_SIZE
    reach = sum(store._part_size_for(n) for n in range(1, 10_001))
    assert reach > 2 * 2**40


# -- deletes: batches, per-key retries, throttling ---------------------------------------


def test_delete_many_sends_batches_of_a_thousand(store: S3BlockStore, proxy: FaultProxy) -> None:
    keys = [f"k{n:04d}" for n in range(2 * DELETE_BATCH + 500)]
    for key in (keys[0], keys[1500], keys[-1]):
        store.put(NS, key, b"x")
    assert store.delete_many(NS, keys) == {}
    assert sum(deletes(*line.split(" ", 1)) for line in proxy.log.forwarded) == 3
    assert list(store.list_keys(NS)) == []


def test_keys_a_batch_failed_are_retried_singly(store: S3BlockStore, proxy: FaultProxy) -> None:
    for key in ("a", "b", "c"):
        store.put(NS, key, b"x")
    proxy.inject(Fault(deletes, count=1, code="InternalError", fail_delete_keys=True))
    assert store.delete_many(NS, ["a", "b", "c"]) == {}
    singles = [line for line in proxy.log.forwarded if line.startswith("DELETE ")]
    assert len(singles) == 3
    assert list(store.list_keys(NS)) == []
    assert store._limiter.throttled == 0


def test_keys_a_batch_throttled_lower_the_rate(store: S3BlockStore, proxy: FaultProxy) -> None:
    store.put(NS, "a", b"x")
    before = store._limiter.rate
    proxy.inject(Fault(deletes, count=1, code="SlowDown", fail_delete_keys=True))
    assert store.delete_many(NS, ["a", "b"]) == {}
    assert store._limiter.throttled == 1 and store._limiter.rate < before
    assert not store.exists(NS, "a")


def test_throttled_deletes_slow_down_and_lose_nothing(
    store: S3BlockStore, proxy: FaultProxy, clock: FakeClock
) -> None:
    keys = [f"k{n}" for n in range(20)]
    for key in keys:
        store.put(NS, key, b"x")
    limiter = store._limiter
    before = limiter.rate
    proxy.inject(Fault(deletes, count=4, status=503, code="SlowDown"))
    assert store.delete_many(NS, keys) == {}
    assert list(store.list_keys(NS)) == []
    assert limiter.throttled == 4
    assert limiter.rate < before / 8  # four cuts by half, then one success added back
    assert len(proxy.log.answered) == 4 and clock.sleeps  # it waited instead of failing


def test_throttling_that_never_ends_fails_with_retry_later(
    store: S3BlockStore, proxy: FaultProxy
) -> None:
    store.put(NS, "a", b"x")
    proxy.inject(Fault(deletes, count=10**6, status=503, code="SlowDown"))
    failures = store.delete_many(NS, ["a"])
    assert isinstance(failures["a"], UnavailableError)
    assert "kept throttling" in str(failures["a"])
    assert store.exists(NS, "a")


def test_server_errors_are_retried_then_reported(proxy: FaultProxy, clock: FakeClock) -> None:
    with open_store(proxy.endpoint, clock, max_attempts=3) as store:
        puts = Fault(
            lambda method, path: method == "PUT", count=2, status=500, code="InternalError"
        )
        proxy.inject(puts)
        store.put(NS, "k", b"third time")
        assert store.get(NS, "k") == b"third time"
        proxy.inject(
            Fault(lambda method, path: method == "GET", count=3, status=500, code="InternalError")
        )
        with pytest.raises(UnavailableError, match="answered InternalError"):
            store.get(NS, "k")
        assert store._limiter.throttled == 0  # a server error is not congestion


# -- server-side copies ----------------------------------------------------------------------


def copies(method: str, path: str) -> bool:
    return method == "PUT" and "/copy-" in path


def test_a_copy_is_one_copy_object_request_and_no_bytes(
    store: S3BlockStore, proxy: FaultProxy
) -> None:
    store.put(NS, "data/src", b"server side")
    proxy.log.forwarded.clear()
    assert store.copy(NS, "data/src", "data/copy-1") == 11
    requests = [line.split("?")[0] for line in proxy.log.forwarded]
    # HEAD for the size, then one PUT with x-amz-copy-source: no GET of the bytes.
    assert requests == ["HEAD /lake/repos/repo1/data/src", "PUT /lake/repos/repo1/data/copy-1"]
    assert store.get(NS, "data/copy-1") == b"server side"


def test_a_large_copy_goes_in_upload_part_copy_ranges(proxy: FaultProxy, clock: FakeClock) -> None:
    with open_store(proxy.endpoint, clock, max_copy_object=MIN_PART_SIZE) as store:
        size = 2 * MIN_PART_SIZE + READ_CHUNK
        store.put(NS, "big", io.BufferedReader(PatternStream(size)))
        proxy.log.forwarded.clear()
        assert store.copy(NS, "big", "big-copy") == size
        parts = [line for line in proxy.log.forwarded if "partNumber=" in line]
        assert len(parts) == 3
        assert not any(line.startswith("GET") for line in proxy.log.forwarded)
        assert store.get(NS, "big-copy") == pattern(0, size)


def test_a_failed_part_copy_aborts_and_leaves_no_copy(
    proxy: FaultProxy, clock: FakeClock, s3_server: MotoS3
) -> None:
    with open_store(proxy.endpoint, clock, max_copy_object=MIN_PART_SIZE, max_attempts=1) as store:
        store.put(NS, "big", io.BufferedReader(PatternStream(MIN_PART_SIZE + READ_CHUNK)))
        proxy.inject(Fault(lambda m, p: "partNumber=2" in p, count=1, status=500, code="Boom"))
        with pytest.raises(UnavailableError, match="copy part 2"):
            store.copy(NS, "big", "big-copy")
        assert not store.exists(NS, "big-copy")
        uploads = s3_server.admin.list_multipart_uploads(Bucket="lake")
        assert uploads.get("Uploads", []) == []


# -- presigned reads -------------------------------------------------------------------------


def test_a_presigned_url_reads_the_blob_without_credentials(store: S3BlockStore) -> None:
    store.put(NS, "data/a", b"signed")
    url = store.presign_read(NS, "data/a", expires=60)
    assert "X-Amz-Signature=" in url and "X-Amz-Expires=60" in url
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.read() == b"signed"


@pytest.mark.parametrize("expires", [0, 7 * 24 * 3600 + 1])
def test_a_presigned_url_lives_one_second_to_seven_days(store: S3BlockStore, expires: int) -> None:
    with pytest.raises(InvalidInputError, match="lifetime"):
        store.presign_read(NS, "k", expires=expires)
    with pytest.raises(InvalidInputError, match="lifetime"):
        store.presign_write(NS, "k", expires=expires)


def test_a_presigned_put_url_stores_the_blob_without_credentials(store: S3BlockStore) -> None:
    url = store.presign_write(NS, "data/up", expires=60)
    assert "X-Amz-Signature=" in url and "X-Amz-Expires=60" in url
    # Content-Type is not signed: clients (the lakefs wrapper) may send one.
    headers = {"Content-Type": "text/plain"}
    request = urllib.request.Request(url, data=b"direct", method="PUT", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
    assert store.get(NS, "data/up") == b"direct"


def test_a_completed_upload_whose_answer_was_lost_is_not_a_failure(
    store: S3BlockStore, proxy: FaultProxy
) -> None:
    """The server completed the upload but its answer broke off: the complete is retried.

    moto (like S3 for a while after completion) answers a repeated complete with
    success; a store answering NoSuchUpload instead would fail the put (docs/s3.md).
    """
    size = MIN_PART_SIZE + READ_CHUNK
    completes = Fault(
        lambda method, path: method == "POST" and "uploadId=" in path, count=1, truncate=True
    )
    proxy.inject(completes)
    assert store.put(NS, "big", io.BufferedReader(PatternStream(size))) == size
    assert completes.count == 0
    assert store.get(NS, "big") == pattern(0, size)


def test_a_parallel_listing_that_fails_raises_when_its_slice_comes(
    proxy: FaultProxy, clock: FakeClock
) -> None:
    with open_store(proxy.endpoint, clock, max_attempts=1) as store:
        for key in ("a/1", "b/1", "c/1"):
            store.put(NS, key, b"x")
        proxy.inject(
            Fault(lambda m, p: m == "GET" and "prefix=repos%2Frepo1%2Fb%2F" in p, 1, 500, "Boom")
        )
        listing = store.list_blobs(NS, ("a/", "b/", "c/"), parallel=3)
        assert next(listing).key == "a/1"
        with pytest.raises(UnavailableError, match="list blobs"):
            next(listing)


# -- multipart uploads a client sends ---------------------------------------------------------


def test_a_client_upload_appears_only_when_completed(store: S3BlockStore) -> None:
    upload = store.start_upload(NS, "data/client")
    url = store.presign_upload_part(NS, "data/client", upload, 1, expires=60)
    put = httpx.put(url, content=b"only part")
    assert put.status_code == 200, put.text
    etag = put.headers["ETag"]
    assert not store.exists(NS, "data/client")
    with pytest.raises(InvalidInputError, match="ascending by part number"):
        store.complete_upload(NS, "data/client", upload, [(2, etag), (1, etag)])
    assert store.complete_upload(NS, "data/client", upload, [(1, etag)])
    assert store.get(NS, "data/client") == b"only part"


def test_an_aborted_client_upload_leaves_nothing(store: S3BlockStore, s3_server: MotoS3) -> None:
    upload = store.start_upload(NS, "data/gone")
    store.abort_upload(NS, "data/gone", upload)
    store.abort_upload(NS, "data/gone", upload)  # twice is fine
    assert s3_server.admin.list_multipart_uploads(Bucket="lake").get("Uploads", []) == []
    with pytest.raises(InvalidInputError, match="use 1 to 10000"):
        store.presign_upload_part(NS, "data/gone", upload, 0, expires=60)
