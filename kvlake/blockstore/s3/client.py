"""The s3 blockstore's URL, and a boto3 client built from the standard AWS configuration.

Everything about reaching a store (credentials, endpoint, region, addressing
style) is read by botocore from where every AWS tool reads it: the credential
chain, `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_PROFILE` and `~/.aws/config`. So
MinIO, Ceph or R2 need no kvlake setting. The URL's query may override a few of
them, and holds kvlake's own upload and retry settings.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, Literal, cast
from urllib.parse import parse_qsl, urlsplit

import boto3
import botocore.config
import botocore.exceptions
import botocore.loaders
import botocore.session
import msgspec

from kvlake.errors import ConfigError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

BUCKET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
"""S3's rule for bucket names (DNS-compatible, as every S3-compatible store accepts)."""
DEFAULT_PART_SIZE_MIB: Final = 8
DEFAULT_MAX_ATTEMPTS: Final = 5
"""Attempts at a request failing with a 5xx or a dropped connection."""
OPTIONS: Final = ("endpoint_url", "region", "addressing_style", "part_size_mib", "max_attempts")

_MODELS: Final = botocore.loaders.create_loader()
"""botocore's reader of its service models (S3's API, endpoints), shared by every client of
the process: it caches what it parsed, so a blockstore opened by each Spark task or test
builds its client in ~15 ms instead of ~100 ms. The models are static data; each client's
session still reads the AWS configuration afresh."""


class S3Location(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed `s3://[bucket[/prefix]][?option=value&...]`."""

    root: str
    """`bucket/prefix`, `bucket`, or "" for every bucket the credentials reach."""
    endpoint_url: str = ""
    region: str = ""
    addressing_style: Literal["", "auto", "path", "virtual"] = ""
    part_size_mib: int = DEFAULT_PART_SIZE_MIB
    max_attempts: int = DEFAULT_MAX_ATTEMPTS


def parse_url(url: str) -> S3Location:
    """Parse KVLAKE_BLOCKSTORE_URL for the s3 adapter.

    Raises:
        ConfigError: not `s3://`, credentials in the URL, a bad root or an unknown
            or malformed option. The message never echoes the URL.
    """
    parts = urlsplit(url)
    if parts.scheme != "s3" or parts.fragment or "@" in parts.netloc:
        raise ConfigError(
            "KVLAKE_BLOCKSTORE_URL is not an s3:// root; use s3://bucket/prefix (credentials"
            " come from the AWS configuration, never the URL)"
        )
    root = f"{parts.netloc}{parts.path}".strip("/")
    segments = root.split("/") if root else []
    if any(s in ("", ".", "..") or "\0" in s for s in segments) or (
        segments and not BUCKET_NAME.fullmatch(segments[0])
    ):
        raise ConfigError(
            f"KVLAKE_BLOCKSTORE_URL's s3 root {root!r} is invalid; use s3://bucket/prefix with a"
            " valid bucket name and no empty, '.' or '..' segments, or s3:// for every bucket"
        )
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigError(
            f"KVLAKE_BLOCKSTORE_URL has unknown s3 options {unknown}; use {list(OPTIONS)}"
        )
    style = options.get("addressing_style", "")
    if style not in ("", "auto", "path", "virtual"):
        raise ConfigError(
            f"KVLAKE_BLOCKSTORE_URL option addressing_style={style!r} is invalid;"
            " use path, virtual or auto"
        )
    return S3Location(
        root=root,
        endpoint_url=options.get("endpoint_url", ""),
        region=options.get("region", ""),
        addressing_style=cast(Literal["", "auto", "path", "virtual"], style),
        part_size_mib=_whole_number(options, "part_size_mib", DEFAULT_PART_SIZE_MIB),
        max_attempts=_whole_number(options, "max_attempts", DEFAULT_MAX_ATTEMPTS),
    )


def _whole_number(options: dict[str, str], name: str, default: int) -> int:
    value = options.get(name)
    if value is None:
        return default
    if not value.isdigit():
        raise ConfigError(f"KVLAKE_BLOCKSTORE_URL option {name}={value!r} is not a whole number")
    return int(value)


def make_client(location: S3Location) -> S3Client:
    """A client from the standard AWS configuration, overridden by the URL's options.

    botocore's own retries are off (one attempt): the adapter retries, so every
    attempt passes the shared rate limiter and every throttle lowers it.
    """
    config = botocore.config.Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        connect_timeout=10,
        read_timeout=60,
        max_pool_connections=50,
        user_agent_extra="kvlake",
        # SigV4 everywhere, presigned URLs included: botocore would presign with the
        # deprecated SigV2 in us-east-1, which newer regions and many stores refuse.
        signature_version="s3v4",
    )
    if location.addressing_style:
        config = config.merge(
            botocore.config.Config(s3={"addressing_style": location.addressing_style})
        )
    core = botocore.session.get_session()
    core.register_component("data_loader", _MODELS)
    try:
        return boto3.session.Session(botocore_session=core).client(
            "s3",
            endpoint_url=location.endpoint_url or None,
            region_name=location.region or None,
            config=config,
        )
    except (botocore.exceptions.BotoCoreError, ValueError) as exc:
        raise ConfigError(
            f"the S3 client cannot be configured ({exc}); check AWS_ENDPOINT_URL, AWS_REGION,"
            " AWS_PROFILE and the options of KVLAKE_BLOCKSTORE_URL"
        ) from exc
