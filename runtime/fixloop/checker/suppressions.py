"""Silencing one finding in a bash block: `# fixloop: ignore[rule-id, other-id]`.

The comment silences findings of those rules (or contract ids) on its own line; on a line of its
own it silences the next line. A suppression that silences nothing is itself reported
(`unused-suppression`), so a comment cannot outlive the problem it was written for:

    rm -rf "$dir"/*   # fixloop: ignore[rm-rf-empty-var]   (dir is set three lines up)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import field

from fixloop.checker.document import CheckedDocument
from fixloop.diagnostics import Diagnostic, Severity
from fixloop.documents.spec_errors import did_you_mean
from fixloop.records import record

RULE = "unused-suppression"
_COMMENT = re.compile(r"#\s*fixloop:\s*ignore\[(?P<rules>[^\]]*)\]")


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
        for offset, text in enumerate(unit.block.content.splitlines()):
            match = _COMMENT.search(text)
            if match is None:
                continue
            line = unit.block.content_line + offset
            alone = not text[: match.start()].strip()
            rules = tuple(r.strip() for r in match["rules"].split(",") if r.strip())
            found.append(
                Suppression(document.display, line, match.start() + 1, line + alone, rules)
            )
    return found


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
