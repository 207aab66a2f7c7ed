"""The actions service: graveler's `EventHooks`, running `_lakefs_actions/` hooks per event.

For each event it reads the action files at the event's source ref (the
branch, staged files included, before a commit; the source before a merge;
the new commit after either), keeps the actions whose `on:` matches the event
and branch, and runs their hooks in file order. A failing pre-event hook
raises `HookAbortedError` with lakeFS's text, before the operation changed
anything; a failing post-event hook is logged and recorded, never undoes the
operation. Graveler calls this outside its compare-and-swap loops, so a hook
holds no lock and no KV transaction while it waits on the network. Every run
with at least one hook is recorded (kvlake/actions/runs.py).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final

import msgspec

from kvlake.actions.lua import run_lua
from kvlake.actions.parsing import ActionFileError, check_unique_names, parse_action
from kvlake.actions.records import Action, Hook, HookRun, Run
from kvlake.actions.runs import RunStore, new_run_id
from kvlake.actions.webhook import HookFailedError, call_webhook
from kvlake.catalog import Catalog, ObjectStat
from kvlake.config import ActionsSettings
from kvlake.errors import HookAbortedError, KvlakeError
from kvlake.graveler import Event, Repository

log = logging.getLogger(__name__)

ACTIONS_FOLDER: Final = "_lakefs_actions/"
"""Where lakeFS reads action files: the files directly in this folder of the source ref."""
_COMMIT_ID: Final = re.compile(r"^[0-9a-f]{64}\Z")
_COMMIT_CACHE_SIZE: Final = 1024
"""(repository instance, commit id) entries of parsed actions kept per process."""
MAX_ACTION_FILE: Final = 1024 * 1024
"""Bytes an action file may have; a larger one fails validation (it is not a real action)."""


class Payload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The JSON a webhook receives: lakeFS's field names, empty fields left out as lakeFS does."""

    event_type: str
    event_time: str
    action_name: str
    hook_id: str
    repository_id: str
    branch_id: str = ""
    source_ref: str = ""
    tag_id: str = ""
    commit_id: str = ""
    commit_message: str = ""
    committer: str = ""
    commit_metadata: dict[str, str] = msgspec.field(default_factory=dict)
    merge_source: str = ""


@lru_cache(maxsize=256)
def _branch_pattern(pattern: str) -> re.Pattern[str]:
    """Go's path.Match as a regex: `*` and `?` stop at `/`, `[...]` is a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(action: Action, event: Event) -> bool:
    """Whether the action's `on:` names the event and (if it lists branches) its branch."""
    for trigger in action.on:
        if trigger.event_type != event.event_type:
            continue
        if not trigger.branches:
            return True
        return any(_branch_pattern(p).match(event.branch_id) for p in trigger.branches)
    return False


class Actions:
    """Runs actions around graveler's events. Thread-safe; state lives in the KV only."""

    def __init__(
        self,
        catalog: Catalog,
        settings: ActionsSettings,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.catalog = catalog
        self.settings = settings
        self.runs = RunStore(catalog.graveler.store, catalog.blockstore)
        """Recorded runs and their hooks' output (listRepositoryRuns and the rest)."""
        self._clock = clock
        self._allowed = settings.allowed_hosts()
        self._at_commit: dict[tuple[str, str], list[Action]] = {}
        """Actions at a commit id, per repository instance: a commit never changes, so its
        action files are read once (creating branches and tags costs no more KV calls)."""
        self._at_commit_lock = threading.Lock()

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
        run_id, errors = self._run(repository, event)
        if errors:
            listed = "".join(f"\t* {error}\n" for error in errors)
            count = "1 error" if len(errors) == 1 else f"{len(errors)} errors"
            raise HookAbortedError(
                f"{event.event_type} hook aborted, run id '{run_id}': {count} occurred:\n{listed}\n"
            )

    def post(self, repository: Repository, event: Event) -> None:
        """Run the post-event's hooks; failures are logged and recorded, never raised."""
        try:
            run_id, errors = self._run(repository, event)
        except KvlakeError as exc:  # the operation is done: a store hiccup must not undo it
            log.warning(
                "%s hooks in repository %r not run: %s", event.event_type, repository.name, exc
            )
            return
        for error in errors:
            log.warning(
                "%s run %s in repository %r failed: %s",
                event.event_type,
                run_id,
                repository.name,
                error,
            )

    def _run(self, repository: Repository, event: Event) -> tuple[str, list[str]]:
        """Run the matching hooks; return the run id and lakeFS's error line per failure."""
        run_id = new_run_id(self._clock())
        if not self.settings.enabled:
            return run_id, []
        start = self._clock()
        try:
            actions = self.load_actions(repository, event.source_ref)
        except ActionFileError as exc:
            return run_id, [f"loading actions: {exc}"]
        actions = [action for action in actions if matches(action, event)]
        results: list[HookRun] = []
        outputs: list[tuple[str, str]] = []
        errors: list[str] = []
        for action_index, action in enumerate(actions):
            for hook_index, hook in enumerate(action.hooks):
                hook_run_id = f"{action_index:04d}_{hook_index:04d}"
                began = self._clock()
                try:
                    output = self._call(repository, event, action.name, hook)
                    passed = True
                except HookFailedError as exc:
                    output = f"Error: {exc}\n{exc.output}"
                    passed = False
                    errors.append(
                        f"hook run id '{hook_run_id}' failed on action '{action.name}' hook"
                        f" '{hook.id}': action failed: {exc}"
                    )
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

    def _call(self, repository: Repository, event: Event, action_name: str, hook: Hook) -> str:
        """Run one hook of the type it names; return its output or raise HookFailedError."""
        payload = self._payload(event, action_name, hook.id)
        if hook.lua is not None:
            script = hook.lua.script or self._script_file(repository, event, hook.lua.script_file)
            action = msgspec.to_builtins(payload)
            action["commit"] = {
                "message": event.commit_message,
                "committer": event.committer,
                "metadata": dict(event.commit_metadata),
            }
            return run_lua(hook.lua, script, action)
        assert hook.webhook is not None  # parsing gives every non-lua hook its webhook
        return call_webhook(hook.webhook, msgspec.json.encode(payload), allowed=self._allowed)

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

    def _payload(self, event: Event, action_name: str, hook_id: str) -> Payload:
        moment = datetime.fromtimestamp(self._clock(), UTC)
        return Payload(
            event_type=event.event_type,
            event_time=moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            action_name=action_name,
            hook_id=hook_id,
            repository_id=event.repository_id,
            branch_id=event.branch_id,
            source_ref=event.source_ref,
            tag_id=event.tag_id,
            commit_id=event.commit_id,
            commit_message=event.commit_message,
            committer=event.committer,
            commit_metadata=event.commit_metadata,
            merge_source=event.merge_source,
        )
