"""The S3 gateway: S3's protocol (SigV4, XML) over the same catalog, graveler and auth."""

from kvlake.gateway.app import Gateway, GatewayRoute
from kvlake.gateway.call import is_virtual_hosted
from kvlake.gateway.errors import S3Error

__all__ = ["Gateway", "GatewayRoute", "S3Error", "is_virtual_hosted"]
