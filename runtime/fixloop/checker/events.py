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
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

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
)

_WRAPPERS_SIMPLE = {"command", "exec", "nohup", "builtin", "time", "nice", "stdbuf", "eatmydata"}
_XARGS_WITH_VALUE = {"-I", "-n", "-L", "-P", "-d", "-s", "-E", "-a", "-i"}
_OUTPUT_OPS = {">", ">>", "&>", "&>>", ">|"}


@dataclass(slots=True)
class CommandEvent:
    id: int
    argv: list[Word]
    path: str
    line: int  # 1-based file line
    col: int  # 1-based column
    step: str | None
    block: int
    context: tuple[str, ...]
    command: Command
    wrappers: tuple[str, ...] = ()
    finally_: bool = False
    shapes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.shapes[0] if self.shapes else ""

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


def unwrap(words: list[Word]) -> tuple[list[Word], tuple[str, ...]]:
    """Strip command wrappers: `env A=1 xargs -0 git add --` is `git add --` run via env, xargs."""
    wrappers: list[str] = []
    index = 0
    while index < len(words):
        name = (words[index].literal or "").rsplit("/", 1)[-1]
        if name in _WRAPPERS_SIMPLE or name in ("env", "sudo", "xargs", "timeout"):
            wrappers.append(name)
            index += 1
            duration_pending = name == "timeout"
            while index < len(words):
                text = words[index].literal or ""
                if text.startswith("-") and text != "--":
                    takes_value = (name == "xargs" and text in _XARGS_WITH_VALUE) or (
                        name in ("sudo", "env") and text in ("-u", "-g", "-C")
                    )
                    index += 2 if takes_value else 1
                elif name == "env" and "=" in text and not text.startswith("="):
                    index += 1
                elif duration_pending and re.match(r"^\d", text):
                    duration_pending = False
                    index += 1
                else:
                    break
            continue
        break
    return words[index:], tuple(wrappers)


@dataclass
class _Walk:
    path: str
    step: str | None
    block: int
    finally_: bool
    next_id: int
    events: list[CommandEvent] = field(default_factory=list)
    by_command: dict[int, list[CommandEvent]] = field(default_factory=dict)

    def add(
        self,
        command: Command,
        argv: list[Word],
        wrappers: tuple[str, ...],
        context: tuple[str, ...],
        *,
        pos_word: Word | None = None,
        owner: Node_ | None = None,
    ) -> None:
        at = pos_word.pos if pos_word is not None else command.pos
        event = CommandEvent(
            self.next_id,
            argv,
            self.path,
            at.row + 1,
            at.col + 1,
            self.step,
            self.block,
            context,
            command,
            wrappers,
            self.finally_,
            [w.shape for w in argv],
        )
        self.next_id += 1
        self.events.append(event)
        self.by_command.setdefault(id(owner or command), []).append(event)

    def words(self, words: list[Word], context: tuple[str, ...]) -> None:
        for word in words:
            for sub in word.subs:
                self.node(sub, (*context, "command-substitution"))

    def command(self, command: Command, context: tuple[str, ...]) -> None:
        self.words(command.words, context)
        for assign in command.assigns:
            if assign.value is not None:
                self.words([assign.value], context)
        argv, wrappers = unwrap(command.words)
        if argv:
            self.add(command, argv, wrappers, context)
        for redirect in command.redirects:
            if redirect.target is not None:
                self.words([redirect.target], context)
            if (
                redirect.op in _OUTPUT_OPS
                and redirect.target is not None
                and redirect.target.literal not in ("/dev/null", "-")
                and not (redirect.target.literal or "x").isdigit()
            ):
                marker = Word(redirect.op, WRITE, redirect.target.pos, literal=WRITE)
                self.add(command, [marker, redirect.target], (), context, pos_word=redirect.target)
        if argv and argv[0].literal == "tee":
            for target in argv[1:]:
                if not (target.literal or "").startswith("-"):
                    marker = Word("tee", WRITE, target.pos, literal=WRITE)
                    self.add(command, [marker, target], ("tee",), context, pos_word=target)
        if command.trap is not None:
            signals = ",".join(command.trap_signals)
            self.node(command.trap, (*context, f"trap:{signals}"))

    def node(self, node: Node_ | None, context: tuple[str, ...]) -> None:  # noqa: PLR0912
        if node is None:
            return
        if isinstance(node, Command):
            self.command(node, context)
        elif isinstance(node, Seq):
            for item in node.items:
                self.node(item, context)
        elif isinstance(node, AndOr):
            self.node(node.first, context)
            first = _summary(node.first)
            for op, right in node.rest:
                branch = "after-success" if op == "&&" else "after-failure"
                self.node(right, (*context, f"{branch}({first})"))
        elif isinstance(node, Not):
            self.node(node.body, (*context, "negated"))
        elif isinstance(node, Pipeline):
            for item in node.items:
                self.node(item, (*context, "pipeline"))
        elif isinstance(node, If):
            for index, (cond, body) in enumerate(node.clauses):
                self.node(cond, (*context, "if-condition"))
                label = "then" if index == 0 else "elif"
                self.node(body, (*context, f"{label}({_summary(cond)})"))
            if node.orelse is not None:
                conds = " / ".join(_summary(c) for c, _ in node.clauses)
                self.node(node.orelse, (*context, f"else({conds})"))
        elif isinstance(node, Loop):
            if node.words:
                self.words(node.words, context)
            self.node(node.cond, (*context, f"loop:{node.kind}", "loop-condition"))
            self.node(node.body, (*context, f"loop:{node.kind}"))
        elif isinstance(node, Case):
            for arm in node.arms:
                self.node(arm, (*context, "case-arm"))
        elif isinstance(node, Function):
            self.node(node.body, (*context, f"function:{node.name}"))
        elif isinstance(node, Subshell):
            self.node(node.body, (*context, "subshell"))
        elif isinstance(node, Arith):
            return
        for redirect in node.redirects if not isinstance(node, Command) else []:
            if redirect.op in _OUTPUT_OPS and redirect.target is not None:
                marker = Word(redirect.op, WRITE, redirect.target.pos, literal=WRITE)
                holder = Command(redirect.target.pos, words=[marker, redirect.target])
                self.add(
                    holder,
                    [marker, redirect.target],
                    (),
                    context,
                    pos_word=redirect.target,
                    owner=node,
                )


def _summary(node: Node_ | None) -> str:
    for command in iter_commands(node):
        text = " ".join(w.text for w in command.words[:4])
        return text if len(command.words) <= 4 else text + " …"
    return "…"


def iter_commands(node: Node_ | None) -> Iterator[Command]:
    """Every Command in `node`, in source order, including substitutions and trap handlers."""
    if node is None:
        return
    if isinstance(node, Command):
        for word in [*node.words, *(a.value for a in node.assigns if a.value is not None)]:
            for sub in word.subs:
                yield from iter_commands(sub)
        yield node
        if node.trap is not None:
            yield from iter_commands(node.trap)
        return
    for child in children(node):
        yield from iter_commands(child)


def children(node: Node_) -> list[Node_]:
    if isinstance(node, Seq):
        return list(node.items)
    if isinstance(node, AndOr):
        return [n for n in (node.first, *(right for _, right in node.rest)) if n is not None]
    if isinstance(node, Not):
        return [node.body] if node.body is not None else []
    if isinstance(node, Pipeline):
        return list(node.items)
    if isinstance(node, If):
        found: list[Node_] = [n for clause in node.clauses for n in clause]
        return found + ([node.orelse] if node.orelse is not None else [])
    if isinstance(node, Loop):
        return [n for n in (node.cond, node.body) if n is not None]
    if isinstance(node, Case):
        return list(node.arms)
    if isinstance(node, (Function, Subshell)):
        return [node.body]
    return []


# Event ids are unique in a process: each extraction takes the next range of 2**40 ids, more
# than any block can hold commands (a block is bounded in bytes long before that), so two
# blocks' ids never meet.
_RANGE = 1 << 40
_ranges = itertools.count(1)


def extract(
    body: Seq, path: str, step: str | None, *, block: int, finally_: bool
) -> tuple[list[CommandEvent], dict[int, list[CommandEvent]]]:
    walk = _Walk(path, step, block, finally_, next(_ranges) * _RANGE)
    walk.node(body, ("finally",) if finally_ else ())
    return walk.events, walk.by_command


def visit(node: Node_ | None, cond: bool = False) -> list[tuple[Node_, bool]]:
    """Every node with whether it runs in a condition context (where `set -e` does not apply)."""
    found: list[tuple[Node_, bool]] = []
    _visit(node, cond, found)
    return found


def _visit(node: Node_ | None, cond: bool, found: list[tuple[Node_, bool]]) -> None:
    # Appending to one list: the generic rules walk every block, and nested generators were
    # the larger part of their time.
    if node is None:
        return
    found.append((node, cond))
    if isinstance(node, Command):
        for word in command_words(node):
            for sub in word.subs:
                _visit(sub, True, found)
        if node.trap is not None:
            _visit(node.trap, cond, found)
        return
    if isinstance(node, If):
        for test, body in node.clauses:
            _visit(test, True, found)
            _visit(body, cond, found)
        _visit(node.orelse, cond, found)
        return
    if isinstance(node, AndOr):
        # Every command of a chain but the last is tested by the operator after it.
        links = [node.first, *(right for _, right in node.rest)]
        for index, link in enumerate(links):
            _visit(link, True if index < len(links) - 1 else cond, found)
        return
    if isinstance(node, Not):
        _visit(node.body, True, found)
        return
    if isinstance(node, Loop):
        _visit(node.cond, True, found)
        _visit(node.body, cond, found)
        return
    for child in children(node):
        _visit(child, cond, found)


def command_words(command: Command) -> list[Word]:
    words = list(command.words)
    words += [a.value for a in command.assigns if a.value is not None]
    for redirect in command.redirects:
        words += [w for w in (redirect.target, redirect.body) if w is not None]
    return words


def node_words(node: Node_) -> list[Word]:
    if isinstance(node, Command):
        return command_words(node)
    words = [w for r in node.redirects for w in (r.target, r.body) if w is not None]
    if isinstance(node, Loop) and node.words:
        words += node.words
    if isinstance(node, Case) and node.subject is not None:
        words.append(node.subject)
    return words
