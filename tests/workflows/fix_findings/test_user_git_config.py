"""fix-findings' "commit pre-existing first" lands a commit on the user's branch: it is signed
when the user's configuration signs commits (git commit-tree alone would not sign it), and a
signing failure says gpg's reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fix_findings import finding, git, run, verdict
from tests.helpers.user_git_config import fake_gpg, is_signed, set_user_config

from fixloop.documents.pack import Pack

USER_HUNK = "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef spare():\n    return 2\n"
ANSWER = "Commit pre-existing first"


def _script(target: dict[str, object]) -> dict[str, object]:
    edit = {"path": "calc.py", "old": "return sum(xs) / len(xs)\n", "new": "return 0.0\n"}
    return {
        "fixer/1/round-1": {
            "edits": [edit],
            "output": {"files_changed": ["calc.py"], "summary": "fixed: guard", "concerns": None},
        },
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }


@pytest.fixture
def staged_calc(repo: Path) -> Path:
    (repo / "calc.py").write_text(USER_HUNK, encoding="utf-8")
    git(repo, "add", "--", "calc.py")
    return repo


def test_commit_pre_existing_first_is_signed_as_the_user_signs(
    pack: Pack, staged_calc: Path, tmp_path: Path
) -> None:
    set_user_config(commit__gpgSign="true", gpg__program=str(fake_gpg(tmp_path)))
    head = git(staged_calc, "rev-parse", "HEAD")
    target = finding()
    session, _, _ = run(pack, staged_calc, [target], _script(target), answers=[ANSWER])
    assert git(staged_calc, "rev-parse", "HEAD~1") == head
    assert is_signed(staged_calc)
    assert session.state.output().resolved == [1]


def test_a_signing_failure_says_gpgs_reason(pack: Pack, staged_calc: Path) -> None:
    set_user_config(commit__gpgSign="true", gpg__program="false")
    head = git(staged_calc, "rev-parse", "HEAD")
    target = finding()
    session, _, _ = run(pack, staged_calc, [target], _script(target), answers=[ANSWER])
    [escalated] = session.state.output().escalated
    assert "error: gpg failed to sign the data" in escalated.attempts[0]
    assert git(staged_calc, "rev-parse", "HEAD") == head  # nothing unsigned was committed
