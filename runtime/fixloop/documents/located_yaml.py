"""YAML as fixloop reads every file a user gives it: bounded, and with the line of every key.

One loader for frontmatter, contract sidecars and scripted-backend scripts. It returns the data
and the file line of every key, so a problem in `tools:` is reported at the line of `tools:`.

Bounded, because YAML is a small language with a large blast radius: a few hundred bytes of
nested aliases (`b: [*a, *a, …]`, `c: [*b, *b, …]`) stand for billions of values, and anything
that walks the data (the key lines, pydantic, a rule) walks all of them. The text is limited in
size, in aliases, in nesting depth and in the number of values it expands to, and a file past a
limit is one located diagnostic, never a hang. The walk is iterative, so depth that comes from
the input never reaches Python's recursion limit.

The data of plain YAML (mappings, lists, scalars; no alias, merge key or other tag) is built
directly from the composed tree, as PyYAML's safe constructor builds it; the rest by that
constructor (`_constructed`).
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
# libyaml's parser when PyYAML has it: the pure-Python scanner dominated `fixloop check` on large
# packs (bench/check_speed.py).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, col = (mark.line, mark.column) if mark else (0, 0)
        raise fail(line, col, f"invalid YAML: {problem}") from None
    except RecursionError:  # the pure-Python composer, when libyaml is missing
        raise fail(0, 0, f"YAML nested more than {limits.max_depth} levels deep") from None
    if node is None:
        return LocatedYaml(None)
    try:
        key_lines, key_columns, commented = _walk(node, text, first_line, limits)
    except _TooBig as big:
        raise fail(big.node.start_mark.line, big.node.start_mark.column, big.message) from None
    try:
        data = _constructed(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, col = (mark.line, mark.column) if mark else (0, 0)
        raise fail(line, col, f"invalid YAML: {problem}") from None
    return LocatedYaml(data, key_lines, key_columns, frozenset(commented))


_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "map", "seq"))
# The scalars the constructor builds in one call (a `!!map` or `!!set` scalar takes it more).
_SCALARS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in ("null", "bool", "int", "float", "binary", "timestamp")
)
# Keys PyYAML's constructor rewrites before it builds a mapping (`<<: *base`, `=`).
_SPECIAL_KEYS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})


class _NotPlain(Exception):
    """A node the direct build leaves to PyYAML's constructor."""


def _constructed(root: yaml.Node) -> Any:
    """The data PyYAML's safe constructor builds from `root`, built directly when it is plain.

    Most YAML fixloop reads is mappings, lists and text: PyYAML's constructor, through a
    generator per mapping and list, was a third of the cost of loading it. A tree with an alias
    (the constructor shares the object), a special key, a complex key or a tag other than a map's
    or a list's is the constructor's, whole, and so is any tree the direct build fails on: its
    error is the constructor's own. Every scalar but plain text is still the constructor's. The
    depth was bounded by `_walk`, so the recursion is too.
    """
    constructor = SafeConstructor()
    seen: set[int] = set()

    def build(node: yaml.Node) -> Any:
        if id(node) in seen:
            raise _NotPlain
        seen.add(id(node))
        kind = type(node)
        if kind is yaml.ScalarNode:
            if node.tag == _STR:
                return node.value
            if node.tag in _SCALARS:
                return constructor.construct_object(node)
            raise _NotPlain
        if kind is yaml.MappingNode and node.tag == _MAP:
            data = {}
            for key, value in node.value:
                if type(key) is not yaml.ScalarNode or key.tag in _SPECIAL_KEYS:
                    raise _NotPlain
                data[build(key)] = build(value)
            return data
        if kind is yaml.SequenceNode and node.tag == _SEQ:
            return [build(item) for item in node.value]
        raise _NotPlain

    try:
        return build(root)
    except (_NotPlain, yaml.YAMLError, TypeError, ValueError):
        return SafeConstructor().construct_document(root)


Child = tuple[str | int | None, yaml.Node, yaml.Node]


def _children(node: yaml.Node) -> list[Child]:
    """A node's children: the key each stands under (None for a mapping's own keys), the child,
    and the node whose line is the key's line (a mapping key's own node)."""
    if isinstance(node, yaml.MappingNode):
        found: list[Child] = []
        for key, value in node.value:
            found.append((None, key, key))
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else None
            found.append((name, value, key))
        return found
    if isinstance(node, yaml.SequenceNode):
        return [(index, item, item) for index, item in enumerate(node.value)]
    return []


def _walk(
    root: yaml.Node, text: str, first_line: int, limits: Limits
) -> tuple[dict[KeyPath, int], dict[KeyPath, int], set[KeyPath]]:
    """Key positions of the tree as written (aliases not entered), checking depth and aliases."""
    key_lines: dict[KeyPath, int] = {}
    key_columns: dict[KeyPath, int] = {}
    commented: set[KeyPath] = set()
    lines: list[str] | None = None
    seen: set[int] = set()
    aliases = 0
    stack: list[tuple[yaml.Node, KeyPath, int]] = [(root, (), 1)]
    while stack:
        node, path, depth = stack.pop()
        if id(node) in seen:
            aliases += 1
            if aliases > limits.max_aliases:
                raise _TooBig(node, f"YAML uses more than {limits.max_aliases} aliases")
            continue
        seen.add(id(node))
        if depth > limits.max_depth:
            raise _TooBig(node, f"YAML nested more than {limits.max_depth} levels deep")
        children = _children(node)
        for key, child, at in reversed(children):
            if key is None:
                stack.append((child, path, depth + 1))
                continue
            child_path = (*path, key)
            key_lines[child_path] = at.start_mark.line + first_line
            key_columns[child_path] = at.start_mark.column + 1
            if isinstance(node, yaml.MappingNode) and _plain(child):
                lines = lines if lines is not None else text.splitlines()
                if _comment_follows(lines, child):
                    commented.add(child_path)
            stack.append((child, child_path, depth + 1))
    if aliases:
        _expanded_size(root, limits)
    return key_lines, key_columns, commented


def _plain(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.style in (None, "")


def _comment_follows(lines: list[str], node: yaml.Node) -> bool:
    row, col = node.end_mark.line, node.end_mark.column
    rest = lines[row][col:] if row < len(lines) else ""
    return rest[:1] in (" ", "\t") and rest.lstrip().startswith("#")


def _expanded_size(root: yaml.Node, limits: Limits) -> None:
    """Count the values the aliases expand to, once per node; refuse a self-containing alias."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    for node, leaving in _postorder(root, open_nodes):
        if not leaving:
            continue
        kids = [child for _, child, _ in _children(node)]
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
        for _, child, _ in reversed(_children(node)):
            if id(child) in open_nodes:
                raise _TooBig(child, "an alias refers to the value that contains it")
            if id(child) not in done:
                stack.append((child, False))
