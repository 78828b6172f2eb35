"""review-fix under the user's own git configuration: a tag-signing setting never makes an
internal tag wait for an editor; commits landing on the user's branch are signed as the user
configured; a commit git refuses says git's reason."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, finding, review_text, run, write_review
from tests.helpers.user_git_config import fake_gpg, is_signed, set_user_config


def test_tag_signing_does_not_open_an_editor(user_repo: UserRepo) -> None:
    # An editor that fails stands for one that would wait for ever on no terminal.
    set_user_config(tag__gpgSign="true", core__editor="false")
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    result, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert [o.label for o in result.outcomes] == ["fixed"]


def test_commits_on_the_users_branch_follow_their_signing_config(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    set_user_config(commit__gpgSign="true", gpg__program=str(fake_gpg(tmp_path)))
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    result, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert [o.label for o in result.outcomes] == ["fixed"]
    assert is_signed(user_repo.path)


def test_a_refused_commit_says_gits_reason(user_repo: UserRepo) -> None:
    set_user_config(commit__gpgSign="true", gpg__program="false")
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    result, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    [outcome] = result.outcomes
    assert outcome.label.startswith("skipped")
    assert "gpg failed to sign the data" in f"{outcome.label} {outcome.detail}"
