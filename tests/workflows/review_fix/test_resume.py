"""A review-fix run killed mid-way (SIGKILL, via the crash switch) is resumed by the next run."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import (
    APP_FIX,
    UTIL_FIX,
    finding,
    messages,
    review_fix_cli,
    review_text,
    run,
    write_review,
)

from fixloop.cli.main import main
from fixloop.diagnostics import FixloopError
from fixloop.runs.run import list_runs


def test_a_killed_run_is_resumed_without_fixing_committed_findings_again(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "util name", "src/util.py"),
        ),
    )
    before, tip = user_repo.user_work(), user_repo.head()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"fixer/CR-01/iteration-1": APP_FIX, "fixer/CR-02/iteration-1": UTIL_FIX})
    )
    # Killed right after the first per-finding commit, before the runtime hears of it.
    _kill(repo, script, "git-protocol/commit-paths:999")
    assert user_repo.head() == tip
    assert len(user_repo.worktrees()) == 2
    [dead] = list_runs(repo / ".git" / "fixloop")
    assert dead["state"] == "crashed"

    # The rerun has no reply for CR-01: dispatching it again would make it inconclusive.
    result, backend = run(repo, {"fixer/CR-02/iteration-1": UTIL_FIX})
    assert [call.key for call in backend.calls] == ["fixer/CR-02/iteration-1"]
    assert [o.label for o in result.outcomes] == ["fixed", "fixed"]
    assert f"interrupted run {dead['id']}" in result.outcomes[0].detail
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "fix(02): CR-02 util name",
        "docs(02): add code review fix report",
    ]
    assert user_repo.user_work() == before
    assert user_repo.worktrees() == [str(repo)]
    assert user_repo.branches() == ["main"]


def _kill(repo: Path, script: Path, crash_at: str) -> None:
    killed = review_fix_cli(repo, script, crash_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr


@pytest.mark.parametrize(
    "crash_at",
    ["git-protocol/commit-paths#2:999", "git-protocol/cleanup:999"],
    ids=["after-the-report-commit", "after-cleanup"],
)
def test_a_run_killed_after_its_report_commit_is_not_reported_twice(
    user_repo: UserRepo, tmp_path: Path, crash_at: str
) -> None:
    repo = user_repo.path
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    before, tip = user_repo.user_work(), user_repo.head()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": APP_FIX}))
    _kill(repo, script, crash_at)
    result, backend = run(repo, {})  # nothing is left to call the model for
    assert backend.calls == []
    assert [o.label for o in result.outcomes] == ["fixed"]
    assert result.report_commit and result.exit_code == 0
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "docs(02): add code review fix report",
    ]
    assert user_repo.user_work() == before
    assert user_repo.worktrees() == [str(repo)] and user_repo.branches() == ["main"]


def test_after_recover_keeps_a_branch_the_next_run_waits_for_it_to_be_merged(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "util name", "src/util.py"),
        ),
    )
    tip = user_repo.head()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"fixer/CR-01/iteration-1": APP_FIX, "fixer/CR-02/iteration-1": UTIL_FIX})
    )
    _kill(repo, script, "git-protocol/commit-paths:999")  # CR-01 committed on its branch
    assert main(["recover", "--repo", str(repo)]) == 0  # keeps that branch, names it
    [dead] = list_runs(repo / ".git" / "fixloop")
    kept = f"fixloop/run/{dead['id']}"
    assert kept in user_repo.branches()
    # Fixing CR-02 now would move the user's branch: the kept branch could no longer be
    # fast-forwarded as advised. So the run refuses, and changes nothing.
    with pytest.raises(FixloopError) as refused:
        run(repo, {"fixer/CR-02/iteration-1": UTIL_FIX})
    [problem] = str(refused.value).splitlines()
    assert f"fixed CR-01 on the kept branch {kept}" in problem
    assert f"merge it first (git merge --ff-only {kept})" in problem
    assert refused.value.exit_code == 1
    assert user_repo.head() == tip
    assert user_repo.git("merge-base", "--is-ancestor", "main", kept) == ""
    # Merged as advised: CR-01 is carried over, only CR-02 is fixed.
    user_repo.git("merge", "--quiet", "--ff-only", kept)
    result, backend = run(repo, {"fixer/CR-02/iteration-1": UTIL_FIX})
    assert [call.key for call in backend.calls] == ["fixer/CR-02/iteration-1"]  # not CR-01
    assert [o.label for o in result.outcomes] == ["fixed", "fixed"]
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "fix(02): CR-02 util name",
        "docs(02): add code review fix report",
    ]
