"""Run an import's operation to its end in this thread, as a runner's thread would."""

from __future__ import annotations

import threading

from kvlake.catalog import Importer
from kvlake.catalog.import_runs import ImportEngine
from kvlake.lake import Lake
from kvlake.operations import Operation


def run_import(lake: Lake, import_id: str, importer: Importer | None = None) -> Operation:
    """Claim and run the `import` operation through its engine (with `importer`'s settings
    when given, else the lake's); returns the record as the engine left it."""
    return ImportEngine(lake.engine_context(), importer).run(import_id, threading.Event())
