"""UI benchmark: a folder page of 1,000 entries beside the API call that feeds it.

Runs the app in-process (Starlette's TestClient, its lifespan opening SQLite in a
temporary data dir), uploads 1,000 objects under one folder, then times, in the
same run and alternating, `GET /api/v1/.../objects/ls?amount=1000&delimiter=/`
and the UI's `GET /ui/repositories/<repo>/objects?ref=main` (which calls that
operation and renders it). Prints the medians and the ratio UI/API.
Goal: the page under 200 ms on SQLite.

    .venv/bin/python benchmarks/ui_bench.py [--rounds 30]

The commit page is part B's (issue 29, engineer ui2); it is not measured here.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from kvlake.api.app import create_app
from kvlake.config import load_settings

KEY, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
ENTRIES = 1000


def _timed(client: TestClient, url: str, **kwargs: object) -> float:
    started = time.perf_counter()
    answer = client.get(url, **kwargs)
    elapsed = time.perf_counter() - started
    assert answer.status_code == 200, answer.text[:500]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ui-bench-") as data_dir:
        settings = load_settings(
            {
                "KVLAKE_DATA_DIR": data_dir,
                "KVLAKE_INSTALLATION_ACCESS_KEY_ID": KEY,
                "KVLAKE_INSTALLATION_SECRET_ACCESS_KEY": SECRET,
            }
        )
        with TestClient(create_app(settings, background_jobs=False)) as client:
            api = "/api/v1/repositories/bench"
            namespace = f"local://{Path(data_dir) / 'blocks' / 'bench'}"
            made = client.post(
                "/api/v1/repositories",
                json={"name": "bench", "storage_namespace": namespace},
                auth=(KEY, SECRET),
            )
            assert made.status_code == 201, made.text
            for i in range(ENTRIES):
                client.post(
                    f"{api}/branches/main/objects",
                    params={"path": f"folder/object-{i:05d}.csv"},
                    content=b"a,b\n1,2\n",
                    auth=(KEY, SECRET),
                )
            login = client.get("/ui/login")
            token = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
            assert token is not None
            form = {"csrf_token": token.group(1), "access_key_id": KEY, "secret_access_key": SECRET}
            assert client.post("/ui/login", data=form, follow_redirects=False).status_code == 303
            page = "/ui/repositories/bench/objects?ref=main&prefix=folder/"
            listing = f"{api}/refs/main/objects/ls"
            query = {"prefix": "folder/", "delimiter": "/", "amount": ENTRIES}
            rows = client.get(page).text.count('class="object"')
            assert rows == ENTRIES, rows
            api_times, ui_times = [], []
            for _ in range(args.rounds):
                api_times.append(_timed(client, listing, params=query, auth=(KEY, SECRET)))
                ui_times.append(_timed(client, page))
    api_ms = statistics.median(api_times) * 1000
    ui_ms = statistics.median(ui_times) * 1000
    print(f"listObjects, {ENTRIES} entries (API):  median {api_ms:7.1f} ms")
    print(f"folder page, {ENTRIES} entries (UI):   median {ui_ms:7.1f} ms")
    print(f"ratio UI/API: {ui_ms / api_ms:.2f}  (goal: page < 200 ms on SQLite)")


if __name__ == "__main__":
    main()
