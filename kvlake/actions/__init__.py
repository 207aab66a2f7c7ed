"""lakeFS-style actions: `_lakefs_actions/*.yaml` hooks run around graveler's events.

See docs/actions.md. The service is given to graveler as its `EventHooks` by
`kvlake.lake.Lake`; the API answers the runs endpoints from `Actions.runs`.
"""

from kvlake.actions.caller import ApiCaller, HookRequest, acting_as, acting_user
from kvlake.actions.parsing import ActionFileError, check_unique_names, parse_action
from kvlake.actions.records import Action, AirflowHook, Hook, HookRun, Run, Trigger, Webhook
from kvlake.actions.runs import RunNotFoundError, RunStore, output_key
from kvlake.actions.service import ACTIONS_FOLDER, MAX_ACTION_FILE, Actions
from kvlake.actions.webhook import HookFailedError, host_allowed

__all__ = [
    "ACTIONS_FOLDER",
    "MAX_ACTION_FILE",
    "Action",
    "ActionFileError",
    "Actions",
    "AirflowHook",
    "ApiCaller",
    "Hook",
    "HookFailedError",
    "HookRequest",
    "HookRun",
    "Run",
    "RunNotFoundError",
    "RunStore",
    "Trigger",
    "Webhook",
    "acting_as",
    "acting_user",
    "check_unique_names",
    "host_allowed",
    "output_key",
    "parse_action",
]
