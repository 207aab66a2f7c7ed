"""The `lakefs` Lua library: lakeFS's client functions, run in-process as the acting user.

As in lakeFS (pkg/actions/lua/lakefs/client.go), each function calls one API
operation with the identity of the user whose request triggered the hook, so
the user's policies decide what the hook may read or change, and returns the
HTTP status first: `code, body = lakefs.get_object(repo, ref, path)`. JSON
answers come back as Lua tables (lists marked as arrays), `get_object` and
`stat_object` as the raw body string, as lakeFS returns them. A hook with no
acting user (run outside a request) or a lake without the API gets a clear
error from every function instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kvlake.actions.caller import ApiCaller, HookRequest
from kvlake.actions.lua_libraries import MAX_RESULT, Converter, Function, LuaCallError, guarded
from kvlake.actions.lua_libraries import integer as _integer
from kvlake.actions.lua_libraries import text as _text


def _optional(query: dict[str, object], name: str, value: object, index: int) -> None:
    if value is not None:
        query[name] = _text(value, index)


def _pulled_text(value: object) -> str:
    """A metadata value from a pulled table (already text; a number is its text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise LuaCallError(f"metadata values must be strings, got {type(value).__name__}")
    return str(value)


class LakefsClient:
    """The functions of `require("lakefs")` for one hook run, as `user_id`."""

    def __init__(self, api: ApiCaller | None, user_id: str) -> None:
        self._api = api
        self._user_id = user_id

    @property
    def user_id(self) -> str:
        """Who the calls act as: lakeFS's `username` global."""
        return self._user_id

    def _call(
        self,
        operation_id: str,
        path: Mapping[str, str],
        query: Mapping[str, object] | None = None,
        body: object = None,
    ) -> tuple[int, bytes]:
        if self._api is None:
            raise LuaCallError("this kvlake runs without its API server, which lakefs calls")
        if not self._user_id:
            raise LuaCallError(
                "no user triggered this hook (it runs outside a request), so there is no one"
                " to act as"
            )
        return self._api.call(
            HookRequest(self._user_id, operation_id, path, query or {}, body, MAX_RESULT)
        )

    def functions(self, convert: Converter) -> dict[str, Function]:
        """lakeFS's seven client functions, guarded for the Lua prelude."""

        def as_json(status: int, body: bytes) -> tuple[Any, ...]:
            if not body:
                return (status,)
            return status, convert.push(json.loads(body))

        def create_tag(repository: object, ref: object, tag: object) -> tuple[Any, ...]:
            return as_json(
                *self._call(
                    "createTag",
                    {"repository": _text(repository, 1)},
                    body={"ref": _text(ref, 2), "id": _text(tag, 3)},
                )
            )

        def diff_refs(
            repository: object,
            left: object,
            right: object,
            after: object = None,
            prefix: object = None,
            delimiter: object = None,
            amount: object = None,
        ) -> tuple[Any, ...]:
            query: dict[str, object] = {}
            _optional(query, "after", after, 4)
            _optional(query, "prefix", prefix, 5)
            _optional(query, "delimiter", delimiter, 6)
            if amount is not None:
                query["amount"] = _integer(amount, 7)
            path = {
                "repository": _text(repository, 1),
                "leftRef": _text(left, 2),
                "rightRef": _text(right, 3),
            }
            return as_json(*self._call("diffRefs", path, query))

        def list_objects(
            repository: object,
            ref: object,
            after: object = None,
            prefix: object = None,
            delimiter: object = None,
            amount: object = None,
            user_metadata: object = None,
        ) -> tuple[Any, ...]:
            query: dict[str, object] = {}
            _optional(query, "after", after, 3)
            _optional(query, "prefix", prefix, 4)
            _optional(query, "delimiter", delimiter, 5)
            if amount is not None:
                query["amount"] = _integer(amount, 6)
            if user_metadata is not None:
                query["user_metadata"] = bool(user_metadata)
            path = {"repository": _text(repository, 1), "ref": _text(ref, 2)}
            return as_json(*self._call("listObjects", path, query))

        def get_object(repository: object, ref: object, path: object) -> tuple[int, bytes]:
            where = {"repository": _text(repository, 1), "ref": _text(ref, 2)}
            return self._call("getObject", where, {"path": _text(path, 3)})

        def stat_object(
            repository: object, ref: object, path: object, user_metadata: object = None
        ) -> tuple[int, str]:
            where = {"repository": _text(repository, 1), "ref": _text(ref, 2)}
            query: dict[str, object] = {"path": _text(path, 3)}
            if user_metadata is not None:
                query["user_metadata"] = bool(user_metadata)
            status, body = self._call("statObject", where, query)
            return status, body.decode("utf-8", "replace")

        def diff_branch(
            repository: object,
            branch: object,
            after: object = None,
            amount: object = None,
            prefix: object = None,
            delimiter: object = None,
        ) -> tuple[Any, ...]:
            query: dict[str, object] = {}
            _optional(query, "after", after, 3)
            if amount is not None:
                query["amount"] = _integer(amount, 4)
            _optional(query, "prefix", prefix, 5)
            _optional(query, "delimiter", delimiter, 6)
            where = {"repository": _text(repository, 1), "branch": _text(branch, 2)}
            return as_json(*self._call("diffBranch", where, query))

        def update_object_user_metadata(
            repository: object, branch: object, path: object, metadata: object
        ) -> tuple[Any, ...]:
            pulled = convert.pull(metadata)
            if not isinstance(pulled, dict):
                raise LuaCallError(f"need a table at index 4, got {type(metadata).__name__}")
            where = {"repository": _text(repository, 1), "branch": _text(branch, 2)}
            return as_json(
                *self._call(
                    "updateObjectUserMetadata",
                    where,
                    {"path": _text(path, 3)},
                    body={"set": {key: _pulled_text(value) for key, value in pulled.items()}},
                )
            )

        made: dict[str, Function] = {
            "create_tag": create_tag,
            "diff_refs": diff_refs,
            "list_objects": list_objects,
            "get_object": get_object,
            "stat_object": stat_object,
            "diff_branch": diff_branch,
            "update_object_user_metadata": update_object_user_metadata,
        }
        return {name: guarded(name, function) for name, function in made.items()}
