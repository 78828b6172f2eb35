"""Frontmatter values written by hand, so the key order and layout match GSD's documents.

A value that YAML would read as something else (a number, a date, `yes`, text with `:` or `#`) is
written as a JSON string, which is valid YAML and survives any character.
"""

from __future__ import annotations

import json
import re

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_PHASE_SLUG = re.compile(r"^[0-9]+(\.[0-9]+)?-[A-Za-z][A-Za-z0-9_.-]*$")  # `02-cart`: GSD's phase
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def scalar(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    if _PHASE_SLUG.match(value):  # digits, a dash, a word: a string to every YAML reader
        return value
    return json.dumps(value, ensure_ascii=False)


def one_line(text: str) -> str:
    """Collapse whitespace so a value cannot open a heading, a list or a fence in a report."""
    return " ".join(text.split())
