"""The argument forms several commands share: a verb's dispatch and `--workers N`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import ClassVar, NoReturn

import pytest

from fixloop.cli.arguments import VerbParser, verb_parser_class, whole_number


class _Recording(argparse.ArgumentParser):
    """Stands for the command line's own class: the verb class must keep what it adds."""

    errors: ClassVar[list[str]] = []

    def error(self, message: str) -> NoReturn:
        self.errors.append(message)
        raise SystemExit(2)


def _command() -> argparse.ArgumentParser:
    cls = verb_parser_class(_Recording, "CommandParser")
    parser = cls(prog="tool run")
    parser.add_argument("operand", type=Path)
    parser.add_argument("--workers", type=whole_number, default=1)
    verb = _Recording(prog="tool run batch")
    verb.add_argument("jobs")
    verb.add_argument("--out")
    verb.set_defaults(action="batch")
    assert isinstance(parser, VerbParser)
    parser.verbs = {"batch": verb}
    return parser


def test_a_verb_first_is_read_by_the_verbs_parser() -> None:
    args = _command().parse_args(["batch", "jobs.jsonl", "--out", "o"])
    assert (args.action, args.jobs, args.out) == ("batch", "jobs.jsonl", "o")
    assert not hasattr(args, "operand")


def test_anything_else_is_the_commands_own_and_the_verb_spelled_as_a_path_is_an_operand() -> None:
    args = _command().parse_args(["./batch", "--workers", "3"])
    assert (args.operand, args.workers) == (Path("batch"), 3)
    assert not hasattr(args, "action")
    later = _command().parse_args(["issue.md"])
    assert later.operand == Path("issue.md")


def test_the_verbs_usage_errors_and_the_bases_behaviour_are_kept() -> None:
    _Recording.errors.clear()
    with pytest.raises(SystemExit):
        _command().parse_args(["batch", "--out", "o"])
    assert _Recording.errors == ["the following arguments are required: jobs"]
    with pytest.raises(SystemExit):
        _command().parse_args(["x", "--workers", "0"])
    assert _Recording.errors[-1] == "argument --workers: expected a whole number >= 1, got '0'"


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5", ""])
def test_whole_number_refuses_what_is_not_one_or_more(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number >= 1"):
        whole_number(text)


def test_whole_number_reads_one_or_more() -> None:
    assert [whole_number(t) for t in ("1", "12")] == [1, 12]
