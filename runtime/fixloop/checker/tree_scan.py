"""Reading tree-sitter's tree of a bash block: which nodes are statements, its statements one at
a time, where a parse broke, and where a large block may be cut into pieces that parse alone
(`syntax.parse_bash`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tree_sitter import Node

from fixloop.checker.tree import Broken

# Node types that are a statement of their own: a heredoc redirect may hold one (`heredoc_tail`).
STATEMENT_TYPES = {
    "command",
    "pipeline",
    "list",
    "negated_command",
    "redirected_statement",
    "subshell",
    "compound_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "function_definition",
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "test_command",
}


def statement_nodes(root: Node) -> Iterator[Node]:
    """The root's children, each a node of its own, let go when the next is asked for: a node
    keeps its children once asked for them, so a list of every statement's node held all of the
    tree's Python nodes (several times the syntax tree built from them) until the last was
    built."""
    cursor = root.walk()
    more = cursor.goto_first_child()
    while more:
        node = cursor.node
        if node is not None:
            yield node
        del node
        more = cursor.goto_next_sibling()


def piece_cuts(source: bytes, piece_bytes: int, parse: Callable[[bytes], Node]) -> list[int]:
    """Byte offsets, each at the start of a line, where `syntax._parse_pieces` may cut `source`
    into pieces of about `piece_bytes`; `parse` gives the root of a stretch's tree."""
    cuts: list[int] = []
    offset = 0
    size = piece_bytes
    while len(source) - offset > piece_bytes:
        window_end = source.rfind(b"\n", offset, offset + size) + 1
        if window_end <= offset or offset + size >= len(source):
            break
        cut = last_cut(parse(source[offset:window_end]))
        if cut is None:  # one statement fills the window: look further (it may be broken)
            size *= 2
            continue
        for _ in range(cut):
            offset = source.index(b"\n", offset) + 1
        cuts.append(offset)
        size = piece_bytes
    return cuts


def last_cut(root: Node) -> int | None:
    """The last row where a top-level statement starts a line after every statement before it
    ended, all of them without error."""
    cut = None
    previous_end = -1  # the last row the statements before the candidate reach
    for child in root.named_children:
        row, col = child.start_point
        # Not at an ERROR: after a command whose last line ends in `\` at the end of the text,
        # tree-sitter ends the command there and puts an empty ERROR on the next line, though
        # in the whole text the command goes on.
        if col == 0 and row > previous_end >= 0 and child.type != "ERROR":
            cut = row
        if child.has_error or child.is_missing:
            break
        end_row, end_col = child.end_point
        previous_end = end_row if end_col else end_row - 1
    return cut


_SEPARATORS = {";", ";;", "&", "\n", "|", "&&", "||"}


def where_it_broke(
    root: Node, pos: Callable[[Node], tuple[int, int]], text: Callable[[Node], str]
) -> list[Broken]:
    """Where tree-sitter's tree of a block that did not parse shows the break: each missing
    token, and the first token of each stretch the parser could not place."""
    found: list[Broken] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            found.append(Broken(pos(node), text="", missing=node.type))
            continue
        if node.type == "ERROR":
            # Point at the first token the parser could not place, not at the start of the stretch.
            culprit = next(
                (c for c in node.children if not c.is_named and c.type not in _SEPARATORS), None
            )
            if culprit is None and not any(c.type == "ERROR" for c in node.children):
                culprit = node
            if culprit is not None:
                found.append(Broken(pos(culprit), text=text(culprit)))
        # An ERROR leaf (the token the parser gave up on, such as an unclosed quote running to
        # the end of the block) does not count as `has_error` itself.
        stack += [
            c for c in reversed(node.children) if c.has_error or c.is_missing or c.type == "ERROR"
        ]
    return found
