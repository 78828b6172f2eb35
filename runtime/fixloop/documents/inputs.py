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
    """One input's problem; or, with `others`, every missing required input at once, so one run
    names all of them rather than one a run."""

    def __init__(self, key: str, message: str, others: tuple[str, ...] = ()) -> None:
        self.key = key
        self.keys = (key, *others)
        super().__init__(message if others else f"input {key!r}: {message}")


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
    missing = [key for key, spec in declared.items() if spec.required and key not in values]
    if len(missing) == 1:
        raise InputError(missing[0], f"required {declared[missing[0]].type} input is missing")
    if missing:
        named = ", ".join(f"{key!r} ({declared[key].type})" for key in missing)
        raise InputError(missing[0], f"required inputs are missing: {named}", tuple(missing[1:]))
    result: dict[str, Any] = {}
    for key, spec in declared.items():
        if key in values:
            result[key] = coerce_value(key, spec, values[key], from_text=from_text)
        else:
            result[key] = spec.default
    return result
