"""Actions as parsed from their files, and the runs of their hooks as stored in the KV.

Records are frozen msgspec structs; a run and its hooks' results are what
lakeFS's runs endpoints answer (kvlake/api converts them to its wire types).
"""

from __future__ import annotations

import msgspec


class Webhook(msgspec.Struct, frozen=True, kw_only=True):
    """A webhook hook's properties: POST the event's JSON to `url` within `timeout` seconds."""

    url: str
    timeout: float
    query_params: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()


class LuaHook(msgspec.Struct, frozen=True, kw_only=True):
    """A lua hook's properties: the script inline, or the repository path it is read from."""

    script: str = ""
    script_file: str = ""
    args: tuple[tuple[str, object], ...] = ()
    timeout: float


class AirflowHook(msgspec.Struct, frozen=True, kw_only=True):
    """An airflow hook's properties: the DAG to trigger, as whom, and whether to wait for it.

    `password` is kept as written (`{{ ENV.NAME }}` references are read when the hook runs).
    """

    url: str
    dag_id: str
    username: str
    password: str
    dag_conf: tuple[tuple[str, object], ...] = ()
    wait_for_dag: bool = False
    timeout: float


class Hook(msgspec.Struct, frozen=True, kw_only=True):
    """One hook of an action: its id (unique in the action), type and that type's properties."""

    id: str
    type: str
    description: str = ""
    webhook: Webhook | None = None
    lua: LuaHook | None = None
    airflow: AirflowHook | None = None


class Trigger(msgspec.Struct, frozen=True, kw_only=True):
    """One `on:` entry: the event and the branch patterns it matches (none: every branch)."""

    event_type: str
    branches: tuple[str, ...] = ()


class Action(msgspec.Struct, frozen=True, kw_only=True):
    """One action file: its path in the repository, name, events and hooks in order."""

    path: str
    name: str
    description: str = ""
    on: tuple[Trigger, ...]
    hooks: tuple[Hook, ...]


class HookRun(msgspec.Struct, frozen=True, kw_only=True):
    """One hook's run: lakeFS's task result (`hook_run_id` is `<action>_<hook>` indexes)."""

    hook_run_id: str
    action: str
    hook_id: str
    start_time: float
    end_time: float
    passed: bool


class Run(msgspec.Struct, frozen=True, kw_only=True):
    """One event's run of the matching actions' hooks, with their results in order."""

    run_id: str
    event_type: str
    branch: str
    commit_id: str
    source_ref: str
    start_time: float
    end_time: float
    passed: bool
    hooks: tuple[HookRun, ...]
