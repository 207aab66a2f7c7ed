"""HTTP plumbing the doors share (the REST API and the S3 gateway): request bodies.

It sits below both doors and above nothing of the lake: neither door imports
the other (tests/test_layers.py), so what both need of HTTP lives here.
"""

from kvlake.http.bodies import (
    SMALL_BODY,
    STREAM_SHARE,
    BodyPace,
    BodyTimeoutError,
    BodyTooSlowError,
    ClientGoneError,
    ThreadBodyReader,
    chunks,
    stream_share,
    upload_source,
)

__all__ = [
    "SMALL_BODY",
    "STREAM_SHARE",
    "BodyPace",
    "BodyTimeoutError",
    "BodyTooSlowError",
    "ClientGoneError",
    "ThreadBodyReader",
    "chunks",
    "stream_share",
    "upload_source",
]
