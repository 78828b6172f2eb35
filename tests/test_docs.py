"""Promises about the documentation: one index of every page, and user pages that speak of the
product (where a design came from is history, kept on the history pages)."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
INDEX = DOCS / "README.md"
HISTORY_HEADING = "## History and measurements"
HISTORY_WORDS = re.compile(r"\bseeds?\b|(?<![-\w])issue #?\d+\b|\blead's decision\b", re.IGNORECASE)


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)#\s]+\.md)\)", text)


def test_the_index_lists_every_page_and_only_pages_that_exist() -> None:
    listed = _links(INDEX.read_text(encoding="utf-8"))
    pages = sorted(p.name for p in DOCS.glob("*.md") if p != INDEX)
    assert sorted(name for name in listed if "/" not in name) == pages
    for name in listed:
        assert (DOCS / name).is_file(), name
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/README.md)" in readme


def history_pages() -> set[str]:
    text = INDEX.read_text(encoding="utf-8")
    assert HISTORY_HEADING in text
    return set(_links(text.split(HISTORY_HEADING, 1)[1].split("\n## ", 1)[0]))


def test_user_pages_say_what_things_are_not_where_they_came_from() -> None:
    history = history_pages()
    assert "provenance.md" in history
    user_pages = [REPO_ROOT / "README.md", INDEX]
    user_pages += [p for p in sorted(DOCS.glob("*.md")) if p.name not in history]
    found = []
    for page in user_pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY_WORDS.search(line):
                found.append(f"{page.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert found == [], "history belongs in docs/provenance.md:\n" + "\n".join(found)
