"""The promise table of docs/provenance.md stays true: every test it names exists.

The table says, for every promise of the five designs fixloop implements, whether it is kept (Y),
partly kept (P) or not (N), and names the tests that prove it. A renamed or deleted test would
leave a row claiming a proof that is gone; this test makes that a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO_ROOT

TABLE_HEADING = "## Every promise of the five designs"
DESIGNS = ("Seed 000", "Seed 001", "Seed 002", "Seed 003", "Seed 004")
MARKS = ("Y", "P", "N")
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")
DOC_LINK = re.compile(r"\]\(([\w.-]+\.md)(?:#([\w-]+))?\)")


@dataclass(frozen=True)
class Row:
    design: str
    line: int
    promise: str
    mark: str
    evidence: str


def rows_of(text: str) -> list[Row]:
    """The table rows under TABLE_HEADING, each with its design's heading and its line."""
    rows: list[Row] = []
    design = ""
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            inside = line.strip() == TABLE_HEADING
            continue
        if not inside:
            continue
        if line.startswith("### "):
            design = line[4:].strip()
            continue
        if not line.startswith("| ") or line.startswith("| promise |"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"provenance.md:{number}: a row has three cells, not {len(cells)}"
        rows.append(Row(design, number, *cells))
    return rows


def anchors(markdown: str) -> set[str]:
    """The anchors a Markdown page's headings get, as GitHub makes them."""
    return {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in markdown.splitlines()
        if line.startswith("#")
    }


def problems(rows: list[Row], root: Path) -> list[str]:
    """Every row that breaks the table's rules, as `provenance.md:LINE: what`."""
    found: list[str] = []
    sources: dict[str, str] = {}
    for row in rows:
        where = f"provenance.md:{row.line}"
        if row.mark not in MARKS:
            found.append(f"{where}: the mark is {row.mark!r}, not one of Y, P, N")
        references = TEST_REFERENCE.findall(row.evidence)
        if row.mark == "Y" and not references:
            found.append(f"{where}: a kept promise names the test that proves it")
        if row.mark in ("P", "N") and len(row.evidence) < 20:
            found.append(f"{where}: a {row.mark} row says what is missing and why")
        for path, name in references:
            if path not in sources:
                file = root / path
                sources[path] = file.read_text(encoding="utf-8") if file.is_file() else ""
            if not sources[path]:
                found.append(f"{where}: {path} does not exist")
            elif not re.search(rf"^\s*def {name}\(", sources[path], re.MULTILINE):
                found.append(f"{where}: {path} has no test {name}")
        for page, anchor in DOC_LINK.findall(row.evidence):
            doc = root / "docs" / page
            if not doc.is_file():
                found.append(f"{where}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(doc.read_text(encoding="utf-8")):
                found.append(f"{where}: docs/{page} has no heading #{anchor}")
    return found


def test_every_named_test_exists_and_every_row_is_marked() -> None:
    rows = rows_of((REPO_ROOT / "docs" / "provenance.md").read_text(encoding="utf-8"))
    designs = {row.design.split(":")[0] for row in rows}
    assert designs == set(DESIGNS), designs
    assert problems(rows, REPO_ROOT) == []


def test_a_broken_row_is_named_by_its_line(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_here() -> None:\n    pass\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## The user's choice\n")
    table = "\n".join(
        (
            TABLE_HEADING,
            "### Seed 000: a design",
            "| promise | Y/P/N | test or reason |",
            "|---|---|---|",
            "| kept | Y | `tests/test_x.py::test_here` |",
            "| renamed | Y | `tests/test_x.py::test_gone` |",
            "| moved | Y | `tests/test_y.py::test_here` |",
            "| unproved | Y | a sentence |",
            "| missing | N | no |",
            "| maybe | ? | `tests/test_x.py::test_here` |",
            "| linked | Y | `tests/test_x.py::test_here` ([page](page.md#the-users-choice)) |",
            "| stale link | Y | `tests/test_x.py::test_here` ([page](page.md#gone)) |",
            "| lost page | Y | `tests/test_x.py::test_here` ([other](other.md)) |",
        )
    )
    assert problems(rows_of(table), tmp_path) == [
        "provenance.md:6: tests/test_x.py has no test test_gone",
        "provenance.md:7: tests/test_y.py does not exist",
        "provenance.md:8: a kept promise names the test that proves it",
        "provenance.md:9: a N row says what is missing and why",
        "provenance.md:10: the mark is '?', not one of Y, P, N",
        "provenance.md:12: docs/page.md has no heading #gone",
        "provenance.md:13: docs/other.md does not exist",
    ]
