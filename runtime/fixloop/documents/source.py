"""A Markdown document split into YAML frontmatter and body, keeping line numbers.

python-frontmatter recognises the frontmatter; the split is done here by line so that the body keeps
its exact line offset (python-frontmatter strips blank lines around it). The YAML is read by the
one bounded loader (`located_yaml`), which gives the line of every key, so a problem in `tools:`
is reported at the line of `tools:`.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from frontmatter.default_handlers import YAMLHandler

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.files import read_text, resolved
from fixloop.documents.located_yaml import KeyPath, line_of, load_located
from fixloop.records import record


@record(frozen=True)
class SourceDocument:
    """One Markdown file: its metadata mapping, its body, and where each metadata key sits."""

    path: Path
    display: str
    text: str
    metadata: dict[str, Any]
    body: str
    body_line: int  # 1-based line number of the first body line in the file
    key_lines: dict[KeyPath, int] = field(default_factory=dict)
    commented: frozenset[KeyPath] = frozenset()  # see `LocatedYaml.commented`
    # Frontmatter read only the second way Claude Code reads it (values quoted, see
    # `claude_code.quote_lossy_values`): the keys quoted and the error of the first reading.
    requoted: tuple[str, ...] = ()
    yaml_error: Diagnostic | None = None

    def line_of(self, *keys: str | int) -> int:
        """Line of the deepest known key on `keys`, falling back to its parents, then line 1."""
        return line_of(self.key_lines, keys)

    def diagnostic(self, rule: str, message: str, *keys: str | int) -> Diagnostic:
        return Diagnostic(self.display, self.line_of(*keys), 1, rule, message)


def parse_document(
    text: str, path: Path, base: Path | None = None, *, lenient: bool = False
) -> SourceDocument:
    """Parse `text` (the content of `path`); raise FixloopError naming file:line on bad YAML.

    `lenient`: frontmatter that does not parse is read again as Claude Code reads it, after
    quoting values that hold YAML syntax (`description: Use when: x`); the document then records
    the keys quoted and the first error (`requoted`, `yaml_error`).
    """
    display = display_path(path, base)
    handler = YAMLHandler()
    if not handler.detect(text):
        return SourceDocument(path, display, text, {}, text, 1)
    split = _split(text)
    if split is None:
        raise FixloopError(
            Diagnostic(display, 1, 1, "frontmatter", "frontmatter opened by '---' is never closed")
        )
    raw_meta, body, closing = split
    meta_first_line = 2  # line 1 is the opening '---'
    requoted: tuple[str, ...] = ()
    yaml_error: Diagnostic | None = None
    try:
        located = load_located(
            raw_meta, display=display, rule="frontmatter", first_line=meta_first_line
        )
    except FixloopError as exc:
        if not lenient:
            raise
        # Here, not at the top: only frontmatter that does not parse is read the second way,
        # and every check imports this module (claude_code is the pack's Claude Code model).
        from fixloop.documents.claude_code import quote_lossy_values

        second = quote_lossy_values(raw_meta)
        if second is None:
            raise
        try:
            located = load_located(
                second[0], display=display, rule="frontmatter", first_line=meta_first_line
            )
        except FixloopError:
            raise exc from None
        requoted, yaml_error = tuple(second[1]), exc.diagnostics[0]
    loaded = {} if located.data is None else located.data
    if not isinstance(loaded, dict):
        raise FixloopError(
            Diagnostic(display, meta_first_line, 1, "frontmatter", "frontmatter must be a mapping")
        )
    body_line = closing + 2
    return SourceDocument(
        path,
        display,
        text,
        loaded,
        body,
        body_line,
        located.key_lines,
        located.commented,
        requoted,
        yaml_error,
    )


def _split(text: str) -> tuple[str, str, int] | None:
    """The frontmatter's text, the body's and the closing line's index, or None when unclosed.

    The lines as `str.splitlines` breaks them, the frontmatter between the first line and the
    first of the next lines that is `---` or `...` (line breaks aside). Only the head of the
    text is split, a larger one while no closing line is found: the body is most of a
    document. Every line of a head but its last is a line of the text.
    """
    size = 4096
    while True:
        whole = size >= len(text)
        lines = (text if whole else text[:size]).splitlines(keepends=True)
        complete = len(lines) if whole else len(lines) - 1
        closing = next(
            (i for i in range(1, complete) if lines[i].rstrip("\r\n") in ("---", "...")), None
        )
        if closing is not None:
            meta = "".join(lines[1:closing])
            return meta, text[len(lines[0]) + len(meta) + len(lines[closing]) :], closing
        if whole:
            return None
        size *= 4


# Documents read before, by path, text, display base and reading: `fixloop check` of a pack reads
# each document for the pack's validation and again for its bash, and a workflow's briefs are
# read by every workflow that dispatches them. Keyed by the text, so an edit is never missed.
_READ: dict[tuple[Path, str, Path | None, bool], SourceDocument] = {}
_READ_LIMIT = 4096


def forget_read_documents() -> None:
    """Drop the documents read so far (a check starts afresh, and frees them at its end)."""
    _READ.clear()


def load_document(path: Path, base: Path | None = None, *, lenient: bool = False) -> SourceDocument:
    try:
        text = read_text(path)
    except UnicodeDecodeError as exc:
        raise FixloopError(
            Diagnostic(display_path(path, base), 1, 1, "encoding", f"not UTF-8 text: {exc.reason}")
        ) from None
    except OSError as exc:
        raise FixloopError(
            Diagnostic(display_path(path, base), 1, 1, "io", exc.strerror or str(exc))
        ) from None
    key = (resolved(path), text, base, lenient)
    found = _READ.get(key)
    if found is None:
        found = parse_document(text, path, base, lenient=lenient)
        if len(_READ) >= _READ_LIMIT:
            _READ.clear()
        _READ[key] = found
    return found
