"""The plainest TOML documents read without tomllib, which compiles its patterns when imported:
8 M instructions of a one-document `fixloop check`'s 575 M, for a settings file of a line.

`loads(text)` reads what a settings file mostly is, line by line: comments, `[table.headers]`
of bare keys, and `key = value` with a bare or quoted key, whose value is a string without
escapes (basic or literal), `true`, `false`, a plain decimal integer, or a one-line array of
those. Anything else (escapes, multi-line values, dotted keys, floats, dates, inline tables,
arrays of tables, a non-ASCII character, a key or table given twice) returns None, and the text
is read by tomllib: it words the errors, and reads the whole language. What it does read, it
reads as tomllib does (tests/documents/test_simple_toml.py compares the two).
"""

from __future__ import annotations

from typing import Any

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
_BLANK = " \t"


class _NotSimple(Exception):
    """The text is not of the plain kind read here: tomllib reads it."""


def loads(text: str) -> dict[str, Any] | None:
    """The document, as `tomllib.loads` gives it; None when it is not of the plain kind."""
    if not text.isascii() or "\r" in text:
        return None
    root: dict[str, Any] = {}
    table = root
    declared: set[tuple[str, ...]] = set()
    try:
        for written in text.split("\n"):
            if not written.replace("\t", " ").isprintable():
                return None  # control characters: an error tomllib words
            line = written.strip(_BLANK)
            if not line or line[0] == "#":
                continue
            if line[0] == "[":
                table = _header(line, root, declared)
                continue
            key, rest = _key(line)
            if rest[:1] != "=" or key in table:
                return None
            value, rest = _value(rest[1:].lstrip(_BLANK))
            _end(rest)
            table[key] = value
    except _NotSimple:
        return None
    return root


def _header(line: str, root: dict[str, Any], declared: set[tuple[str, ...]]) -> dict[str, Any]:
    close = line.find("]")
    if line[:2] == "[[" or close < 0:
        raise _NotSimple
    path = tuple(line[1:close].split("."))
    _end(line[close + 1 :])
    if path in declared or not all(part and _BARE.issuperset(part) for part in path):
        raise _NotSimple
    declared.add(path)
    table = root
    for part in path:
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            raise _NotSimple  # a table where a value is
    return table


def _key(line: str) -> tuple[str, str]:
    if line[0] in "\"'":
        key, rest = _string(line)
    else:
        end = next((index for index, char in enumerate(line) if char not in _BARE), len(line))
        key, rest = line[:end], line[end:]
        if not key:
            raise _NotSimple
    return key, rest.lstrip(_BLANK)


def _value(text: str) -> tuple[Any, str]:
    if text[:1] in ('"', "'"):
        return _string(text)
    if text[:1] == "[":
        items: list[Any] = []
        rest = text[1:].lstrip(_BLANK)
        while rest[:1] != "]":
            if rest[:1] == "[":
                raise _NotSimple  # nested arrays: left to tomllib (and its depth limit)
            item, rest = _value(rest)
            items.append(item)
            rest = rest.lstrip(_BLANK)
            if rest[:1] == ",":
                rest = rest[1:].lstrip(_BLANK)
            elif rest[:1] != "]":
                raise _NotSimple  # also an array that goes on on the next line
        return items, rest[1:]
    # What follows a value is read by the caller: `truex` and `1.5` leave `x` and `.5`, refused.
    for word, meaning in (("true", True), ("false", False)):
        if text.startswith(word):
            return meaning, text[len(word) :]
    sign = 1 if text[:1] == "-" else 0
    end = sign
    while end < len(text) and text[end] in _DIGITS:
        end += 1
    digits = text[sign:end]
    if digits and (digits == "0" or digits[0] != "0"):
        return int(text[:end]), text[end:]
    raise _NotSimple  # floats, dates, `+1`, `1_000`, `0x1`, inline tables, multi-line strings


def _string(text: str) -> tuple[str, str]:
    quote = text[0]
    if text[:3] == quote * 3:
        raise _NotSimple  # multi-line strings
    close = text.find(quote, 1)
    if close < 0 or (quote == '"' and "\\" in text[1:close]):
        raise _NotSimple  # unclosed, or escapes
    return text[1:close], text[close + 1 :]


def _end(rest: str) -> None:
    rest = rest.lstrip(_BLANK)
    if rest and rest[0] != "#":
        raise _NotSimple
