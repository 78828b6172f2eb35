from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.documents.source import load_document, parse_document

DOC = """---
name: fixer
tools:
  - Read
  - Bash
fixloop:
  inputs:
    finding: {type: object}
---

# Body
text
"""


def test_key_lines_point_at_the_key() -> None:
    doc = parse_document(DOC, Path("a.md"))
    lines = DOC.splitlines()
    assert lines[doc.line_of("name") - 1].startswith("name:")
    assert lines[doc.line_of("tools", 1) - 1].strip() == "- Bash"
    assert lines[doc.line_of("fixloop", "inputs", "finding") - 1].strip().startswith("finding:")
    # An unknown nested key falls back to its nearest known parent.
    assert doc.line_of("fixloop", "inputs", "nope") == doc.line_of("fixloop", "inputs")


def test_body_line_is_the_first_line_after_the_closing_fence() -> None:
    doc = parse_document(DOC, Path("a.md"))
    assert DOC.splitlines()[doc.body_line - 2] == "---"
    assert doc.body.splitlines()[1] == "# Body"


def test_document_without_frontmatter_is_all_body() -> None:
    doc = parse_document("# Just text\n", Path("a.md"))
    assert doc.metadata == {}
    assert doc.body_line == 1


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("---\nname: a\ncolor: [blue\n---\nbody\n", 4, "invalid YAML"),
        ("---\nname: a\n  bad: indent\n---\n", 3, "invalid YAML"),
        ("---\nname: a\nbody never closes\n", 1, "never closed"),
        ("---\n- a\n- b\n---\n", 2, "must be a mapping"),
    ],
)
def test_bad_frontmatter_names_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(FixloopError) as caught:
        parse_document(text, Path("agents/bad.md"), base=Path.cwd())
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.path.endswith("bad.md")
    assert diagnostic.line == line
    assert fragment in diagnostic.message


def test_non_utf8_file_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.md"
    path.write_bytes(b"---\nname: caf\xe9\n---\n")
    with pytest.raises(FixloopError) as caught:
        load_document(path, tmp_path)
    assert caught.value.diagnostics[0].format().startswith("latin.md:1:1: encoding:")
