"""The payload a hook receives: lakeFS's fields, and kvlake's own beside them."""

from __future__ import annotations

from kvlake.actions.payload import json_payload, lua_action, payload_of
from kvlake.graveler import Event


def test_kvlake_fields_sit_beside_lakefs_fields_and_never_replace_them() -> None:
    event = Event(
        event_type="post-bulk-delete",
        repository_id="repo",
        source_ref="main",
        branch_id="main",
        extra={"prefix": "raw/", "branch_id": "not-lakefs", "counters": {"deleted": 2}},
    )
    payload = payload_of(event, "report", "hook", 0.0)
    sent = json_payload(payload, event)
    assert sent["branch_id"] == "main"
    assert (sent["prefix"], sent["counters"]) == ("raw/", {"deleted": 2})
    assert "tag_id" not in sent  # empty lakeFS fields left out, as lakeFS does
    action = lua_action(payload, event)
    assert (action["branch_id"], action["tag_id"], action["prefix"]) == ("main", "", "raw/")
