"""YAML as fixloop reads every file a user gives it: bounded, and with the line of every key.

One loader for frontmatter, contract sidecars and scripted-backend scripts. It returns the data
and the file line of every key, so a problem in `tools:` is reported at the line of `tools:`.

Bounded, because YAML is a small language with a large blast radius: a few hundred bytes of
nested aliases (`b: [*a, *a, …]`, `c: [*b, *b, …]`) stand for billions of values, and anything
that walks the data (the key lines, pydantic, a rule) walks all of them. The text is limited in
size, in aliases, in nesting depth and in the number of values it expands to, and a file past a
limit is one located diagnostic, never a hang. The depth of a node is checked before it is
entered, so depth that comes from the input never reaches Python's recursion limit.

One pass over the composed tree (`_Reading`) finds the key positions, checks the limits and
builds the data of plain YAML (mappings, lists, scalars; no alias, merge key or other tag) as
PyYAML's safe constructor builds it; the rest is that constructor's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.records import record

KeyPath = tuple[str | int, ...]
_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "map", "seq"))
_Scalar, _Mapping, _Sequence = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
# libyaml's parser when PyYAML has it: the pure-Python scanner dominated `fixloop check` on large
# packs (bench/check_speed.py).
_PARSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# The implicit resolvers by first character: PyYAML's table, which its loaders share (read here
# rather than through the loader: an attribute of a libyaml parser is slower to find).
_IMPLICIT: dict[str | None, list[tuple[str, Any]]] = _PARSER.yaml_implicit_resolvers


class _Loader(_PARSER):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """PyYAML's safe loader, its node tags resolved in fewer steps.

    The composer asks `resolve` the tag of every node: PyYAML's, general over path resolvers
    and wildcard implicit resolvers (the safe loader has neither), was a tenth of the cost of
    loading a document. The tags are the same (tests/documents/test_located_yaml.py): the
    first of the implicit resolvers of the value's first character that matches, else text, a
    list or a mapping.
    """

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        if kind is _Scalar:
            if implicit[0]:
                tag: str
                for tag, regexp in _IMPLICIT.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return _STR
        return _MAP if kind is _Mapping else _SEQ

    # Called for every node too; PyYAML's follow the path resolvers, which there are none of.
    def descend_resolver(self, current_node: yaml.Node | None, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


@record(frozen=True)
class Limits:
    """What one YAML text may hold; the defaults are far above any hand-written document."""

    max_chars: int = 1_000_000
    max_aliases: int = 100
    max_depth: int = 64
    max_values: int = 100_000


DEFAULT_LIMITS = Limits()


@record(frozen=True)
class LocatedYaml:
    data: Any
    key_lines: dict[KeyPath, int] = field(default_factory=dict)
    key_columns: dict[KeyPath, int] = field(default_factory=dict)  # 1-based, like the lines
    # Keys whose plain value is followed by a `# …` comment on its line: YAML ends the value
    # there, which cuts a sentence such as `why: see (issue #12)` short.
    commented: frozenset[KeyPath] = frozenset()

    def line_of(self, *keys: str | int) -> int:
        return line_of(self.key_lines, keys)


def line_of(key_lines: dict[KeyPath, int], keys: KeyPath) -> int:
    """Line of the deepest known key on `keys`, falling back to its parents, then line 1."""
    path = tuple(keys)
    while path:
        if path in key_lines:
            return key_lines[path]
        path = path[:-1]
    return 1


class _TooBig(Exception):
    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


def load_located(
    text: str, *, display: str, rule: str, first_line: int = 1, limits: Limits = DEFAULT_LIMITS
) -> LocatedYaml:
    """Parse `text` (which starts at file line `first_line`); a FixloopError names the problem."""

    def fail(line: int, col: int, message: str) -> FixloopError:
        return FixloopError(Diagnostic(display, first_line + line, col + 1, rule, message))

    if len(text) > limits.max_chars:
        raise fail(0, 0, f"YAML of {len(text):,} characters; the limit is {limits.max_chars:,}")
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, col = (mark.line, mark.column) if mark else (0, 0)
        raise fail(line, col, f"invalid YAML: {problem}") from None
    except RecursionError:  # the pure-Python composer, when libyaml is missing
        raise fail(0, 0, f"YAML nested more than {limits.max_depth} levels deep") from None
    if node is None:
        return LocatedYaml(None)
    reading = _Reading(text, first_line, limits)
    try:
        data = reading.value(node, (), 1)
        if reading.aliases:
            _expanded_size(node, limits)
    except _TooBig as big:
        raise fail(big.node.start_mark.line, big.node.start_mark.column, big.message) from None
    if not reading.plain:
        try:
            data = SafeConstructor().construct_document(node)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            line, col = (mark.line, mark.column) if mark else (0, 0)
            raise fail(line, col, f"invalid YAML: {problem}") from None
    return LocatedYaml(data, reading.key_lines, reading.key_columns, frozenset(reading.commented))


# The scalars the constructor builds in one call (a `!!map` or `!!set` scalar takes it more).
_SCALARS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("null", "bool", "int", "float", "binary", "timestamp")
)
# Keys PyYAML's constructor rewrites before it builds a mapping (`<<: *base`, `=`).
_SPECIAL_KEYS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})


class _Reading:
    """One pass over a composed tree, in document order: the key positions of the tree as
    written (aliases not entered), its limits of depth and aliases, and its data.

    Most YAML fixloop reads is mappings, lists and text, whose data is built here as PyYAML's
    safe constructor builds it: the constructor, through a generator per mapping and list, was
    a third of the cost of loading it, and a second walk for the positions another. A tree with
    an alias (the constructor shares the object), a special key, a complex key, a tag other
    than a map's or a list's, or a scalar the constructor fails on is not `plain`: its data is
    the constructor's, whole, and so is its error. Every scalar but plain text is built by the
    constructor. Depth is checked before a node is entered, so the recursion is bounded by
    `Limits.max_depth`.
    """

    def __init__(self, text: str, first_line: int, limits: Limits) -> None:
        self.key_lines: dict[KeyPath, int] = {}
        self.key_columns: dict[KeyPath, int] = {}
        self.commented: set[KeyPath] = set()
        self.aliases = 0
        self.plain = True
        # A text without '#' has no comment to look for after a value.
        self._text_lines = text.splitlines() if "#" in text else None
        self._first_line, self._limits = first_line, limits
        self._seen: set[int] = set()
        # Only an alias (`*name`) makes a node appear twice: without one, a text scalar need
        # not be counted among the nodes seen, and is read where it stands.
        self._unaliased = "*" not in text
        self._constructor = SafeConstructor()

    def value(self, node: yaml.Node, path: KeyPath, depth: int) -> Any:
        """The data of `node` at `path` (nonsense once the tree is not plain), its children
        walked; None for an alias, which is counted and not entered."""
        seen = self._seen
        if id(node) in seen:
            self.aliases += 1
            if self.aliases > self._limits.max_aliases:
                raise _TooBig(node, f"YAML uses more than {self._limits.max_aliases} aliases")
            self.plain = False
            return None
        seen.add(id(node))
        if depth > self._limits.max_depth:
            raise _TooBig(node, f"YAML nested more than {self._limits.max_depth} levels deep")
        kind = type(node)
        if kind is _Scalar:
            return node.value if node.tag == _STR else self._scalar(node)
        below = depth + 1
        if kind is _Mapping:
            return self._mapping(node, path, below)
        if kind is _Sequence:
            return self._sequence(node, path, below)
        raise TypeError(f"not a YAML node: {node!r}")

    def _sequence(self, node: yaml.Node, path: KeyPath, below: int) -> list[Any]:
        if node.tag != _SEQ:
            self.plain = False
        data = []
        lines, columns, first_line = self.key_lines, self.key_columns, self._first_line
        value, deep, unaliased = self.value, below > self._limits.max_depth, self._unaliased
        for index, item in enumerate(node.value):
            item_path = (*path, index)
            mark = item.start_mark
            lines[item_path] = mark.line + first_line
            columns[item_path] = mark.column + 1
            if type(item) is _Scalar and item.tag == _STR and not deep and unaliased:
                data.append(item.value)  # text, as in `_mapping`
            else:
                data.append(value(item, item_path, below))
        return data

    def _mapping(self, node: yaml.Node, path: KeyPath, below: int) -> dict[Any, Any]:
        if node.tag != _MAP:
            self.plain = False
        data = {}
        lines, columns, first_line = self.key_lines, self.key_columns, self._first_line
        text_lines, names = self._text_lines, set[str]()
        value, deep, unaliased = self.value, below > self._limits.max_depth, self._unaliased
        for key, child in node.value:
            # Text, the most of any YAML, is read here when no alias can have made it a node
            # seen before: a call of `value` for each cost more.
            if type(key) is _Scalar and key.tag == _STR and not deep and unaliased:
                built = key.value
            else:
                built = self._key(key, path, below)
            if type(key) is _Scalar:
                name: str = key.value  # a scalar's value is its text
                child_path = (*path, name)
                if name not in names:  # of a key written twice, the first stands
                    names.add(name)
                    mark = key.start_mark
                    lines[child_path] = mark.line + first_line
                    columns[child_path] = mark.column + 1
                if text_lines is not None and type(child) is _Scalar and child.style in (None, ""):
                    end = child.end_mark
                    row = text_lines[end.line] if end.line < len(text_lines) else ""
                    if "#" in row and _comment_starts(row[end.column :]):
                        self.commented.add(child_path)
            else:
                # A complex key's value shares the mapping's path (PyYAML's constructor refuses
                # such a key: nothing is read from this tree's positions).
                child_path = path
            if type(child) is _Scalar and child.tag == _STR and not deep and unaliased:
                inner = child.value
            else:
                inner = value(child, child_path, below)
            if self.plain:
                data[built] = inner
        return data

    def _key(self, key: yaml.Node, path: KeyPath, below: int) -> Any:
        """A mapping key that is not text: a complex or special one leaves the tree to PyYAML."""
        built = self.value(key, path, below)
        if type(key) is not _Scalar or key.tag in _SPECIAL_KEYS:
            self.plain = False
        return built

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag in _SCALARS:
            try:
                return self._constructor.construct_object(node)
            except (yaml.YAMLError, TypeError, ValueError):
                pass
        self.plain = False
        return None


def _comment_starts(rest: str) -> bool:
    """Does the rest of a line after a plain value hold a comment, which ended the value?"""
    return rest[:1] in (" ", "\t") and rest.lstrip().startswith("#")


def _children(node: yaml.Node) -> list[yaml.Node]:
    """A node's children in document order: each key before its value."""
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_size(root: yaml.Node, limits: Limits) -> None:
    """Count the values the aliases expand to, once per node; refuse a self-containing alias."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    for node, leaving in _postorder(root, open_nodes):
        if not leaving:
            continue
        kids = _children(node)
        size[id(node)] = 1 + sum(size[id(k)] for k in kids)
        height[id(node)] = 1 + max((height[id(k)] for k in kids), default=0)
        if size[id(node)] > limits.max_values:
            raise _TooBig(
                node, f"YAML expands to more than {limits.max_values:,} values through its aliases"
            )
        if height[id(node)] > limits.max_depth:
            raise _TooBig(node, f"YAML nested more than {limits.max_depth} levels deep")


def _postorder(root: yaml.Node, open_nodes: set[int]) -> Iterator[tuple[yaml.Node, bool]]:
    """Each distinct node entered and left once; an alias to a node still open is a cycle."""
    done: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            open_nodes.discard(id(node))
            done.add(id(node))
            yield node, True
            continue
        if id(node) in done:
            continue
        if id(node) in open_nodes:
            raise _TooBig(node, "an alias refers to the value that contains it")
        open_nodes.add(id(node))
        yield node, False
        stack.append((node, True))
        for child in reversed(_children(node)):
            if id(child) in open_nodes:
                raise _TooBig(child, "an alias refers to the value that contains it")
            if id(child) not in done:
                stack.append((child, False))
