"""Command events: every command a bash block would run, with its argv, place and control context.

One event per simple command (after unwrapping `env`, `command`, `xargs`, `sudo`, `timeout` …),
plus one `>` event per output redirection or `tee` target, so that `> "$sentinel"` is a write of
the sentinel. Commands inside `$(…)`, trap handlers and function bodies are events too. The
`context` of an event says where it sits: `if-condition`, `then(…)`, `else(…)`, `after-success(…)`
for the right side of `&&`, `after-failure(…)` for `||`, `loop:for`, `function:name`, `subshell`,
`command-substitution`, `pipeline`, `case-arm`, `trap:EXIT`, `finally`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from fixloop.checker.patterns import WRITE
from fixloop.checker.tree import (
    AndOr,
    Arith,
    Case,
    Command,
    Function,
    If,
    Loop,
    Node_,
    Not,
    Pipeline,
    Seq,
    Subshell,
    Word,
    command_words,
)
from fixloop.checker.tree_words import substitutions_in
from fixloop.checker.wrappers import unwrap

_OUTPUT_OPS = {">", ">>", "&>", "&>>", ">|"}


class _Place:
    """Where a block's events are: the same for every event of one extraction."""

    __slots__ = ("block", "finally_", "path", "step")

    def __init__(self, path: str, step: str | None, block: int, finally_: bool) -> None:
        self.path = path
        self.step = step
        self.block = block
        self.finally_ = finally_


class _Marker(Word):
    """The `>` word of a write event (`> "$f"`, `tee "$f"`): the event is placed at its target."""

    __slots__ = ()


class CommandEvent:
    """One command a block runs. Plain slots, and what every event of a block shares (the
    document, step, block) in one object: a large block has an event per command. Six slots,
    not eight (objects come in sizes of 16 bytes): the shapes of its words are not kept, and
    its place is its command's, or a write's target (the word after its `_Marker`). The line
    and column are asked for when a diagnostic is made."""

    __slots__ = ("_place", "argv", "command", "context", "id", "wrappers")
    id: int
    argv: list[Word]
    context: tuple[str, ...]
    command: Command
    wrappers: tuple[str, ...]

    def __init__(
        self,
        id: int,
        argv: list[Word],
        context: tuple[str, ...],
        *,
        command: Command,
        wrappers: tuple[str, ...],
        place: _Place,
    ) -> None:
        self.id = id
        self.argv = argv
        self.context = context
        self.command = command
        self.wrappers = wrappers
        self._place = place

    @property
    def _at(self) -> Word | Command:
        argv = self.argv
        return argv[1] if type(argv[0]) is _Marker else self.command

    @property
    def path(self) -> str:
        return self._place.path

    @property
    def step(self) -> str | None:
        return self._place.step

    @property
    def block(self) -> int:
        return self._place.block

    @property
    def finally_(self) -> bool:
        return self._place.finally_

    @property
    def line(self) -> int:
        """1-based file line."""
        return self._at.row + 1

    @property
    def col(self) -> int:
        """1-based column."""
        return self._at.col + 1

    def __repr__(self) -> str:
        return f"CommandEvent({self.id}, {self.path}:{self.line}:{self.col}, {self.shapes!r})"

    @property
    def shapes(self) -> list[str]:
        """The shapes of its words, made each time a pattern looks past the command's name
        (kept, they were a list per candidate of every pattern name)."""
        return [w.shape for w in self.argv]

    @property
    def name(self) -> str:
        return self.argv[0].shape if self.argv else ""

    def text(self, limit: int = 100) -> str:
        """The command as a message quotes it: one line, at most `limit` characters (an
        embedded `node -e` script is a word of many lines; its first one names it)."""
        words = []
        for word in self.argv:
            first, *rest = word.text.split("\n", 1)
            words.append(first + ("…" if rest else ""))
            if rest:
                break
        shown = " ".join(words)
        return shown if len(shown) <= limit else shown[: limit - 1] + "…"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "step": self.step,
            "argv": [w.text for w in self.argv],
            "shapes": self.shapes,
            "context": list(self.context),
            "wrappers": list(self.wrappers),
        }


Alone = list[tuple[str, str]] | None  # standalone assignments (`x=1`): name and value shape


class _Walk:
    def __init__(self, place: _Place, next_id: int, alone: Alone) -> None:
        self.place = place
        self.next_id = next_id
        self.events: list[CommandEvent] = []
        # The node an event belongs to when it is not the event's command: a redirection of a
        # compound command (`{ …; } > f`) is an event of a command made for it.
        self.owners: dict[int, Node_] = {}
        # Each context once: the nodes of a block repeat the same `then(…)` and `pipeline`.
        self.contexts: dict[tuple[str, ...], tuple[str, ...]] = {}
        # The standalone assignments `iter_commands` reaches, for `matching.static_values`: not
        # those in a redirection target's or loop list's substitution (`beyond` counts those).
        self.assigned = [] if alone is None else alone
        self.beyond = 0

    def within(self, context: tuple[str, ...], *labels: str) -> tuple[str, ...]:
        inner = (*context, *labels)
        return self.contexts.setdefault(inner, inner)

    def add(
        self,
        command: Command,
        argv: list[Word],
        wrappers: tuple[str, ...],
        context: tuple[str, ...],
        *,
        owner: Node_ | None = None,
    ) -> None:
        event = CommandEvent(
            self.next_id, argv, context, command=command, wrappers=wrappers, place=self.place
        )
        if owner is not None:
            self.owners[self.next_id] = owner
        self.next_id += 1
        self.events.append(event)

    def words(self, words: list[Word], context: tuple[str, ...]) -> None:
        for word in words:
            for sub in word.subs:
                self.node(sub, self.within(context, "command-substitution"))

    def alone(self, command: Command) -> None:
        if not command.words and not self.beyond:
            self.assigned += [(a.name, a.value.shape) for a in command.assigns if a.value]

    def command(self, command: Command, context: tuple[str, ...]) -> None:
        # The substitutions of its words, values and targets, known once for the command: most
        # have none, and their words are not looked at one by one then.
        substituted = bool(command.substitutions)
        if substituted:
            self.words(command.words, context)
            for assign in command.assigns:
                if assign.value is not None:
                    self.words([assign.value], context)
        self.alone(command)
        argv, wrappers = unwrap(command.words)
        if argv:
            self.add(command, argv, wrappers, context)
        for redirect in command.redirects:
            target = redirect.target
            if target is None:
                continue
            if substituted:
                self.beyond += 1
                self.words([target], context)
                self.beyond -= 1
            if (
                redirect.op in _OUTPUT_OPS
                and target.literal not in ("/dev/null", "-")
                and not (target.literal or "x").isdigit()
            ):
                marker = _Marker(redirect.op, WRITE, target.pos, literal=WRITE)
                self.add(command, [marker, target], (), context)
        if argv and argv[0].shape == "tee" and argv[0].literal == "tee":
            for target in argv[1:]:
                if not (target.literal or "").startswith("-"):
                    marker = _Marker("tee", WRITE, target.pos, literal=WRITE)
                    self.add(command, [marker, target], ("tee",), context)
        if command.trap is not None:
            signals = ",".join(command.trap_signals)
            self.node(command.trap, self.within(context, f"trap:{signals}"))

    def node(self, node: Node_ | None, context: tuple[str, ...]) -> None:  # noqa: PLR0912
        if node is None:
            return
        if isinstance(node, Command):
            self.command(node, context)
            return
        if isinstance(node, Seq):
            for item in node.items:
                if isinstance(item, Command):
                    self.command(item, context)
                else:
                    self.node(item, context)
        elif isinstance(node, AndOr):
            self.node(node.first, context)
            first = _summary(node.first)
            for op, right in node.rest:
                branch = "after-success" if op == "&&" else "after-failure"
                self.node(right, self.within(context, f"{branch}({first})"))
        elif isinstance(node, Not):
            self.node(node.body, self.within(context, "negated"))
        elif isinstance(node, Pipeline):
            inner = self.within(context, "pipeline")
            for item in node.items:
                self.node(item, inner)
        elif isinstance(node, If):
            for index, (cond, body) in enumerate(node.clauses):
                self.node(cond, self.within(context, "if-condition"))
                label = "then" if index == 0 else "elif"
                self.node(body, self.within(context, f"{label}({_summary(cond)})"))
            if node.orelse is not None:
                conds = " / ".join(_summary(c) for c, _ in node.clauses)
                self.node(node.orelse, self.within(context, f"else({conds})"))
        elif isinstance(node, Loop):
            if node.words:
                self.beyond += 1
                self.words(node.words, context)
                self.beyond -= 1
            self.node(node.cond, self.within(context, f"loop:{node.kind}", "loop-condition"))
            self.node(node.body, self.within(context, f"loop:{node.kind}"))
        elif isinstance(node, Case):
            inner = self.within(context, "case-arm")
            for arm in node.arms:
                self.node(arm, inner)
        elif isinstance(node, Function):
            self.node(node.body, self.within(context, f"function:{node.name}"))
        elif isinstance(node, Subshell):
            self.node(node.body, self.within(context, "subshell"))
        elif isinstance(node, Arith):
            return
        for redirect in node.redirects:
            if redirect.op in _OUTPUT_OPS and redirect.target is not None:
                marker = _Marker(redirect.op, WRITE, redirect.target.pos, literal=WRITE)
                holder = Command(redirect.target.pos, words=[marker, redirect.target])
                self.add(holder, [marker, redirect.target], (), context, owner=node)


def _summary(node: Node_ | None) -> str:
    command = next(iter_commands(node), None)
    if command is None:
        return "…"
    text = " ".join([w.text for w in command.words[:4]])
    return text if len(command.words) <= 4 else text + " …"


def iter_commands(node: Node_ | None) -> Iterator[Command]:
    """Every Command in `node`, in source order, including substitutions and trap handlers.

    One generator walking a stack of what is still to come, not one per level: a command deep
    in a block passed up through a generator per node around it."""
    # A command in a 1-tuple: its substitutions were walked, it comes next.
    pending: list[Node_ | tuple[Command]] = [] if node is None else [node]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            command = item[0]
            yield command
            if command.trap is not None:
                pending.append(command.trap)
        elif isinstance(item, Command):
            # Its words' and values' substitutions run first (none when it has none at all).
            if item.substitutions and (
                subs := substitutions_in([*item.words, *(a.value for a in item.assigns)])
            ):
                pending.append((item,))
                pending += reversed(subs)
                continue
            yield item
            if item.trap is not None:
                pending.append(item.trap)
        elif isinstance(item, Seq):  # the most frequent node after a command, without a call
            pending += reversed(item.items)
        else:
            pending += reversed(children(item))


def children(node: Node_) -> Sequence[Node_]:
    """The statements right inside `node`; a sequence's or pipeline's own list, not a copy."""
    if isinstance(node, (Seq, Pipeline)):
        return node.items
    if isinstance(node, AndOr):
        return [n for n in (node.first, *(right for _, right in node.rest)) if n is not None]
    if isinstance(node, Not):
        return [node.body] if node.body is not None else []
    if isinstance(node, If):
        found: list[Node_] = [n for clause in node.clauses for n in clause]
        return found + ([node.orelse] if node.orelse is not None else [])
    if isinstance(node, Loop):
        return [n for n in (node.cond, node.body) if n is not None]
    if isinstance(node, Case):
        return node.arms
    if isinstance(node, (Function, Subshell)):
        return [node.body]
    return []


# Event ids are unique in a process: each extraction takes the next range of 2**40 ids, more
# than any block can hold commands (a block is bounded in bytes long before that), so two
# blocks' ids never meet.
_RANGE = 1 << 40
_ranges = itertools.count(1)


def extract(
    body: Seq, path: str, step: str | None, *, block: int, finally_: bool, alone: Alone = None
) -> tuple[list[CommandEvent], dict[int, Node_]]:
    """The block's events, and the node each event belongs to where that is not its command
    (for `Unit.by_node`); its standalone assignments added to `alone`, if given: found on the
    same walk for `matching.static_values`, which walked every block again for them."""
    walk = _Walk(_Place(path, step, block, finally_), next(_ranges) * _RANGE, alone)
    walk.node(body, ("finally",) if finally_ else ())
    return walk.events, walk.owners


class Visited:
    """Every node of a tree with whether it runs in a condition context, in walk order: two
    lists, not a pair per node (a large block's rules walk one node per statement)."""

    __slots__ = ("conds", "nodes")

    def __init__(self) -> None:
        self.nodes: list[Node_] = []
        self.conds: list[bool] = []

    def __iter__(self) -> Iterator[tuple[Node_, bool]]:
        return zip(self.nodes, self.conds, strict=True)

    def __len__(self) -> int:
        return len(self.nodes)


def visit(node: Node_ | None, cond: bool = False) -> Visited:
    """Every node with whether it runs in a condition context (where `set -e` does not apply)."""
    found = Visited()
    _visit(node, cond, found.nodes, found.conds)
    return found


def _visit(node: Node_ | None, cond: bool, nodes: list[Node_], conds: list[bool]) -> None:  # noqa: PLR0912
    # Appending to two lists: the generic rules walk every block, and nested generators were
    # the larger part of their time.
    if node is None:
        return
    nodes.append(node)
    conds.append(cond)
    if isinstance(node, Command):
        if node.substitutions or node.redirects:  # most commands have neither
            for sub in _substitutions_in_words(node):
                _visit(sub, True, nodes, conds)
        if node.trap is not None:
            _visit(node.trap, cond, nodes, conds)
        return
    if isinstance(node, Seq):  # the most frequent node after a command: its list, without a call
        for item in node.items:
            _visit(item, cond, nodes, conds)
        return
    if isinstance(node, If):
        for test, body in node.clauses:
            _visit(test, True, nodes, conds)
            _visit(body, cond, nodes, conds)
        _visit(node.orelse, cond, nodes, conds)
        return
    if isinstance(node, AndOr):
        # Every command of a chain but the last is tested by the operator after it.
        links = [node.first, *(right for _, right in node.rest)]
        for index, link in enumerate(links):
            _visit(link, True if index < len(links) - 1 else cond, nodes, conds)
        return
    if isinstance(node, Not):
        _visit(node.body, True, nodes, conds)
        return
    if isinstance(node, Loop):
        _visit(node.cond, True, nodes, conds)
        _visit(node.body, cond, nodes, conds)
        return
    for child in children(node):
        _visit(child, cond, nodes, conds)


def _substitutions_in_words(command: Command) -> Sequence[Node_]:
    """The substitutions of every word of `command` (`command_words`), in their order."""
    if command.substitutions or any(r.body is not None and r.body.subs for r in command.redirects):
        return substitutions_in(command_words(command))
    return ()  # most commands: known without listing their words
