"""`--sandbox` and `--image` on every command that runs a workflow: a sandbox that cannot be had
here is one line, exit 2, before anything changes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.helpers import cli
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, REVIEW_REL, finding, review_text, write_review

COMMANDS = ("review-fix", "fix-findings", "fix-engine", "execute-wave")


def fixloop(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return cli.fixloop(*args, cwd=cwd, env=env, timeout=120)


def _tree(user_repo: UserRepo) -> tuple[object, ...]:
    git_dir = user_repo.path / ".git"
    listing = sorted(str(p.relative_to(git_dir)) for p in git_dir.rglob("*"))
    return user_repo.user_work(), user_repo.head(), listing


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--sandbox", "docker"], "--sandbox:1:1: sandbox: --sandbox docker needs --image IMAGE"),
        (
            ["--sandbox", "bwrap", "--image", "x:1"],
            "--sandbox:1:1: sandbox: --image applies to the docker sandbox, not to --sandbox bwrap",
        ),
    ],
)
def test_a_sandbox_that_cannot_be_had_is_one_line_and_nothing_changes(
    user_repo: UserRepo, tmp_path: Path, command: str, options: list[str], line: str
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "t", "src/app.py")))
    script = tmp_path / "script.json"
    script.write_text("{}")
    before = _tree(user_repo)
    done = fixloop(command, REVIEW_REL, "--script", str(script), *options, cwd=user_repo.path)
    assert done.returncode == 2
    (printed,) = done.stderr.splitlines()
    assert printed.startswith(line)
    assert _tree(user_repo) == before


@pytest.mark.needs("bwrap")
def test_the_run_says_which_sandbox_it_uses(user_repo: UserRepo, tmp_path: Path) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": APP_FIX}))
    done = fixloop(
        "review-fix", REVIEW_REL, "--script", str(script), "--sandbox", "bwrap", cwd=user_repo.path
    )
    assert done.returncode == 0, done.stderr
    assert "sandbox: bwrap (asked for with --sandbox bwrap)" in done.stderr
