"""REVIEW.md writer: golden output, and what it writes reads back as the same review."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.conftest import Golden

from fixloop.reviews.model import Review, ReviewFinding, ReviewSeverity
from fixloop.reviews.parser import parse_review
from fixloop.reviews.writer import render_review

GOLDENS = Path(__file__).parent / "goldens"

REVIEW = Review(
    phase="02",
    status="issues_found",
    reviewed="2025-01-31T10:00:00Z",
    depth="standard",
    files_reviewed_list=("src/auth.py", "src/db.py", "src/names.py"),
    findings=(
        ReviewFinding(
            id="CR-01",
            severity=ReviewSeverity.CRITICAL,
            title="SQL injection in login query",
            file="src/auth.py",
            line=42,
            files=("src/auth.py", "src/db.py"),
            issue="`username` is interpolated into the SQL string.",
            fix=(
                "Parameterize in both files:\n\n"
                '```python\n### not a heading\ncur.execute("?", (u,))\n```'
            ),
            heading_line=0,
        ),
        ReviewFinding(
            id="WR-01",
            severity=ReviewSeverity.WARNING,
            title='$(touch /tmp/pwned) `id` "; rm -rf ~',
            file="src/db.py",
            line=None,
            files=("src/db.py",),
            issue="leak",
            fix="close it",
            heading_line=0,
        ),
        ReviewFinding(
            id="IN-01",
            severity=ReviewSeverity.INFO,
            title="Naming",
            file="src/names.py",
            line=3,
            files=("src/names.py",),
            issue="short names",
            fix="rename",
            heading_line=0,
        ),
    ),
)


def test_review_golden(golden: Golden) -> None:
    golden.check(GOLDENS / "review.md", render_review(REVIEW))


def test_review_round_trips_through_the_parser() -> None:
    parsed = parse_review(render_review(REVIEW), Path("02-REVIEW.md"))
    without_lines = tuple(dataclasses.replace(f, heading_line=0) for f in parsed.findings)
    assert dataclasses.replace(parsed, findings=without_lines, title="") == REVIEW


def test_clean_review_golden(golden: Golden) -> None:
    clean = Review(phase="3.1", status="clean", reviewed="2025-02-01T00:00:00Z")
    golden.check(GOLDENS / "review-clean.md", render_review(clean))
    assert parse_review(render_review(clean), Path("R.md")).status == "clean"
