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


def test_the_frontmatter_is_split_as_the_lines_str_splitlines_breaks() -> None:
    import random

    from fixloop.documents.source import _split

    def by_lines(text: str) -> tuple[str, str, int] | None:  # the split as it is specified
        lines = text.splitlines(keepends=True)
        closing = next(
            (i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...")), None
        )
        if closing is None:
            return None
        return "".join(lines[1:closing]), "".join(lines[closing + 1 :]), closing

    # The head's end cuts `----` after its third '-', and a `\r\n` after its '\r'.
    for text in ("---\n" + "a" * 4088 + "\n----\n...\nbody", "---\n" + "a" * 4087 + "\n---\r\nb"):
        assert by_lines(text) is not None and _split(text) == by_lines(text)
    rng = random.Random(7)
    # Long parts too: a head of the text is split first, and a line may cross its end.
    parts = ["---", "...", "a: b", "", " ---", "---\x0b", "-- -", "....", "--- x", "#", "…"]
    parts += ["p" * 1363, "q" * 4093, "r" * 16380]
    breaks = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\r\r\n"]
    for _ in range(3000):
        text = "---" + rng.choice(breaks)
        for _ in range(rng.randrange(12)):
            text += rng.choice(parts) + rng.choice([*breaks, ""])
        assert _split(text) == by_lines(text), repr(text)
