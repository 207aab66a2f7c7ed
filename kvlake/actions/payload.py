"""What a hook is told about its event: lakeFS's payload, and which actions an event matches.

A webhook and an airflow hook receive the payload as JSON with lakeFS's field
names, empty ones left out as lakeFS leaves them; a Lua hook sees every field
(empty ones as "") in its `action` table. kvlake's own events add their fields
(`Event.extra`: a bulk delete's prefix, filters and counts) beside lakeFS's,
which always win a clash, so a lakeFS script never reads a kvlake value under a
lakeFS name.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final, NamedTuple

from kvlake.actions.records import Action
from kvlake.graveler import Event

_EVENT_FIELDS: Final = (
    "repository_id",
    "branch_id",
    "source_ref",
    "tag_id",
    "commit_id",
    "commit_message",
    "committer",
    "commit_metadata",
    "merge_source",
)
"""The event's lakeFS fields (graveler's `Event` names them as lakeFS does), in the order
lakeFS's payload has them."""
_ALWAYS_SENT: Final = frozenset(
    {"event_type", "event_time", "action_name", "hook_id", "repository_id"}
)
"""The fields lakeFS sends even when empty; it leaves the others out."""


class Payload(NamedTuple):
    """What one hook of one action is told of an event, at `event_time`."""

    event: Event
    event_time: str
    action_name: str
    hook_id: str

    def fields(self) -> dict[str, object]:
        """lakeFS's fields by lakeFS's names and in its order, empty ones included."""
        return {
            "event_type": self.event.event_type,
            "event_time": self.event_time,
            "action_name": self.action_name,
            "hook_id": self.hook_id,
            **{name: getattr(self.event, name) for name in _EVENT_FIELDS},
        }


def payload_of(event: Event, action_name: str, hook_id: str, now: float) -> Payload:
    """lakeFS's fields of the event, for one hook of one action, at `now`."""
    moment = datetime.fromtimestamp(now, UTC)
    return Payload(event, moment.strftime("%Y-%m-%dT%H:%M:%SZ"), action_name, hook_id)


def json_payload(payload: Payload, event: Event) -> dict[str, object]:
    """What a webhook or airflow hook receives: the set lakeFS fields, then kvlake's."""
    fields = {k: v for k, v in payload.fields().items() if v or k in _ALWAYS_SENT}
    return {**event.extra, **fields}


def lua_action(payload: Payload, event: Event) -> dict[str, object]:
    """A Lua hook's `action` table: every lakeFS field (empty ones as ""), then kvlake's."""
    return {**event.extra, **payload.fields()}


@lru_cache(maxsize=256)
def _branch_pattern(pattern: str) -> re.Pattern[str]:
    """Go's path.Match as a regex: `*` and `?` stop at `/`, `[...]` is a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(action: Action, event: Event) -> bool:
    """Whether the action's `on:` names the event and (if it lists branches) its branch."""
    for trigger in action.on:
        if trigger.event_type != event.event_type:
            continue
        if not trigger.branches:
            return True
        return any(_branch_pattern(p).match(event.branch_id) for p in trigger.branches)
    return False
