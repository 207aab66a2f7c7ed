"""In the browser: a repository's garbage collection rules set, changed and deleted on its
settings page; its action runs listed by branch, and a run's hooks with their output."""

from __future__ import annotations

import httpx

from tests.ui.browser import Visitor

ACTION = """name: greet
on:
  pre-commit:
hooks:
  - id: say_hello
    type: lua
    properties:
      script: |
        print("<b>hello</b> from " .. action.branch_id)
"""


def test_gc_rules_set_changed_and_deleted(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    rules = f"/repositories/{repository}/settings/gc_rules"
    browser.visit(f"/ui/repositories/{repository}/settings")
    browser.log_in()
    assert browser.find_all("#gc-none")
    browser.find("#gc-default-days").send_keys("7")
    browser.find("#gc-branch-0").send_keys("main")
    browser.find("#gc-days-0").send_keys("3")
    browser.submit("#set-gc-rules-button")
    assert admin.get(rules).json() == {
        "default_retention_days": 7,
        "branches": [{"branch_id": "main", "retention_days": 3}],
    }
    assert browser.find("#gc-default").text == "7 days"
    assert [c.text for c in browser.find_all("#gc-branches td.branch")] == ["main"]
    # Days that are not a number are refused, and nothing changes.
    browser.find("#gc-days-0").clear()
    browser.find("#gc-days-0").send_keys("three")
    browser.submit("#set-gc-rules-button")
    assert "not a number of days" in browser.find("#error").text
    assert admin.get(rules).json()["branches"] == [{"branch_id": "main", "retention_days": 3}]
    # A row cleared is dropped; the default changes.
    browser.visit(f"/ui/repositories/{repository}/settings")
    browser.find("#gc-branch-0").clear()
    browser.find("#gc-days-0").clear()
    browser.find("#gc-default-days").clear()
    browser.find("#gc-default-days").send_keys("30")
    browser.find("#gc-branch-1").send_keys("dev")
    browser.find("#gc-days-1").send_keys("1")
    browser.submit("#set-gc-rules-button")
    assert admin.get(rules).json() == {
        "default_retention_days": 30,
        "branches": [{"branch_id": "dev", "retention_days": 1}],
    }
    browser.submit("#delete-gc-rules-button")
    assert admin.get(rules).status_code == 404
    assert browser.find_all("#gc-none")


def test_action_runs_by_branch_and_a_runs_hook_output(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    base = f"/repositories/{repository}"
    for path, data in (("_lakefs_actions/greet.yaml", ACTION.encode()), ("a.txt", b"a")):
        answer = admin.post(f"{base}/branches/main/objects", params={"path": path}, content=data)
        assert answer.status_code == 201, answer.text
    assert admin.post(f"{base}/branches/main/commits", json={"message": "m"}).is_success
    assert admin.post(f"{base}/branches", json={"name": "dev", "source": "main"}).is_success
    admin.post(f"{base}/branches/dev/objects", params={"path": "b.txt"}, content=b"b")
    assert admin.post(f"{base}/branches/dev/commits", json={"message": "d"}).is_success
    browser.visit(f"/ui/repositories/{repository}/actions")
    browser.log_in()
    assert [c.text for c in browser.find_all("#runs td.branch")] == ["dev", "main"]
    browser.find("#run-branch").send_keys("dev")
    browser.submit("#run-filter-button")
    assert [c.text for c in browser.find_all("#runs td.branch")] == ["dev"]
    browser.submit("#runs td.run a")
    assert browser.find("#run-status").text == "completed"
    assert [h.text for h in browser.find_all(".hook .hook-id")] == ["say_hello"]
    assert "<b>hello</b> from dev" in browser.find(".hook-output").text
    browser.visit(f"/ui/repositories/{repository}/actions/no-such-run")
    assert "not found" in browser.find("#error").text
