"""The server's OpenAPI document, derived from the operation table it serves.

Paths, parameters, bodies and responses come from the same `Operation`
declarations that build the routes, and schemas from the msgspec wire models,
so the document cannot drift from what the server accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, get_args, get_origin

import msgspec

from kvlake import __version__
from kvlake.api.params import Param
from kvlake.api.routing import Operation
from kvlake.api.wire.common import Error

_PATH_PARAM = re.compile(r"{(\w+)}")
_REF = "#/components/schemas/{name}"
_SPECIAL: dict[str, dict[str, Any]] = {
    "binary": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    "text": {"text/html": {"schema": {"type": "string"}}},
    "metadata": {
        "application/json": {
            "schema": {"type": "object", "additionalProperties": {"type": "string"}}
        }
    },
}
_SECURITY: list[dict[str, list[str]]] = [{"basic_auth": []}, {"jwt_token": []}, {"cookie_auth": []}]


def _param_schema(param: Param) -> dict[str, Any]:
    if param.kind == "bool":
        return {"type": "boolean"}
    if param.kind == "int":
        schema: dict[str, Any] = {"type": "integer"}
        if param.minimum is not None:
            schema["minimum"] = param.minimum
        if param.maximum is not None:
            schema["maximum"] = param.maximum
        return schema
    if param.kind == "list":
        return {"type": "array", "items": {"type": "string"}}
    if param.choices:
        return {"type": "string", "enum": list(param.choices)}
    if param.kind == "path":
        return {"type": "string", "pattern": r"^(?!(?:.*/)?\.\.(?:/|$))"}
    return {"type": "string"}


def _parameters(operation: Operation[Any]) -> list[dict[str, Any]]:
    found = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _PATH_PARAM.findall(operation.path)
    ]
    for param in operation.params:
        found.append(
            {
                "name": param.name,
                "in": param.where,
                "required": param.required,
                "description": param.description,
                "schema": _param_schema(param),
            }
        )
    return found


def _content(kind: Any) -> dict[str, Any]:
    if isinstance(kind, str):
        return _SPECIAL[kind]
    if get_origin(kind) is list:
        (item,) = get_args(kind)
        schema = {"type": "array", "items": {"$ref": _REF.format(name=item.__name__)}}
        return {"application/json": {"schema": schema}}
    return {"application/json": {"schema": {"$ref": _REF.format(name=kind.__name__)}}}


def _operation(operation: Operation[Any]) -> dict[str, Any]:
    described: dict[str, Any] = {
        "operationId": operation.operation_id,
        "tags": [operation.openapi_tag],
        "summary": operation.summary or operation.operation_id,
        "parameters": _parameters(operation),
        "security": [] if operation.public else _SECURITY,
    }
    if operation.stream:
        described["requestBody"] = {
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"content": {"type": "string", "format": "binary"}},
                    }
                },
            }
        }
    elif operation.body is not None:
        described["requestBody"] = {
            "required": not operation.optional_body,
            "content": _content(operation.body),
        }
    responses: dict[str, Any] = {}
    for status, kind in operation.responses.items():
        response: dict[str, Any] = {"description": f"HTTP {status}"}
        if kind is not None:
            response["content"] = _content(kind)
        elif status >= 400:
            response["content"] = _content(Error)
        responses[str(status)] = response
    responses.setdefault("default", {"description": "error", "content": _content(Error)})
    described["responses"] = responses
    return described


def _structs(models: set[Any]) -> dict[str, Any]:
    """Every struct `models` reach (through fields, lists, maps, unions), by name."""
    found: dict[str, Any] = {}

    def visit(info: Any) -> None:
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls.__name__ in found:
                return
            found[info.cls.__name__] = info
            for field in info.fields:
                visit(field.type)
        for attribute in ("item_type", "key_type", "value_type"):
            if hasattr(info, attribute):
                visit(getattr(info, attribute))
        for member in getattr(info, "types", ()):
            visit(member)

    for info in msgspec.inspect.multi_type_info(sorted(models, key=lambda m: m.__name__)):
        visit(info)
    return found


def _left_out(structs: dict[str, Any]) -> dict[str, set[str]]:
    """Per struct name, the fields it leaves out of its JSON rather than send `null`.

    A struct with `omit_defaults` never encodes a field that holds its default,
    so a field defaulting to None is absent or a value, never null: the document
    says so (lakeFS's optional fields are not nullable either).
    """
    return {
        name: {f.encode_name for f in info.fields if f.default is None}
        for name, info in structs.items()
        if info.cls.__struct_config__.omit_defaults
    }


def _always_sent(responses: dict[str, Any], others: dict[str, Any]) -> dict[str, set[str]]:
    """Per struct name, the fields every success response carries: all of a struct that
    omits nothing and is nothing else (a request, where its defaults make fields optional;
    an error answer, whose status may carry Error's body instead)."""
    return {
        name: {f.encode_name for f in info.fields}
        for name, info in responses.items()
        if name not in others and not info.cls.__struct_config__.omit_defaults
    }


def _drop_null(components: dict[str, Any], left_out: dict[str, set[str]]) -> None:
    """Make the fields `_left_out` names optional non-null values in `components`."""
    for name, fields in left_out.items():
        properties = components.get(name, {}).get("properties", {})
        for field in fields:
            schema = properties.get(field, {})
            variants = schema.get("anyOf", [])
            real = [v for v in variants if v != {"type": "null"}]
            if len(real) == 1 and len(variants) == 2:
                properties[field] = {
                    k: v for k, v in schema.items() if k not in ("anyOf", "default")
                }
                properties[field].update(real[0])


def _models(kinds: Sequence[Any]) -> set[Any]:
    found: set[Any] = set()
    for kind in kinds:
        if get_origin(kind) is list:
            found.update(get_args(kind))
        elif kind is not None and not isinstance(kind, str):
            found.add(kind)
    return found


def document(operations: Sequence[Operation[Any]]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `operations` (msgspec emits JSON Schema 2020-12)."""
    bodies = _models([operation.body for operation in operations])
    answers = _models([k for o in operations for k in o.responses.values()]) | {Error}
    models = bodies | answers
    _, components = msgspec.json.schema_components(
        sorted(models, key=lambda m: m.__name__), ref_template=_REF
    )
    responses, requests = _structs(answers), _structs(bodies)
    _drop_null(components, _left_out(responses | requests))
    # A struct that is also an error answer may share its status with Error's body.
    successes = _models([k for o in operations for code, k in o.responses.items() if code < 400])
    failures = _structs(answers - successes)
    for name, fields in _always_sent(_structs(successes), requests | failures).items():
        if name in components:
            components[name]["required"] = [
                f for f in components[name].get("properties", {}) if f in fields
            ]
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(operation)
    return {
        "openapi": "3.1.0",
        "info": {"title": "kvlake API (lakeFS-compatible)", "version": __version__},
        "servers": [{"url": "/api/v1"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "basic_auth": {"type": "http", "scheme": "basic"},
                "jwt_token": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "cookie_auth": {"type": "apiKey", "in": "cookie", "name": "internal_auth_session"},
            },
        },
    }
