"""`kvlake repo`: repository commands run on the lake directly, with or without a server.

`repo delete --purge --wait` drives a purge to its end in one process: the
cleaner pass that logs the namespace's blobs, then deletion workers until
every logged blob is deleted or dead-lettered.
"""

from __future__ import annotations

import time

import click

from kvlake.config import load_settings
from kvlake.errors import InvalidInputError
from kvlake.lake import Lake


@click.group()
def repo() -> None:
    """Manage repositories."""


@repo.command("delete")
@click.argument("name")
@click.option("--purge", is_flag=True, help="Also delete every blob of its storage namespace.")
@click.option("--wait", is_flag=True, help="With --purge: run deletion workers until purged.")
def repo_delete(name: str, purge: bool, wait: bool) -> None:
    """Delete repository NAME; with --purge, delete its storage namespace's data as well.

    The repository disappears at once. With --purge the intent is recorded
    first, then a cleaner pass removes the metadata and logs every blob of the
    namespace for deletion; deletion workers (`kvlake deletion run`, or --wait)
    delete them once KVLAKE_DELETION_SEND_DELAY has passed.
    """
    if wait and not purge:
        raise InvalidInputError("repo delete: --wait only applies with --purge; add --purge")
    with Lake.open(load_settings()) as lake:
        purges = lake.purges
        request = purges.delete_repository(name, purge=purge)
        click.echo(f"deleted repository {name}")
        if request is None:
            return
        for failure in lake.cleaner().clean_once().failures:
            click.echo(f"cleaner: {failure}", err=True)
        report = purges.report(name, request.instance_uid)
        if report is None or report.request.state != "logged":
            click.echo("purge: metadata not yet removed; the next cleaner pass logs the blobs")
            return
        namespace, logged = report.request.storage_namespace, report.request.logged
        click.echo(f"purge of {namespace}: {logged} blobs logged for deletion")
        if not wait:
            click.echo("run `kvlake deletion run` to delete them once the send delay has passed")
            return
        worker = lake.deletion_worker()
        while report is not None and (
            report.counts.deleted + report.counts.dead_lettered < report.request.logged
        ):
            if worker.run_once().batches == 0:
                time.sleep(1.0)
            report = purges.report(name, request.instance_uid)
        if report is not None:
            click.echo(
                f"purged {namespace}: {report.counts.deleted} blobs deleted,"
                f" {report.counts.dead_lettered} dead-lettered"
            )


@repo.command("untangle-hidden-ranges")
@click.argument("name")
@click.argument("branch")
def repo_untangle_hidden_ranges(name: str, branch: str) -> None:
    """Repair BRANCH of repository NAME wedged by overlapping hidden ranges.

    Two bulk deletes that ran at once on an older kvlake could leave overlapping
    hidden-range records, after which every commit and reset of the branch fails.
    This rewrites the overlapping ones as tombstones: the branch shows exactly
    what it showed, nobody's staged writes are touched, and it is safe to run
    again (or on a healthy branch). Then commit the branch again.
    """
    with Lake.open(load_settings()) as lake:
        repository = lake.graveler.get_repository(name)
        rewritten = lake.graveler.untangle_hidden_ranges(repository, branch)
        click.echo(f"{name}/{branch}: {rewritten} overlapping hidden-range records rewritten")
