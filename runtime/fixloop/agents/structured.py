"""A role's structured answer: the JSON schema a model is asked for, and the reading of what it
gave back. Shared by every backend that talks to a real model (claude, openai), so a role's output
is held to one rule whichever model wrote it.

Tool inputs and JSON-schema output formats must be JSON objects; a role whose schema is a union
(the fixer's report-or-request) or any other root is asked for `{"output": ...}` and unwrapped
here. Models are known to return the object as a JSON string, or wrapped when it was not asked
for; both are accepted. Anything that does not validate against the role's schema is a
ValueError: the backend's outcome is then inconclusive, never a pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError

from fixloop.schemas.registry import json_schema, parse_output

WRAPPER_KEY = "output"


class FinalText(RootModel[str]):
    """The output of a role that declares no schema: its final answer, as text."""


@dataclass(frozen=True)
class OutputFormat:
    """The JSON schema a model is asked for, and whether it was wrapped to make it an object."""

    schema: dict[str, Any]
    wrapped: bool

    @classmethod
    def for_schema(cls, name: str) -> OutputFormat:
        schema = json_schema(name)
        if schema.get("type") == "object" and "properties" in schema:
            return cls(schema, wrapped=False)
        # A union or any other root is carried as {"output": ...}, its $defs kept at the root
        # where the refs point.
        inner = dict(schema)
        defs = inner.pop("$defs", None)
        wrapper: dict[str, Any] = {
            "type": "object",
            "properties": {WRAPPER_KEY: inner},
            "required": [WRAPPER_KEY],
            "additionalProperties": False,
        }
        if defs:
            wrapper["$defs"] = defs
        return cls(wrapper, wrapped=True)

    def option(self) -> dict[str, Any]:
        return {"type": "json_schema", "schema": self.schema}


def without_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by the definition it points at, and no
    `$defs`: some OpenAI-compatible servers (Gemini's among them) accept only a plain subset of
    JSON Schema for a function's parameters. A recursive schema is left as it is."""
    defs = schema.get("$defs") or {}

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                raise RecursionError(name)
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return {**walk(defs[name], (*seen, name)), **walk(rest, seen)}
        return {key: walk(value, seen) for key, value in node.items() if key != "$defs"}

    try:
        inlined: dict[str, Any] = walk(schema, ())
    except RecursionError:
        return schema
    return inlined


def parse_answer(name: str, fmt: OutputFormat, raw: object) -> BaseModel:
    """The role's output from what the model gave (an object, or JSON text of one); a ValueError
    naming the first problem when nothing validates."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"output is not JSON: {exc.msg}") from None
    candidates = [raw]
    if isinstance(raw, dict) and set(raw) == {WRAPPER_KEY}:
        unwrapped = raw[WRAPPER_KEY]
        candidates = [unwrapped] if fmt.wrapped else [raw, unwrapped]
    problems: list[str] = []
    for candidate in candidates:
        try:
            return parse_output(name, candidate)
        except (ValidationError, ValueError) as exc:
            problems.append(first_problem(exc))
    raise ValueError(f"output does not match {name}: {problems[-1]}")


def first_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"{where}: {first['msg']}{more}"
    return str(exc)


__all__ = [
    "WRAPPER_KEY",
    "FinalText",
    "OutputFormat",
    "first_problem",
    "parse_answer",
    "without_refs",
]
