"""Reading bash words: quotes removed, expansions recorded as variable reads, substitutions parsed.

A word's `shape` is what a pattern is matched against: `"$wt"`, `"${wt}"` and `$wt` all have the
shape `$wt`; `"$dir/x"` has `$dir/x`; `$(…)` stays `$(…)`. Every `$name` read is kept with its
position and whether it was quoted or defaulted (`${x:-…}`), for the generic rules.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern

from tree_sitter import Node

from fixloop.checker.tree import Pos, Read, Seq, Word

# How deep the checker follows nesting (statements in statements, expansions in expansions).
# Real blocks stay under 10 levels; deeper input is a block the checker reports and skips, never
# a RecursionError.
MAX_NESTING = 60


class TooDeep(Exception):
    pass


class SourceReader:
    """Positions, text and words of one parsed text; `seq` (statements) comes from the subclass."""

    depth = 0

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise TooDeep

    def __init__(self, source: bytes, origin: Pos) -> None:
        self.source = source
        self.lines = source.split(b"\n")
        self.ascii = [line.isascii() for line in self.lines]
        self.origin = origin
        # One int per row, shared by every position on it: a row past 256 is a new int object
        # each time it is computed, a fifth of the positions' memory in a large block.
        self.rows = list(range(origin.row, origin.row + len(self.lines)))
        # Has the word being read an expansion? Saved and restored around each word, since a
        # substitution holds words of its own.
        self.expands = False

    def pos(self, node: Node) -> tuple[int, int]:
        row, col = node.start_point
        if col and row < len(self.lines) and not self.ascii[row]:
            col = len(self.lines[row][:col].decode("utf-8", "replace"))
        if row == 0:
            return self.origin.row, self.origin.col + col
        return self.rows[row], col

    def text(self, node: Node) -> str:
        # Interned: a block says the same words again and again (`echo`, `--`, `"$wt"`); one
        # string each, not one per place (fixloop's own workflows: 530 texts for 1,998 words).
        return intern(self.source[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    def seq(self, nodes: list[Node], at: Node) -> Seq:
        """Statements, for command substitutions; the syntax builder provides it."""
        raise NotImplementedError

    def word(self, node: Node) -> Word:
        if not node.child_count and (node.type == "raw_string" or node.type not in _HANDLERS):
            return self._leaf(node)
        word = Word(self.text(node), "", self.pos(node))
        outer, self.expands = self.expands, False
        try:
            word.shape = intern(self.collect(node, word, quoted=False))
            expands = self.expands
        finally:
            self.expands = outer
        word.quoted = node.type in ("string", "raw_string", "ansi_c_string") or any(
            c.type in ("string", "raw_string") for c in node.children
        )
        if not expands:
            word.literal = word.shape
        if word.reads:  # a tuple once read: no list's spare room kept per word
            word.reads = reads = tuple(word.reads)
            if word.shape.startswith("$"):
                whole = word.shape[1:]
                for read in reads:
                    read.whole = read.name == whole
        return word

    def _leaf(self, node: Node) -> Word:
        # Most argv words are one token without expansions: the same Word, built directly.
        text = self.text(node)
        if node.type == "raw_string":
            inner = intern(text[1:-1])
            return Word(text, inner, self.pos(node), literal=inner, quoted=True)
        shape = intern(_unescape(text)) if node.type == "word" and "\\" in text else text
        return Word(text, shape, self.pos(node), literal=shape)

    def collect(self, node: Node, word: Word, quoted: bool) -> str:
        """The shape of `node`, recording reads and substitutions into `word`."""
        self.deeper()
        try:
            return self._collect(node, word, quoted)
        finally:
            self.depth -= 1

    def _collect(self, node: Node, word: Word, quoted: bool) -> str:
        handler = _HANDLERS.get(node.type)
        if handler is not None:
            return handler(self, node, word, quoted)
        if node.named_children and node.type not in ("word", "number"):
            return "".join(self.collect(c, word, quoted) for c in node.children if c.is_named)
        text = self.text(node)
        return _unescape(text) if node.type == "word" and "\\" in text else text

    def _expansion(self, node: Node, word: Word, quoted: bool) -> str:
        self.expands = True
        named = node.named_children
        if node.type == "simple_expansion" and len(named) == 1 and named[0].type == "variable_name":
            # `$name`, the most frequent expansion: no operator, no `#`, nothing else inside.
            name = self.text(named[0])
            if not name.isdigit():
                word.add_read(Read(name, self.pos(named[0]), quoted, False, False))
            return f"${name}"
        holder = next((c for c in node.named_children if c.type in _NAME_TYPES), None)
        if holder is None:
            return self.text(node)
        name_node = holder
        if holder.type == "subscript":
            name_node = holder.child_by_field_name("name") or holder
        name = self.text(name_node)
        operator = node.child_by_field_name("operator")
        defaulted = operator is not None and self.text(operator) in _DEFAULTING
        length = any(c.type == "#" for c in node.children[:2])
        if name_node.type != "special_variable_name" and not name.isdigit():
            word.add_read(Read(name, self.pos(name_node), quoted, defaulted or length, False))
        for child in node.named_children:
            if child is not holder:
                self.collect(child, word, quoted)
        return f"${name}"

    def _substitution(self, node: Node, word: Word, quoted: bool) -> str:
        self.expands = True
        inner = [c for c in node.named_children if c.type != "comment"]
        word.add_sub(self.seq(inner, node))
        return "$(…)"

    def _string(self, node: Node, word: Word, quoted: bool) -> str:
        parts = [self.collect(c, word, True) for c in node.named_children]
        return "".join(parts) if node.named_children else self.text(node)[1:-1]

    def _arithmetic(self, node: Node, word: Word, quoted: bool) -> str:
        self.expands = True
        for child in node.named_children:
            self.collect(child, word, quoted)
        return "$((…))"

    def _bare_name(self, node: Node, word: Word, quoted: bool) -> str:
        # Inside $(( … )) a bare name is a read.
        word.add_read(Read(self.text(node), self.pos(node), True, False, False))
        return self.text(node)


_NAME_TYPES = ("variable_name", "subscript", "special_variable_name")
_DEFAULTING = (":-", ":?", ":=", "-", "?", "=")
_Handler = Callable[[SourceReader, Node, Word, bool], str]
_HANDLERS: dict[str, _Handler] = {
    "simple_expansion": SourceReader._expansion,
    "expansion": SourceReader._expansion,
    "command_substitution": SourceReader._substitution,
    "process_substitution": SourceReader._substitution,
    "string": SourceReader._string,
    "arithmetic_expansion": SourceReader._arithmetic,
    "variable_name": SourceReader._bare_name,
    "raw_string": lambda reader, node, word, quoted: reader.text(node)[1:-1],
    "ansi_c_string": lambda reader, node, word, quoted: reader.text(node)[2:-1],
    "string_content": lambda reader, node, word, quoted: (
        reader.text(node).replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\")
    ),
}


def _unescape(text: str) -> str:
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)
