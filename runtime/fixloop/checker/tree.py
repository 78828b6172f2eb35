"""The syntax tree the checker works on: commands and control structures, with exact positions.

Deliberately tiny: `Command` (argv words, prefix assignments, redirections, and the parsed handler
of a `trap`), `Seq`, `AndOr`, `Not`, `Pipeline`, `If`, `Loop`, `Case`, `Function`, `Subshell`,
`Arith` and `Broken`, over the words of `tree_words.py` (a chain of `&&`/`||` kept flat by
`chain`). `syntax.py` builds it from tree-sitter-bash; events, path analysis and the generic
rules walk it, never tree-sitter nodes.

A large block has a node per statement, so the classes are plain classes with slots (no instance
dictionary; a slotted dataclass is built twice when its module is imported), positioned by two
slots, `row` and `col` (`tree_words.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from fixloop.checker.tree_words import Pos, Read, Word, _Placed, _Slotted, substitutions_in

# The leaves are the tree's too: its readers import every class from here.
__all__ = [
    "AndOr",
    "Arith",
    "Assign",
    "Broken",
    "Case",
    "Command",
    "Function",
    "If",
    "Loop",
    "Node_",
    "Not",
    "Pipeline",
    "Pos",
    "Read",
    "Redirect",
    "Script",
    "Seq",
    "Subshell",
    "Word",
    "chain",
    "command_words",
    "node_words",
]


class Assign(_Placed):
    __slots__ = ("kind", "name", "value")
    _fields: ClassVar[tuple[str, ...]] = ("name", "value", "row", "col", "kind")
    name: str
    value: Word | None
    kind: str  # plain | local | export | declare | readonly

    def __init__(
        self, name: str, value: Word | None, pos: tuple[int, int], kind: str = "plain"
    ) -> None:
        self.name = name
        self.value = value
        self.row, self.col = pos
        self.kind = kind


class Redirect(_Slotted):
    __slots__ = ("body", "fd", "op", "target")
    _fields: ClassVar[tuple[str, ...]] = ("op", "target", "fd", "body")
    op: str  # `>`, `>>`, `<`, `<<`, `<<<`, `&>`, `>&` …
    target: Word | None
    fd: str | None
    body: Word | None  # heredoc body; `reads` empty when the delimiter is quoted

    def __init__(
        self, op: str, target: Word | None, fd: str | None, body: Word | None = None
    ) -> None:
        self.op = op
        self.target = target
        self.fd = fd
        self.body = body


class Node_(_Placed):
    __slots__ = ("redirects",)
    _fields: ClassVar[tuple[str, ...]] = ("row", "col", "redirects")
    # Collections most nodes leave empty are the shared empty tuple, not an empty list each.
    redirects: Sequence[Redirect]

    def __init__(self, pos: tuple[int, int], *, redirects: Sequence[Redirect] = ()) -> None:
        self.row, self.col = pos
        self.redirects = redirects

    def set_redirects(self, redirects: Sequence[Redirect]) -> None:
        """Its redirections, when they are known after it is built (`{ …; } > f`)."""
        self.redirects = redirects


class Command(Node_):
    # The signals of a trap are not kept: they are the words after its handler (most commands
    # are no trap), so nine slots, not ten, make the object 16 bytes smaller.
    __slots__ = ("assigns", "exported", "name", "substitutions", "trap", "words")
    _fields: ClassVar[tuple[str, ...]] = (
        *Node_._fields,
        "words",
        "assigns",
        "exported",
        "trap",
        "trap_signals",
    )
    words: list[Word]
    assigns: Sequence[Assign]
    exported: Sequence[str]  # `export NAME` without a value
    # The parsed handler of `trap '…' EXIT|ERR|…`: a slot, not a property, as every walk of the
    # tree asks each command for it.
    trap: Seq | None
    # The `$(…)` of its words, assignment values and redirection targets, in run order: known
    # when it is built, as every walk of the tree asks each command for them.
    substitutions: Sequence[Node_]
    # The literal value of its first word, `None` without one: what it runs, a slot as every
    # rule asks each command for it (a command has one word list, never changed once built).
    name: str | None

    def __init__(
        self,
        pos: tuple[int, int],
        words: list[Word] | None = None,
        assigns: Sequence[Assign] = (),
        exported: Sequence[str] = (),
        *,
        redirects: Sequence[Redirect] = (),
    ) -> None:
        self.row, self.col = pos
        self.redirects = redirects
        self.words = [] if words is None else words
        self.name = self.words[0].literal if self.words else None
        self.assigns = assigns
        self.exported = exported
        self.trap = None
        self.substitutions = self._substitutions()

    @property
    def trap_signals(self) -> tuple[str, ...]:
        """The signals of a trap: the shapes of its words after the handler."""
        return tuple(w.shape for w in self.words[2:]) if self.trap is not None else ()

    def set_redirects(self, redirects: Sequence[Redirect]) -> None:
        self.redirects = redirects
        self.substitutions = self._substitutions()

    def _substitutions(self) -> Sequence[Node_]:
        found = substitutions_in(self.words)
        if self.assigns:
            found += substitutions_in([a.value for a in self.assigns])
        if self.redirects:
            found += substitutions_in([r.target for r in self.redirects])
        return found or ()


class Seq(Node_):
    __slots__ = ("items",)
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "items")
    items: list[Node_]

    def __init__(
        self,
        pos: tuple[int, int],
        *,
        items: list[Node_] | None = None,
        redirects: Sequence[Redirect] = (),
    ) -> None:
        self.row, self.col = pos
        self.redirects = redirects
        self.items = [] if items is None else items


class AndOr(Node_):
    """`a && b || c`: a chain, kept flat (bash groups it from the left: `(a && b) || c`), so a
    chain of hundreds of commands is a list to walk, not hundreds of nested nodes."""

    __slots__ = ("first", "rest")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "first", "rest")
    first: Node_ | None
    rest: list[tuple[str, Node_ | None]]  # ("&&" | "||", node)

    def __init__(
        self,
        pos: tuple[int, int],
        *,
        first: Node_ | None = None,
        rest: list[tuple[str, Node_ | None]] | None = None,
    ) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.first = first
        self.rest = [] if rest is None else rest


def chain(at: tuple[int, int], first: Node_ | None, rest: list[tuple[str, Node_ | None]]) -> AndOr:
    """`first op node op node …`, spliced flat when a link is itself a chain (bash groups a
    chain from the left, so `a || (b && c)` written without the group is `(a || b) && c`)."""
    links: list[tuple[str, Node_ | None]] = []
    for op, node in rest:
        if isinstance(node, AndOr):
            links.append((op, node.first))
            links += node.rest
        else:
            links.append((op, node))
    return AndOr(at, first=first, rest=links)


class Not(Node_):
    __slots__ = ("body",)
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "body")
    body: Node_ | None

    def __init__(self, pos: tuple[int, int], *, body: Node_ | None = None) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.body = body


class Pipeline(Node_):
    __slots__ = ("items",)
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "items")
    items: list[Node_]

    def __init__(self, pos: tuple[int, int], *, items: list[Node_] | None = None) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.items = [] if items is None else items


class If(Node_):
    __slots__ = ("clauses", "orelse")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "clauses", "orelse")
    clauses: list[tuple[Seq, Seq]]
    orelse: Seq | None

    def __init__(self, pos: tuple[int, int]) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.clauses = []
        self.orelse = None


class Loop(Node_):
    __slots__ = ("body", "cond", "kind", "var", "words")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "kind", "var", "words", "cond", "body")
    kind: str  # for | while | until | select | cfor
    var: str | None
    words: list[Word] | None  # `for x in WORDS`; None means "$@"
    cond: Seq | None
    body: Seq

    def __init__(
        self,
        pos: tuple[int, int],
        *,
        kind: str = "for",
        var: str | None = None,
        words: list[Word] | None = None,
        cond: Seq | None = None,
        body: Seq | None = None,
    ) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.kind = kind
        self.var = var
        self.words = words
        self.cond = cond
        self.body = Seq((0, 0)) if body is None else body


class Case(Node_):
    __slots__ = ("arms", "subject")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "subject", "arms")
    subject: Word | None
    arms: list[Seq]

    def __init__(self, pos: tuple[int, int], *, subject: Word | None = None) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.subject = subject
        self.arms = []


class Function(Node_):
    __slots__ = ("body", "name")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "name", "body")
    name: str
    body: Seq

    def __init__(self, pos: tuple[int, int], *, name: str = "", body: Seq | None = None) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.name = name
        self.body = Seq((0, 0)) if body is None else body


class Subshell(Node_):
    __slots__ = ("body",)
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "body")
    body: Seq

    def __init__(self, pos: tuple[int, int], *, body: Seq | None = None) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.body = Seq((0, 0)) if body is None else body


class Arith(Node_):
    """`(( … ))` as a command (not `$(( … ))`)."""

    __slots__ = ("increments", "reads", "text")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "text", "increments", "reads")
    text: str
    increments: bool  # `n++` / `n--` / `++n`: status 1 when the value is 0
    reads: list[Read]

    def __init__(self, pos: tuple[int, int], *, text: str = "") -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.text = text
        self.increments = False
        self.reads = []


class Broken(Node_):
    """A stretch tree-sitter could not parse, or that bash refuses though tree-sitter parses it."""

    __slots__ = ("missing", "reason", "text")
    _fields: ClassVar[tuple[str, ...]] = (*Node_._fields, "text", "missing", "reason")
    text: str
    missing: str | None
    reason: str | None  # what is wrong, when neither `text` nor `missing` says it

    def __init__(
        self,
        pos: tuple[int, int],
        *,
        text: str = "",
        missing: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.row, self.col = pos
        self.redirects = ()
        self.text = text
        self.missing = missing
        self.reason = reason


class Script(_Slotted):
    __slots__ = ("body", "errors", "too_deep")
    _fields: ClassVar[tuple[str, ...]] = ("body", "errors", "too_deep")
    body: Seq
    errors: list[Broken]
    too_deep: bool  # nested past the checker's limit: the block is not looked into

    def __init__(self, body: Seq, errors: list[Broken], too_deep: bool = False) -> None:
        self.body = body
        self.errors = errors
        self.too_deep = too_deep


def command_words(command: Command) -> Sequence[Word]:
    """Its words, assignment values, redirection targets and heredoc bodies."""
    if not command.assigns and not command.redirects:
        return command.words  # most commands: their own list, not a copy
    words = list(command.words)
    words += [a.value for a in command.assigns if a.value is not None]
    for redirect in command.redirects:
        words += [w for w in (redirect.target, redirect.body) if w is not None]
    return words


def node_words(node: Node_) -> Sequence[Word]:
    """The words `node` holds itself: a command's (`command_words`), a loop's list, a case's
    subject, its redirections' targets and heredoc bodies."""
    if isinstance(node, Command):
        return command_words(node)
    if not node.redirects and not isinstance(node, (Loop, Case)):
        return ()  # most statements around commands hold no word of their own
    words = [w for r in node.redirects for w in (r.target, r.body) if w is not None]
    if isinstance(node, Loop) and node.words:
        words += node.words
    if isinstance(node, Case) and node.subject is not None:
        words.append(node.subject)
    return words
