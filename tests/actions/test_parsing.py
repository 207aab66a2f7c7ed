"""Action files: lakeFS's format accepted, every bad file refused naming the file and line."""

from __future__ import annotations

import pytest

from kvlake.actions import ActionFileError, check_unique_names, host_allowed, parse_action
from kvlake.actions.parsing import parse_duration

GOOD = b"""name: Check commit metadata
description: every commit says who owns it
on:
  pre-commit:
    branches:
      - main
      - release-*
  post-merge:
hooks:
  - id: check_owner
    type: webhook
    description: asks the catalog
    properties:
      url: https://hooks.example.com/owner?x=1
      timeout: 1m30s
      query_params:
        a: "1"
        b: ["2", "3"]
      headers:
        Authorization: Bearer t
"""


def test_lakefs_format_is_parsed() -> None:
    action = parse_action("_lakefs_actions/a.yaml", GOOD)
    assert action.name == "Check commit metadata"
    assert [(t.event_type, t.branches) for t in action.on] == [
        ("pre-commit", ("main", "release-*")),
        ("post-merge", ()),
    ]
    (hook,) = action.hooks
    assert (hook.id, hook.type, hook.description) == ("check_owner", "webhook", "asks the catalog")
    assert hook.webhook is not None
    assert hook.webhook.timeout == 90.0
    assert hook.webhook.query_params == (("a", "1"), ("b", "2"), ("b", "3"))
    assert hook.webhook.headers == (("Authorization", "Bearer t"),)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("name: a\non: [\n", 3, "YAML does not parse"),
        ("name: ab\non:\n  pre-push:\nhooks: []\n", 3, "event 'pre-push' is not supported"),
        (
            "name: ab\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: shell\n",
            6,
            "type 'shell' unknown",
        ),
        (
            "name: ab\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: webhook\n"
            "    properties:\n      url: ftp://x/y\n",
            8,
            "is not http(s)",
        ),
        (
            "name: ab\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: webhook\n"
            "    properties:\n      url: http://x:99999/y\n",
            8,
            "is not http(s)",
        ),
        (
            "name: ab\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: webhook\n"
            "    properties:\n      url: http://x/y\n      timeout: soon\n",
            9,
            "'timeout'",
        ),
        ("name: ab\non:\n  pre-create-tag:\n    branches: [main]\n", 4, "tag event types"),
        ("name: ab\non:\n  post-gc-run:\n    branches: [main]\n", 4, "it has no branch"),
        (
            "name: ab\non:\n  pre-commit:\nhooks:\n  - id: h1\n    type: webhook\n"
            "    properties: {url: 'http://x'}\n  - id: h1\n    type: webhook\n",
            8,
            "duplicate ID 'h1'",
        ),
        ("description: x\non:\n  pre-commit:\n", 1, "'name' is required"),
        ("name: ab\nhooks: []\n", 1, "'on' is required"),
    ],
)
def test_bad_files_name_file_and_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(ActionFileError) as refused:
        parse_action("_lakefs_actions/bad.yaml", text.encode())
    message = str(refused.value)
    assert message.startswith(f"action file '_lakefs_actions/bad.yaml' line {line}: "), message
    assert problem in message


def test_two_files_with_one_name_are_refused() -> None:
    first = parse_action("_lakefs_actions/a.yaml", GOOD)
    second = parse_action("_lakefs_actions/b.yaml", GOOD)
    with pytest.raises(ActionFileError, match="'_lakefs_actions/a.yaml' and '_lakefs_actions/b"):
        check_unique_names([first, second])


def test_go_durations() -> None:
    assert parse_duration("500ms") == 0.5 and parse_duration("2h1s") == 7201.0
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("10")


def test_only_loopback_until_configured() -> None:
    assert host_allowed("127.0.0.1", frozenset()) and host_allowed("[::1]", frozenset())
    assert host_allowed("localhost", frozenset())
    for internal in ("169.254.169.254", "10.0.0.1", "metadata.internal", "0.0.0.0"):
        assert not host_allowed(internal, frozenset())
    assert host_allowed("hooks.example.com", frozenset({"hooks.example.com"}))
    assert host_allowed("10.0.0.1", frozenset({"*"}))
