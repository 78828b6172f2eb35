"""Silencing one finding in a bash block: `# fixloop: ignore[rule-id, other-id]`.

The comment silences findings of those rules (or contract ids) on its own line; on a line of its
own it silences the next line. A suppression that silences nothing is itself reported
(`unused-suppression`), so a comment cannot outlive the problem it was written for:

    rm -rf "$dir"/*   # fixloop: ignore[rm-rf-empty-var]   (dir is set three lines up)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import field
from functools import cache

from fixloop.checker.document import CheckedDocument
from fixloop.diagnostics import Diagnostic, Severity, did_you_mean
from fixloop.records import record

RULE = "unused-suppression"
_MARK = "ignore["  # in every suppression: a block without it holds none, and is not searched


# The two regexes are compiled on first need: most blocks hold no suppression.
@cache
def _comment() -> re.Pattern[str]:
    return re.compile(r"#\s*fixloop:\s*ignore\[(?P<rules>[^\]]*)\]")


@cache
def _break() -> re.Pattern[str]:
    """Where `str.splitlines` breaks a line. The two characters past U+00FF in a class of their
    own: in one class with the others, compiling it (a table of every code point) was 0.5 ms."""
    return re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85]|[\u2028\u2029]")


@record
class Suppression:
    path: str
    line: int  # where the comment is
    col: int
    target: int  # the line it silences
    rules: tuple[str, ...]
    used: set[str] = field(default_factory=set)


def suppressions(document: CheckedDocument) -> list[Suppression]:
    found: list[Suppression] = []
    for unit in document.units:
        if _MARK not in unit.block.content:
            continue
        for offset, text in _lines_naming_fixloop(unit.block.content):
            match = _comment().search(text)
            if match is None:
                continue
            line = unit.block.content_line + offset
            alone = not text[: match.start()].strip()
            rules = tuple(r.strip() for r in match["rules"].split(",") if r.strip())
            found.append(
                Suppression(document.display, line, match.start() + 1, line + alone, rules)
            )
    return found


def _lines_naming_fixloop(content: str) -> Iterator[tuple[int, str]]:
    """The lines holding `fixloop`, with their index, as `enumerate(content.splitlines())` has
    them: a list of every line of a large block, made while every tree of the check is alive,
    was the check's peak of memory."""
    row, start = 0, 0  # the line being looked at, and where it starts
    breaks = _break()
    at = content.find("fixloop")
    while at != -1:
        for found in breaks.finditer(content, start, at):
            row, start = row + 1, found.end()
        end = breaks.search(content, at)
        yield row, content[start : end.start() if end else len(content)]
        if end is None:
            return
        row, start = row + 1, end.end()
        at = content.find("fixloop", start)


def apply(
    diagnostics: Iterable[Diagnostic], documents: Iterable[CheckedDocument], known: set[str]
) -> list[Diagnostic]:
    """The diagnostics no suppression silences, and one warning per suppression left unused."""
    table: dict[tuple[str, int], list[Suppression]] = {}
    every: list[Suppression] = []
    for document in documents:
        for suppression in suppressions(document):
            table.setdefault((suppression.path, suppression.target), []).append(suppression)
            every.append(suppression)
    kept: list[Diagnostic] = []
    for diagnostic in diagnostics:
        here = table.get((diagnostic.path, diagnostic.line), [])
        silencing = [s for s in here if diagnostic.rule in s.rules]
        for suppression in silencing:
            suppression.used.add(diagnostic.rule)
        if not silencing:
            kept.append(diagnostic)
    for suppression in every:
        for rule in suppression.rules:
            if rule in suppression.used:
                continue
            why = (
                "silences nothing here"
                if rule in known
                else f"names no rule fixloop reports{did_you_mean(rule, known)}"
            )
            kept.append(
                Diagnostic(
                    suppression.path,
                    suppression.line,
                    suppression.col,
                    RULE,
                    f"`fixloop: ignore[{rule}]` {why}; remove it",
                    Severity.WARNING,
                )
            )
    return kept
