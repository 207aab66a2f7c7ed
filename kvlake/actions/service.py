"""The actions service: graveler's `EventHooks`, running `_lakefs_actions/` hooks per event.

For each event it reads the action files at the event's source ref (the
branch, staged files included, before a commit; the source before a merge;
the new commit after either), keeps the actions whose `on:` matches the event
and branch, and runs their hooks in file order. A failing pre-event hook
raises `HookAbortedError` with lakeFS's text, before the operation changed
anything; a failing post-event hook is logged and recorded, never undoes the
operation. Graveler calls this outside its compare-and-swap loops, so a hook
holds no lock and no KV transaction while it waits on the network. Every run
with at least one hook is recorded (kvlake/actions/runs.py). A post-event with
hooks is queued while they run, so a process that dies leaves it to another
(kvlake/actions/queue.py, `run_queue`). Hooks act as the user of the request
that triggered them (`acting_user`), else the event's committer.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Final

import msgspec

from kvlake import ids
from kvlake.actions.airflow import call_airflow
from kvlake.actions.caller import ApiCaller, acting_user
from kvlake.actions.lua import run_lua
from kvlake.actions.lua_lakefs import LakefsClient
from kvlake.actions.parsing import ActionFileError, check_unique_names, parse_action
from kvlake.actions.payload import json_payload, lua_action, matches, payload_of
from kvlake.actions.queue import LEASE, MAX_ATTEMPTS, PendingPost, PostQueue
from kvlake.actions.records import Action, Hook, HookRun, Run
from kvlake.actions.runs import RunStore, new_run_id
from kvlake.actions.webhook import HookFailedError, call_webhook
from kvlake.catalog import Catalog, ObjectStat
from kvlake.config import ActionsSettings
from kvlake.errors import HookAbortedError, KvlakeError, NotFoundError, RepositoryDeletingError
from kvlake.graveler import Event, Repository

log = logging.getLogger(__name__)

ACTIONS_FOLDER: Final = "_lakefs_actions/"
"""Where lakeFS reads action files: the files directly in this folder of the source ref."""
_COMMIT_ID: Final = re.compile(r"^[0-9a-f]{64}\Z")
_COMMIT_CACHE_SIZE: Final = 1024
"""(repository instance, commit id) entries of parsed actions kept per process."""
MAX_ACTION_FILE: Final = 1024 * 1024
"""Bytes an action file may have; a larger one fails validation (it is not a real action)."""


HookObserver = Callable[[str, str, str], None]
"""Called with (event type, hook type, outcome) after each hook run."""


def _ignore(event_type: str, hook_type: str, outcome: str) -> None:
    pass


class Actions:
    """Runs actions around graveler's events. Thread-safe; state lives in the KV only."""

    def __init__(
        self,
        catalog: Catalog,
        settings: ActionsSettings,
        *,
        clock: Callable[[], float] = time.time,
        post_lease: float = LEASE,
    ) -> None:
        self.catalog = catalog
        self.settings = settings
        self.queue = PostQueue(
            catalog.graveler.store,
            owner=f"{socket.gethostname()}:{os.getpid()}:{ids.new_uid()}",
            lease=post_lease,
        )
        """Post-events whose hooks are running or were cut off (queue.py)."""
        self.runs = RunStore(catalog.graveler.store, catalog.blockstore)
        """Recorded runs and their hooks' output (listRepositoryRuns and the rest)."""
        self._clock = clock
        self._allowed = settings.allowed_hosts()
        self._at_commit: dict[tuple[str, str], list[Action]] = {}
        """Actions at a commit id, per repository instance: a commit never changes, so its
        action files are read once (creating branches and tags costs no more KV calls)."""
        self._at_commit_lock = threading.Lock()
        self._api: ApiCaller | None = None
        self._observe: HookObserver = _ignore

    def observe_hooks(self, observer: HookObserver) -> None:
        """Tell `observer` (event type, hook type, "passed" or "failed") after every hook run:
        the API server counts them in /metrics."""
        self._observe = observer

    def connect_api(self, api: ApiCaller) -> None:
        """Let Lua hooks' `lakefs` module call the API in-process (the API server does this
        at start-up; a lake without it gives hooks a `lakefs` module whose calls fail)."""
        self._api = api

    def load_actions(self, repository: Repository, ref: str) -> list[Action]:
        """The action files at `ref`, parsed. Raises ActionFileError for the first bad one."""
        if not _COMMIT_ID.match(ref):
            return self._read_actions(repository, ref)
        key = (repository.instance_uid, ref)
        with self._at_commit_lock:
            cached = self._at_commit.get(key)
        if cached is None:
            cached = self._read_actions(repository, ref)
            with self._at_commit_lock:
                if len(self._at_commit) >= _COMMIT_CACHE_SIZE:
                    self._at_commit.pop(next(iter(self._at_commit)))
                self._at_commit[key] = cached
        return list(cached)

    def _read_actions(self, repository: Repository, ref: str) -> list[Action]:
        actions: list[Action] = []
        after = ""
        while True:
            page = self.catalog.list_objects(
                repository, ref, prefix=ACTIONS_FOLDER, delimiter="/", after=after
            )
            for item in page.results:
                if isinstance(item, ObjectStat):
                    actions.append(self._load(repository, ref, item))
            if not page.has_more:
                break
            after = page.next_offset
        check_unique_names(actions)
        return actions

    def _load(self, repository: Repository, ref: str, stat: ObjectStat) -> Action:
        if stat.size > MAX_ACTION_FILE:
            raise ActionFileError(
                f"action file {stat.path!r} has {stat.size} bytes, more than {MAX_ACTION_FILE};"
                " an action file is a short YAML document"
            )
        _, reader = self.catalog.open_object(repository, ref, stat.path)
        with reader:
            data = reader.read(MAX_ACTION_FILE + 1)
        return parse_action(stat.path, data)

    def pre(self, repository: Repository, event: Event) -> None:
        """Run the pre-event's hooks; raise HookAbortedError (lakeFS's text) if one fails."""
        run_id, errors = self._run(repository, event, acting_user() or event.committer)
        if errors:
            listed = "".join(f"\t* {error}\n" for error in errors)
            count = "1 error" if len(errors) == 1 else f"{len(errors)} errors"
            raise HookAbortedError(
                f"{event.event_type} hook aborted, run id '{run_id}': {count} occurred:\n{listed}\n"
            )

    def post(self, repository: Repository, event: Event) -> None:
        """Run the post-event's hooks; failures are logged and recorded, never raised.

        When any hook matches, the event is queued durably first (queue.py) and dropped
        once its run is recorded: if this process dies in between, another one runs it.
        """
        user = acting_user() or event.committer
        queued: list[PendingPost] = []

        def queue_it() -> None:
            queued.append(
                self.queue.put(
                    repository=repository.name,
                    instance_uid=repository.instance_uid,
                    event=event,
                    user=user,
                    now=self._clock(),
                )
            )

        try:
            run_id, errors = self._run(repository, event, user, before_hooks=queue_it)
            for pending in queued:
                self.queue.done(pending)
        except KvlakeError as exc:  # the operation is done: a store hiccup must not undo it
            log.warning(
                "%s hooks in repository %r not run: %s", event.event_type, repository.name, exc
            )
            return
        self._log_failures(repository, event, run_id, errors)

    def queue_post(self, repository: Repository, event: Event, *, key: str) -> None:
        """Queue the post-event for the background pass (`run_queued`), once per `key` while
        it waits: a finished operation's event, whose runner must not wait on hooks. The
        hooks act as the event's committer. Raises UnavailableError."""
        if not self.settings.enabled:
            return
        self.queue.put_due(
            key=key,
            repository=repository.name,
            instance_uid=repository.instance_uid,
            event=event,
            user=event.committer,
            now=self._clock(),
        )

    def drop_instance(self, instance_uid: str) -> None:
        """Forget a deleted repository instance's runs and queued post-events: the cleaner
        calls this once the instance's metadata is gone. Raises UnavailableError."""
        self.runs.drop_instance(instance_uid)
        self.queue.drop_instance(instance_uid)

    def _log_failures(
        self, repository: Repository, event: Event, run_id: str, errors: list[str]
    ) -> None:
        for error in errors:
            log.warning(
                "%s run %s in repository %r failed: %s",
                event.event_type,
                run_id,
                repository.name,
                error,
            )

    def run_queue(self, stop: threading.Event, *, interval: float) -> None:
        """Background job: run queued post-events whose process died, until `stop`."""
        while not stop.is_set():
            self.run_queued()
            stop.wait(interval)

    def run_queued(self) -> int:
        """One pass over the post-event queue: run (or, past MAX_ATTEMPTS, record as failed)
        every entry whose lease expired. Returns how many it took."""
        taken = 0
        for pending in self.queue.take(self._clock()):
            taken += 1
            try:
                repository: Repository | None = self.catalog.graveler.get_repository(
                    pending.repository
                )
            except (NotFoundError, RepositoryDeletingError):
                repository = None
            if repository is None or repository.instance_uid != pending.instance_uid:
                self.queue.done(pending)  # the repository is gone, and its runs with it
                continue
            event = pending.event
            if pending.attempts > MAX_ATTEMPTS:
                self._give_up(repository, pending)
            else:
                run_id, errors = self._run(repository, event, pending.user)
                self._log_failures(repository, event, run_id, errors)
            self.queue.done(pending)
        return taken

    def _give_up(self, repository: Repository, pending: PendingPost) -> None:
        """Record a failed run for a queued event whose hooks never finished."""
        event, now = pending.event, self._clock()
        reason = (
            f"{event.event_type} hooks not run: the process running them stopped"
            f" {pending.attempts - 1} times before they finished"
        )
        log.warning("repository %r: %s", repository.name, reason)
        run = Run(
            run_id=new_run_id(now),
            event_type=event.event_type,
            branch=event.branch_id,
            commit_id=event.commit_id,
            source_ref=event.source_ref,
            start_time=now,
            end_time=now,
            passed=False,
            hooks=(),
        )
        self.runs.save(repository, run, [])

    def _run(
        self,
        repository: Repository,
        event: Event,
        user: str,
        *,
        before_hooks: Callable[[], None] | None = None,
    ) -> tuple[str, list[str]]:
        """Run the matching hooks as `user`; return the run id and lakeFS's error line per
        failure. `before_hooks` is called once before the first hook, if any matches."""
        run_id = new_run_id(self._clock())
        if not self.settings.enabled:
            return run_id, []
        start = self._clock()
        try:
            actions = self.load_actions(repository, event.source_ref)
        except ActionFileError as exc:
            return run_id, [f"loading actions: {exc}"]
        actions = [action for action in actions if matches(action, event)]
        if before_hooks is not None and any(action.hooks for action in actions):
            before_hooks()
        results: list[HookRun] = []
        outputs: list[tuple[str, str]] = []
        errors: list[str] = []
        for action_index, action in enumerate(actions):
            for hook_index, hook in enumerate(action.hooks):
                hook_run_id = f"{action_index:04d}_{hook_index:04d}"
                began = self._clock()
                try:
                    output = self._call(
                        repository, event, action.name, hook, user=user, run_id=run_id
                    )
                    passed = True
                except HookFailedError as exc:
                    output = f"Error: {exc}\n{exc.output}"
                    passed = False
                    errors.append(
                        f"hook run id '{hook_run_id}' failed on action '{action.name}' hook"
                        f" '{hook.id}': action failed: {exc}"
                    )
                self._observe(event.event_type, hook.type, "passed" if passed else "failed")
                results.append(
                    HookRun(
                        hook_run_id=hook_run_id,
                        action=action.name,
                        hook_id=hook.id,
                        start_time=began,
                        end_time=self._clock(),
                        passed=passed,
                    )
                )
                outputs.append((hook_run_id, output))
                if not passed:
                    break  # lakeFS stops an action at its first failing hook
        if results:
            run = Run(
                run_id=run_id,
                event_type=event.event_type,
                branch=event.branch_id,
                commit_id=event.commit_id,
                source_ref=event.source_ref,
                start_time=start,
                end_time=self._clock(),
                passed=not errors,
                hooks=tuple(results),
            )
            self.runs.save(repository, run, outputs)
        return run_id, errors

    def _call(
        self,
        repository: Repository,
        event: Event,
        action_name: str,
        hook: Hook,
        *,
        user: str,
        run_id: str,
    ) -> str:
        """Run one hook of the type it names; return its output or raise HookFailedError."""
        payload = payload_of(event, action_name, hook.id, self._clock())
        if hook.lua is not None:
            script = hook.lua.script or self._script_file(repository, event, hook.lua.script_file)
            # lakeFS's `action` table: every field (empty ones as ""), the run's id and the
            # repository's namespace, and the commit as a table.
            action = lua_action(payload, event)
            action["run_id"] = run_id
            action["storage_namespace"] = repository.storage_namespace
            action["commit"] = {
                "message": event.commit_message,
                "committer": event.committer,
                "metadata": dict(event.commit_metadata),
            }
            # lakeFS's client acts as the user whose request triggered the hook: the API
            # marks its handler threads with it (acting_as), a commit names its committer.
            return run_lua(hook.lua, script, action, lakefs=LakefsClient(self._api, user))
        if hook.airflow is not None:
            return call_airflow(
                hook.airflow,
                json_payload(payload, event),
                dag_run_id=f"lakeFS_hook_{hook.id}_{run_id}",
                allowed=self._allowed,
            )
        assert hook.webhook is not None  # parsing gives every other hook its webhook
        body = msgspec.json.encode(json_payload(payload, event))
        return call_webhook(hook.webhook, body, allowed=self._allowed)

    def _script_file(self, repository: Repository, event: Event, path: str) -> str:
        """A lua hook's `script_file`, read at the event's source ref as lakeFS does."""
        try:
            _, reader = self.catalog.open_object(repository, event.source_ref, path)
            with reader:
                data = reader.read(MAX_ACTION_FILE + 1)
        except KvlakeError as exc:
            raise HookFailedError(f"lua script_file {path!r} cannot be read: {exc}") from None
        if len(data) > MAX_ACTION_FILE:
            raise HookFailedError(
                f"lua script_file {path!r} is larger than {MAX_ACTION_FILE} bytes"
            )
        return data.decode("utf-8", "replace")
