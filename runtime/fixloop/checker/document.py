"""A document under check: its bash blocks parsed, placed in steps, and turned into events.

Which blocks are bash, how steps are marked (`## Title {#id}` or `<step name="id">`), and which
steps or labelled sections are "finally" (run on every path) come from the document's `checker:`
declaration, so packs in other house styles are read without changing the checker. A bold label
right before a fence (`**Cleanup tail:**`) names the block, and `checker.finally.labels` can make
such a block a finally section (by its words: `cleanup` finds `**Cleanup tail:**`), as can the
fence's own word, ```` ```bash finally ````.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from fixloop.checker.events import CommandEvent, extract, visit
from fixloop.checker.language import Contracts, load_contracts, words_in
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Function, Node_, Pos, Script
from fixloop.diagnostics import Diagnostic
from fixloop.documents.blocks import FencedBlock, MarkdownDocument, StepStyle, parse_markdown
from fixloop.documents.config import Profile
from fixloop.documents.source import SourceDocument

_BOLD_LABEL = re.compile(r"^\s*(?:[-*]\s+|\d+\.\s+)?\*\*(?P<label>[^*]+?)\s*:?\s*\*\*")
_ids = itertools.count(1)


@dataclass
class Unit:
    block: FencedBlock
    script: Script
    step: str | None
    label: str | None
    finally_: bool
    events: list[CommandEvent]
    by_node: dict[int, list[CommandEvent]]

    @cached_property
    def nodes(self) -> list[tuple[Node_, bool]]:
        """Every node with its condition context (`events.visit`), walked once for all rules."""
        return visit(self.script.body)


@dataclass
class CheckedDocument:
    source: SourceDocument
    kind: str  # workflow | agent | command | document
    contracts: Contracts
    markdown: MarkdownDocument
    units: list[Unit] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Path-analysis summaries of shell runs without watched commands, shared by all contracts.
    summaries: dict[tuple[int, ...], tuple[bool, bool]] = field(default_factory=dict)
    scans: dict[tuple[int, ...], tuple[dict[str, Function], set[str]]] = field(default_factory=dict)
    # Event ids matching each pattern text, shared by all contracts of the document.
    matched: dict[str, list[int]] = field(default_factory=dict)
    # A word's shape → the shapes it may stand for (static values resolved), once per document.
    forms: Callable[[str], Sequence[str]] | None = None
    by_name: dict[str, list[CommandEvent]] = field(default_factory=dict)
    # Event id → every form of its words after the name: the cheap pre-test of matching.
    word_forms: dict[int, frozenset[str]] = field(default_factory=dict)
    profile: Profile = Profile.CLAUDE

    @property
    def display(self) -> str:
        return self.source.display

    @property
    def runner(self) -> bool:
        """Does fixloop's runner execute this document (a step's blocks in one shell, under
        `set -euo pipefail`, inputs as environment variables)? `checker.runner` says so; by
        default the workflows of a pack under the fixloop profile."""
        declared = self.contracts.checker.runner
        if declared is not None:
            return declared
        return self.kind == "workflow" and self.profile is Profile.FIXLOOP

    @property
    def events(self) -> list[CommandEvent]:
        return [e for u in self.units for e in u.events]

    @property
    def step_names(self) -> list[str]:
        return [s.name for s in self.markdown.steps]

    def step_line(self, name: str) -> int:
        step = self.markdown.step(name)
        return step.line if step else 1

    @cached_property
    def inputs(self) -> set[str]:
        declared = self.source.metadata.get("inputs")
        names = set(declared) if isinstance(declared, dict) else set()
        return names | set(self.contracts.checker.inputs)

    @cached_property
    def outputs(self) -> set[str]:
        declared = self.source.metadata.get("outputs")
        return set(declared) if isinstance(declared, dict) else set()

    @property
    def agents(self) -> list[str]:
        declared: Any = self.source.metadata.get("agents")
        if self.kind == "command":
            declared = (self.source.metadata.get("fixloop") or {}).get("agents")
        return [str(a) for a in declared] if isinstance(declared, list) else []


def _label_before(lines: list[str], block: FencedBlock) -> str | None:
    index = block.fence_line - 2
    while index >= 0 and not lines[index].strip():
        index -= 1
    if index < 0:
        return None
    match = _BOLD_LABEL.match(lines[index])
    return match["label"].strip() if match else None


def _origin(lines: list[str], block: FencedBlock) -> Pos:
    row = block.content_line - 1
    first = block.content.split("\n", 1)[0]
    indent = 0
    if row < len(lines) and first and lines[row].endswith(first):
        indent = len(lines[row]) - len(first)
    return Pos(row, indent)


def check_document(
    source: SourceDocument,
    kind: str,
    base: Path | None = None,
    profile: Profile = Profile.CLAUDE,
) -> CheckedDocument:
    contracts, diagnostics = load_contracts(source, base)
    checker = contracts.checker
    markdown = parse_markdown(source, StepStyle(checker.steps), checker.step_tag)
    document = CheckedDocument(
        source, kind, contracts, markdown, diagnostics=diagnostics, profile=profile
    )
    shells = {s.lower() for s in checker.shell}
    finally_steps = set(checker.finally_.steps)
    finally_labels = checker.finally_.labels
    lines = source.text.splitlines()
    for index, block in enumerate(markdown.blocks):
        if block.lang not in shells and not ("" in shells and not block.info.strip()):
            continue
        script = parse_bash(block.content, _origin(lines, block))
        label = _label_before(lines, block)
        finally_ = (
            block.step in finally_steps
            or "finally" in block.info.split()[1:]
            or (label is not None and any(words_in(w, label) for w in finally_labels))
        )
        events, by_node = extract(
            script.body,
            source.display,
            block.step,
            block=index,
            finally_=finally_,
            first_id=next(_ids) * 100_000,
        )
        document.units.append(Unit(block, script, block.step, label, finally_, events, by_node))
    return document
