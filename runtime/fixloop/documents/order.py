"""A workflow document's "Order of work": the step ids it names, in the order it names them.

The section is prose for a person (and for Claude Code, which follows it), but it names each part
of the work by its step id: a code span that looks like one (`` `setup-worktree` ``, kebab-case
with a hyphen), a code span naming one of the document's steps (`` `cleanup` ``), or a link to
the step's heading (`[fix one finding](#fix-one-finding)`). A code span naming a step of another
document is followed by that document's name (`` `cleanup` of `git-protocol.md` ``). Those names,
in order, are what a workflow's `run()` must follow; `tests/workflows/test_order_of_work.py`
checks it on real runs, and every name must be a step that exists.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from fixloop.documents.blocks import parse_markdown
from fixloop.documents.source import SourceDocument

SECTION = "Order of work"
_OTHER_DOCUMENT = re.compile(r"^(?P<name>[a-z0-9][a-z0-9-]*)\.md$")
# A code span names a step when it looks like a step id: kebab-case with at least one hyphen
# (`setup-worktree`), not a value (`clean`), a variable (`AUTO`) or a command (`merge --ff-only`).
_STEP_ID = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")


@dataclass(frozen=True)
class Mention:
    step: str
    document: str  # the workflow the step belongs to (this one, or the one named after it)
    line: int  # the file line of the list item or paragraph naming it


@cache
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def order_of_work(
    source: SourceDocument, document: str, steps: Collection[str] = ()
) -> list[Mention]:
    """The step ids the document's "Order of work" section names, in order (empty without one).

    `steps` are the document's own step ids: a code span naming one is a mention whatever its
    shape (`cleanup`); so is any code span followed by `of NAME.md`, and any that looks like a step
    id. A mention of a step that exists nowhere keeps `document` as named, for the caller to
    report."""
    markdown = parse_markdown(source)
    start = next((h for h in markdown.headings if h.title.strip() == SECTION), None)
    if start is None:
        return []
    after = [h.line for h in markdown.headings if h.line > start.line and h.level <= start.level]
    lines = source.text.splitlines()
    end = min(after, default=len(lines) + 1)
    first = start.line + 1  # the section's text begins on the line after its heading
    section = "\n".join(lines[first - 1 : end - 1])
    mentions: list[Mention] = []
    for block in _inline_parser().parse(section):
        if block.type != "inline" or not block.children:
            continue
        line = first + (block.map[0] if block.map else 0)
        mentions += _mentions(block.children, document, set(steps), line)
    return mentions


def _mentions(tokens: list[Token], document: str, steps: set[str], line: int) -> list[Mention]:
    found: list[Mention] = []
    candidate: str | None = None  # a code span that names a step if `of NAME.md` follows
    for token in tokens:
        if token.type == "code_inline":
            other = _OTHER_DOCUMENT.match(token.content)
            if other is not None:
                if candidate is not None:  # `step` of `other.md`: the step belongs to that one
                    if found and found[-1].step == candidate:
                        found.pop()
                    found.append(Mention(candidate, other["name"], line))
                candidate = None
                continue
            candidate = token.content
            if candidate in steps or _STEP_ID.match(candidate):
                found.append(Mention(candidate, document, line))
        elif token.type == "link_open":
            href = str(token.attrs.get("href", ""))
            if href.startswith("#"):
                found.append(Mention(href[1:], document, line))
            candidate = None
        elif token.type == "text" and token.content.strip() not in ("", "of"):
            candidate = None
    return found


__all__ = ["SECTION", "Mention", "order_of_work"]
