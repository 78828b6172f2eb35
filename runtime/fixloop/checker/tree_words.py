"""The leaves of the syntax tree: words, the variables they read, and positions.

A large block has an object per word and read, the most numerous objects of its tree (`tree.py`
holds the statements). A position is two slots, `row` and `col`, not an object of its own: a
`Pos` per word was a sixth of a large block's memory. `pos` makes one when asked (for a
diagnostic).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

if TYPE_CHECKING:
    from fixloop.checker.tree import Node_


class Pos(NamedTuple):
    """0-based row and character column inside the parsed text."""

    row: int
    col: int


class _Slotted:
    """Equality and repr over a class's `_fields`, as the dataclasses these were gave them."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclasses were

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"


class _Placed(_Slotted):
    """Something at a row and column of the parsed text."""

    __slots__ = ("col", "row")
    row: int
    col: int

    @property
    def pos(self) -> Pos:
        return Pos(self.row, self.col)


_QUOTED, _DEFAULTED, _WHOLE = 1, 2, 4


class Read(_Placed):
    """A variable expansion: `$name`, `${name…}`.

    Its three booleans are one small int: four slots, not six, make the object 16 bytes
    smaller (objects come in sizes of 16 bytes), and a large block has a read per few words."""

    __slots__ = ("_flags", "name")
    _fields: ClassVar[tuple[str, ...]] = ("name", "row", "col", "quoted", "defaulted", "whole")
    name: str
    _flags: int

    def __init__(
        self, name: str, pos: tuple[int, int], quoted: bool, defaulted: bool, whole: bool
    ) -> None:
        self.name = name
        self.row, self.col = pos
        self._flags = (
            (_QUOTED if quoted else 0) | (_DEFAULTED if defaulted else 0) | (_WHOLE if whole else 0)
        )

    @property
    def quoted(self) -> bool:
        return bool(self._flags & _QUOTED)

    @property
    def defaulted(self) -> bool:
        """`${x:-…}`, `${x:?…}`, `${x:=…}`: never silently empty."""
        return bool(self._flags & _DEFAULTED)

    @property
    def whole(self) -> bool:
        """The expansion is the entire word (`"$x"` or `$x`)."""
        return bool(self._flags & _WHOLE)

    @whole.setter
    def whole(self, value: bool) -> None:
        self._flags = self._flags | _WHOLE if value else self._flags & ~_WHOLE

    def __hash__(self) -> int:  # type: ignore[override]  # immutable in use, as the frozen dataclass was
        return hash((self.name, self.row, self.col, self._flags))


class _WithSubs:
    """The reads and command substitutions of a word that has substitutions (few have)."""

    __slots__ = ("reads", "subs")

    def __init__(self, reads: Sequence[Read], subs: Sequence[Node_]) -> None:
        self.reads = reads
        self.subs = subs


_QUOTED_WORD, _LITERAL = 1, 2


class Word(_Placed):
    """A word as written and as a pattern sees it.

    A large block has an object per word, the most numerous of its tree, so a word has six
    slots, not eight (objects come in sizes of 16 bytes): `quoted` and whether `literal` is
    there are bits of one small int (a literal value is always the shape), and the reads and
    substitutions share a slot (the reads alone, or both in a `_WithSubs` when it has a
    substitution)."""

    __slots__ = ("_flags", "_inner", "shape", "text")
    _fields: ClassVar[tuple[str, ...]] = (
        "text",
        "shape",
        "row",
        "col",
        "reads",
        "subs",
        "literal",
        "quoted",
    )
    text: str  # source text as written
    shape: str  # quotes removed, `${x}` → `$x`, `$(…)` kept as `$(…)`
    # Most words have neither reads nor substitutions: the shared empty tuple.
    _inner: Sequence[Read] | _WithSubs
    _flags: int

    def __init__(
        self,
        text: str,
        shape: str,
        pos: tuple[int, int],
        *,
        reads: Sequence[Read] = (),
        subs: Sequence[Node_] = (),
        literal: str | None = None,
        quoted: bool = False,
    ) -> None:
        self.text = text
        self.shape = shape
        self.row, self.col = pos
        self._inner = _WithSubs(reads, subs) if subs else reads
        # The flags set here, not through the setters: a large block makes a word per token.
        flags = _QUOTED_WORD if quoted else 0
        if literal is not None:
            if literal != shape:
                raise ValueError(f"a word's literal value is its shape: {literal!r}, {shape!r}")
            flags |= _LITERAL
        self._flags = flags

    @property
    def literal(self) -> str | None:
        """The value when the word has no expansion at all: its shape."""
        return self.shape if self._flags & _LITERAL else None

    @literal.setter
    def literal(self, value: str | None) -> None:
        if value is not None and value != self.shape:
            raise ValueError(f"a word's literal value is its shape: {value!r}, {self.shape!r}")
        self._flags = self._flags | _LITERAL if value is not None else self._flags & ~_LITERAL

    @property
    def quoted(self) -> bool:
        """At least partly quoted."""
        return bool(self._flags & _QUOTED_WORD)

    @quoted.setter
    def quoted(self, value: bool) -> None:
        self._flags = self._flags | _QUOTED_WORD if value else self._flags & ~_QUOTED_WORD

    @property
    def reads(self) -> Sequence[Read]:
        inner = self._inner
        return inner.reads if isinstance(inner, _WithSubs) else inner

    @reads.setter
    def reads(self, value: Sequence[Read]) -> None:
        if isinstance(self._inner, _WithSubs):
            self._inner.reads = value
        else:
            self._inner = value

    @property
    def subs(self) -> Sequence[Node_]:
        """Command substitutions, parsed."""
        inner = self._inner
        return inner.subs if isinstance(inner, _WithSubs) else ()

    def add_read(self, read: Read) -> None:
        reads = self.reads
        if isinstance(reads, list):
            reads.append(read)
        else:
            self.reads = [*reads, read]

    def add_sub(self, sub: Node_) -> None:
        inner = self._inner
        if isinstance(inner, _WithSubs):
            if isinstance(inner.subs, list):
                inner.subs.append(sub)
            else:
                inner.subs = [*inner.subs, sub]
        else:
            self._inner = _WithSubs(inner, [sub])


def substitutions_in(words: Iterable[Word | None]) -> list[Node_]:
    """The command substitutions of `words`, in order; a word without any is skipped without a
    call (most words are)."""
    found: list[Node_] = []
    for word in words:
        if word is not None and type(word._inner) is _WithSubs:
            found += word._inner.subs
    return found


def reads_in(words: Iterable[Word]) -> list[Read]:
    """The variable reads of `words`, in order; a word without any is skipped without a call."""
    found: list[Read] = []
    for word in words:
        inner = word._inner
        if inner:  # the reads, or a `_WithSubs` holding them
            found += inner.reads if isinstance(inner, _WithSubs) else inner
    return found
