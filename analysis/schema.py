"""The run results' typed shapes (analysis.results) in the API schema, so clients see every field.

pydantic reads the dataclasses and writes JSON Schema; OpenAPI 3.0 (drf-spectacular's default) says
"nullable" where JSON Schema has a null type, so each schema is rewritten once, and the shapes it
refers to are added to the schema's components by a postprocessing hook.
"""

from __future__ import annotations

from functools import cache

from pydantic import TypeAdapter

from .results import Halo, QuestionResult, SystemAtFit

COMPONENTS = "#/components/schemas/{model}"
NULL = {"type": "null"}

# The API field -> the shape it holds.
RESULT_SHAPES = {
    "systems": list[SystemAtFit],
    "results": dict[str, QuestionResult],
    "halo": Halo,
}


def field_schema(name: str) -> dict:
    schema = _schemas()[name]
    return {key: value for key, value in schema.items() if key != "$defs"}


def add_result_shapes(result, generator, request, public):
    """drf-spectacular postprocessing hook: the dataclasses the results fields refer to, as components."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    for schema in _schemas().values():
        for name, shape in schema.get("$defs", {}).items():
            components.setdefault(name, shape)
    return result


@cache
def _schemas() -> dict[str, dict]:
    return {
        name: _openapi_30(TypeAdapter(shape).json_schema(ref_template=COMPONENTS, mode="serialization"))
        for name, shape in RESULT_SHAPES.items()
    }


def _openapi_30(node):
    """JSON Schema to OpenAPI 3.0: `anyOf: [X, {type: null}]` becomes X with `nullable: true`."""
    if isinstance(node, list):
        return [_openapi_30(value) for value in node]
    if not isinstance(node, dict):
        return node
    node = {key: _openapi_30(value) for key, value in node.items()}
    options = node.get("anyOf")
    if options and NULL in options:
        rest = [option for option in node.pop("anyOf") if option != NULL]
        if len(rest) > 1:
            node["anyOf"] = rest
        elif "$ref" in rest[0]:
            node["allOf"] = rest  # 3.0 ignores siblings of $ref: wrap it so nullable counts
        else:
            node |= rest[0]
        node["nullable"] = True
    return node
