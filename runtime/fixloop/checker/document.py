"""A document under check: its bash blocks parsed, placed in steps, and turned into events.

Which blocks are bash, how steps are marked (`## Title {#id}` or `<step name="id">`), and which
steps or labelled sections are "finally" (run on every path) come from the document's `checker:`
declaration, so packs in other house styles are read without changing the checker. A bold label
right before a fence (`**Cleanup tail:**`) names the block, and `checker.finally.labels` can make
such a block a finally section (by its words: `cleanup` finds `**Cleanup tail:**`), as can the
fence's own word, ```` ```bash finally ````.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.checker.events import CommandEvent, Visited, extract, visit
from fixloop.checker.language import Contracts, load_contracts, words_in
from fixloop.checker.library import StepLibrary, load_library, not_found, sourced_path
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Command, Node_, Pos, Script
from fixloop.checker.worlds import RunFacts

if TYPE_CHECKING:
    from fixloop.checker.variables import Scope
from fixloop.diagnostics import Diagnostic
from fixloop.documents.blocks import FencedBlock, MarkdownDocument, StepStyle, parse_markdown
from fixloop.documents.config import Profile
from fixloop.documents.discovery import find_pack_root
from fixloop.documents.interface import StepInterface
from fixloop.documents.source import SourceDocument
from fixloop.records import record

_BOLD_LABEL = re.compile(r"^\s*(?:[-*]\s+|\d+\.\s+)?\*\*(?P<label>[^*]+?)\s*:?\s*\*\*")


@record
class Unit:
    block: FencedBlock
    script: Script
    step: str | None
    label: str | None
    finally_: bool
    path: str  # the document as diagnostics name it
    index: int  # the block's place among the document's blocks
    # Step libraries this block's shell has sourced (here or in an earlier block of its step).
    libraries: list[StepLibrary] = field(default_factory=list)
    # The library helpers the block calls: their commands are events of the block too.
    helpers: list[tuple[StepLibrary, str]] = field(default_factory=list)

    @cached_property
    def nodes(self) -> Visited:
        """Every node with its condition context (`events.visit`), walked once for all rules."""
        return visit(self.script.body)

    @cached_property
    def commands(self) -> list[Command]:
        """The commands among `nodes`, in walk order: all that most rules look at."""
        return [node for node in self.nodes.nodes if isinstance(node, Command)]

    @cached_property
    def _extracted(self) -> tuple[list[CommandEvent], dict[int, Node_], list[tuple[str, str]]]:
        # Made when a contract first asks: only contracts read events, and a block's events
        # are an object per command, as large as the block's statements.
        assigned: list[tuple[str, str]] = []
        events, owners = extract(
            self.script.body,
            self.path,
            self.step,
            block=self.index,
            finally_=self.finally_,
            alone=assigned,
        )
        for library, name in self.helpers:
            helper = library.helper(name)
            events = events + helper.events
            owners = {**owners, **helper.owners}
        return events, owners, assigned

    @property
    def assigned(self) -> list[tuple[str, str]]:
        """Name and shape of each assignment standing alone (`x=1`) in the block itself, found
        with its events: those `iter_commands` reaches, not its helpers'."""
        return self._extracted[2]

    @property
    def events(self) -> list[CommandEvent]:
        return self._extracted[0]

    @cached_property
    def by_node(self) -> dict[int, list[CommandEvent]]:
        """The events of each node (by `id`), in order, for path analysis: made when first
        asked, not kept for every block (a list per command, a third of the events' memory)."""
        events, owners, _ = self._extracted
        found: dict[int, list[CommandEvent]] = {}
        for event in events:
            owner = owners.get(event.id)
            found.setdefault(id(owner if owner is not None else event.command), []).append(event)
        return found


@record
class CheckedDocument:
    source: SourceDocument
    kind: str  # workflow | agent | command | document
    contracts: Contracts
    markdown: MarkdownDocument
    units: list[Unit] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # What the path analysis knows of each shell run (by its units), shared by all contracts.
    runs: dict[tuple[int, ...], RunFacts] = field(default_factory=dict)
    # Each step's units and the names they set (`variables.py`), for the rules that read them.
    step_scopes: dict[str | None, tuple[list[Unit], Scope]] | None = None
    # Event ids matching each pattern text, shared by all contracts of the document.
    matched: dict[str, list[int]] = field(default_factory=dict)
    # A word's shape → the shapes it may stand for (static values resolved), once per document.
    forms: Callable[[str], Sequence[str]] | None = None
    by_name: dict[str, list[CommandEvent]] = field(default_factory=dict)
    # The candidates of a pattern name, indexed by their words' forms (`matching._index`).
    form_index: dict[str, dict[str, list[CommandEvent]]] = field(default_factory=dict)
    profile: Profile = Profile.CLAUDE
    _pack_root: tuple[Path | None] | None = field(default=None, repr=False)

    def pack_root(self) -> Path | None:
        """The pack the document is in, looked for once: each block sourcing a library asks, and
        the search stats every folder upwards."""
        if self._pack_root is None:
            self._pack_root = (find_pack_root(self.source.path.parent),)
        return self._pack_root[0]

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
        """Every event once (a helper's commands are events of each block that calls it)."""
        # Only a block calling a helper can hold an event another block holds too: the ids of
        # the others' events (each block's own, never repeated) are not gathered in a set, which
        # was twice the events' memory while it grew.
        seen: set[int] = set()
        found: list[CommandEvent] = []
        for unit in self.units:
            if not unit.helpers:
                found += unit.events
                continue
            for event in unit.events:
                if event.id not in seen:
                    seen.add(event.id)
                    found.append(event)
        return found

    @property
    def step_names(self) -> list[str]:
        return [s.name for s in self.markdown.steps]

    def interface_of(self, step: str | None) -> StepInterface | None:
        """The step's own interface (its ```yaml step``` block), when it declares one."""
        found = self.markdown.step(step) if step is not None else None
        return found.interface if found is not None else None

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
    placed = [
        (index, block, _origin(lines, block), _label_before(lines, block))
        for index, block in enumerate(markdown.blocks)
        if block.lang in shells or ("" in shells and not block.info.strip())
    ]
    del lines  # a list of a large document's lines is twice its text: not kept while parsing
    for index, block, origin, label in placed:
        script = parse_bash(block.content, origin)
        finally_ = (
            block.step in finally_steps
            or "finally" in block.info.split()[1:]
            or (label is not None and any(words_in(w, label) for w in finally_labels))
        )
        unit = Unit(block, script, block.step, label, finally_, source.display, index)
        _see_through_libraries(document, unit, base)
        document.units.append(unit)
    return document


def _see_through_libraries(document: CheckedDocument, unit: Unit, base: Path | None) -> None:
    """Resolve the step libraries the block sources; the helpers it calls become its events."""
    previous = document.units[-1] if document.units else None
    if previous is not None and previous.step is not None and previous.step == unit.step:
        unit.libraries = list(previous.libraries)
    content = unit.block.content
    if not unit.libraries and "FIXLOOP_LIB" not in content and "PLUGIN_ROOT" not in content:
        return
    for command in unit.commands:
        if command.name not in (".", "source"):
            continue
        path = sourced_path(command, document.pack_root())
        if path is None:
            continue
        library = load_library(path, base)
        if library is None and "FIXLOOP_LIB" in command.words[1].shape:
            # A `${CLAUDE_PLUGIN_ROOT}/…` file that is not there is the pack validation's
            # `unknown-reference` already; the step library's own variable is reported here.
            document.diagnostics.append(not_found(command, path, document.display))
        if library is None:
            continue
        if library not in unit.libraries:
            unit.libraries.append(library)
    unit.helpers = [
        (library, name) for library in unit.libraries for name in library.called(unit.commands)
    ]
