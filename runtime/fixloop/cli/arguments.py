"""Argument forms shared by several commands."""

from __future__ import annotations

from fixloop.diagnostics import Diagnostic, FixloopError


def parse_pairs(pairs: list[str], flag: str) -> dict[str, str]:
    """`KEY=VALUE` arguments of a repeatable flag; the value may itself contain `=`."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FixloopError(Diagnostic(flag, 1, 1, "usage", f"expected KEY=VALUE, got {pair!r}"))
        values[key] = value
    return values
