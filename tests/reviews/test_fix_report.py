"""REVIEW-FIX.md writer: the seed's frontmatter, Fixed/Skipped sections, status rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Golden

from fixloop.documents.source import parse_document
from fixloop.reviews.fix_report import (
    HUMAN_VERIFICATION,
    FixedEntry,
    ReviewFixReport,
    SkippedEntry,
    fix_report_path,
    render_fix_report,
)

GOLDENS = Path(__file__).parent / "goldens"

FIXED = FixedEntry(
    id="CR-01",
    title="SQL injection in login query",
    files=("src/auth.py", "src/db.py"),
    commit="abc1234",
    applied_fix="fixed: parameterized the query\nin both files",
)
LOGIC = FixedEntry(
    id="WR-02",
    title="Off-by-one in paging",
    files=("src/page.py",),
    commit="def5678",
    applied_fix="fixed: requires human verification: range end is now inclusive",
    status=HUMAN_VERIFICATION,
)
SKIPPED = SkippedEntry(
    id="WR-01",
    title='$(touch /tmp/pwned) `id` "; rm -rf ~',
    file="src/db.py:17",
    reason="skipped: fix caused errors, rolled back",
    original_issue="### not a heading\nconnection leaked",
)


def report(fixed: tuple[FixedEntry, ...], skipped: tuple[SkippedEntry, ...]) -> ReviewFixReport:
    return ReviewFixReport(
        phase="02",
        fixed_at="2025-01-31T11:00:00Z",
        review_path=".planning/phases/02-x/02-REVIEW.md",
        iteration=2,
        fixed=fixed,
        skipped=skipped,
    )


def test_partial_report_golden(golden: Golden) -> None:
    text = render_fix_report(report((FIXED, LOGIC), (SKIPPED,)))
    golden.check(GOLDENS / "review-fix-partial.md", text)
    meta = parse_document(text, Path("R.md")).metadata
    assert meta == {
        "phase": "02",
        "fixed_at": "2025-01-31T11:00:00Z",
        "review_path": ".planning/phases/02-x/02-REVIEW.md",
        "iteration": 2,
        "findings_in_scope": 3,
        "fixed": 2,
        "skipped": 1,
        "status": "partial",
    }
    assert text.count("\n### ") == 3  # an issue's own `###` line cannot open a section


def test_none_fixed_report_golden(golden: Golden) -> None:
    golden.check(GOLDENS / "review-fix-none.md", render_fix_report(report((), (SKIPPED,))))


@pytest.mark.parametrize(
    ("fixed", "skipped", "status"),
    [
        ((FIXED,), (), "all_fixed"),
        ((FIXED,), (SKIPPED,), "partial"),
        ((), (SKIPPED,), "none_fixed"),
    ],
)
def test_status(
    fixed: tuple[FixedEntry, ...], skipped: tuple[SkippedEntry, ...], status: str
) -> None:
    assert report(fixed, skipped).status == status


def test_report_path_sits_next_to_the_review() -> None:
    assert fix_report_path("p/02-REVIEW.md") == "p/02-REVIEW-FIX.md"
    assert fix_report_path("REVIEW.md") == "REVIEW-FIX.md"


def test_an_all_fixed_report_is_gsd_s_template_filled_in() -> None:
    # The golden is GSD's REVIEW-FIX.md template filled in by hand, not written by this code:
    # no regeneration flag touches it. Scalars are quoted where YAML needs it (a timestamp).
    text = render_fix_report(
        ReviewFixReport(
            phase="02-cart",
            number="02",
            fixed_at="2025-01-31T11:00:00Z",
            review_path=".planning/phases/02-cart/02-REVIEW.md",
            iteration=1,
            fixed=(
                FixedEntry(
                    "CR-01",
                    "SQL injection in login query",
                    ("src/auth.py", "src/db.py"),
                    "abc1234",
                    "parameterized the query in both files",
                ),
                FixedEntry(
                    "WR-02",
                    "Off-by-one in paging",
                    ("src/page.py",),
                    "def5678",
                    "range end is now inclusive",
                    status=HUMAN_VERIFICATION,
                ),
            ),
            skipped=(),
        )
    )
    assert text == (GOLDENS / "review-fix-gsd.md").read_text(encoding="utf-8")
