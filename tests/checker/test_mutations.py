"""Proof that every contract of every document can fail (issue 3, item 6).

For each contract of fixloop's own pack, copies of its document are mutated the way real edits go
wrong: the two commands swapped, one deleted (replaced by `true`), one duplicated, one moved out of
its guard, a forbidden command added to a brief, an `exit` inserted before a cleanup. A mutation
counts when the checker reports THAT contract at the line where the mutation put the problem. A
contract that no mutation breaks is a defect of the contract, and fails this test.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fixloop.checker.checking import Library, check_document_rules
from fixloop.checker.document import CheckedDocument
from fixloop.checker.evaluate import Evaluator
from fixloop.checker.events import CommandEvent
from fixloop.checker.language import Contract, Operand
from fixloop.checker.patterns import WRITE

from .conftest import copy_pack


@dataclass(frozen=True)
class Mutation:
    description: str
    path: Path
    text: str
    expected_line: int


def _span(event: CommandEvent) -> tuple[int, int] | None:
    """0-based columns of the command's text on its line, when it fits on one line."""
    first, last = event.argv[0], event.argv[-1]
    if first.pos.row != last.pos.row or "\n" in last.text:
        return None
    start = event.argv[1].pos.col if event.name == WRITE else first.pos.col
    return start, last.pos.col + len(last.text)


def _command_text(event: CommandEvent, lines: list[str]) -> str | None:
    span = _span(event)
    if span is None:
        return None
    text = lines[event.line - 1][span[0] : span[1]]
    return f": > {text}" if event.name == WRITE else text


def _neutralize(lines: list[str], event: CommandEvent) -> list[str] | None:
    span = _span(event)
    if span is None and event.name != WRITE:
        # A command over several lines: replacing its name keeps the arguments valid bash.
        span = (event.argv[0].pos.col, event.argv[0].pos.col + len(event.argv[0].text))
    if span is None:
        return None
    line = lines[event.line - 1]
    replacement = "/dev/null" if event.name == WRITE else "true"
    changed = list(lines)
    changed[event.line - 1] = line[: span[0]] + replacement + line[span[1] :]
    return changed


def _insert(lines: list[str], before_line: int, text: str) -> list[str]:
    anchor = lines[before_line - 1] if before_line - 1 < len(lines) else ""
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    return [*lines[: before_line - 1], indent + text + "\n", *lines[before_line - 1 :]]


class Mutator:
    def __init__(
        self, root: Path, document: CheckedDocument, contract: Contract, library: Library
    ) -> None:
        self.root = root
        self.document = document
        self.contract = contract
        self.evaluator = Evaluator(document, library.get)
        self.scope, _ = self.evaluator.scope(contract)

    def events(self, operand: Operand) -> list[CommandEvent]:
        return self.evaluator.matching(self.contract, operand, self.scope)

    @staticmethod
    def lines(path: Path) -> list[str]:
        return path.read_text(encoding="utf-8").splitlines(keepends=True)

    def delete_all(
        self, operand: Operand, what: str, expected: int | None = None
    ) -> Iterator[Mutation]:
        found = self.events(operand)
        if not found:
            return
        found = [e for e in found if e.path == found[0].path]  # one file per mutation
        path = Path(found[0].path)
        lines: list[str] | None = self.lines(self._real(path))
        for event in found:
            lines = _neutralize(lines, event) if lines is not None else None
        if lines is not None:
            line = expected if expected is not None else self.scope.anchor[1]
            yield Mutation(f"delete {what}", self._real(path), "".join(lines), line)

    def move_before(
        self, moved: Operand, anchor: Operand, expect_anchor: bool
    ) -> Iterator[Mutation]:
        """Put the first `moved` command right before the first `anchor` command."""
        moved_events, anchor_events = self.events(moved), self.events(anchor)
        if not moved_events or not anchor_events:
            return
        event, target = moved_events[0], anchor_events[0]
        path = self._real(Path(event.path))
        if path != self._real(Path(target.path)):
            return
        lines = self.lines(path)
        text = _command_text(event, lines)
        cleared = _neutralize(lines, event)
        if text is None or cleared is None:
            return
        changed = _insert(cleared, target.line, text)
        expected = target.line + 1 if expect_anchor else target.line
        yield Mutation(f"move `{text}` before line {target.line}", path, "".join(changed), expected)

    def move_out_of_guard(self, moved: Operand) -> Iterator[Mutation]:
        """Put the first `moved` command at the top of its bash block, before any guard."""
        for event in self.events(moved)[:1]:
            path = self._real(Path(event.path))
            unit = next(u for d, units in self.scope.parts for u in units if event in u.events)
            first = unit.block.content_line
            lines = self.lines(path)
            text = _command_text(event, lines)
            cleared = _neutralize(lines, event)
            if text is None or cleared is None or event.line == first:
                return
            yield Mutation(
                f"move `{text}` out of its guard",
                path,
                "".join(_insert(cleared, first, text)),
                first,
            )

    def duplicate(self, operand: Operand) -> Iterator[Mutation]:
        for event in self.events(operand)[:1]:
            path = self._real(Path(event.path))
            lines = self.lines(path)
            text = _command_text(event, lines)
            if text is not None:
                changed = _insert(lines, event.line, text)
                yield Mutation(f"duplicate `{text}`", path, "".join(changed), event.line + 1)

    def insert_forbidden(self, operand: Operand) -> Iterator[Mutation]:
        pattern = self.contract.patterns(operand)[0]
        text = pattern.text if not pattern.is_write else f": {pattern.text}"
        for document, units in self.scope.parts:
            for unit in units[:1]:
                path = document.source.path
                line = unit.block.content_line
                changed = _insert(self.lines(path), line, text.replace("*", "x"))
                yield Mutation(f"add `{text}`", path, "".join(changed), line)
                return

    def exit_before(self, operand: Operand, culprit: Operand) -> Iterator[Mutation]:
        ends, starts = self.events(operand), self.events(culprit)
        if not ends or not starts:
            return
        path = self._real(Path(ends[0].path))
        changed = _insert(self.lines(path), ends[0].line, "exit 1")
        start = starts[0]
        expected = start.line + 1 if start.line >= ends[0].line else start.line
        yield Mutation(f"exit before line {ends[0].line}", path, "".join(changed), expected)

    def reword(self, sentence: str) -> Iterator[Mutation]:
        """The sentence edited away, however it is wrapped (its first word dropped)."""
        path = self.document.source.path
        text = path.read_text(encoding="utf-8")
        words = sentence.split()
        found = re.search(r"\s+".join(map(re.escape, words)), text, flags=re.IGNORECASE)
        if found is None:
            return
        changed = text[: found.start()] + " ".join(words[1:]) + text[found.end() :]
        yield Mutation(f"reword {sentence!r}", path, changed, self.scope.anchor[1])

    def _real(self, shown: Path) -> Path:
        return shown if shown.is_absolute() else self.root / shown

    def mutations(self) -> Iterator[Mutation]:
        spec = self.contract.spec
        if spec.order is not None:
            for first, then in itertools.pairwise(spec.order):
                yield from self.move_before(then, first, expect_anchor=not spec.strict)
                yield from self.delete_all(first, "the earlier command")
        elif spec.count is not None:
            yield from self.duplicate(spec.count)
            yield from self.delete_all(spec.count, "every occurrence")
        elif spec.guarded is not None and spec.by is not None:
            yield from self.move_out_of_guard(spec.guarded)
            guarded = self.events(spec.guarded)
            if guarded:
                yield from self.delete_all(spec.by, "the guard", guarded[0].line)
        elif spec.forbidden is not None:
            yield from self.insert_forbidden(spec.forbidden)
        elif spec.required is not None:
            items = [spec.required] if isinstance(spec.required, str) else spec.required
            for item in items:
                yield from self.delete_all(item, f"`{item}`")
        elif spec.says is not None:
            for sentence in [spec.says] if isinstance(spec.says, str) else spec.says:
                yield from self.reword(sentence)
        elif spec.cleanup is not None and spec.after is not None:
            yield from self.exit_before(spec.cleanup, spec.after)
            yield from self.delete_all(spec.cleanup, "the cleanup")


def _contracts() -> list[tuple[str, str]]:
    from tests.conftest import REPO_ROOT

    library = Library(None)
    found = []
    for folder in ("workflows", "agents", "commands"):
        for path in sorted((REPO_ROOT / folder).glob("*.md")):
            document = library.get(path)
            assert document is not None
            found += [(f"{folder}/{path.name}", c.id) for c in document.contracts.contracts]
    return found


CONTRACTS = _contracts()


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_pack(tmp_path_factory.mktemp("pack"))


def test_the_pack_declares_contracts_for_every_seed_workflow() -> None:
    documents = {document for document, _ in CONTRACTS}
    assert {
        "workflows/git-protocol.md",
        "workflows/review-fix.md",
        "workflows/fix-findings.md",
        "workflows/execute-wave.md",
        "workflows/fix-engine.md",
    } <= documents


@pytest.mark.parametrize(
    ("document", "contract_id"), CONTRACTS, ids=[f"{d}::{c}" for d, c in CONTRACTS]
)
def test_some_mutation_breaks_the_contract_at_the_right_line(
    pack: Path, document: str, contract_id: str
) -> None:
    library = Library(pack)
    checked = library.get(pack / document)
    assert checked is not None
    contract = next(c for c in checked.contracts.contracts if c.id == contract_id)
    assert not [d for d in check_document_rules(checked, library) if d.rule == contract_id], (
        "the unmutated document must keep the contract"
    )
    tried: list[str] = []
    for mutation in Mutator(pack, checked, contract, library).mutations():
        original = mutation.path.read_text(encoding="utf-8")
        try:
            mutation.path.write_text(mutation.text, encoding="utf-8")
            fresh = Library(pack)
            mutated = fresh.get(pack / document)
            assert mutated is not None
            reported = [d for d in check_document_rules(mutated, fresh) if d.rule == contract_id]
        finally:
            mutation.path.write_text(original, encoding="utf-8")
        lines = sorted({d.line for d in reported})
        expected = mutation.expected_line
        tried.append(
            f"{mutation.description}: reported at {lines or 'no line'}, expected {expected}"
        )
        if expected in lines:
            return
    pytest.fail(f"no mutation breaks {contract_id} where expected:\n  " + "\n  ".join(tried))
