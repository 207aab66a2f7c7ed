"""The HTTP layer: lakeFS-compatible /api/v1 over the catalog, graveler and auth."""

from kvlake.api.app import create_app
from kvlake.api.server import serve

__all__ = ["create_app", "serve"]
