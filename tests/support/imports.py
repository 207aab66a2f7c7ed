"""Run an import's operation to its end in this thread, as a runner's thread would."""

from __future__ import annotations

import threading

from kvlake.catalog import Importer
from kvlake.catalog.import_runs import ImportSteps
from kvlake.lake import Lake
from kvlake.operations import Operation, drive


def run_import(lake: Lake, import_id: str, importer: Importer | None = None) -> Operation:
    """Claim and run the `import` operation's steps through `drive` (with `importer`'s
    settings when given, else the lake's); returns the record as it was left."""
    context = lake.engine_context()
    steps = ImportSteps(context, importer)
    return drive(context.driver(), import_id, threading.Event(), steps)
