"""`kvlake actions`: lakectl's `actions runs list|describe` over the API, and `validate`.

Runs are what the server recorded when hooks ran (lakeFS's listRepositoryRuns, getRun,
listRunHooks, getRunHookOutput), read with the user's key like every user command.
`validate` checks an action file on this machine, as the server will read it, before it
is uploaded to `_lakefs_actions/`: no server needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kvlake.actions import MAX_ACTION_FILE, parse_action
from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_listing, emit_table, json_option
from kvlake.cli.repo import repository_name
from kvlake.errors import InvalidInputError


@click.group()
def actions() -> None:
    """Actions and hooks: the runs the server recorded, and checking an action file."""


@actions.group()
def runs() -> None:
    """Runs of a repository's actions: list them, or describe one with its hooks' output."""


def _runs_path(repository: str) -> str:
    return f"/repositories/{repository_name(repository)}/actions/runs"


@runs.command("list")
@click.argument("repository")
@click.option("--branch", default="", help="Only runs on this branch.")
@click.option("--commit", default="", help="Only runs of this commit id.")
@click.option("--amount", type=click.IntRange(1), default=None, help="At most this many.")
@click.option("--after", default="", help="Runs after this run id.")
@json_option
def runs_list(
    repository: str, branch: str, commit: str, amount: int | None, after: str, as_json: bool
) -> None:
    """Action runs of REPOSITORY (lakefs://REPO), newest first."""
    with ApiClient.open() as client:
        emit_listing(
            client.pages(
                _runs_path(repository),
                after=after,
                limit=amount,
                branch=branch or None,
                commit=commit or None,
            ),
            [
                ("run id", lambda run: run["run_id"]),
                ("event", lambda run: run["event_type"]),
                ("branch", lambda run: run["branch"]),
                ("start time", lambda run: run["start_time"]),
                ("end time", lambda run: run.get("end_time", "")),
                ("commit id", lambda run: run["commit_id"]),
                ("status", lambda run: run["status"]),
            ],
            as_json=as_json,
            empty=f"no action runs in {repository_name(repository)}",
        )


@runs.command("describe")
@click.argument("repository")
@click.argument("run_id")
@json_option
def runs_describe(repository: str, run_id: str, as_json: bool) -> None:
    """Run RUN_ID of REPOSITORY (lakefs://REPO): its status, then each hook with its output."""
    path = f"{_runs_path(repository)}/{run_id}"
    with ApiClient.open() as client:
        run = client.get(path)
        hooks: list[dict[str, Any]] = list(client.pages(f"{path}/hooks"))
        for hook in hooks:
            output = client.request("GET", f"{path}/hooks/{hook['hook_run_id']}/output")
            hook["output"] = output.text
    if as_json:
        emit_json(run | {"hooks": hooks})
        return
    emit_table(
        [[run["run_id"], run["event_type"], run["branch"], run["commit_id"], run["status"]]],
        ["run id", "event", "branch", "commit id", "status"],
        empty="",
    )
    for hook in hooks:
        click.echo(
            f"\nhook {hook['hook_run_id']} ({hook['action']} / {hook['hook_id']}):"
            f" {hook['status']}, {hook['start_time']} to {hook.get('end_time', '')}"
        )
        click.echo(hook["output"].rstrip("\n"))


@actions.command("validate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
def validate(file: Path, as_json: bool) -> None:
    """Check action FILE (YAML) as the server reads `_lakefs_actions/` files; exit 2 naming
    the line if it breaks a rule."""
    if file.stat().st_size > MAX_ACTION_FILE:
        raise InvalidInputError(
            f"action file {str(file)!r} has {file.stat().st_size} bytes; at most"
            f" {MAX_ACTION_FILE} are read"
        )
    action = parse_action(str(file), file.read_bytes())
    events = sorted({trigger.event_type for trigger in action.on})
    hooks = [f"{hook.id} ({hook.type})" for hook in action.hooks]
    if as_json:
        emit_json({"valid": True, "name": action.name, "on": events, "hooks": hooks})
        return
    click.echo(f"{file}: valid action {action.name!r} on {', '.join(events)}: {', '.join(hooks)}")
