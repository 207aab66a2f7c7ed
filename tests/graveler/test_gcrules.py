"""Garbage collection rules: set replaces, get reads, delete removes; bad rules change nothing."""

from __future__ import annotations

import pytest

from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import MAX_DAYS, GarbageCollectionRules, make_rules
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.gcrules import MAX_BRANCH_RULES
from kvlake.graveler.records import Repository


@pytest.fixture
def repo(any_graveler: Graveler, namespace: str) -> Repository:
    return any_graveler.create_repository("rules", storage_namespace=namespace)


def test_rules_are_set_read_replaced_and_deleted(any_graveler: Graveler, repo: Repository) -> None:
    retention = any_graveler.retention
    with pytest.raises(NotFoundError, match="'rules' has no garbage collection rules"):
        retention.get_rules(repo)
    retention.set_rules(repo, make_rules(7, {"main": 30, "dev": 0}))
    assert retention.get_rules(repo) == GarbageCollectionRules(
        default_retention_days=7, branch_retention_days={"dev": 0, "main": 30}
    )
    retention.set_rules(repo, make_rules(0))
    assert retention.get_rules(repo) == make_rules(0)
    retention.delete_rules(repo)
    with pytest.raises(NotFoundError):
        retention.get_rules(repo)
    retention.delete_rules(repo)  # deleting no rules is fine, as in lakeFS


BAD = [
    pytest.param(lambda: make_rules(-1), "negative retention", id="negative default"),
    pytest.param(lambda: make_rules(3, {"main": -2}), "negative retention", id="negative branch"),
    pytest.param(lambda: make_rules(MAX_DAYS + 1), "at most", id="over int32"),
    pytest.param(lambda: make_rules(True), "whole number", id="a bool"),
    pytest.param(lambda: make_rules(1.5), "whole number", id="a float"),  # type: ignore[arg-type]
    pytest.param(lambda: make_rules(1, {"a/b": 1}), "not a valid branch", id="bad branch"),
    pytest.param(lambda: make_rules(1, [("x", 1), ("x", 2)]), "twice", id="a branch twice"),
    pytest.param(
        lambda: make_rules(1, {f"b{i}": 1 for i in range(MAX_BRANCH_RULES + 1)}),
        "over",
        id="too many branches",
    ),
]


@pytest.mark.parametrize(("rules", "message"), BAD)
def test_bad_rules_are_refused(rules: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        rules()  # type: ignore[operator]


def test_setting_bad_rules_changes_nothing(any_graveler: Graveler, repo: Repository) -> None:
    retention = any_graveler.retention
    retention.set_rules(repo, make_rules(5))
    unchecked = [
        GarbageCollectionRules(default_retention_days=-1),
        GarbageCollectionRules(default_retention_days=1, branch_retention_days={"main": -1}),
    ]
    for rules in unchecked:
        with pytest.raises(InvalidInputError, match="negative retention"):
            retention.set_rules(repo, rules)
    assert retention.get_rules(repo) == make_rules(5)


def test_rules_die_with_their_repository(
    any_graveler: Graveler, repo: Repository, namespace: str
) -> None:
    any_graveler.retention.set_rules(repo, make_rules(9))
    any_graveler.delete_repository("rules")
    again = any_graveler.create_repository("rules", storage_namespace=namespace + "-2")
    with pytest.raises(NotFoundError):
        any_graveler.retention.get_rules(again)
