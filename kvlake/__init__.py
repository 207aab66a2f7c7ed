"""kvlake: a versioned data lake whose metadata lives behind a narrow KV interface."""

__all__ = ["LAKEFS_API_VERSION"]

__version__ = "0.1.0"

LAKEFS_API_VERSION = "1.84.0"
"""The lakeFS release whose API kvlake serves: clients gate features on it (`GET /config`)."""
