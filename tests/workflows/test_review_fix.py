"""Review-fix end to end on real repositories: commits, report, early exits, bad input, --auto.

Only the model is scripted; git, the worktree, the document steps and bash are real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import (
    APP_FIX,
    APP_FIXED,
    REPORT_REL,
    REVIEW_REL,
    UTIL_BROKEN,
    UTIL_FIX,
    files_of,
    finding,
    messages,
    review_text,
    run,
    write_review,
)

from fixloop.diagnostics import FixloopError
from fixloop.documents.source import parse_document
from fixloop.reviews.parser import parse_review


def _clean(repo: UserRepo) -> None:
    assert repo.worktrees() == [str(repo.path)]
    assert repo.branches() == ["main"]
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    assert not sentinels.exists() or not any(sentinels.iterdir())


def _report(repo: Path) -> dict[str, object]:
    return parse_document((repo / REPORT_REL).read_text(), repo / REPORT_REL).metadata


def test_one_commit_per_finding_report_committed_once_user_work_untouched(
    user_repo: UserRepo,
) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            finding("WR-01", "util name unclear", "src/util.py:2"),
            finding("CR-01", "add subtracts", "src/app.py:2", fix="use + in src/app.py"),
            finding("IN-01", "style", "src/app.py"),
        ),
    )
    before, tip = user_repo.user_work(), user_repo.head()
    script = {"fixer/CR-01/iteration-1": APP_FIX, "fixer/WR-01/iteration-1": UTIL_FIX}
    result, backend = run(repo, script)
    # Critical first, then warning; info is out of the default scope and never dispatched.
    assert [call.key for call in backend.calls] == [
        "fixer/CR-01/iteration-1",
        "fixer/WR-01/iteration-1",
    ]
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "fix(02): WR-01 util name unclear",
        "docs(02): add code review fix report",
    ]
    commits = user_repo.git("rev-list", "--reverse", f"{tip}..main").split()
    assert files_of(repo, commits[0]) == ["src/app.py"]
    assert files_of(repo, commits[1]) == ["src/util.py"]
    assert files_of(repo, commits[2]) == [REPORT_REL]
    assert (repo / "src/app.py").read_text() == APP_FIXED
    assert _report(repo) | {"fixed_at": None} == {
        "phase": "02", "fixed_at": None, "review_path": REVIEW_REL, "iteration": 1,
        "findings_in_scope": 2, "fixed": 2, "skipped": 0, "status": "all_fixed",
    }  # fmt: skip
    assert result.exit_code == 0 and result.fast_forwarded
    assert user_repo.user_work() == before
    _clean(user_repo)


def test_all_flag_adds_info_findings(user_repo: UserRepo) -> None:
    from fixloop.reviews.model import FixScope

    write_review(user_repo.path, review_text(finding("IN-01", "add subtracts", "src/app.py")))
    result, backend = run(user_repo.path, {"fixer/IN-01/iteration-1": APP_FIX}, scope=FixScope.ALL)
    assert [o.status for o in result.outcomes] == ["fixed"]
    assert len(backend.calls) == 1


@pytest.mark.parametrize("status", ["clean", "skipped"])
def test_clean_or_skipped_review_exits_without_report_or_worktree(
    user_repo: UserRepo, status: str
) -> None:
    write_review(user_repo.path, review_text(status=status))
    tip = user_repo.head()
    result, backend = run(user_repo.path, {})
    assert result.review_status == status and result.exit_code == 0
    assert backend.calls == []
    assert user_repo.head() == tip
    assert not (user_repo.path / REPORT_REL).exists()
    assert not (user_repo.path / ".git" / "fixloop" / "runs").exists()
    _clean(user_repo)


BAD_REVIEWS = [
    ("### CR-01: t\n**File:** src/app.py\n**Fix:**\n```python\nx = 1\n", "review-fence"),
    ("### CR-01: t\n**Issue:** no file line\n", "review-file"),
    ("### XX-01: t\n**File:** src/app.py\n", "review-severity"),
    ("### CR-01: t\n**File:** ../outside.py\n", "review-path"),
    ("### CR-01: t\n**File:** /etc/passwd\n", "review-path"),
    ("### CR-01: t\n**File:** .git/config\n", "review-path"),
    ("### CR-01: t\n**File:** linked/evil.py\n", "review-path"),
]


@pytest.mark.parametrize(("body", "rule"), BAD_REVIEWS)
def test_bad_review_is_a_located_error_and_changes_nothing(
    user_repo: UserRepo, tmp_path: Path, body: str, rule: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (user_repo.path / "linked").symlink_to(outside)
    write_review(user_repo.path, review_text(body))
    before, tip = user_repo.user_work(), user_repo.head()
    with pytest.raises(FixloopError) as caught:
        run(user_repo.path, {})
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.rule == rule
    assert diagnostic.path.endswith("02-REVIEW.md") and diagnostic.line > 1
    assert caught.value.exit_code == 2
    assert user_repo.head() == tip and user_repo.user_work() == before
    assert not (user_repo.path / ".git" / "fixloop").exists()
    _clean(user_repo)


def test_review_outside_the_repository_is_refused(user_repo: UserRepo, tmp_path: Path) -> None:
    review = tmp_path / "REVIEW.md"
    review.write_text(review_text(finding("CR-01", "t", "src/app.py")))
    with pytest.raises(FixloopError) as caught:
        run(user_repo.path, {}, review=review)
    assert "must be inside the repository" in caught.value.diagnostics[0].message


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
            REPORT_REL, ".planning/02-REVIEW-FIX.iter1.md", ".planning/02-REVIEW-FIX.iter2.md",
            ".planning/02-REVIEW.iter1.md", ".planning/02-REVIEW.iter2.md",
        ]
    )  # fmt: skip
    report = _report(repo)
    assert (report["iteration"], report["fixed"], report["status"]) == (2, 1, "all_fixed")
    first = parse_document((repo / ".planning/02-REVIEW-FIX.iter1.md").read_text(), Path("x"))
    assert (first.metadata["fixed"], first.metadata["skipped"]) == (1, 1)
    assert parse_review((repo / ".planning/02-REVIEW.iter1.md").read_text(), Path("x")).findings
    # The user's untracked REVIEW.md is theirs: the re-reviewed copy was not committed over it.
    assert (repo / REVIEW_REL).read_text().count("### ") == 2
    _clean(user_repo)


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
