"""lakeFS-style actions: `_lakefs_actions/*.yaml` hooks run around graveler's events.

See docs/actions.md. The service is given to graveler as its `EventHooks` by
`kvlake.lake.Lake`; the API answers the runs endpoints from `Actions.runs`.
"""

from kvlake.actions.parsing import ActionFileError, check_unique_names, parse_action
from kvlake.actions.records import Action, Hook, HookRun, Run, Trigger, Webhook
from kvlake.actions.runs import RunNotFoundError, RunStore, output_key
from kvlake.actions.service import ACTIONS_FOLDER, Actions
from kvlake.actions.webhook import HookFailedError, host_allowed

__all__ = [
    "ACTIONS_FOLDER",
    "Action",
    "ActionFileError",
    "Actions",
    "Hook",
    "HookFailedError",
    "HookRun",
    "Run",
    "RunNotFoundError",
    "RunStore",
    "Trigger",
    "Webhook",
    "check_unique_names",
    "host_allowed",
    "output_key",
    "parse_action",
]
