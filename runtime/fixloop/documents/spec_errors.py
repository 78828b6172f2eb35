"""pydantic validation errors → located diagnostics, in the words of the file's author.

One formatter for every typed YAML or JSON a user writes (frontmatter, manifests, contract
declarations, scripts). pydantic speaks of "inputs" and "instances"; a user wrote keys and values,
so the messages say `unknown key 'wen' (did you mean 'when'?)`, `expected text or a list, got the
number 5`, `required key 'description' is missing`. pydantic reports a union once per member it
tried (`str`, `list[str]`, `ScopeSpec` …): those become one message, or, when the value had the
shape of one member, that member's own problems only.
"""

from __future__ import annotations

import datetime
import types
import typing
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from fixloop.diagnostics import Diagnostic, did_you_mean
from fixloop.documents.located_yaml import KeyPath, line_of

# Imported where a problem is worded: the plain declarations' check needs no pydantic at all
# (plain_models.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
}


def spec_diagnostics(
    exc: ValidationError,
    *,
    model: type[BaseModel],
    data: Any,
    display: str,
    rule: str,
    key_lines: Mapping[KeyPath, int],
    prefix: KeyPath = (),
) -> list[Diagnostic]:
    """One diagnostic per problem of `data` (the value at `prefix` in its file) against `model`."""
    found: list[Diagnostic] = []
    for loc, message in _messages(exc.errors(), data, _vocabulary(model), prefix):
        where = (*prefix, *loc)
        found.append(Diagnostic(display, line_of(dict(key_lines), where), 1, rule, message))
    return found


def key_path_text(path: Iterable[str | int]) -> str:
    """`contracts[0].in`: a key path as the author reads it in the file."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _messages(
    errors: list[Any], data: Any, vocabulary: frozenset[str], prefix: KeyPath
) -> list[tuple[KeyPath, str]]:
    # (clean location, where a union member was named, error)
    cleaned = [(*_clean(tuple(error["loc"]), data, error["type"]), error) for error in errors]
    groups: dict[KeyPath, list[tuple[KeyPath, int | None, Any]]] = {}
    for loc, union_at, error in cleaned:
        key = loc[:union_at] if union_at is not None else loc
        groups.setdefault(key, []).append((loc, union_at, error))
    found: list[tuple[KeyPath, str]] = []
    for key, members in groups.items():
        if all(union_at is None for _, union_at, _ in members):
            found += [(loc, _one(loc, error, vocabulary, prefix)) for loc, _, error in members]
            continue
        deeper = [(loc, error) for loc, _, error in members if len(loc) > len(key)]
        if deeper:  # the value had the shape of one member: its own problems say what is wrong
            found += [(loc, _one(loc, error, vocabulary, prefix)) for loc, error in deeper]
            continue
        expected = _unique(_expected(error) for _, _, error in members)
        given = _given(members[0][2].get("input"))
        message = f"expected {' or '.join(expected)}, got {given}"
        found.append((key, _at((*prefix, *key), message)))
    return found


def _clean(loc: KeyPath, data: Any, kind: str) -> tuple[KeyPath, int | None]:
    """The location as keys of the data, without pydantic's union member names."""
    kept: list[str | int] = []
    union_at: int | None = None
    current = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        in_mapping = isinstance(current, Mapping) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_mapping or in_list:
            kept.append(part)
            current = current[part]
        elif last and kind in ("missing", "extra_forbidden"):
            kept.append(part)
        else:
            union_at = len(kept) if union_at is None else union_at
    return tuple(kept), union_at


def _at(loc: KeyPath, message: str) -> str:
    where = key_path_text(loc)
    return f"{where}: {message}" if where else message


def _one(loc: KeyPath, error: Any, vocabulary: frozenset[str], prefix: KeyPath) -> str:
    kind = error["type"]
    loc = (*prefix, *loc)
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return _at(loc[:-1], f"required key {str(loc[-1])!r} is missing")
    if kind == "extra_forbidden":
        key = str(loc[-1])
        return _at(loc[:-1], f"unknown key {key!r}{did_you_mean(key, vocabulary)}")
    if kind in ("literal_error", "enum"):
        return _at(loc, f"unknown value {error.get('input')!r}; expected {ctx.get('expected')}")
    if kind in _EXPECTED:
        return _at(loc, f"expected {_EXPECTED[kind]}, got {_given(error.get('input'))}")
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        least = "at least" if kind == "greater_than_equal" else "more than"
        return _at(loc, f"must be {least} {bound}, got {_given(error.get('input'))}")
    if kind == "string_too_short":
        return _at(loc, "must not be empty")
    if kind == "too_short":
        return _at(loc, f"needs at least {ctx.get('min_length')} item(s)")
    text = str(error.get("msg", "invalid value"))
    return _at(loc, text.removeprefix("Value error, ").removeprefix("Assertion failed, "))


def _expected(error: Any) -> str:
    if error["type"] in ("literal_error", "enum"):
        return str((error.get("ctx") or {}).get("expected", "another value"))
    return _EXPECTED.get(error["type"], "another value")


def _given(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, datetime.date):
        return f"the date {value.isoformat()}"
    return type(value).__name__


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


@cache
def _vocabulary(model: type[BaseModel]) -> frozenset[str]:
    """Every key `model` and the models inside it know, by field name and alias."""
    names: set[str] = set()
    pending: list[type[BaseModel]] = [model]
    visited: set[type[BaseModel]] = set()
    while pending:
        current = pending.pop()
        if current in visited:
            continue
        visited.add(current)
        for name, info in current.model_fields.items():
            names.add(name)
            if info.alias:
                names.add(info.alias)
            pending += _models_in(info.annotation)
    return frozenset(names)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    from pydantic import BaseModel

    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            found.append(current)
        elif typing.get_origin(current) is not None or isinstance(current, types.UnionType):
            stack += typing.get_args(current)
    return found
