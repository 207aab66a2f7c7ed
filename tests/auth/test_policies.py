"""Policy evaluation: wildcards, ARNs, ${user}, deny wins, nothing allowed by default."""

from __future__ import annotations

import pytest

from kvlake.auth import Permission, Policy, Statement, object_arn, user_arn
from kvlake.auth.policies import (
    BUILTIN_GROUPS,
    BUILTIN_POLICIES,
    check_statements,
    is_allowed,
    refusal,
)
from kvlake.errors import InvalidInputError


def _policy(*statements: Statement) -> Policy:
    return Policy(id="p", creation_date=0, statement=statements)


def _allow(actions: tuple[str, ...], resource: str) -> Statement:
    return Statement(effect="allow", action=actions, resource=resource)


READ = Permission("fs:ReadObject", object_arn("repo", "public/a.csv"))


def test_nothing_is_allowed_without_a_policy() -> None:
    assert not is_allowed([], [READ], user_id="u")


def test_action_and_resource_wildcards_match() -> None:
    policy = _policy(_allow(("fs:Read*",), "arn:lakefs:fs:::repository/repo/object/public/*"))
    assert is_allowed([policy], [READ], user_id="u")
    other = Permission("fs:ReadObject", object_arn("repo", "private/a.csv"))
    assert not is_allowed([policy], [other], user_id="u")
    write = Permission("fs:WriteObject", object_arn("repo", "public/a.csv"))
    assert not is_allowed([policy], [write], user_id="u")


def test_question_mark_matches_one_character() -> None:
    policy = _policy(
        _allow(("fs:ReadObject",), "arn:lakefs:fs:::repository/repo/object/public/?.csv")
    )
    assert is_allowed([policy], [READ], user_id="u")


def test_a_deny_wins_over_any_allow() -> None:
    allow_all = _policy(_allow(("*",), "*"))
    deny = _policy(Statement(effect="deny", action=("fs:ReadObject",), resource="*"))
    assert not is_allowed([allow_all, deny], [READ], user_id="u")


def test_every_needed_permission_must_be_granted() -> None:
    policy = _policy(_allow(("fs:ReadObject",), "*"))
    write = Permission("fs:WriteObject", "x")
    assert not is_allowed([policy], [READ, write], user_id="u")
    assert is_allowed([policy], [READ, READ], user_id="u")


def test_user_variable_stands_for_the_caller() -> None:
    policy = _policy(_allow(("auth:CreateCredentials",), "arn:lakefs:auth:::user/${user}"))
    own = Permission("auth:CreateCredentials", user_arn("ada"))
    assert is_allowed([policy], [own], user_id="ada")
    assert not is_allowed([policy], [own], user_id="bob")


def test_regex_characters_in_resources_are_literal() -> None:
    policy = _policy(_allow(("fs:ReadObject",), "arn:lakefs:fs:::repository/repo/object/a.b"))
    assert not is_allowed(
        [policy], [Permission("fs:ReadObject", object_arn("repo", "axb"))], user_id="u"
    )


@pytest.mark.parametrize(
    "statements",
    [
        (),
        (Statement(effect="allow", action=(), resource="*"),),
        (Statement(effect="allow", action=("ReadObject",), resource="*"),),
        (Statement(effect="allow", action=("fs:Read Object",), resource="*"),),
        (Statement(effect="allow", action=("fs:ReadObject",), resource=""),),
    ],
)
def test_invalid_statements_are_refused(statements: tuple[Statement, ...]) -> None:
    with pytest.raises(InvalidInputError):
        check_statements(statements)


def test_built_in_groups_name_built_in_policies() -> None:
    for policies in BUILTIN_GROUPS.values():
        assert set(policies) <= set(BUILTIN_POLICIES)
    viewers = [_policy(*BUILTIN_POLICIES[p]) for p in BUILTIN_GROUPS["Viewers"]]
    assert is_allowed(viewers, [READ], user_id="v")
    assert not is_allowed(viewers, [Permission("fs:WriteObject", READ.resource)], user_id="v")
    developers = [_policy(*BUILTIN_POLICIES[p]) for p in BUILTIN_GROUPS["Developers"]]
    assert not is_allowed(developers, [Permission("auth:CreateUser", user_arn("x"))], user_id="d")


def _deny(actions: tuple[str, ...], resource: str) -> Statement:
    return Statement(effect="deny", action=actions, resource=resource)


ALL_OBJECTS = _allow(("fs:DeleteObject",), "arn:lakefs:fs:::repository/repo/object/*")
UNDER_ROOT = Permission("fs:DeleteObject", object_arn("repo", ""), under=True)


@pytest.mark.parametrize(
    "denied", ["object/secret/*", "object/secret/key.csv", "object/*/key.csv", "object/?ecret*"]
)
def test_a_deny_anywhere_under_a_prefix_refuses_the_prefix(denied: str) -> None:
    deny = Policy(
        id="no-secrets",
        creation_date=0,
        statement=(_deny(("fs:Delete*",), f"arn:lakefs:fs:::repository/repo/{denied}"),),
    )
    reason = refusal([_policy(ALL_OBJECTS), deny], [UNDER_ROOT], user_id="u")
    assert reason is not None and "'no-secrets'" in reason and denied in reason
    public = Permission("fs:DeleteObject", object_arn("repo", "public/"), under=True)
    assert is_allowed([_policy(ALL_OBJECTS), deny], [public], user_id="u") == (
        denied != "object/*/key.csv"
    )


def test_an_allow_must_cover_everything_under_the_prefix() -> None:
    some = _policy(_allow(("fs:DeleteObject",), "arn:lakefs:fs:::repository/repo/object/a*.csv"))
    assert not is_allowed([some], [UNDER_ROOT], user_id="u")
    assert is_allowed([_policy(ALL_OBJECTS)], [UNDER_ROOT], user_id="u")
    reason = refusal([some], [UNDER_ROOT], user_id="u")
    assert reason == "no policy allows fs:DeleteObject on arn:lakefs:fs:::repository/repo/object/*"
