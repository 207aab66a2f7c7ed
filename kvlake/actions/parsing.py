"""Action files (`_lakefs_actions/*.yaml`) parsed and validated as lakeFS reads them.

lakeFS's format: `name`, `description`, `on:` (event -> optional `branches`
patterns), `hooks:` (`id`, `type`, `description`, `properties`). A file that
does not parse or breaks a rule is refused with its path and the line of the
offending node, so the writer of the file can fix it; nothing runs from a
repository whose action files are invalid (lakeFS fails the operation too).
Parsing reads YAML nodes (not plain values) to keep every node's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

import yaml

from kvlake.actions.airflow import check_secret
from kvlake.actions.records import Action, AirflowHook, Hook, LuaHook, Trigger, Webhook
from kvlake.errors import InvalidInputError
from kvlake.graveler import EVENT_TYPES

KVLAKE_EVENT_TYPES: Final = ("pre-bulk-delete", "post-bulk-delete", "post-gc-run")
"""kvlake's own events, beyond lakeFS's: a gate before a bulk delete starts, and the end
of a bulk delete or a garbage-collection run (both long-running operations)."""
REPOSITORY_EVENT_TYPES: Final = ("post-gc-run",)
"""Events of a whole repository, not of a branch: `branches` cannot narrow them."""
EVENTS: Final = (*EVENT_TYPES, *KVLAKE_EVENT_TYPES)
"""Every `on:` key an action file may use."""
HOOK_TYPES: Final = ("webhook", "airflow", "lua")
"""lakeFS's hook types; others fail validation."""
DEFAULT_TIMEOUT: Final = 60.0
"""Seconds a hook may take when its `timeout` property is absent (lakeFS: one minute)."""
MAX_TIMEOUT: Final = 600.0
"""Seconds a hook may take at most: hooks run inside the request that triggered them."""
_NAME: Final = re.compile(r"^\w[\w\-. ]+$")
_HOOK_ID: Final = re.compile(r"^[_a-zA-Z][\-_a-zA-Z0-9]{1,255}$")
_DURATION_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


class ActionFileError(InvalidInputError):
    """An action file does not parse or breaks a rule: fix the file at the named line."""


def _fail(path: str, node: yaml.Node | None, problem: str) -> ActionFileError:
    line = f" line {node.start_mark.line + 1}" if node is not None else ""
    return ActionFileError(f"action file {path!r}{line}: {problem}")


def _mapping(path: str, node: yaml.Node, what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise _fail(path, node, f"{what} must be a mapping (key: value lines)")
    items: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            raise _fail(path, key, f"keys of {what} must be plain text")
        items[key.value] = (key, value)
    return items


def _text(path: str, node: yaml.Node, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
        raise _fail(path, node, f"{what} must be text")
    return str(node.value)


def _optional_text(path: str, fields: dict[str, tuple[yaml.Node, yaml.Node]], key: str) -> str:
    if key not in fields or fields[key][1].tag == "tag:yaml.org,2002:null":
        return ""
    return _text(path, fields[key][1], f"'{key}'")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (`30s`, `1m30s`, `500ms`), as lakeFS reads `timeout`.

    Raises:
        ValueError: not a duration.
    """
    if not text or _DURATION_PART.sub("", text) != "":
        raise ValueError(f"{text!r} is not a duration; write one such as 30s, 2m or 1m30s")
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))


def _string_map(
    path: str, node: yaml.Node | None, what: str, *, lists: bool
) -> tuple[tuple[str, str], ...]:
    if node is None or node.tag == "tag:yaml.org,2002:null":
        return ()
    pairs: list[tuple[str, str]] = []
    for key, (_, value) in _mapping(path, node, what).items():
        if lists and isinstance(value, yaml.SequenceNode):
            pairs.extend((key, _text(path, item, f"{what} '{key}'")) for item in value.value)
        else:
            pairs.append((key, _text(path, value, f"{what} '{key}'")))
    return tuple(pairs)


def _valid_port(url: str) -> bool:
    try:
        urlsplit(url).port  # noqa: B018 -- read for its ValueError
    except ValueError:
        return False
    return True


def _timeout(path: str, fields: dict[str, tuple[yaml.Node, yaml.Node]]) -> float:
    """The hook's `timeout` property in seconds (DEFAULT_TIMEOUT when absent)."""
    if "timeout" not in fields:
        return DEFAULT_TIMEOUT
    timeout_node = fields["timeout"][1]
    try:
        timeout = parse_duration(_text(path, timeout_node, "'timeout'"))
    except ValueError as exc:
        raise _fail(path, timeout_node, f"'timeout': {exc}") from None
    if not 0 < timeout <= MAX_TIMEOUT:
        raise _fail(path, timeout_node, f"'timeout' must be above 0 and at most {MAX_TIMEOUT:.0f}s")
    return timeout


def _lua(path: str, node: yaml.Node | None, index: int) -> LuaHook:
    """A lua hook's properties: one of `script`, `script_file` (`script_path`), optional `args`."""
    what = f"hook[{index}] properties"
    fields = _mapping(path, node, what) if node is not None else {}
    script = _optional_text(path, fields, "script")
    script_file = _optional_text(path, fields, "script_file")
    script_path = _optional_text(path, fields, "script_path")  # lakeFS's newer name
    if sum(map(bool, (script, script_file, script_path))) != 1:
        raise _fail(
            path,
            node,
            f"{what}: a lua hook needs exactly one of 'script' and 'script_file' (or"
            " 'script_path')",
        )
    args: tuple[tuple[str, object], ...] = ()
    if "args" in fields and fields["args"][1].tag != "tag:yaml.org,2002:null":
        args_node = fields["args"][1]
        _mapping(path, args_node, "'args'")
        loaded = yaml.safe_load(yaml.serialize(args_node))
        args = tuple((str(key), value) for key, value in loaded.items())
    return LuaHook(
        script=script,
        script_file=script_file or script_path,
        args=args,
        timeout=_timeout(path, fields),
    )


def _http_url(path: str, node: yaml.Node, kind: str) -> str:
    url = _text(path, node, "'url'")
    if not re.match(r"^https?://[^/?#]+", url, re.IGNORECASE) or not _valid_port(url):
        raise _fail(
            path,
            node,
            f"{kind} url {url!r} is not http(s) with a valid port; write http(s)://host[:port]/path",
        )
    return url


def _airflow(path: str, node: yaml.Node | None, index: int) -> AirflowHook:
    """An airflow hook's properties: `url`, `dag_id`, `username`, `password` required;
    `dag_conf` (a mapping), `wait_for_dag` (a boolean), `timeout` optional."""
    what = f"hook[{index}] properties"
    fields = _mapping(path, node, what) if node is not None else {}
    for key in ("url", "dag_id", "username", "password"):
        if key not in fields:
            raise _fail(path, node, f"{what}: an airflow hook needs '{key}'")
    url = _http_url(path, fields["url"][1], "airflow")
    dag_id = _text(path, fields["dag_id"][1], "'dag_id'")
    if not dag_id:
        raise _fail(path, fields["dag_id"][1], "'dag_id' must not be empty")
    password_node = fields["password"][1]
    password = _text(path, password_node, "'password'")
    problem = check_secret(password)
    if problem:
        raise _fail(path, password_node, f"'password': {problem}")
    wait = False
    if "wait_for_dag" in fields:
        wait_node = fields["wait_for_dag"][1]
        if wait_node.tag != "tag:yaml.org,2002:bool":
            raise _fail(path, wait_node, "'wait_for_dag' must be true or false")
        wait = bool(yaml.safe_load(yaml.serialize(wait_node)))
    conf: tuple[tuple[str, object], ...] = ()
    if "dag_conf" in fields and fields["dag_conf"][1].tag != "tag:yaml.org,2002:null":
        conf_node = fields["dag_conf"][1]
        _mapping(path, conf_node, "'dag_conf'")
        loaded = yaml.safe_load(yaml.serialize(conf_node))
        conf = tuple((str(key), value) for key, value in loaded.items())
    return AirflowHook(
        url=url,
        dag_id=dag_id,
        username=_text(path, fields["username"][1], "'username'"),
        password=password,
        dag_conf=conf,
        wait_for_dag=wait,
        timeout=_timeout(path, fields),
    )


def _webhook(path: str, node: yaml.Node | None, index: int) -> Webhook:
    what = f"hook[{index}] properties"
    if node is None:
        raise _fail(path, node, f"{what}: a webhook needs 'url'")
    fields = _mapping(path, node, what)
    if "url" not in fields:
        raise _fail(path, node, f"{what}: a webhook needs 'url'")
    url = _http_url(path, fields["url"][1], "webhook")
    timeout = _timeout(path, fields)
    query = fields.get("query_params", (None, None))[1]
    headers = fields.get("headers", (None, None))[1]
    return Webhook(
        url=url,
        timeout=timeout,
        query_params=_string_map(path, query, "'query_params'", lists=True),
        headers=_string_map(path, headers, "'headers'", lists=False),
    )


def _triggers(path: str, node: yaml.Node) -> tuple[Trigger, ...]:
    fields = _mapping(path, node, "'on'")
    if not fields:
        raise _fail(path, node, "'on' is required: name at least one event")
    triggers: list[Trigger] = []
    for event, (key, value) in fields.items():
        if event not in EVENTS:
            raise _fail(
                path, key, f"event {event!r} is not supported; use one of {', '.join(EVENTS)}"
            )
        branches: tuple[str, ...] = ()
        if value.tag != "tag:yaml.org,2002:null":
            spec = _mapping(path, value, f"'on.{event}'")
            if "branches" in spec and spec["branches"][1].tag != "tag:yaml.org,2002:null":
                listed = spec["branches"][1]
                if not isinstance(listed, yaml.SequenceNode):
                    raise _fail(path, listed, "'branches' must be a list of patterns")
                branches = tuple(_text(path, item, "a branch pattern") for item in listed.value)
                if branches and event.endswith("-tag"):
                    raise _fail(path, listed, "'branches' is not supported in tag event types")
                if branches and event in REPOSITORY_EVENT_TYPES:
                    raise _fail(
                        path, listed, f"'branches' is not supported in {event}: it has no branch"
                    )
        triggers.append(Trigger(event_type=event, branches=branches))
    return tuple(triggers)


def _hooks(path: str, node: yaml.Node | None) -> tuple[Hook, ...]:
    if node is None or node.tag == "tag:yaml.org,2002:null":
        return ()
    if not isinstance(node, yaml.SequenceNode):
        raise _fail(path, node, "'hooks' must be a list")
    hooks: list[Hook] = []
    for index, item in enumerate(node.value):
        fields = _mapping(path, item, f"hook[{index}]")
        hook_id = _optional_text(path, fields, "id")
        if not _HOOK_ID.match(hook_id):
            raise _fail(
                path, item, f"hook[{index}] missing ID (a letter or _, then 1-255 of -_a-zA-Z0-9)"
            )
        if any(h.id == hook_id for h in hooks):
            raise _fail(path, item, f"hook[{index}] duplicate ID '{hook_id}'")
        hook_type = _optional_text(path, fields, "type")
        if hook_type not in HOOK_TYPES:
            where = fields["type"][1] if "type" in fields else item
            raise _fail(
                path,
                where,
                f"hook[{index}] type '{hook_type}' unknown; use {', '.join(HOOK_TYPES)}",
            )
        properties = fields.get("properties", (None, None))[1]
        description = _optional_text(path, fields, "description")
        if hook_type == "lua":
            hook = Hook(
                id=hook_id, type=hook_type, description=description,
                lua=_lua(path, properties, index),
            )  # fmt: skip
        elif hook_type == "airflow":
            hook = Hook(
                id=hook_id, type=hook_type, description=description,
                airflow=_airflow(path, properties, index),
            )  # fmt: skip
        else:
            hook = Hook(
                id=hook_id, type=hook_type, description=description,
                webhook=_webhook(path, properties, index),
            )  # fmt: skip
        hooks.append(hook)
    return tuple(hooks)


def parse_action(path: str, data: bytes) -> Action:
    """Parse and validate one action file (`path` names it in errors).

    Raises:
        ActionFileError: it does not parse, or breaks one of lakeFS's rules; the message
            names the file and line.
    """
    try:
        root = yaml.compose(data.decode("utf-8"), Loader=yaml.SafeLoader)
    except UnicodeDecodeError:
        raise _fail(path, None, "is not UTF-8 text") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise ActionFileError(
            f"action file {path!r}{line}: YAML does not parse: {exc.problem}"
        ) from None
    except yaml.YAMLError as exc:
        raise _fail(path, None, f"YAML does not parse: {exc}") from None
    if root is None:
        raise _fail(path, None, "is empty; an action needs 'name', 'on' and 'hooks'")
    fields = _mapping(path, root, "an action")
    name = _optional_text(path, fields, "name")
    if not name:
        raise _fail(path, root, "'name' is required")
    if not _NAME.match(name):
        raise _fail(
            path,
            fields["name"][1],
            f"'name' {name!r} is invalid; use letters, digits, _-. and spaces",
        )
    if "on" not in fields:
        raise _fail(path, root, "'on' is required: name at least one event")
    return Action(
        path=path,
        name=name,
        description=_optional_text(path, fields, "description"),
        on=_triggers(path, fields["on"][1]),
        hooks=_hooks(path, fields.get("hooks", (None, None))[1]),
    )


def check_unique_names(actions: Iterable[Action]) -> None:
    """Refuse two action files with one name (lakeFS refuses them too).

    Raises:
        ActionFileError: naming both files.
    """
    seen: dict[str, str] = {}
    for action in actions:
        if action.name in seen:
            raise ActionFileError(
                f"action files {seen[action.name]!r} and {action.path!r} both name the action"
                f" {action.name!r}; give each action its own name"
            )
        seen[action.name] = action.path
