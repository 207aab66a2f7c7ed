"""Field-by-field comparison of kvlake's served OpenAPI document with lakeFS's own.

lakeFS's API description (`tests/data/lakefs/swagger.yml`, OpenAPI 3.0, vendored
at a pinned lakeFS version with its licence) is the reference. Both documents
are reduced to one plain shape per schema (type, enum, nullability, fields,
required fields, items, additional properties), with references, `allOf`
and kvlake's `anyOf [T, null]` resolved, so only differences of meaning are
left. `differences` lists them, one line each, for every operation kvlake
serves: path and method, parameters, request body, response codes and
response bodies.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

LAKEFS_VERSION: Final = "v1.84.0"
"""The lakeFS release the vendored swagger.yml comes from (its commit: see the README)."""
SWAGGER: Final = Path(__file__).resolve().parent.parent / "data" / "lakefs" / "swagger.yml"
METHODS: Final = ("get", "put", "post", "delete", "patch", "head", "options")

Schema = Mapping[str, Any]


def load_lakefs() -> dict[str, Any]:
    """lakeFS's API description, as parsed YAML (a fresh copy: callers may change it)."""
    return copy.deepcopy(_parsed())


@functools.cache
def _parsed() -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with SWAGGER.open() as file:
        loaded: dict[str, Any] = yaml.load(file, Loader=loader)
    return loaded


class Shape:
    """One schema reduced to what a client can tell apart; built by `shape`."""

    def __init__(self) -> None:
        self.types: frozenset[str] = frozenset()  # empty: anything
        self.nullable = False
        self.enum: frozenset[Any] | None = None
        self.properties: dict[str, Shape] = {}
        self.required: frozenset[str] = frozenset()
        self.additional: Shape | bool | None = None  # None: not said
        self.items: Shape | None = None
        self.ref = ""


def _resolve(doc: Mapping[str, Any], schema: Schema) -> tuple[Schema, str]:
    ref = ""
    while "$ref" in schema:
        ref = str(schema["$ref"])
        node: Any = doc
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema, ref


def shape(doc: Mapping[str, Any], schema: Schema, seen: tuple[str, ...] = ()) -> Shape:
    """The shape of `schema` in `doc`, with references, allOf and nullable unions resolved."""
    schema, ref = _resolve(doc, schema)
    result = Shape()
    result.ref = ref
    if ref and ref in seen:
        return result  # a recursive schema: compared once
    seen = (*seen, ref) if ref else seen
    variants = schema.get("anyOf") or schema.get("oneOf")
    if variants:
        real = [v for v in variants if v.get("type") != "null"]
        if len(real) == 1:
            inner = shape(doc, real[0], seen)
            inner.nullable = inner.nullable or len(real) < len(variants)
            return inner
        result.types = frozenset({"union"})
        return result
    for part in schema.get("allOf", ()):
        inner = shape(doc, part, seen)
        result.types |= inner.types
        result.properties.update(inner.properties)
        result.required |= inner.required
        result.nullable = result.nullable or inner.nullable
    declared = schema.get("type")
    if isinstance(declared, list):
        result.nullable = result.nullable or "null" in declared
        result.types |= frozenset(t for t in declared if t != "null")
    elif declared:
        result.types |= {declared}
    result.nullable = result.nullable or bool(schema.get("nullable"))
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        result.nullable = result.nullable or None in schema["enum"]
        result.enum = frozenset(values)
        if not result.types:
            result.types = frozenset(_json_type(v) for v in values)
    if "properties" in schema or "required" in schema:
        result.types |= {"object"}
    for name, sub in schema.get("properties", {}).items():
        result.properties[name] = shape(doc, sub, seen)
    result.required |= frozenset(schema.get("required", ()))
    extra = schema.get("additionalProperties")
    if isinstance(extra, bool):
        result.additional = extra
    elif isinstance(extra, Mapping):
        result.additional = shape(doc, extra, seen)
    if "items" in schema:
        result.items = shape(doc, schema["items"], seen)
    return result


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def compare(lakefs: Shape, kvlake: Shape, where: str) -> Iterator[str]:
    """Differences between two shapes, one line each, named by `where` (a field path)."""
    if lakefs.types and kvlake.types != lakefs.types:
        yield f"{where}: type is {_types(kvlake)}, lakeFS's is {_types(lakefs)}"
        return
    if kvlake.nullable and not lakefs.nullable:
        yield f"{where}: may be null, lakeFS's may not"
    if lakefs.nullable and not kvlake.nullable:
        yield f"{where}: may not be null, lakeFS's may"
    if lakefs.enum != kvlake.enum:
        yield f"{where}: values are {_enum(kvlake.enum)}, lakeFS's are {_enum(lakefs.enum)}"
    for name in sorted(lakefs.properties.keys() - kvlake.properties.keys()):
        yield f"{where}.{name}: missing (lakeFS has it)"
    for name in sorted(kvlake.properties.keys() - lakefs.properties.keys()):
        yield f"{where}.{name}: not in lakeFS"
    for name in sorted(lakefs.required - kvlake.required):
        yield f"{where}.{name}: optional, lakeFS's is required"
    for name in sorted(kvlake.required - lakefs.required):
        yield f"{where}.{name}: required, lakeFS's is optional"
    for name in sorted(lakefs.properties.keys() & kvlake.properties.keys()):
        yield from compare(lakefs.properties[name], kvlake.properties[name], f"{where}.{name}")
    if isinstance(lakefs.additional, Shape) and isinstance(kvlake.additional, Shape):
        yield from compare(lakefs.additional, kvlake.additional, f"{where}{{*}}")
    elif isinstance(lakefs.additional, Shape) != isinstance(kvlake.additional, Shape):
        yield f"{where}: other fields {_extra(kvlake)}, lakeFS's {_extra(lakefs)}"
    if lakefs.items is not None and kvlake.items is not None:
        yield from compare(lakefs.items, kvlake.items, f"{where}[]")


def _types(s: Shape) -> str:
    return "/".join(sorted(s.types)) or "anything"


def _enum(values: frozenset[Any] | None) -> str:
    return "any" if values is None else repr(sorted(values, key=repr))


def _extra(s: Shape) -> str:
    return "typed" if isinstance(s.additional, Shape) else repr(s.additional)


def _parameters(
    doc: Mapping[str, Any], path_item: Schema, op: Schema
) -> dict[tuple[str, str], Schema]:
    found: dict[tuple[str, str], Schema] = {}
    for raw in (*path_item.get("parameters", ()), *op.get("parameters", ())):
        param, _ = _resolve(doc, raw)
        found[(param["in"], param["name"])] = param
    return found


def _body(doc: Mapping[str, Any], holder: Schema | None) -> dict[str, Schema]:
    if holder is None:
        return {}
    holder, _ = _resolve(doc, holder)
    return {kind: media.get("schema", {}) for kind, media in holder.get("content", {}).items()}


def operations(doc: Mapping[str, Any]) -> dict[str, tuple[str, str, Schema, Schema]]:
    """operationId -> (path, method, path item, operation)."""
    found = {}
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                found[item[method]["operationId"]] = (path, method, item, item[method])
    return found


def differences(lakefs_doc: Mapping[str, Any], kvlake_doc: Mapping[str, Any]) -> list[str]:
    """Every difference of meaning, for each operation kvlake serves that lakeFS has."""
    theirs, ours = operations(lakefs_doc), operations(kvlake_doc)
    found: list[str] = []
    for op_id in sorted(ours.keys() & theirs.keys()):
        l_path, l_method, l_item, l_op = theirs[op_id]
        k_path, k_method, k_item, k_op = ours[op_id]
        if (l_path, l_method) != (k_path, k_method):
            ours_at, theirs_at = f"{k_method.upper()} {k_path}", f"{l_method.upper()} {l_path}"
            found.append(f"{op_id}: {ours_at}, lakeFS's is {theirs_at}")
        found.extend(_compare_parameters(op_id, lakefs_doc, kvlake_doc, l_item, l_op, k_item, k_op))
        found.extend(
            _compare_bodies(
                op_id,
                "request",
                lakefs_doc,
                kvlake_doc,
                _body(lakefs_doc, l_op.get("requestBody")),
                _body(kvlake_doc, k_op.get("requestBody")),
            )
        )
        l_req = _resolve(lakefs_doc, l_op.get("requestBody", {}))[0].get("required", False)
        k_req = _resolve(kvlake_doc, k_op.get("requestBody", {}))[0].get("required", False)
        if "requestBody" in l_op and "requestBody" in k_op and l_req != k_req:
            found.append(f"{op_id} request: body required is {k_req}, lakeFS's is {l_req}")
        l_responses = {str(c): r for c, r in l_op.get("responses", {}).items()}
        k_responses = {str(c): r for c, r in k_op.get("responses", {}).items()}
        l_codes, k_codes = set(l_responses), set(k_responses)
        for code in sorted(l_codes - k_codes):
            found.append(f"{op_id} {code}: not declared (lakeFS declares it)")
        for code in sorted(k_codes - l_codes):
            found.append(f"{op_id} {code}: declared, lakeFS does not")
        for code in sorted(l_codes & k_codes):
            found.extend(
                _compare_bodies(
                    op_id,
                    code,
                    lakefs_doc,
                    kvlake_doc,
                    _body(lakefs_doc, l_responses[code]),
                    _body(kvlake_doc, k_responses[code]),
                )
            )
    return found


def _compare_parameters(
    op_id: str,
    lakefs_doc: Any,
    kvlake_doc: Any,
    l_item: Schema,
    l_op: Schema,
    k_item: Schema,
    k_op: Schema,
) -> Iterator[str]:
    theirs = _parameters(lakefs_doc, l_item, l_op)
    ours = _parameters(kvlake_doc, k_item, k_op)
    for where, name in sorted(theirs.keys() - ours.keys()):
        yield f"{op_id} {where} parameter {name}: missing (lakeFS has it)"
    for where, name in sorted(ours.keys() - theirs.keys()):
        yield f"{op_id} {where} parameter {name}: not in lakeFS"
    for key in sorted(theirs.keys() & ours.keys()):
        l_param, k_param = theirs[key], ours[key]
        label = f"{op_id} {key[0]} parameter {key[1]}"
        l_required, k_required = bool(l_param.get("required")), bool(k_param.get("required"))
        if l_required != k_required:
            yield f"{label}: required is {k_required}, lakeFS's is {l_required}"
        l_schema = shape(lakefs_doc, l_param.get("schema", {}))
        yield from compare(l_schema, shape(kvlake_doc, k_param.get("schema", {})), label)


def _compare_bodies(
    op_id: str,
    code: str,
    lakefs_doc: Any,
    kvlake_doc: Any,
    theirs: dict[str, Schema],
    ours: dict[str, Schema],
) -> Iterator[str]:
    for kind in sorted(theirs.keys() - ours.keys()):
        yield f"{op_id} {code}: no {kind} body (lakeFS has one)"
    for kind in sorted(ours.keys() - theirs.keys()):
        yield f"{op_id} {code}: {kind} body, lakeFS has none"
    for kind in sorted(theirs.keys() & ours.keys()):
        l_schema, k_schema = shape(lakefs_doc, theirs[kind]), shape(kvlake_doc, ours[kind])
        yield from compare(l_schema, k_schema, f"{op_id} {code} {kind}")
