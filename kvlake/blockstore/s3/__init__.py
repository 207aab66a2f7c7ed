"""The s3 blockstore: blobs as objects in S3 or any S3-compatible store (`s3://bucket/prefix`).

`store.py` is the adapter (`S3BlockStore`, what the registry opens for `s3://`),
built on `requests.py` (every request under the shared rate, retried and
translated through `errors.py`'s one table of S3 error codes). `client.py` parses
the URL and builds the boto3 client; `multipart.py` is the life cycle of the
adapter's own multipart uploads (large puts and copies), `uploads.py` the ones a
client sends itself. boto3 is imported only inside this package.
"""

from kvlake.blockstore.s3.store import S3BlockStore

__all__ = ["S3BlockStore"]
