"""Fenced code blocks and headings of a Markdown body, with file line numbers and owning step.

markdown-it-py does the parsing, so a ``` inside a ~~~ fence, an indented fence or a heading inside
a code block are what CommonMark says they are. The `html_block` rule is disabled: an HTML-ish line
such as `<step name="x">` directly followed by a fence would otherwise swallow the fence.

Steps. A workflow is a sequence of named steps. fixloop's own documents mark a step with a heading
that ends in an explicit id, `## Set up the worktree {#setup-worktree}` (the id survives a
reworded title). Other house styles mark steps with XML-ish tags, `<step name="setup_worktree">` …
`</step>`; `StepStyle` selects either, so the contract checker works on packs it has never seen.

A step may declare its interface (the inputs it takes, the outputs it writes) in a
```` ```yaml step```` fence right under its heading; `Step.interface` holds it (`interface.py`).
"""

from __future__ import annotations

import re
from dataclasses import field
from enum import StrEnum
from functools import cache

from markdown_it import MarkdownIt

from fixloop.diagnostics import Diagnostic
from fixloop.documents.interface import RULE, StepInterface, is_interface_info, parse_interface
from fixloop.documents.source import SourceDocument
from fixloop.records import record

_HEADING_ID = re.compile(r"\s*\{#(?P<id>[A-Za-z0-9_.-]+)\}\s*$")


class StepStyle(StrEnum):
    HEADING = "heading"  # `## Title {#step-id}`
    XML = "xml"  # `<step name="step-id">` … `</step>`


@record(frozen=True)
class Heading:
    level: int
    title: str
    anchor: str | None
    line: int


@record(frozen=True)
class FencedBlock:
    info: str
    content: str
    fence_line: int  # line of the opening fence
    content_line: int  # line of the first content line
    end_line: int  # line of the closing fence (or last line when unclosed)
    section: tuple[str, ...]
    step: str | None
    closed: bool = True

    @property
    def lang(self) -> str:
        return self.info.split(maxsplit=1)[0].lower() if self.info.strip() else ""

    @property
    def is_shell(self) -> bool:
        return self.lang in {"bash", "sh", "shell", "zsh"}


@record(frozen=True)
class Step:
    name: str
    title: str
    line: int
    end_line: int
    blocks: tuple[FencedBlock, ...] = ()
    interface: StepInterface | None = None  # its ```yaml step``` block, when it has one
    interface_problems: tuple[Diagnostic, ...] = ()  # a malformed or misplaced block

    @property
    def has_bash(self) -> bool:
        return any(block.lang == "bash" for block in self.blocks)


@record(frozen=True)
class MarkdownDocument:
    source: SourceDocument
    headings: tuple[Heading, ...]
    blocks: tuple[FencedBlock, ...]
    steps: tuple[Step, ...] = field(default=())

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def shell_blocks(self) -> tuple[FencedBlock, ...]:
        return tuple(b for b in self.blocks if b.is_shell)


@cache
def build_markdown() -> MarkdownIt:
    """The one markdown-it configuration fixloop parses documents with, built once (a parse
    keeps no state in it; building it compiles its rules).

    Only block structure is used (headings, fences, their lines), so the inline stage is off: it
    halves the parse time and changes no block token (a heading's raw text is kept either way).
    So is `text_join`, which only joins the inline stage's text tokens (never read here).
    """
    return MarkdownIt("commonmark").disable(["html_block", "inline", "text_join"])


@record(frozen=True)
class _Span:
    name: str
    title: str
    start: int
    end: int  # inclusive


def _xml_spans(source: SourceDocument, fence_lines: set[int], tag: str) -> list[_Span]:
    opening = re.compile(rf"^\s*<{re.escape(tag)}\s+name=[\"'](?P<name>[^\"']+)[\"'][^>]*>")
    closing = re.compile(rf"</{re.escape(tag)}\s*>")
    spans: list[_Span] = []
    lines = source.body.splitlines()
    current: tuple[str, int] | None = None
    for index, text in enumerate(lines):
        line = source.body_line + index
        if line in fence_lines:
            continue
        start = opening.match(text)
        if start:
            if current is not None:
                spans.append(_Span(current[0], current[0], current[1], line - 1))
            current = (start["name"], line)
        if current is not None and closing.search(text):
            spans.append(_Span(current[0], current[0], current[1], line))
            current = None
    if current is not None:
        spans.append(_Span(current[0], current[0], current[1], source.body_line + len(lines) - 1))
    return spans


def _heading_spans(headings: list[Heading], last_line: int) -> list[_Span]:
    spans: list[_Span] = []
    for index, heading in enumerate(headings):
        if heading.anchor is None:
            continue
        end = last_line
        for later in headings[index + 1 :]:
            if later.level <= heading.level:
                end = later.line - 1
                break
        spans.append(_Span(heading.anchor, heading.title, heading.line, end))
    return spans


# Parsed documents by source object: validation and the checker both need a document's blocks.
_PARSED: dict[tuple[int, StepStyle, str], tuple[SourceDocument, MarkdownDocument]] = {}
_PARSED_LIMIT = 4096


def parse_markdown(
    source: SourceDocument, style: StepStyle = StepStyle.HEADING, tag: str = "step"
) -> MarkdownDocument:
    """The document's headings, blocks and steps, parsed once per source object."""
    key = (id(source), style, tag)
    cached = _PARSED.get(key)
    if cached is not None and cached[0] is source:
        return cached[1]
    parsed = _parse_markdown(source, style, tag)
    if len(_PARSED) >= _PARSED_LIMIT:
        _PARSED.clear()
    _PARSED[key] = (source, parsed)
    return parsed


def _parse_markdown(source: SourceDocument, style: StepStyle, tag: str) -> MarkdownDocument:
    tokens = build_markdown().parse(source.body)
    offset = source.body_line
    body_lines = source.body.splitlines()
    last_line = offset + max(len(body_lines), 1) - 1
    headings: list[Heading] = []
    raw_blocks: list[tuple[str, str, int, int, int, tuple[str, ...], bool]] = []
    stack: list[Heading] = []
    section: tuple[str, ...] = ()  # the titles of `stack`, made when it changes, not per fence
    fence_lines: set[int] = set()
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "fence" and token.map:
            start, end = token.map[0] + offset, token.map[1] - 1 + offset
            last_text = body_lines[token.map[1] - 1] if token.map[1] - 1 < len(body_lines) else ""
            closed = end > start and last_text.strip().startswith(token.markup)
            fence_lines.update(range(start, end + 1))
            info = token.info.strip()
            raw_blocks.append((info, token.content, start, start + 1, end, section, closed))
        elif kind == "heading_open" and token.map:
            title = tokens[index + 1].content
            match = _HEADING_ID.search(title)
            anchor = match["id"] if match else None
            if match:
                title = title[: match.start()].rstrip()
            heading = Heading(int(token.tag[1:]), title, anchor, token.map[0] + offset)
            headings.append(heading)
            stack = [h for h in stack if h.level < heading.level] + [heading]
            section = tuple(h.title for h in stack)
    if style is StepStyle.XML:
        spans = _xml_spans(source, fence_lines, tag)
    else:
        spans = _heading_spans(headings, last_line)

    # Both kinds of span come in the order they start, so the innermost (latest-starting) span
    # that contains a line is the first one that does, read from the end.
    latest_first = spans[::-1]

    def owner(line: int) -> str | None:
        return next((s.name for s in latest_first if s.start <= line <= s.end), None)

    blocks = tuple(
        FencedBlock(info, content, fence, first, end, section, owner(fence), closed)
        for info, content, fence, first, end, section, closed in raw_blocks
    )
    # A step's blocks are those its name owns: grouped in one pass, not one pass per step.
    by_step: dict[str | None, list[FencedBlock]] = {}
    for block in blocks:
        by_step.setdefault(block.step, []).append(block)
    steps = tuple(
        _step(source, span, tuple(by_step.get(span.name, ())), body_lines) for span in spans
    )
    return MarkdownDocument(source, tuple(headings), blocks, steps)


def _step(
    source: SourceDocument, span: _Span, own: tuple[FencedBlock, ...], body_lines: list[str]
) -> Step:
    declared = [b for b in own if is_interface_info(b.info)]
    if not declared:
        return Step(span.name, span.title, span.start, span.end, own)
    block = declared[0]
    interface, problems = parse_interface(block.content, block.fence_line, source.display)
    between = body_lines[span.start - source.body_line + 1 : block.fence_line - source.body_line]
    if any(line.strip() for line in between):
        problems.append(
            Diagnostic(
                source.display,
                block.fence_line,
                1,
                RULE,
                f"the interface of step {span.name!r} goes right under its heading, before any "
                "text or other block of the step",
            )
        )
    problems += [
        Diagnostic(
            source.display,
            extra.fence_line,
            1,
            RULE,
            f"step {span.name!r} already declares its interface at line {block.fence_line}",
        )
        for extra in declared[1:]
    ]
    if problems:
        interface = None
    return Step(span.name, span.title, span.start, span.end, own, interface, tuple(problems))
