"""Argument forms shared by several commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

from fixloop.diagnostics import Diagnostic, FixloopError

# A string alias: _SubParsersAction is generic only to type checkers, not at run time.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_format_option(parser: argparse.ArgumentParser, *formats: str) -> None:
    """`--format text|json|…` with `--json` as its alias: one spelling for every command."""
    choices = ("text", *formats)
    parser.add_argument(
        "--format", choices=choices, default="text", help=f"output format ({'|'.join(choices)})"
    )
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )


def add_pack_options(parser: argparse.ArgumentParser) -> None:
    """How `check` and `validate` choose the pack and the rules it is held to."""
    parser.add_argument(
        "--bundled",
        action="store_true",
        help="the pack fixloop ships, instead of the one the current directory is in",
    )
    parser.add_argument(
        "--profile",
        choices=("claude", "fixloop"),
        help="claude: what Claude Code accepts (the default); fixloop: fixloop's house rules too",
    )


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    """`--select`, `--ignore`, `--exit-zero`: which rule and contract ids count, as in ruff."""
    ids = "RULE[,RULE…]"
    parser.add_argument(
        "--select",
        action="append",
        metavar=ids,
        help="report only these rule or contract ids (replaces the settings' select)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        metavar=ids,
        help="never report these ids (added to the settings' ignore)",
    )
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when errors are reported"
    )


def split_ids(values: list[str] | None) -> list[str] | None:
    """`--select a,b --select c` → [a, b, c]; None when the option was not given."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


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


def whole_number(text: str) -> int:
    """`--workers N`: a whole number of at least one, or argparse's usage error."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


class VerbParser(argparse.ArgumentParser):
    """A command whose first word may be a verb with a parser of its own (`fix-issue batch`,
    `bench efficacy validate`): that verb's parser reads the rest, anything else is the
    command's own, so an operand spelled like a verb is reached as `./batch`. Verbs rather than
    subcommands because the command itself keeps its positional operand."""

    verbs: dict[str, argparse.ArgumentParser]

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        verbs = getattr(self, "verbs", {})
        if args and args[0] in verbs:
            verb: argparse.ArgumentParser = verbs[args[0]]
            parsed: tuple[argparse.Namespace, list[str]] = verb.parse_known_args(
                args[1:], namespace
            )
            return parsed
        return super().parse_known_args(args, namespace)


def verb_parser_class(
    base: type[argparse.ArgumentParser], name: str
) -> type[argparse.ArgumentParser]:
    """`base` (the command line's own parser class: it remembers a usage error for `--json`)
    with the verbs' dispatch on top."""
    return type(name, (VerbParser, base), {})
