"""Recovering a dead run whose agent (under the local sandbox, which protects nothing) aimed the
worktree's `.git` file at a git folder it built, with a planted fsmonitor and drivers: nothing
planted runs, and recovery removes the worktree and the temp branch as for any dead run."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.gitrepo import UserRepo
from tests.helpers.hostile_git import plant_commands, ran, redirect_gitfile

from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import recover
from fixloop.runs.run import Run
from fixloop.steps.runner import run_step


def test_recovery_puts_a_redirected_gitfile_back_and_runs_nothing(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    protocol = load_protocol()
    marks = tmp_path / "marks"
    marks.mkdir()
    run = Run.start(user_repo.path, "demo")
    setup = run_step(
        protocol, "setup-worktree", cwd=user_repo.path, inputs={"RUN_ID": run.id}, run=run
    )
    assert setup.ok, setup.describe_failure()
    worktree = Path(setup.outputs["WORKTREE"])
    for line in [*plant_commands(marks), *redirect_gitfile(marks)]:
        subprocess.run(["bash", "-c", line], cwd=worktree, check=False)
    assert ".planted-git" in (worktree / ".git").read_text()
    run.close()  # the run dies with the gitfile redirected
    [item] = recover(user_repo.path, protocol).recovered
    assert item.worktree_removed and item.branch_deleted, item
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert ran(marks) == []
