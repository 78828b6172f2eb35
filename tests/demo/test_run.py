"""The demo's pieces: the example's tests really run, and the self-check catches broken promises."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from fixloop.demo.example import build_example
from fixloop.demo.run import DemoResult, SuiteTally, run_unit_tests, self_check
from fixloop.reviews.model import ReviewFinding, ReviewSeverity
from fixloop.workflows.review_fix.outcome import FindingOutcome, FindingStatus, ReviewFixResult


def test_the_example_tests_really_run_and_fail_on_its_bugs(tmp_path: Path) -> None:
    build_example(tmp_path / "shelf")
    tally = run_unit_tests(tmp_path / "shelf")
    assert (tally.ran, tally.passed) == (8, 3)
    shutil.rmtree(tmp_path / "shelf" / "tests")
    assert run_unit_tests(tmp_path / "shelf").ran == 0


def _result(tmp_path: Path, commits: list[str], report: str) -> DemoResult:
    finding = ReviewFinding(
        "CR-01", ReviewSeverity.CRITICAL, "t", "a.py", None, ("a.py",), "", "", 1
    )
    fixed = FindingOutcome(finding, 1, FindingStatus.FIXED, files=("a.py",), commit="abc1234")
    review_fix = ReviewFixResult("R.md", "issues_found", outcomes=[fixed], report_path="F.md")
    (tmp_path / "F.md").write_text(report)
    return DemoResult(
        tmp_path,
        tmp_path,
        "base",
        SuiteTally(8, 5),
        SuiteTally(8, 1),
        review_fix,
        None,
        commits=commits,
    )


def test_self_check_accepts_a_run_that_kept_its_promises(tmp_path: Path) -> None:
    good = _result(
        tmp_path, ["abc1234 fix(01): CR-01 t", "def5678 docs(01): add"], "fixed: 1\nskipped: 0\n"
    )
    assert self_check(good) == []


def test_self_check_names_each_broken_promise(tmp_path: Path) -> None:
    bad = _result(tmp_path, ["def5678 docs(01): add", "aaa docs(01): again"], "fixed: 2\n")
    bad = dataclasses.replace(bad, tests_after=SuiteTally(8, 5))
    assert self_check(bad) == [
        "0 fix commits for 1 fixed findings",
        "no commit for fixed finding CR-01",
        "REVIEW-FIX.md was not committed exactly once",
        "REVIEW-FIX.md's fixed count differs from the commits",
        "REVIEW-FIX.md's skipped count differs from the run",
        "the example's tests did not improve",
    ]
