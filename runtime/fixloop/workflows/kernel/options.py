"""A workflow's options model is the one source of its command line: a field that is an argument
says so where it is declared, with its flag, default and help text.

    @dataclass(frozen=True)
    class StampOptions:
        note: Path = option(type=Path, help="the note to stamp")           # positional
        repo: Path = repo_option()
        mark: str = option("--mark", default="ok", metavar="WORD", help="what to stamp")

A field without `option()` is not on the command line (an executor pool, hidden tests): only a
caller of the API sets it. `fixloop.cli.workflow_command` builds every registered workflow's
arguments from its model and hands the parsed values back to it by field name. A converter
(`type`) raises ValueError with a short reason; the command line turns it into one usage line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any

from fixloop.runs.state import LATEST

KEY = "fixloop.option"


@dataclass(frozen=True)
class Option:
    """How one field appears on the command line."""

    flag: str | None  # None: a positional argument, named after the field (or `metavar`)
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    type: Callable[[str], Any] | None = None
    nargs: str | None = None
    const: Any = None
    action: str | None = None  # store_true, store_const, append; None: store a value


@dataclass(frozen=True)
class Argument:
    """A field of an options model that is an argument: its name, default and `Option`."""

    name: str
    default: Any  # MISSING: the argument is required
    option: Option


def option(
    flag: str | None = None,
    *,
    help: str,
    default: Any = MISSING,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    type: Callable[[str], Any] | None = None,
    nargs: str | None = None,
    const: Any = None,
    action: str | None = None,
) -> Any:
    """A dataclass field that is also a command-line argument."""
    spec = Option(flag, help, metavar, choices, type, nargs, const, action)
    return dataclasses.field(default=default, metadata={KEY: spec})


def repo_option() -> Any:
    """`--repo`: every workflow works in one repository, the current directory by default."""
    return option("--repo", default=Path(), type=Path, help="the repository (default: .)")


def resume_option(what: str) -> Any:
    """`--resume [RUN_ID]`: continue a stopped run of the same input."""
    return option(
        "--resume",
        nargs="?",
        const=LATEST,
        default=None,
        metavar="RUN_ID",
        help=f"continue a stopped run of the same {what} (default: the latest)",
    )


def arguments(model: type[Any]) -> list[Argument]:
    """The fields of `model` that are arguments, in declaration order."""
    found = []
    for field in dataclasses.fields(model):
        spec = field.metadata.get(KEY)
        if isinstance(spec, Option):
            found.append(Argument(field.name, field.default, spec))
    return found


def positive(text: str) -> int:
    """A whole number >= 1 (a wave, a count of executors)."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"expected 1 or more, got {value}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise ValueError(f"expected seconds >= 0, got {text!r}")
    return value


__all__ = [
    "LATEST",
    "Argument",
    "Option",
    "arguments",
    "option",
    "positive",
    "repo_option",
    "resume_option",
    "seconds",
]
