"""Review-fix's plan: bad input is one located error, and nothing in the repository changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import finding, review_text, run, write_review

from fixloop.diagnostics import FixloopError
from fixloop.reviews.parser import parse_review
from fixloop.workflows.review_fix.plan import ReviewFixOptions, padded_phase_of, plan_review_fix


def _clean(repo: UserRepo) -> None:
    assert repo.worktrees() == [str(repo.path)]
    assert repo.branches() == ["main"]


BAD_REVIEWS = [
    ("### CR-01: t\n**File:** src/app.py\n**Fix:**\n```python\nx = 1\n", "review-fence"),
    ("### CR-01: t\n**Issue:** no file line\n", "review-file"),
    ("### XX-01: t\n**File:** src/app.py\n", "review-severity"),
    ("### CR-01: t\n**File:** ../outside.py\n", "review-path"),
    ("### CR-01: t\n**File:** /etc/passwd\n", "review-path"),
    ("### CR-01: t\n**File:** .git/config\n", "review-path"),
    ("### CR-01: t\n**File:** linked/evil.py\n", "review-path"),
    ("### CR-01: t\n**File:** src/out.py\n", "review-path"),
]


@pytest.mark.parametrize(("body", "rule"), BAD_REVIEWS)
def test_bad_review_is_a_located_error_and_changes_nothing(
    user_repo: UserRepo, tmp_path: Path, body: str, rule: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (user_repo.path / "linked").symlink_to(outside)
    (user_repo.path / "src" / "out.py").symlink_to(outside / "x.py")
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


def test_phase_must_start_with_a_phase_number() -> None:
    review = parse_review('---\nphase: "x-2"\n---\n', Path("R.md"))
    with pytest.raises(FixloopError) as caught:
        padded_phase_of(review, "R.md", 2)
    assert caught.value.diagnostics[0].format().startswith("R.md:2:1: review-phase:")
    assert (
        padded_phase_of(parse_review("---\nphase: 02-auth\n---\n", Path("R.md")), "R.md", 2) == "02"
    )


def test_a_phase_directory_names_its_one_review(user_repo: UserRepo) -> None:
    review = write_review(user_repo.path, review_text(finding("CR-01", "t", "src/app.py")))
    plan = plan_review_fix(ReviewFixOptions(review=review.parent, repo=user_repo.path))
    assert plan.review_rel == ".planning/02-REVIEW.md"
    (review.parent / "03-REVIEW.md").write_text(review.read_text())
    with pytest.raises(FixloopError) as caught:
        plan_review_fix(ReviewFixOptions(review=review.parent, repo=user_repo.path))
    assert "exactly one *REVIEW.md (found: 02-REVIEW.md, 03-REVIEW.md)" in str(caught.value)
