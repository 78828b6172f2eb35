"""A Markdown document split into YAML frontmatter and body, keeping line numbers.

python-frontmatter recognises the frontmatter; the split is done here by line so that the body keeps
its exact line offset (python-frontmatter strips blank lines around it). PyYAML's composer gives the
line of every key, so a problem in `tools:` is reported at the line of `tools:`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import SafeConstructor

from fixloop.diagnostics import Diagnostic, FixloopError, display_path

KeyPath = tuple[str | int, ...]
# libyaml's parser when PyYAML has it (one parse instead of two pure-Python ones: the frontmatter
# scan dominated `fixloop check` on large packs; see bench/check_speed.py).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class SourceDocument:
    """One Markdown file: its metadata mapping, its body, and where each metadata key sits."""

    path: Path
    display: str
    text: str
    metadata: dict[str, Any]
    body: str
    body_line: int  # 1-based line number of the first body line in the file
    key_lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, *keys: str | int) -> int:
        """Line of the deepest known key on `keys`, falling back to its parents, then line 1."""
        path: KeyPath = tuple(keys)
        while path:
            if path in self.key_lines:
                return self.key_lines[path]
            path = path[:-1]
        return 1

    def diagnostic(self, rule: str, message: str, *keys: str | int) -> Diagnostic:
        return Diagnostic(self.display, self.line_of(*keys), 1, rule, message)


def _walk(node: yaml.Node, prefix: KeyPath, offset: int, out: dict[KeyPath, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            path = (*prefix, str(key_node.value))
            out[path] = key_node.start_mark.line + offset
            _walk(value_node, path, offset, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            path = (*prefix, index)
            out[path] = item.start_mark.line + offset
            _walk(item, path, offset, out)


def parse_document(text: str, path: Path, base: Path | None = None) -> SourceDocument:
    """Parse `text` (the content of `path`); raise FixloopError naming file:line on bad YAML."""
    display = display_path(path, base)
    handler = YAMLHandler()
    if not handler.detect(text):
        return SourceDocument(path, display, text, {}, text, 1)
    lines = text.splitlines(keepends=True)
    closing = next(
        (i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...")), None
    )
    if closing is None:
        raise FixloopError(
            Diagnostic(display, 1, 1, "frontmatter", "frontmatter opened by '---' is never closed")
        )
    raw_meta = "".join(lines[1:closing])
    body = "".join(lines[closing + 1 :])
    meta_first_line = 2  # line 1 is the opening '---'
    try:
        node = yaml.compose(raw_meta, Loader=_LOADER)
        loaded = SafeConstructor().construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = meta_first_line + (mark.line if mark else 0)
        col = 1 + (mark.column if mark else 0)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FixloopError(
            Diagnostic(display, line, col, "frontmatter", f"invalid YAML: {problem}")
        ) from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise FixloopError(
            Diagnostic(display, meta_first_line, 1, "frontmatter", "frontmatter must be a mapping")
        )
    key_lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), meta_first_line, key_lines)
    body_line = closing + 2
    return SourceDocument(path, display, text, loaded, body, body_line, key_lines)


def load_document(path: Path, base: Path | None = None) -> SourceDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise FixloopError(
            Diagnostic(display_path(path, base), 1, 1, "encoding", f"not UTF-8 text: {exc.reason}")
        ) from None
    except OSError as exc:
        raise FixloopError(
            Diagnostic(display_path(path, base), 1, 1, "io", exc.strerror or str(exc))
        ) from None
    return parse_document(text, path, base)
