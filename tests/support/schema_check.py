"""The bot protocol's JSON schemas (docs/bot-protocol/), and a checker of the subset they use.

The project does not depend on ``jsonschema``; the schemas use only these
keywords, and a schema using another fails here rather than pass unchecked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "bot-protocol"
KNOWN = {"$schema", "$id", "title", "description", "$defs", "$ref", "type", "properties",
         "required", "additionalProperties", "items", "enum", "const", "oneOf", "minimum",
         "maximum", "minItems", "maxItems", "minLength", "maxLength", "pattern"}  # fmt: skip
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def load() -> dict[str, dict[str, Any]]:
    return {p.name.removesuffix(".schema.json"): json.loads(p.read_text())
            for p in SCHEMAS.glob("*.schema.json")}  # fmt: skip


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, TYPES[kind])


def errors(value: Any, schema: dict[str, Any], root: dict[str, Any], at: str = "$") -> list[str]:
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{at}: the checker does not know {sorted(unknown)}"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, at)
    out: list[str] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, k) for k in kinds):
            return [f"{at}: {value!r} is not {kinds}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{at}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{at}: {value!r} not in {schema['enum']}")
    if "oneOf" in schema:
        fits = [s for s in schema["oneOf"] if not errors(value, s, root, at)]
        if len(fits) != 1:
            out.append(f"{at}: {value!r} fits {len(fits)} of oneOf, not 1")
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and not schema.get("minimum", value) <= value <= schema.get("maximum", value):
        out.append(f"{at}: {value} out of range")
    if isinstance(value, str):
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            out.append(f"{at}: {value!r} has the wrong length")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{at}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, list):
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            out.append(f"{at}: {len(value)} items")
        for i, item in enumerate(value):
            out += errors(item, schema.get("items", {}), root, f"{at}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{at}: '{k}' missing" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            out += [f"{at}: '{k}' not allowed" for k in value if k not in props]
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], root, f"{at}.{k}")
    return out


def check_frame(frame: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with ``frame`` against the schema its ``type`` names."""
    schema = schemas.get(str(frame.get("type")))
    if schema is None:
        return [f"no schema for a frame of type {frame.get('type')!r}"]
    return errors(frame, schema, schema)
