"""Review-fix end to end on real repositories: commits, report, scope, early exits.

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
    UTIL_FIX,
    files_of,
    finding,
    messages,
    review_text,
    run,
    write_review,
)

from fixloop.documents.source import parse_document


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
        "phase": "02",
        "fixed_at": None,
        "review_path": REVIEW_REL,
        "iteration": 1,
        "findings_in_scope": 2,
        "fixed": 2,
        "skipped": 0,
        "status": "all_fixed",
    }
    assert result.exit_code == 0 and result.fast_forwarded
    assert user_repo.user_work() == before
    _clean(user_repo)


def test_all_flag_adds_info_findings(user_repo: UserRepo) -> None:
    from fixloop.reviews.model import FixScope

    write_review(user_repo.path, review_text(finding("IN-01", "add subtracts", "src/app.py")))
    result, backend = run(user_repo.path, {"fixer/IN-01/iteration-1": APP_FIX}, scope=FixScope.ALL)
    assert [o.label for o in result.outcomes] == ["fixed"]
    assert len(backend.calls) == 1


@pytest.mark.parametrize("status", ["needs-another-look", ""])
def test_an_unknown_status_is_warned_about_and_its_findings_are_fixed(
    user_repo: UserRepo, status: str
) -> None:
    write_review(
        user_repo.path,
        review_text(finding("CR-01", "add subtracts", "src/app.py:2"), status=status),
    )
    tip = user_repo.head()
    result, backend = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    assert result.review_status == "unknown"
    assert "REVIEW.md has no recognised status; trying to fix its findings anyway" in (
        result.warnings
    )
    assert [call.key for call in backend.calls] == ["fixer/CR-01/iteration-1"]
    assert messages(user_repo.path, tip)[0] == "fix(02): CR-01 add subtracts"
    assert (user_repo.path / "src/app.py").read_text() == APP_FIXED
    _clean(user_repo)


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


@pytest.mark.parametrize(
    ("prefix", "newline"),
    [(b"", b"\r\n"), (b"\xef\xbb\xbf", b"\n"), (b"\xef\xbb\xbf", b"\r\n")],
    ids=["crlf", "bom", "bom-crlf"],
)
def test_a_clean_review_with_crlf_or_a_bom_is_clean(
    user_repo: UserRepo, prefix: bytes, newline: bytes
) -> None:
    target = write_review(user_repo.path, review_text(status="clean"))
    target.write_bytes(prefix + target.read_bytes().replace(b"\n", newline))
    tip = user_repo.head()
    result, backend = run(user_repo.path, {})
    assert (result.review_status, result.exit_code, result.warnings) == ("clean", 0, [])
    assert backend.calls == []
    assert user_repo.head() == tip  # no REVIEW-FIX.md committed on the user's branch
    assert not (user_repo.path / ".git" / "fixloop" / "runs").exists()


def test_the_fixer_is_handed_the_project_s_skills_index(user_repo: UserRepo) -> None:
    repo = user_repo.path
    skill = repo / ".claude/skills/money/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: money\ndescription: Amounts are integer cents.\n---\nrules\n")
    user_repo.git("add", "--", ".claude/skills/money/SKILL.md")
    user_repo.git("commit", "--quiet", "-m", "skills", "--", ".claude/skills/money/SKILL.md")
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    _, backend = run(repo, {"fixer/CR-01/iteration-1": APP_FIX})
    [call] = backend.calls
    assert "Amounts are integer cents." in call.system_prompt
    assert ".claude/skills/money/SKILL.md" in call.system_prompt
