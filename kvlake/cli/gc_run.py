"""`kvlake gc run` and `kvlake gc status`: garbage collection runs, over the API as the user.

`run` starts a run on the server (POST /repositories/{repo}/gc/runs, lakeFS's
`retention:PrepareGarbageCollectionCommits` permission), which its runner or a
`kvlake worker` runs on the configured Spark master, and follows it: one bar step on
stderr per phase the run has finished, then the summary (or `--json`, the API's status).
A run goes on when the command stops following it (`--no-wait`, Ctrl-C);
`kvlake gc status REPO RUN_ID` reads it later and `kvlake operations cancel` stops it.
Operators who run GC outside a server use the Spark job itself:
`python -m kvlake.pipelines.gc.job` (kvlake/pipelines/gc/job.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, Final

import click
import msgspec
from tqdm import tqdm

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, json_option
from kvlake.cli.repo import repository_name
from kvlake.errors import InvalidInputError
from kvlake.pipelines.gc.job import MARK_PHASES, SWEEP_PHASES, describe, run_options
from kvlake.pipelines.runs import GcSummary

REFRESH: Final = 1.0
"""Seconds between two status reads while following a run (a phase takes seconds at least)."""
FAILED: Final = frozenset({"failed", "cancelled"})


def _runs_path(repository: str) -> str:
    return f"/repositories/{repository_name(repository)}/gc/runs"


@click.command("run")
@click.argument("repository")
@run_options
@click.option("--no-wait", is_flag=True, help="Print the run's id and return at once.")
@json_option
def gc_run(
    repository: str,
    mark_only: bool,
    sweep_run: str | None,
    dry_run: bool,
    grace_period: float | None,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Delete the blobs of REPOSITORY (lakefs://REPO or REPO) that no retained commit and no
    staged entry references, on the server's Spark.

    Only blobs in hour folders (`data/<YYYYmmddTHH>/`, the hour an upload began) whose
    hour ended at least --grace-period seconds before the run are candidates: with
    `--grace-period 0` a blob written this hour waits for the hour to end. The summary
    says how many blobs were left alone for that reason.

    Retention follows the repository's GC rules (`kvlake gc set-config`); a repository
    without rules is refused before anything starts. A run marks (writes its candidates
    under _lakefs/retention/gc/<run id>/ in the storage namespace), then sweeps;
    `--mark-only` stops after the mark and `--sweep RUN_ID` sweeps it later. Exit 1 if
    the run failed or was cancelled.
    """
    if mark_only and sweep_run:
        raise InvalidInputError("--mark-only and --sweep exclude each other; pass one")
    if sweep_run and grace_period is not None:
        raise InvalidInputError("--grace-period belongs to the mark; a sweep uses its mark's")
    body: dict[str, Any] = {
        "mode": "sweep" if sweep_run else "mark" if mark_only else "run",
        "dry_run": dry_run,
    }
    if sweep_run:
        body["run_id"] = sweep_run
    if grace_period is not None:
        body["grace_period_seconds"] = grace_period
    phases = MARK_PHASES * (not sweep_run) + SWEEP_PHASES * (not mark_only)
    path = _runs_path(repository)
    with ApiClient.open() as api:
        run_id = api.request("POST", path, json=body).json()["run_id"]
        if no_wait:
            if as_json:
                emit_json({"run_id": run_id})
            else:
                click.echo(
                    f"garbage collection run {run_id} started\n"
                    f"follow it with `kvlake gc status {repository} {run_id}`"
                )
            return
        click.echo(f"garbage collection run {run_id} of {repository}", err=True)
        try:
            status = _follow(api, f"{path}/{run_id}", phases)
        except KeyboardInterrupt:
            click.echo(
                f"\nstopped following; the run goes on: `kvlake gc status {repository} {run_id}`",
                err=True,
            )
            raise SystemExit(130) from None
    _report(status, as_json)


@click.command("status")
@click.argument("repository")
@click.argument("run_id")
@json_option
def gc_status(repository: str, run_id: str, as_json: bool) -> None:
    """What garbage collection run RUN_ID of REPOSITORY is doing, or did."""
    with ApiClient.open() as api:
        status = api.get(f"{_runs_path(repository)}/{run_id}")
    if status["status"] == "running":
        if as_json:
            emit_json(status)
        else:
            done = status["phase"] or "none yet"
            click.echo(f"run {status['run_id']}: running; last phase finished: {done}")
        return
    _report(status, as_json)


def _follow(api: ApiClient, path: str, phases: tuple[str, ...]) -> Any:
    """Draw a bar of the phases finished until the run ends; its final status."""
    with tqdm(total=len(phases), desc="gc", unit="phase", file=sys.stderr) as bar:
        while True:
            status = api.get(path)
            phase = status.get("phase") or ""
            if phase in phases:
                bar.n = max(bar.n, phases.index(phase) + 1)
                bar.set_postfix_str(phase, refresh=False)
                bar.refresh()
            if status["status"] != "running":
                if status["status"] not in FAILED:
                    bar.n = len(phases)
                    bar.refresh()
                return status
            time.sleep(REFRESH)


def _report(status: Mapping[str, Any], as_json: bool) -> None:
    """Print a finished run's summary (or its JSON); exit 1 if it failed or was cancelled."""
    if as_json:
        emit_json(status)
    else:
        summary = status.get("summary")
        if summary is not None:
            click.echo(describe(msgspec.convert(summary, GcSummary)))
        else:
            click.echo(f"run {status['run_id']}: {status['status']}")
        if status.get("error"):
            click.echo(f"run {status['run_id']} {status['status']}: {status['error']}", err=True)
    if status["status"] in FAILED:
        raise SystemExit(1)
