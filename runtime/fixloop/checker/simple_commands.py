"""Simple commands: tree-sitter-bash's command-like nodes → the `Command` and `Arith` leaves.

A simple command is a leaf of the tree: argv words, prefix assignments and redirections, and
nothing that runs in another order. tree-sitter-bash spells it five ways: `command`,
`declaration_command`/`unset_command` (`local x=1`, `export X`), `variable_assignment(s)` on their
own, `test_command` (`[ … ]`, `[[ … ]]`) and `((…))`. Each becomes a `Command` whose first word is
the command name, or an `Arith`.

Separate from `syntax.py`, which builds the statements around these leaves (lists, pipelines,
control structures) and works around the places where tree-sitter-bash gets the structure wrong;
nothing here needs the rest of the tree. Words come from `words.py`.
"""

from __future__ import annotations

from tree_sitter import Node

from fixloop.checker.tree import Arith, Assign, Command, Read, Redirect, Word
from fixloop.checker.words import SourceReader

_DECLARATIONS = {"local", "export", "declare", "readonly", "typeset"}
_TEST_OPERATORS = (
    "binary_expression",
    "unary_expression",
    "parenthesized_expression",
    "ternary_expression",
    "postfix_expression",
)


class CommandReader(SourceReader):
    """Simple commands of one parsed text; statements (`seq`) come from the subclass."""

    def command(self, node: Node) -> Command:
        at = self.pos(node)
        words: list[Word] = []
        assigns: list[Assign] = []
        redirects: list[Redirect] = []
        for index, child in enumerate(node.children):
            kind = child.type
            if kind == "variable_assignment":
                assigns += self.assignments(child, "plain")
            elif kind == "command_name":
                names = child.named_children
                words.append(self.word(names[0] if names else child))
            elif child.is_named and kind not in ("comment", "file_redirect"):
                if node.field_name_for_child(index) == "argument":
                    words.append(self.word(child, kind))
            elif kind == "file_redirect":
                redirects.append(self.redirect(child))
        return Command(at, words, assigns or (), redirects=redirects or ())

    def redirect(self, node: Node) -> Redirect:
        """A file, here-string or heredoc redirection; a heredoc keeps its body as a word."""
        fd_node = node.child_by_field_name("descriptor")
        fd = self.text(fd_node) if fd_node else None
        if node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            body_node = next((c for c in node.children if c.type == "heredoc_body"), None)
            delimiter = self.text(start) if start else ""
            quoted = any(q in delimiter for q in "'\"\\")
            body = self.heredoc(body_node, expands=not quoted) if body_node is not None else None
            op = next((c.type for c in node.children if c.type in ("<<", "<<-")), "<<")
            return Redirect(op, None, fd, body)
        op = next((c.type for c in node.children if not c.is_named), ">")
        dest = node.child_by_field_name("destination")
        target = self.word(dest) if dest else None
        return Redirect(op, target, fd)

    def declaration(self, node: Node) -> Command:
        keyword = node.children[0].type if node.children else "declare"
        at = self.pos(node)
        words = [Word(keyword, keyword, at, literal=keyword)]
        kind = keyword if keyword in _DECLARATIONS else "plain"
        assigns: list[Assign] = []
        exported: list[str] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                assigns += self.assignments(child, kind)
            elif child.type == "variable_name":
                name = self.text(child)
                words.append(Word(name, name, self.pos(child), literal=name))
                if keyword == "export":
                    exported.append(name)
                elif kind in _DECLARATIONS:
                    assigns.append(Assign(name, None, self.pos(child), kind))
            elif child.type != "comment":
                words.append(self.word(child))
        return Command(at, words, assigns or (), exported or ())

    def assignments(self, node: Node, kind: str) -> list[Assign]:
        if node.type == "variable_assignments":
            return [a for c in node.named_children for a in self.assignments(c, kind)]
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node else ""
        if name_node is not None and name_node.type == "subscript":
            inner = name_node.child_by_field_name("name")
            name = self.text(inner) if inner else name
        value = self.word(value_node) if value_node else None
        return [Assign(name, value, self.pos(node), kind)]

    def test(self, node: Node) -> Command:
        """`[ … ]` / `[[ … ]]` as the argv bash hands to `test`: the operator tree flattened."""
        opener = node.children[0] if node.children else node
        at = self.pos(node)
        words = [self.word(opener)]
        for leaf in self._test_leaves(node):
            words.append(self.word(leaf))
        if node.children and node.children[-1].type in ("]", "]]"):
            words.append(self.word(node.children[-1]))
        return Command(at, words)

    def _test_leaves(self, node: Node) -> list[Node]:
        leaves: list[Node] = []
        for child in node.children:
            kind = child.type
            if kind in _TEST_OPERATORS:
                leaves += self._test_leaves(child)
            elif kind not in ("[", "[[", "]", "]]"):
                leaves.append(child)
        return leaves

    def arith(self, node: Node) -> Arith:
        arith = Arith(self.pos(node), text=self.text(node))
        stack = list(node.children)
        while stack:
            child = stack.pop()
            if child.type in ("postfix_expression", "unary_expression") and any(
                c.type in ("++", "--") for c in child.children
            ):
                arith.increments = True
            if child.type == "variable_name":
                arith.reads.append(Read(self.text(child), self.pos(child), True, False, False))
            stack += child.children
        return arith
