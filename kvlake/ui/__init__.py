"""The web UI: server-rendered pages over the API's operations (docs/ui.md)."""

from kvlake.ui.route import UIRoute

__all__ = ["UIRoute"]
