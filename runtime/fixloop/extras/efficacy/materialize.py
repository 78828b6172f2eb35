"""A task's repository, made real: its snapshot copied and committed as one fixed commit.

The commit's author, committer and dates are fixed, so the same snapshot gives the same commit id
on every machine: a patch another agent made against a task's base applies to the base the
harness builds, and two reports can name the same commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fixloop.extras.efficacy.corpus import Task

AUTHOR = ("fixloop efficacy", "efficacy@fixloop.invalid")
DATE = "2026-01-01T00:00:00+00:00"


def _git(repo: Path, *args: str) -> str:
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_DATE": DATE,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def materialize(task: Task, target: Path) -> str:
    """Build `task`'s repository at `target` (on branch main); return its base commit."""
    shutil.copytree(task.repo, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(target, "init", "--quiet", "--initial-branch=main")
    _git(target, "add", "--all")
    _git(target, "commit", "--quiet", "--no-verify", "-m", f"{task.id}: {task.spec.title}")
    return _git(target, "rev-parse", "HEAD").strip()


__all__ = ["materialize"]
