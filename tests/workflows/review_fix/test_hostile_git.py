"""A hostile fixer in review-fix's own worktree aims the worktree's `.git` file at a git folder
it built, whose config runs a planted fsmonitor, and plants attributes naming drivers. Nothing
planted runs on the host, and cleanup still removes the worktree: under bwrap and docker the
`.git` file is read-only to the shell; under local fixloop puts the pointer back to the folder
the repository registered before its own git reads the worktree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.hostile_git import plant_commands, ran, redirect_gitfile
from tests.helpers.reviews import APP_FIX, REVIEW_REL, finding, pack, review_text, write_review
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.events import EventStream
from fixloop.gitrepo import state_dir_of
from fixloop.sandboxes import choose_sandbox
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, run_review_fix

__all__ = ["docker_client", "docker_image"]


@pytest.mark.parametrize("kind", kinds("local", "bwrap", "docker"))
def test_a_redirected_gitfile_runs_nothing_and_cleanup_still_works(
    user_repo: UserRepo, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    reply = dict(APP_FIX, bash=[*plant_commands(marks), *redirect_gitfile(marks)])
    image = request.getfixturevalue("docker_image") if kind == "docker" else None
    context = Context(
        pack(),
        ScriptedBackend({"fixer/CR-01/iteration-1": reply}),
        EventStream(),
        sandbox=choose_sandbox(kind, image=image),
    )
    result = run_review_fix(
        ReviewFixOptions(review=user_repo.path / REVIEW_REL, repo=user_repo.path), context
    )
    assert ran(marks) == []
    listing = subprocess.run(
        ["git", "-c", "core.fsmonitor=false", "worktree", "list", "--porcelain"],
        cwd=user_repo.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert listing.count("worktree ") == 1, listing  # the run's worktree is gone
    assert not list((state_dir_of(user_repo.path) / "sentinels").glob("*"))
    assert result.run_id
