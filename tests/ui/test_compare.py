"""In the browser: compare two refs folder by folder, a merge that conflicts showing its
paths and merging nothing, then the same merge with a strategy."""

from __future__ import annotations

import io

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
from selenium.webdriver.support.ui import Select

from tests.ui.browser import Visitor


def _change(admin: httpx.Client, repository: str, branch: str, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        answer = admin.post(
            f"/repositories/{repository}/branches/{branch}/objects",
            params={"path": path},
            content=data,
        )
        assert answer.status_code == 201, answer.text
    answer = admin.post(
        f"/repositories/{repository}/branches/{branch}/commits", json={"message": f"on {branch}"}
    )
    assert answer.status_code == 201, answer.text


def _parquet(columns: dict[str, list[object]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def _read(admin: httpx.Client, repository: str, ref: str, path: str) -> bytes:
    got = admin.get(f"/repositories/{repository}/refs/{ref}/objects", params={"path": path})
    return got.content


def test_compare_then_merge_with_and_without_a_strategy(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    before = _parquet({"id": [1, 2, 3], "gone": ["x", "y", "z"]})
    after = _parquet({"id": ["1", "2", "3", "4"], "new": [1.0, 2.0, 3.0, 4.0]})
    _change(admin, repository, "main", {"a.txt": b"base", "t.parquet": before})
    created = admin.post(
        f"/repositories/{repository}/branches", json={"name": "dev", "source": "main"}
    )
    assert created.status_code == 201
    _change(admin, repository, "dev", {"a.txt": b"dev", "dir/<i>b.txt": b"new", "t.parquet": after})
    _change(admin, repository, "main", {"a.txt": b"main"})
    browser.visit(f"/ui/repositories/{repository}/compare")
    browser.log_in()
    browser.find("#right").send_keys("dev")
    browser.submit("#compare-button")
    rows = [
        (r.find_element("css selector", "td").text, r.find_element("css selector", ".path").text)
        for r in browser.find_all("#diff tbody tr:not(.parquet-change)")
    ]
    assert rows[0] == ("changed", "a.txt") and rows[2] == ("changed", "t.parquet"), rows
    assert rows[1] in (("prefix_changed", "dir/"), ("added", "dir/")), rows
    # The Parquet object's columns and row count, from both sides' footers.
    change = browser.find("#diff tr.parquet-change")
    assert change.find_element("css selector", ".rows").text == "rows: 3 → 4"
    columns = [c.text for c in change.find_elements("css selector", ".column")]
    assert columns == ["+ new double", "− gone string", "id: int64 → string"], columns
    browser.submit("#diff a.folder")
    assert [p.text for p in browser.find_all("#diff td.path")] == ["<i>b.txt"]
    # No strategy: the conflict on a.txt is shown, and main is unchanged.
    browser.find("#merge-message").send_keys("merge dev")
    browser.submit("#merge-button")
    assert [c.text for c in browser.find_all("#conflicts li.conflict")] == ["a.txt"]
    assert _read(admin, repository, "main", "a.txt") == b"main"
    # The right side wins: merged, and the merge commit's page follows.
    Select(browser.find("#strategy")).select_by_value("source-wins")
    browser.submit("#merge-button")
    assert browser.find("#commit-message").text == "merge dev"
    assert len(browser.find_all("#parents a.parent")) == 2
    assert _read(admin, repository, "main", "a.txt") == b"dev"
    assert _read(admin, repository, "main", "dir/<i>b.txt") == b"new"
