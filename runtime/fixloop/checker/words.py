"""Reading bash words: quotes removed, expansions recorded as variable reads, substitutions parsed.

A word's `shape` is what a pattern is matched against: `"$wt"`, `"${wt}"` and `$wt` all have the
shape `$wt`; `"$dir/x"` has `$dir/x`; `$(…)` stays `$(…)`. Every `$name` read is kept with its
position and whether it was quoted or defaulted (`${x:-…}`), for the generic rules.

A check reads every word of every block, so the reader does little per word: a word of one token
(most argv words) is built at once; the reads and substitutions of the others are gathered on
two stacks shared by all words (a substitution's own words push theirs on top and take them off
again) and given to the `Word` when it is made, not added to it one at a time. An ASCII text (most
blocks) is sliced as text and its byte columns are character columns: nothing is decoded per word.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern

from tree_sitter import Node

from fixloop.checker.tree import Node_, Pos, Read, Seq, Word

# How deep the checker follows nesting (statements in statements, expansions in expansions).
# Real blocks stay under 10 levels; deeper input is a block the checker reports and skips, never
# a RecursionError.
MAX_NESTING = 60


class TooDeep(Exception):
    """Nested past MAX_NESTING. The reader that raises it is dropped with its parse, so depth and
    stacks are not restored on the way out."""


class SourceReader:
    """Positions, text and words of one parsed text; `seq` (statements) comes from the subclass."""

    depth = 0

    def __init__(self, source: bytes, origin: Pos) -> None:
        self.source = source
        self.origin = origin
        lines = source.split(b"\n")
        # The text as a string when it is ASCII (a byte slice of it is a character slice); else
        # its lines, and which of them hold characters of more than one byte.
        self.chars = source.decode("ascii") if source.isascii() else None
        self.lines = None if self.chars is not None else lines
        self.wide = None if self.chars is not None else [not line.isascii() for line in lines]
        # One int per row, shared by every position on it: a row past 256 is a new int object
        # each time it is computed, a fifth of the positions' memory in a large block.
        self.rows = list(range(origin.row, origin.row + len(lines)))
        # The reads and substitutions of the words being read, innermost on top (see above).
        self.reads: list[Read] = []
        self.subs: list[Node_] = []
        # How many expansions were read so far: a word whose reading adds none is literal.
        self.expansions = 0

    def pos(self, node: Node) -> tuple[int, int]:
        row, col = node.start_point
        if col and self.wide is not None and self.wide[row]:
            assert self.lines is not None
            col = len(self.lines[row][:col].decode("utf-8", "replace"))
        if row:
            return self.rows[row], col
        return self.origin.row, self.origin.col + col

    def text(self, node: Node) -> str:
        # Interned: a block says the same words again and again (`echo`, `--`, `"$wt"`); one
        # string each, not one per place (fixloop's own workflows: 530 texts for 1,998 words).
        chars = self.chars
        if chars is not None:
            return intern(chars[node.start_byte : node.end_byte])
        return intern(self.source[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    def seq(self, nodes: list[Node], at: tuple[int, int]) -> Seq:
        """Statements, for command substitutions; the syntax builder provides it."""
        raise NotImplementedError

    def word(self, node: Node, kind: str | None = None) -> Word:
        """The word of `node` (`kind`: its type, when the caller has read it)."""
        if kind is None:
            kind = node.type
        if not node.child_count:
            # Most argv words are one token without expansions: the Word, built at once.
            if kind == "raw_string":
                text = self.text(node)
                inner = intern(text[1:-1])
                return Word(text, inner, self.pos(node), literal=inner, quoted=True)
            if kind not in _HANDLERS:
                text = self.text(node)
                shape = intern(_unescape(text)) if kind == "word" and "\\" in text else text
                return Word(text, shape, self.pos(node), literal=shape)
        reads, subs = self.reads, self.subs
        first_read, first_sub, expansions = len(reads), len(subs), self.expansions
        shape = intern(self.collect(node, False, kind))
        found: tuple[Read, ...] = ()
        if len(reads) > first_read:
            found = tuple(reads[first_read:])  # a tuple: no list's spare room kept per word
            del reads[first_read:]
            if shape.startswith("$"):
                whole = shape[1:]
                for read in found:
                    if read.name == whole:
                        read.whole = True
        substitutions: list[Node_] | tuple[()] = ()
        if len(subs) > first_sub:
            substitutions = subs[first_sub:]
            del subs[first_sub:]
        return Word(
            self.text(node),
            shape,
            self.pos(node),
            reads=found,
            subs=substitutions,
            literal=shape if self.expansions == expansions else None,
            quoted=kind in _QUOTED_KINDS or _has_quoted_part(node),
        )

    def heredoc(self, node: Node, expands: bool) -> Word:
        """A heredoc's body as a word: its text as written, and its reads and substitutions
        when its delimiter is unquoted (bash expands the body then)."""
        text = self.text(node)
        if not expands:
            return Word(text, text, self.pos(node))
        reads, subs = len(self.reads), len(self.subs)
        self.collect(node, True)
        found = self.reads[reads:] or ()
        del self.reads[reads:]
        inner = self.subs[subs:]
        del self.subs[subs:]
        return Word(text, text, self.pos(node), reads=found, subs=inner)

    def collect(self, node: Node, quoted: bool, kind: str | None = None) -> str:
        """The shape of `node` (`kind`: its type, when the caller has read it), its reads and
        substitutions pushed on the reader's stacks."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise TooDeep
        if kind is None:
            kind = node.type
        # The two most frequent parts of a word first, without a handler's call.
        if kind == "string_content":
            shape = _unquoted(self.text(node))
        elif kind == "simple_expansion":
            shape = self._simple_expansion(node, quoted)
        else:
            handler = _HANDLERS.get(kind)
            if handler is not None:
                shape = handler(self, node, quoted)
            elif node.named_child_count and kind not in ("word", "number"):
                shape = "".join([self.collect(c, quoted) for c in node.named_children])
            else:
                shape = self.text(node)
                if kind == "word" and "\\" in shape:
                    shape = _unescape(shape)
        self.depth -= 1
        return shape

    def _simple_expansion(self, node: Node, quoted: bool) -> str:
        named = node.named_children
        if len(named) == 1 and (only := named[0]).type == "variable_name":
            # `$name`, the most frequent expansion: no operator, no `#`, nothing else inside.
            self.expansions += 1
            name = self.text(only)
            if not name.isdigit():
                self.reads.append(Read(name, self.pos(only), quoted, False, False))
            return f"${name}"
        return self._expansion(node, quoted, named)

    def _expansion(self, node: Node, quoted: bool, named: list[Node] | None = None) -> str:
        """`${…}` (and `$@`, `$1` …): `named`, its named children, when the caller has them."""
        self.expansions += 1
        if named is None:
            named = node.named_children
        holder = next((c for c in named if c.type in _NAME_TYPES), None)
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
            self.reads.append(Read(name, self.pos(name_node), quoted, defaulted or length, False))
        for child in named:
            if child is not holder:
                self.collect(child, quoted)
        return f"${name}"

    def _substitution(self, node: Node, quoted: bool) -> str:
        self.expansions += 1
        inner = [c for c in node.named_children if c.type != "comment"]
        self.subs.append(self.seq(inner, self.pos(node)))
        return "$(…)"

    def _string(self, node: Node, quoted: bool) -> str:
        parts = node.named_children
        if not parts:
            return self.text(node)[1:-1]
        if len(parts) == 1:  # `"$x"`, the most frequent string: its one part, without a list
            return self.collect(parts[0], True)
        return "".join([self.collect(c, True) for c in parts])

    def _arithmetic(self, node: Node, quoted: bool) -> str:
        self.expansions += 1
        for child in node.named_children:
            self.collect(child, quoted)
        return "$((…))"

    def _bare_name(self, node: Node, quoted: bool) -> str:
        # Inside $(( … )) a bare name is a read.
        name = self.text(node)
        self.reads.append(Read(name, self.pos(node), True, False, False))
        return name


# A word of these kinds is quoted; another is when it has a part of the first two (`a"$b"`).
_QUOTED_KINDS = frozenset(("string", "raw_string", "ansi_c_string"))


def _has_quoted_part(node: Node) -> bool:
    return any(child.type in ("string", "raw_string") for child in node.children)


def _unquoted(text: str) -> str:
    """The characters of a double-quoted stretch: `\\"`, `\\$` and `\\\\` lose their backslash."""
    if "\\" not in text:
        return text
    return text.replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\")


_NAME_TYPES = ("variable_name", "subscript", "special_variable_name")
_DEFAULTING = (":-", ":?", ":=", "-", "?", "=")
_Handler = Callable[[SourceReader, Node, bool], str]
_HANDLERS: dict[str, _Handler] = {
    "simple_expansion": SourceReader._simple_expansion,
    "expansion": SourceReader._expansion,
    "command_substitution": SourceReader._substitution,
    "process_substitution": SourceReader._substitution,
    "string": SourceReader._string,
    "arithmetic_expansion": SourceReader._arithmetic,
    "variable_name": SourceReader._bare_name,
    "raw_string": lambda reader, node, quoted: reader.text(node)[1:-1],
    "ansi_c_string": lambda reader, node, quoted: reader.text(node)[2:-1],
    "string_content": lambda reader, node, quoted: _unquoted(reader.text(node)),
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
