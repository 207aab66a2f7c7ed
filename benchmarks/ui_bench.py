"""UI benchmark: a folder page of 1,000 entries and a commit page of 1,000 changes, each
beside the API calls that feed it.

Runs the app in-process (Starlette's TestClient, its lifespan opening SQLite in a
temporary data dir), uploads 1,000 objects under one folder and commits them, then
times, in the same run and alternating:
- `GET /api/v1/.../objects/ls?amount=1000&delimiter=/` and the UI's folder page
  `GET /ui/repositories/<repo>/objects?ref=main&prefix=folder/`;
- getCommit plus diffRefs (parent..commit, 1,000 entries) and the UI's commit page
  `GET /ui/repositories/<repo>/commits/<id>` (which calls getCommit, diffRefs and
  getRepository, and renders the 1,000 changes).
Prints the medians and the ratios UI/API. Goal: each page under 200 ms on SQLite.

    .venv/bin/python benchmarks/ui_bench.py [--rounds 30]
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
            committed = client.post(
                f"{api}/branches/main/commits", json={"message": "bench"}, auth=(KEY, SECRET)
            )
            assert committed.status_code == 201, committed.text
            commit_id, parent = committed.json()["id"], committed.json()["parents"][0]
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
            commit_page = f"/ui/repositories/bench/commits/{commit_id}"
            changes = client.get(commit_page).text.count('<td class="added">')
            assert changes == ENTRIES, changes
            diff = f"{api}/refs/{parent}/diff/{commit_id}"
            diff_query = {"amount": ENTRIES, "type": "two_dot"}
            api_times, ui_times, commit_api_times, commit_ui_times = [], [], [], []
            for _ in range(args.rounds):
                api_times.append(_timed(client, listing, params=query, auth=(KEY, SECRET)))
                ui_times.append(_timed(client, page))
                commit_api_times.append(
                    _timed(client, f"{api}/commits/{commit_id}", auth=(KEY, SECRET))
                    + _timed(client, diff, params=diff_query, auth=(KEY, SECRET))
                )
                commit_ui_times.append(_timed(client, commit_page))
    _report(
        f"listObjects, {ENTRIES} entries (API)",
        f"folder page, {ENTRIES} entries (UI)",
        api_times,
        ui_times,
    )
    _report(
        f"getCommit + diffRefs, {ENTRIES} (API)",
        f"commit page, {ENTRIES} changes (UI)",
        commit_api_times,
        commit_ui_times,
    )


def _report(api_name: str, ui_name: str, api_times: list[float], ui_times: list[float]) -> None:
    api_ms = statistics.median(api_times) * 1000
    ui_ms = statistics.median(ui_times) * 1000
    print(f"{api_name:40} median {api_ms:7.1f} ms")
    print(f"{ui_name:40} median {ui_ms:7.1f} ms")
    print(f"ratio UI/API: {ui_ms / api_ms:.2f}  (goal: page < 200 ms on SQLite)")


if __name__ == "__main__":
    main()
