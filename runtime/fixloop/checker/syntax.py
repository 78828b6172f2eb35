"""Bash source → a small syntax tree of commands and control structures, with exact positions.

Why tree-sitter-bash and not bashlex: tree-sitter-bash covers the grammar the documents use
(`if/elif/else`, `case`, `&&`/`||`, `!`, loops including `until` and C-style `for`, functions,
subshells, `[[ … ]]`, `((…))`, heredocs with their bodies, `$(…)`, process substitution,
redirections with file descriptors); it gives every node a (row, byte column) so a diagnostic can
name the exact character; and it recovers from errors, so one broken line marks an ERROR node
instead of losing the whole block. bashlex 0.18 (tried on the same constructs) raises on `case`
arms, `select`, C-style `for`, `[[ -n $x ]]`, `$(( … ))`, `files+=(…)`, and on any syntax error
(one typo loses the whole block), and reports only character offsets.

Known gaps of tree-sitter-bash 0.25, handled here: `a=1 b=2⏎cmd` is parsed as one command with
prefix assignments (fixed by re-parsing with a `;` at the end of that line), `cat <<EOF | cmd`
hangs the pipeline inside the heredoc redirect (put back in order), and `! a | b` negates `a`
alone (bash negates the whole pipeline). Not handled: some quoted glob case patterns
(`*"/.."/*)`), reported as a `bash-syntax` warning when `bash -n` accepts the block.

It builds the small tree of `tree.py`: the statements here, the simple commands at its leaves in
`simple_commands.py`, their words in `words.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import pairwise

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from fixloop.checker.simple_commands import CommandReader
from fixloop.checker.tree import (
    Broken,
    Case,
    Command,
    Function,
    If,
    Loop,
    Node_,
    Not,
    Pipeline,
    Pos,
    Script,
    Seq,
    Subshell,
    chain,
)
from fixloop.checker.tree_scan import STATEMENT_TYPES, piece_cuts, statement_nodes, where_it_broke
from fixloop.checker.words import MAX_NESTING, TooDeep


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


class _Builder(CommandReader):
    """Statements of one parsed text, and what tree-sitter-bash got wrong about them."""

    def __init__(self, source: bytes, origin: Pos) -> None:
        super().__init__(source, origin)
        self.errors: list[Broken] = []
        self.splits: list[int] = []  # byte offsets where a statement should have ended

    def restart(self) -> None:
        """Ready to build another statement of the same text: no errors or splits noted yet,
        and no depth or stacks left from a statement that nested too deep."""
        self.errors = []
        self.splits = []
        self.depth = 0
        self.reads.clear()
        self.subs.clear()

    def seq(self, nodes: Iterable[Node], at: tuple[int, int]) -> Seq:
        items: list[Node_] = []
        for node in nodes:
            if node.is_named:
                kind = node.type
                if kind != "comment":
                    built = self.statement(node, kind)
                    if built is not None:
                        items.append(built)
        # Copied: a list appended to keeps room to grow (four places for one statement), and a
        # large block has a sequence per `$(…)`, clause and body.
        return Seq(at, items=items.copy())

    def statement(self, node: Node, kind: str | None = None) -> Node_ | None:
        """One statement (`kind`: its node's type, if read); nesting past MAX_NESTING stops the
        block's parse and drops this builder (its depth is not restored on the way out)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise TooDeep
        built = self._statement(node, node.type if kind is None else kind)
        self.depth -= 1
        return built

    def _statement(self, node: Node, kind: str) -> Node_ | None:  # noqa: PLR0912
        if kind == "command":
            return self.simple_command(node)
        if kind in ("variable_assignment", "variable_assignments"):
            return Command(self.pos(node), assigns=self.assignments(node, "plain"))
        if kind in ("declaration_command", "unset_command"):
            return self.declaration(node)
        if kind == "test_command":
            return self.test(node)
        if kind == "redirected_statement":
            return self.redirected(node)
        if kind == "list":
            return self.andor(node)
        if kind == "if_statement":
            return self.if_(node)
        if kind in ("while_statement", "for_statement", "c_style_for_statement"):
            return self.loop(node)
        if kind == "case_statement":
            return self.case(node)
        at = self.pos(node)
        if kind == "negated_command":
            inner = [c for c in node.named_children if c.type != "comment"]
            return Not(at, body=self.statement(inner[0]) if inner else None)
        if kind == "pipeline":
            items = self.flat_pipeline(node)
            if items and isinstance(items[0], Not) and items[0].body is not None:
                # `! a | b` negates the whole pipeline; tree-sitter-bash binds `!` to `a` alone.
                return Not(at, body=Pipeline(at, items=[items[0].body, *items[1:]]))
            return Pipeline(at, items=items)
        if kind == "subshell":
            self.refuse_empty(node.named_children, node, "( )")
            return Subshell(at, body=self.seq(node.named_children, at))
        if kind == "compound_statement":
            if node.children and node.children[0].type == "((":
                return self.arith(node)
            self.refuse_empty(node.named_children, node, "{ }")
            return self.seq(node.named_children, at)
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            built = self.statement(body) if body else Seq(at)
            if not isinstance(built, Seq):
                built = Seq(built.pos if built else Pos(0, 0), items=[built] if built else [])
            return Function(at, name=self.text(name) if name else "", body=built)
        if kind == "ERROR":
            # Error recovery: keep the statements tree-sitter still recognised inside the error.
            return self.seq(node.named_children, at)
        return None

    def flat_pipeline(self, node: Node) -> list[Node_]:
        items: list[Node_] = []
        pending = list(reversed(node.named_children))
        while pending:
            child = pending.pop()
            if child.type == "pipeline":
                pending += reversed(child.named_children)
            elif child.type != "comment":
                built = self.statement(child)
                if built is not None:
                    items.append(built)
        return items

    def andor(self, node: Node) -> Node_:
        """A chain `a && b || c`, walked down its left spine without recursion: tree-sitter nests
        a chain of N commands N deep."""
        links: list[tuple[str, Node]] = []
        current = node
        while current.type == "list":
            left = current.child_by_field_name("left") or current.named_children[0]
            right = current.child_by_field_name("right") or current.named_children[-1]
            operator = next((c.type for c in current.children if c.type in ("&&", "||")), "&&")
            links.append((operator, right))
            current = left
        links.reverse()
        return chain(
            self.pos(node), self.statement(current), [(op, self.statement(r)) for op, r in links]
        )

    def redirected(self, node: Node) -> Node_ | None:
        body_node = node.child_by_field_name("body")
        body = self.statement(body_node) if body_node else Command(self.pos(node))
        if body is None:
            return None
        tail: tuple[str, Node_] | None = None
        redirects = list(body.redirects)
        for child in node.children:
            if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                redirects.append(self.redirect(child))
                if child.type == "heredoc_redirect":
                    tail = self.heredoc_tail(child) or tail
        body.set_redirects(redirects or ())
        if tail is None:
            return body
        # `cat <<EOF | node …` and `cat <<EOF && x`: tree-sitter hangs the rest of the pipeline
        # or list inside the heredoc redirect; put it back where bash runs it.
        op, rest = tail
        if op == "|":
            more = rest.items if isinstance(rest, Pipeline) else [rest]
            return Pipeline(body.pos, items=[body, *more])
        return chain(body.pos, body, [(op, rest)])

    def heredoc_tail(self, node: Node) -> tuple[str, Node_] | None:
        """What tree-sitter hung inside a heredoc redirect: `|` or `&&`/`||` and the statement."""
        extra: tuple[str, Node_] | None = None
        for child in node.children:
            if child.type in ("&&", "||"):
                right = node.child_by_field_name("right")
                built = self.statement(right) if right else None
                if built is not None:
                    extra = (child.type, built)
            elif child.type == "pipeline":
                extra = ("|", Pipeline(self.pos(child), items=self.flat_pipeline(child)))
            elif child.type in STATEMENT_TYPES:
                built = self.statement(child)
                if built is not None:
                    extra = ("|", built)
        return extra

    def simple_command(self, node: Node) -> Command:
        """A `command` node, after noting where tree-sitter ran it into the next line."""
        children = node.children
        # Only what comes before the name can end a line too early (most commands start with it).
        if children and children[0].type != "command_name":
            self.note_split(node)
        command = self.command(node)
        words = command.words
        if len(words) >= 3 and words[0].shape == "trap":
            self.parse_trap(command)
        return command

    def note_split(self, node: Node) -> None:
        # tree-sitter-bash joins `a=1 b=2⏎w=x⏎TZ=UTC date` into one command named `date`; bash
        # ends a statement at each of those line ends: they are remembered for a `;` there.
        previous: Node | None = None
        for child in node.children:
            if previous is not None and previous.end_point[0] < child.start_point[0]:
                between = self.source[previous.end_byte : child.start_byte]
                if b"\\\n" not in between:
                    self.splits.append(previous.end_byte)
            if child.type == "command_name":
                return
            previous = child if child.type != "comment" else previous  # `;` never in a comment

    def parse_trap(self, command: Command) -> None:
        if command.name != "trap" or len(command.words) < 3:
            return
        handler = command.words[1]
        if handler.literal is None or handler.literal.startswith("-"):
            return
        inner_origin = Pos(handler.row, handler.col + (1 if handler.quoted else 0))
        handled = parse_bash(handler.literal, inner_origin, self.depth + 1)
        if handled.too_deep:
            raise TooDeep
        command.trap = handled.body

    def if_(self, node: Node) -> If:
        at = self.pos(node)
        result = If(at)
        cond: list[Node] = []
        body: list[Node] = []
        in_body = False
        # The conditions come before `then` (the grammar's only `condition` fields), the body
        # after it; `elif` and `else` are clauses of their own.
        for index, child in enumerate(node.children):
            if in_body:
                if child.is_named and child.type not in ("elif_clause", "else_clause"):
                    body.append(child)
            elif child.type == "then":
                in_body = True
            elif node.field_name_for_child(index) == "condition":
                cond.append(child)
        result.clauses.append((self.seq(cond, at), self.seq(body, at)))
        self.refuse_empty(body, node, "then")
        for child in node.named_children:
            kind = child.type
            if kind == "elif_clause":
                cond, body, in_body = [], [], False
                for sub in child.children:
                    if sub.type == "then":
                        in_body = True
                    elif sub.is_named:
                        (body if in_body else cond).append(sub)
                clause_at = self.pos(child)
                result.clauses.append((self.seq(cond, clause_at), self.seq(body, clause_at)))
                self.refuse_empty(body, child, "then")
            elif kind == "else_clause":
                body = child.named_children
                result.orelse = self.seq(body, self.pos(child))
                self.refuse_empty(body, child, "else")
        return result

    def refuse_empty(self, body: list[Node], at: Node, keyword: str) -> None:
        """bash refuses an empty `then`, `else`, `do`, `{ }` or `( )`; tree-sitter does not."""
        if not any(n.is_named and n.type != "comment" for n in body):
            reason = f"`{keyword}` holds no command (bash needs at least one, e.g. `:`)"
            self.errors.append(Broken(self.pos(at), reason=reason))

    def loop(self, node: Node) -> Loop:
        at = self.pos(node)
        body_node = node.child_by_field_name("body")
        body = Seq(at)
        if body_node is not None:
            statements = body_node.named_children
            if body_node.type == "do_group":
                self.refuse_empty(statements, body_node, "do")
            body = self.seq(statements, self.pos(body_node))
        if node.type == "for_statement":
            var = node.child_by_field_name("variable")
            values = [
                self.word(c)
                for i, c in enumerate(node.children)
                if node.field_name_for_child(i) == "value"
            ]
            kind = "select" if node.children and node.children[0].type == "select" else "for"
            has_in = any(c.type == "in" for c in node.children)
            var_name, words = (self.text(var) if var else None), (values if has_in else None)
            return Loop(at, kind=kind, var=var_name, words=words, body=body)
        if node.type == "c_style_for_statement":
            return Loop(at, kind="cfor", body=body)
        cond_nodes = [
            c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition"
        ]
        kind = "until" if node.children and node.children[0].type == "until" else "while"
        return Loop(at, kind=kind, cond=self.seq(cond_nodes, at), body=body)

    def case(self, node: Node) -> Case:
        value = node.child_by_field_name("value")
        result = Case(self.pos(node), subject=self.word(value) if value else None)
        for item in node.named_children:
            if item.type != "case_item":
                continue
            stmts = [
                c
                for i, c in enumerate(item.children)
                if c.is_named and item.field_name_for_child(i) != "value"
            ]
            result.arms.append(self.seq(stmts, self.pos(item)))
        return result


_START = Pos(0, 0)


# A block larger than this is parsed a piece at a time (`_pieces`): tree-sitter's tree of a whole
# 5 MB block is over 250 MB of nodes, more than fifty times the text. One piece's tree is alive
# at a time, about 33 times the piece: 2 MB at 64 KiB (8 MB at the 256 KiB it was).
PIECE_BYTES = 64 * 1024


def parse_bash(text: str, origin: Pos = _START, depth: int = 0) -> Script:
    """Parse `text`; positions are shifted so that row 0, column 0 of `text` is `origin`.

    `depth`: how deep the text already sits (a trap handler inside a block), so that nesting
    is limited across the handlers' own parses too.
    """
    source = text.encode("utf-8")
    if len(source) > PIECE_BYTES:
        pieced = _parse_pieces(source, origin, depth)
        if pieced is not None:
            return pieced
    return _parse_whole(source, origin, depth)


def _parse_whole(source: bytes, origin: Pos, depth: int) -> Script:
    tree = _parser().parse(source)
    builder = _Builder(source, origin)
    builder.depth = depth
    try:
        body = builder.seq(statement_nodes(tree.root_node), builder.pos(tree.root_node))
        if builder.splits:
            # A `;` at the end of a line moves no other character: positions stay exact.
            for offset in sorted(builder.splits, reverse=True):
                source = source[:offset] + b";" + source[offset:]
            del tree  # the first tree is not needed any more: one whole tree at a time
            tree = _parser().parse(source)
            builder = _Builder(source, origin)
            builder.depth = depth
            body = builder.seq(statement_nodes(tree.root_node), builder.pos(tree.root_node))
    except TooDeep:
        return Script(Seq(origin), [], too_deep=True)
    if tree.root_node.has_error:
        builder.errors += where_it_broke(tree.root_node, builder.pos, builder.text)
    # What tree-sitter could not parse is the root cause; an empty body may only follow from it.
    errors = sorted(builder.errors, key=lambda error: error.reason is not None)
    return Script(body, errors)


class TopLevel:
    """A text's top-level statements (`nodes`), parsed by tree-sitter at once and each built
    when asked, as `parse_bash` builds it in the whole text: a step library, whose functions a
    document reaches a few of. Nesting past MAX_NESTING raises TooDeep for that one alone."""

    def __init__(self, text: str, origin: Pos = _START) -> None:
        self.source = text.encode("utf-8")
        root = _parser().parse(self.source).root_node
        self.clean = not root.has_error  # tree-sitter found no syntax error in it
        self.nodes = [n for n in root.named_children if n.type != "comment"]
        # One builder for every statement built: its tables of the text's lines made once.
        self._builder = _Builder(self.source, origin)

    def build(self, node: Node) -> tuple[Node_ | None, bool]:
        """The statement, and whether tree-sitter ran one of its lines into the next: then it
        is built from a parse with a `;` there, as in `_parse_whole` (only its lines change)."""
        builder = self._builder
        builder.restart()
        built = builder.statement(node)
        if not builder.splits:
            return built, False
        source = self.source
        for offset in sorted(builder.splits, reverse=True):
            source = source[:offset] + b";" + source[offset:]
        root = _parser().parse(source).root_node
        again = next((n for n in root.named_children if n.start_byte == node.start_byte), None)
        rebuilt = built if again is None else _Builder(source, builder.origin).statement(again)
        return rebuilt, True


def _parse_pieces(source: bytes, origin: Pos, depth: int) -> Script | None:
    """A large text as the statements of consecutive pieces, each parsed and built on its own,
    so that only one piece's tree-sitter tree exists at a time; None when it cannot be cut.

    A piece ends where a top-level statement starts a line after the statements before it
    ended, all of them parsed without error. There bash (and tree-sitter) are back at the start
    of a script: nothing later changes how the statements before it read, and nothing before
    it (no open quote, heredoc or line continuation) changes the rest. Only the last piece may
    hold errors, so their order is the whole parse's; if any earlier piece does not parse
    cleanly on its own, the text is parsed whole.
    """
    cuts = _cuts(source)
    if not cuts:
        return None
    items: list[Node_] = []
    errors: list[Broken] = []
    bounds = [0, *cuts, len(source)]
    row = 0
    for index, (start, end) in enumerate(pairwise(bounds)):
        at = origin if index == 0 else Pos(origin.row + row, 0)
        piece = _parse_whole(source[start:end], at, depth)
        if piece.too_deep:
            return piece
        if piece.errors and index < len(bounds) - 2:
            return None
        items += piece.body.items
        errors += piece.errors
        row += source.count(b"\n", start, end)
    return Script(Seq(origin, items=items), errors)


def _cuts(source: bytes) -> list[int]:
    """Byte offsets, each at the start of a line, where `_parse_pieces` may cut `source`."""
    return piece_cuts(source, PIECE_BYTES, lambda piece: _parser().parse(piece).root_node)
