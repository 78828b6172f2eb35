"""Typed inputs of a document: coercing `KEY=VALUE` strings or JSON values to declared types."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from fixloop.documents.specs import InputSpec

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "list": (list,),
    "object": (dict,),
}


class InputError(ValueError):
    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"input {key!r}: {message}")


def _from_text(key: str, spec: InputSpec, text: str) -> Any:
    if spec.type == "string":
        return text
    if spec.type == "boolean":
        lowered = text.strip().lower()
        if lowered in {"true", "yes", "1"}:
            return True
        if lowered in {"false", "no", "0"}:
            return False
        raise InputError(key, f"expected a boolean (true/false), got {text!r}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(key, f"expected {spec.type} as JSON: {exc.msg}") from None


def coerce_value(key: str, spec: InputSpec, value: Any, *, from_text: bool) -> Any:
    result = _from_text(key, spec, value) if from_text and isinstance(value, str) else value
    allowed = _PYTHON_TYPES[spec.type]
    is_bool = isinstance(result, bool)
    if not isinstance(result, allowed) or (is_bool and spec.type in {"integer", "number"}):
        raise InputError(key, f"expected {spec.type}, got {type(result).__name__}")
    pattern = spec.pattern
    if pattern is not None and isinstance(result, str) and not re.fullmatch(pattern, result):
        raise InputError(key, f"{result!r} does not match the declared pattern {spec.pattern!r}")
    return result


def coerce_inputs(
    declared: Mapping[str, InputSpec], values: Mapping[str, Any], *, from_text: bool
) -> dict[str, Any]:
    """Validate `values` against `declared`: unknown keys, missing required keys, wrong types."""
    unknown = sorted(set(values) - set(declared))
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise InputError(unknown[0], f"not a declared input (declared: {known})")
    result: dict[str, Any] = {}
    for key, spec in declared.items():
        if key in values:
            result[key] = coerce_value(key, spec, values[key], from_text=from_text)
        elif not spec.required:
            result[key] = spec.default
        else:
            raise InputError(key, f"required {spec.type} input is missing")
    return result
