"""Running review-fix again on a review it already fixed says so and does nothing."""

from __future__ import annotations

from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import (
    APP_FIX,
    finding,
    messages,
    review_text,
    run,
    write_review,
)


def test_a_review_already_fixed_is_not_fixed_again(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    first, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert first.exit_code == 0 and first.report_commit
    tip = user_repo.head()
    again, backend = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert backend.calls == []  # no fixer dispatched
    assert again.exit_code == 0
    assert f"fixed by run {first.run_id}" in again.nothing_to_do
    assert again.run_id == ""  # no run started
    assert user_repo.head() == tip
    assert messages(user_repo.path, tip) == []


def test_an_edited_review_is_fixed_again(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    write_review(
        user_repo.path,
        review_text(finding("CR-02", "add still subtracts", "src/app.py")),
    )
    again, backend = run(user_repo.path, {"fixer/CR-02/iteration-1": APP_FIX})
    assert not again.nothing_to_do
    assert [call.key for call in backend.calls] == ["fixer/CR-02/iteration-1"]
