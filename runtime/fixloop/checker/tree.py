"""The syntax tree the checker works on: commands and control structures, with exact positions.

Deliberately tiny: `Command` (argv words, prefix assignments, redirections, and the parsed handler
of a `trap`), `Seq`, `AndOr`, `Not`, `Pipeline`, `If`, `Loop`, `Case`, `Function`, `Subshell`,
`Arith` and `Broken`. `syntax.py` builds it from tree-sitter-bash; events, path analysis and the
generic rules walk it, never tree-sitter nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple


class Pos(NamedTuple):
    """0-based row and character column inside the parsed text.

    A NamedTuple, not a frozen dataclass: there is one per word and statement, and building a
    frozen dataclass was a fifth of the syntax builder's time.
    """

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Read:
    """A variable expansion: `$name`, `${name…}`."""

    name: str
    pos: Pos
    quoted: bool
    defaulted: bool  # `${x:-…}`, `${x:?…}`, `${x:=…}`: never silently empty
    whole: bool  # the expansion is the entire word (`"$x"` or `$x`)


@dataclass(slots=True)
class Word:
    text: str  # source text as written
    shape: str  # quotes removed, `${x}` → `$x`, `$(…)` kept as `$(…)`
    pos: Pos
    # Most words have neither: the shared empty tuple, not two empty lists per word (a ninth of
    # a large block's memory).
    reads: Sequence[Read] = ()
    subs: Sequence[Node_] = ()  # command substitutions, parsed
    literal: str | None = None  # the value when the word has no expansion at all
    quoted: bool = False  # at least partly quoted
    expands: bool = False  # contains any `$…` expansion or substitution

    def add_read(self, read: Read) -> None:
        if isinstance(self.reads, list):
            self.reads.append(read)
        else:
            self.reads = [*self.reads, read]

    def add_sub(self, sub: Node_) -> None:
        if isinstance(self.subs, list):
            self.subs.append(sub)
        else:
            self.subs = [*self.subs, sub]


@dataclass(slots=True)
class Assign:
    name: str
    value: Word | None
    pos: Pos
    kind: str = "plain"  # plain | local | export | declare | readonly


@dataclass(slots=True)
class Redirect:
    op: str  # `>`, `>>`, `<`, `<<`, `<<<`, `&>`, `>&` …
    target: Word | None
    fd: str | None
    body: Word | None = None  # heredoc body; `reads` empty when the delimiter is quoted


# Slots: a node has no instance dictionary (a large block has one node per statement).
@dataclass(slots=True)
class Node_:
    pos: Pos
    # Collections most nodes leave empty are the shared empty tuple, not an empty list each.
    redirects: Sequence[Redirect] = field(default=(), kw_only=True)


@dataclass(slots=True)
class Command(Node_):
    words: list[Word] = field(default_factory=list)
    assigns: Sequence[Assign] = ()
    exported: Sequence[str] = ()  # `export NAME` without a value
    trap: Seq | None = None  # parsed handler of `trap '…' EXIT|ERR|…`
    trap_signals: tuple[str, ...] = ()
    _substitutions: Sequence[Node_] | None = field(default=None, repr=False, compare=False)

    @property
    def substitutions(self) -> Sequence[Node_]:
        """The `$(…)` of its words, assignment values and redirection targets, in run order."""
        if self._substitutions is None:  # asked again by every path through the command
            words = [*self.words, *(a.value for a in self.assigns if a.value is not None)]
            words += [r.target for r in self.redirects if r.target is not None]
            self._substitutions = [sub for word in words for sub in word.subs] or ()
        return self._substitutions


@dataclass(slots=True)
class Seq(Node_):
    items: list[Node_] = field(default_factory=list)


@dataclass(slots=True)
class AndOr(Node_):
    """`a && b || c`: a chain, kept flat (bash groups it from the left: `(a && b) || c`), so a
    chain of hundreds of commands is a list to walk, not hundreds of nested nodes."""

    first: Node_ | None = None
    rest: list[tuple[str, Node_ | None]] = field(default_factory=list)  # ("&&" | "||", node)


@dataclass(slots=True)
class Not(Node_):
    body: Node_ | None = None


@dataclass(slots=True)
class Pipeline(Node_):
    items: list[Node_] = field(default_factory=list)


@dataclass(slots=True)
class If(Node_):
    clauses: list[tuple[Seq, Seq]] = field(default_factory=list)
    orelse: Seq | None = None


@dataclass(slots=True)
class Loop(Node_):
    kind: str = "for"  # for | while | until | select | cfor
    var: str | None = None
    words: list[Word] | None = None  # `for x in WORDS`; None means "$@"
    cond: Seq | None = None
    body: Seq = field(default_factory=lambda: Seq(Pos(0, 0)))


@dataclass(slots=True)
class Case(Node_):
    subject: Word | None = None
    arms: list[Seq] = field(default_factory=list)


@dataclass(slots=True)
class Function(Node_):
    name: str = ""
    body: Seq = field(default_factory=lambda: Seq(Pos(0, 0)))


@dataclass(slots=True)
class Subshell(Node_):
    body: Seq = field(default_factory=lambda: Seq(Pos(0, 0)))


@dataclass(slots=True)
class Arith(Node_):
    """`(( … ))` as a command (not `$(( … ))`)."""

    text: str = ""
    increments: bool = False  # `n++` / `n--` / `++n`: status 1 when the value is 0
    reads: list[Read] = field(default_factory=list)


@dataclass(slots=True)
class Broken(Node_):
    """A stretch tree-sitter could not parse, or that bash refuses though tree-sitter parses it."""

    text: str = ""
    missing: str | None = None
    reason: str | None = None  # what is wrong, when neither `text` nor `missing` says it


@dataclass
class Script:
    body: Seq
    errors: list[Broken]
    too_deep: bool = False  # nested past the checker's limit: the block is not looked into
