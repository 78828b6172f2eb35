"""The demo's closing summary, as text (golden file; regenerate with --update-goldens)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Golden

from fixloop.demo.run import DemoResult, SuiteTally
from fixloop.demo.summary import SCRIPTED_NOTICE, summary_lines
from fixloop.reviews.model import ReviewFinding, ReviewSeverity
from fixloop.schemas.results import EscalatedFinding, FixVerifyLoopOutput
from fixloop.workflows.review_fix.outcome import FindingOutcome, FindingStatus, ReviewFixResult

GOLDENS = Path(__file__).parent / "goldens"


def _finding(fid: str, title: str) -> ReviewFinding:
    return ReviewFinding(fid, ReviewSeverity.CRITICAL, title, "a.py", 3, ("a.py",), "", "", 1)


def test_summary_golden(golden: Golden) -> None:
    outcomes = [
        FindingOutcome(
            _finding("CR-01", "a"), 1, FindingStatus.FIXED, files=("a.py",), commit="abc1234"
        ),
        FindingOutcome(
            _finding("WR-01", "b"), 1, FindingStatus.NEEDS_HUMAN, files=("a.py",), commit="def5678"
        ),
        FindingOutcome(
            _finding("WR-02", "c"), 1, FindingStatus.SKIPPED, "fix caused errors, rolled back"
        ),
    ]
    review_fix = ReviewFixResult(
        "R.md", "issues_found", outcomes=outcomes, report_path=".planning/01-REVIEW-FIX.md"
    )
    escalated = EscalatedFinding(id=1, attempts=["a", "b"], evidence=None, staged_summary="x")
    result = DemoResult(
        directory=Path("/demo"),
        repo=Path("/demo/shelf"),
        base="0000000",
        tests_before=SuiteTally(8, 5),
        tests_after=SuiteTally(8, 1),
        review_fix=review_fix,
        fix_findings=FixVerifyLoopOutput(resolved=[2], escalated=[escalated]),
        fix_findings_output=Path("/demo/fix-findings-output.json"),
        commits=["abc1234 fix(01): CR-01 a", "def5678 fix(01): WR-01 b", "1234567 docs(01): add"],
    )
    lines = summary_lines(result)
    assert lines[0] == SCRIPTED_NOTICE
    golden.check(GOLDENS / "summary.txt", "\n".join(lines) + "\n")
