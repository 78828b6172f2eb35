"""Diagnostics: one problem, located at file:line:col, with a stable rule id.

Every layer (pack validation, the contract checker, workflow input checks) reports problems as
`Diagnostic` values so that the CLI prints them the same way and exit codes stay consistent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import field
from enum import StrEnum
from pathlib import Path

from fixloop.records import record


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


# A record, not a dataclass: a dataclass compiles its ten methods at import, 1 ms of every
# command that can report a problem (bench/startup.py).
@record(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    col: int
    rule: str
    message: str
    severity: Severity = field(default=Severity.ERROR, compare=False)

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.rule}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "rule": self.rule,
            "message": self.message,
            "severity": str(self.severity),
        }


# Resolutions remembered during a check: one memo per check running (a check within a check
# starts its own), none outside one. `Path.resolve` is a Python loop with an `lstat` per
# component, and a check resolves the same few paths dozens of times; its files do not move while
# it runs. Outside a check (a long-lived process: the tests, the pytest plugin) every call
# resolves afresh, so nothing stale is ever seen.
_RESOLUTIONS: list[dict[Path, Path | None]] = []


@contextmanager
def resolutions_remembered() -> Iterator[None]:
    """Within the block, each path is resolved once; they are forgotten when it ends."""
    _RESOLUTIONS.append({})
    try:
        yield
    finally:
        _RESOLUTIONS.pop()


def resolution(path: Path) -> Path | None:
    """`path.resolve()`, or None when a symbolic link loops."""
    memo = _RESOLUTIONS[-1] if _RESOLUTIONS else None
    if memo is not None and path in memo:
        return memo[path]
    try:
        found: Path | None = path.resolve()
    except (RuntimeError, OSError):
        found = None
    if memo is not None:
        memo[path] = found
        if found is not None:  # what a path resolves to resolves to itself
            memo[found] = found
    return found


def display_path(path: Path, base: Path | None = None) -> str:
    """A path as a user should read it: relative to `base` (or the cwd) when inside it."""
    anchor = base or Path()  # Path(): the cwd
    anchor = resolution(anchor) or anchor.absolute()  # a base that loops is taken as spelt
    for spelling in _spellings(path):
        if spelling.is_relative_to(anchor):
            return str(spelling.relative_to(anchor))
    return str(path)  # outside `base`


def _spellings(path: Path) -> list[Path]:
    """`path` resolved, then as its resolved folder and its own name: a link that loops, or that
    leads out of `base` (to `/dev/zero`, say), is spelt where the link is, so that it reads the
    same whichever way the user spelt the path that led to it."""
    folder = resolution(path.absolute().parent)
    if folder is None:  # a loop in the folders above
        return []
    where = folder / path.name
    found = resolution(path)
    return [where] if found is None else [found, where]  # None: a symbolic link loop


class FixloopError(Exception):
    """An expected failure carrying diagnostics; the CLI prints them, never a traceback."""

    def __init__(self, diagnostics: Iterable[Diagnostic] | Diagnostic, exit_code: int = 2) -> None:
        self.diagnostics = (
            [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        )
        self.exit_code = exit_code
        super().__init__("\n".join(d.format() for d in self.diagnostics))


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `known`, or nothing: one wording everywhere a
    key, a rule id or a contract id is misspelt."""
    import difflib  # here: only a misspelling needs it, and every command imports this module

    close = difflib.get_close_matches(word, sorted(set(known)), n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def dumps(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2)
