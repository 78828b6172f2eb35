"""Review-fix's loop: --auto re-reviews with .iterN.md backups, stops when clean or after three."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import (
    APP_FIX,
    REPORT_REL,
    REVIEW_REL,
    UTIL_BROKEN,
    UTIL_FIX,
    files_of,
    finding,
    messages,
    review_text,
    run,
    run_with,
    write_review,
)

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.source import parse_document
from fixloop.reviews.parser import parse_review
from fixloop.workflows.review_fix import ReviewFixOptions


def _report(repo: Path) -> dict[str, object]:
    return parse_document((repo / REPORT_REL).read_text(), repo / REPORT_REL).metadata


def _reviewer_writes(text: str) -> dict[str, object]:
    return {
        "edits": [{"path": REVIEW_REL, "content": text}],
        "output": {"schema_version": "v1", "findings": [], "checks_run": ["src/util.py"]},
    }


def test_auto_re_reviews_backs_up_and_stops_early_when_clean(user_repo: UserRepo) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py:2"),
            finding("WR-01", "util name", "src/util.py:2"),
        ),
    )
    tip = user_repo.head()
    second_review = review_text(finding("WR-01", "util name", "src/util.py:2"))
    script = {
        "fixer/CR-01/iteration-1": APP_FIX,
        "fixer/WR-01/iteration-1": UTIL_BROKEN,  # rolled back in iteration 1
        "reviewer/review/iteration-2": _reviewer_writes(second_review),
        "fixer/WR-01/iteration-2": UTIL_FIX,
        "reviewer/review/iteration-3": _reviewer_writes(review_text(status="clean")),
    }
    result, backend = run(repo, script, auto=True)
    assert backend.unplayed() == []
    assert result.iterations == 2
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "fix(02): WR-01 util name",
        "docs(02): add code review fix report",
    ]
    docs = user_repo.head()
    assert files_of(repo, docs) == sorted(
        [
            REPORT_REL,
            ".planning/02-REVIEW-FIX.iter1.md",
            ".planning/02-REVIEW-FIX.iter2.md",
            ".planning/02-REVIEW.iter1.md",
            ".planning/02-REVIEW.iter2.md",
        ]
    )
    report = _report(repo)
    assert (report["iteration"], report["fixed"], report["status"]) == (2, 1, "all_fixed")
    first = parse_document((repo / ".planning/02-REVIEW-FIX.iter1.md").read_text(), Path("x"))
    assert (first.metadata["fixed"], first.metadata["skipped"]) == (1, 1)
    assert parse_review((repo / ".planning/02-REVIEW.iter1.md").read_text(), Path("x")).findings
    # The user's untracked REVIEW.md is theirs: the re-reviewed copy was not committed over it.
    assert (repo / REVIEW_REL).read_text().count("### ") == 2
    assert user_repo.branches() == ["main"]


def test_auto_stops_after_three_iterations(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("WR-01", "util name", "src/util.py:2")))
    again = review_text(finding("WR-01", "util name", "src/util.py:2"))
    script = {
        "fixer/WR-01/iteration-1": UTIL_BROKEN,
        "reviewer/review/iteration-2": _reviewer_writes(again),
        "fixer/WR-01/iteration-2": UTIL_BROKEN,
        "reviewer/review/iteration-3": _reviewer_writes(again),
        "fixer/WR-01/iteration-3": UTIL_BROKEN,
    }
    result, backend = run(user_repo.path, script, auto=True)
    assert backend.unplayed() == []
    assert [call.key for call in backend.calls][-1] == "fixer/WR-01/iteration-3"
    assert result.iterations == 3
    assert _report(user_repo.path)["status"] == "none_fixed"
    assert result.exit_code == 1


def test_auto_stops_when_the_re_review_is_inconclusive(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = {"fixer/CR-01/iteration-1": APP_FIX, "reviewer/review/iteration-2": {"fail": "crash"}}
    result, _ = run(user_repo.path, script, auto=True)
    assert result.iterations == 1
    assert any("re-review inconclusive" in warning for warning in result.warnings)
    assert result.report_commit  # the report of the work done is still committed


def test_a_report_git_will_not_commit_is_kept_in_the_run_folder(user_repo: UserRepo) -> None:
    (user_repo.path / ".gitignore").write_text(".planning/\n")
    user_repo.git("add", "--", ".gitignore")
    user_repo.git("commit", "--quiet", "-m", "ignore planning", "--", ".gitignore")
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    tip = user_repo.head()
    result, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert messages(user_repo.path, tip) == ["fix(02): CR-01 add subtracts"]
    assert result.report_commit == "" and result.exit_code == 1
    [warning] = result.warnings
    assert "REVIEW-FIX.md not committed" in warning
    kept = user_repo.path / ".git" / "fixloop" / "runs" / result.run_id / "uncommitted"
    assert "fixed: 1" in (kept / "02-REVIEW-FIX.md").read_text()


class UnrulyReviewer:
    """A fake model whose reviewer also edits source (and, if asked, commits it)."""

    name = "unruly"

    def __init__(self, script: Mapping[str, object], commit: bool) -> None:
        self.inner = ScriptedBackend(script)
        self.commit = commit

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        outcome = self.inner.dispatch(request)
        if request.role == "reviewer":
            (request.cwd / "src" / "util.py").write_text("def name():\n    return 0\n")
            if self.commit:
                git(request.cwd, "commit", "--quiet", "-am", "reviewer's own commit")
        return outcome


@pytest.mark.parametrize("commit", [False, True])
def test_a_reviewer_that_touches_code_is_undone(user_repo: UserRepo, commit: bool) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    clean = _reviewer_writes(review_text(status="clean"))
    script = {"fixer/CR-01/iteration-1": APP_FIX, "reviewer/review/iteration-2": clean}
    backend = UnrulyReviewer(script, commit)
    options = ReviewFixOptions(review=user_repo.path / REVIEW_REL, repo=user_repo.path, auto=True)
    result = run_with(options, backend)
    [warning] = result.warnings
    if commit:
        assert warning.startswith("the reviewer committed on its own; its commit was undone")
    else:
        assert warning == "the reviewer changed src/util.py; rolled back"
    assert (user_repo.path / "src/util.py").read_text() == "def name():\n    return 'util'\n"
    assert result.outcomes[0].label == "fixed" and result.report_commit
