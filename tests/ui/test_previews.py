"""In the browser: previews of CSV, JSON, text and Parquet, and a corrupt Parquet file."""

from __future__ import annotations

import io

import httpx
import pyarrow as pa
import pyarrow.parquet as pq

from tests.ui.browser import Visitor
from tests.ui.test_objects import _upload


def _parquet(rows: int) -> bytes:
    table = pa.table({"id": list(range(rows)), "name": [f"n{i}" for i in range(rows)]})
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def test_previews_show_tables_schema_and_first_rows(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    _upload(admin, repository, "t.csv", b"a,b\n1,<b>x</b>\n2,y\n")
    _upload(admin, repository, "t.json", b'[{"k": 1, "v": "w"}, {"k": 2}]')
    _upload(admin, repository, "t.parquet", _parquet(1000))
    _upload(admin, repository, "bad.parquet", b"PAR1 this is not parquet PAR1")
    base = f"/ui/repositories/{repository}/object?ref=main&path="
    browser.visit(base + "t.csv")
    browser.log_in()
    assert browser.driver.title == "t.csv · kvlake"
    assert [th.text for th in browser.find_all("#preview-table th")] == ["a", "b"]
    cells = [td.text for td in browser.find_all("#preview-table td")]
    assert cells == ["1", "<b>x</b>", "2", "y"]
    browser.visit(base + "t.json")
    assert [th.text for th in browser.find_all("#preview-table th")] == ["k", "v"]
    browser.visit(base + "t.parquet")
    schema = [td.text for td in browser.find_all("#preview-schema td")]
    assert schema == ["id", "int64", "name", "string"]
    rows = browser.find_all("#preview-table tbody tr")
    assert len(rows) == 20 and rows[0].text.split() == ["0", "n0"]
    assert "1000 rows" in browser.find("#preview").text
    browser.visit(base + "bad.parquet")
    assert "cannot be read" in browser.find("#preview-error").text
    assert browser.find("#size").text.endswith("bytes"), "the object page itself still shows"
