"""Argument forms shared by several commands."""

from __future__ import annotations

from pathlib import Path

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


def existing_directory(path: Path) -> Path:
    """A `--repo` that must exist, resolved; one line and exit 2 when it does not."""
    if not path.is_dir():
        raise FixloopError(Diagnostic(str(path), 1, 1, "usage", "no such directory"))
    return path.resolve()
