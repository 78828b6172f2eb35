"""Before a run creates anything: can it work in this repository at all?

The git protocol's `preflight` step is the one check (a working tree, a branch checked out, a
commit on it). A workflow runs it first, before its run folder, worktree or lock exist; a
repository it cannot work in is then bad input (exit 2), said in the step's own words and named
by the repository, instead of a failed step inside a started run (exit 1).

A stale `index.lock` is checked here too: git refuses every change to the index while the file
exists, and a run that found out half-way would stop with a fixer's edit unverified.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.steps.result import StepResult


class RunsProtocolSteps(Protocol):
    def try_protocol_step(self, name: str, cwd: Path, /, **inputs: str) -> StepResult: ...


def check_repository(flow: RunsProtocolSteps, repo: Path) -> None:
    """FixloopError (exit 2) naming `repo` and the reason when the protocol cannot start there."""
    checked = flow.try_protocol_step("preflight", repo)
    if checked.ok:
        return
    said = [line for line in checked.stderr.strip().splitlines() if line.strip()]
    reason = said[-1].removeprefix("fixloop: ") if said else checked.describe_failure()
    raise FixloopError(Diagnostic(display_path(repo), 1, 1, "repository", reason), exit_code=2)


@contextmanager
def no_optional_locks() -> Iterator[None]:
    """Git reads that never write (a dry run): no index refresh, no lock git may take at will."""
    before = os.environ.get("GIT_OPTIONAL_LOCKS")
    os.environ["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("GIT_OPTIONAL_LOCKS", None)
        else:
            os.environ["GIT_OPTIONAL_LOCKS"] = before


def check_index_lock(repo: Path) -> None:
    """FixloopError (exit 2) while the index of `repo` is locked: every change to it would fail."""
    lock = Path(gitrepo.git_repo(repo).git_dir) / "index.lock"
    if lock.exists():
        problem = (
            f"{lock} exists: another git process is running, or one crashed and left it; "
            "remove the file once no git process runs in this repository"
        )
        raise FixloopError(Diagnostic(display_path(repo), 1, 1, "repository", problem))


__all__ = ["check_index_lock", "check_repository", "no_optional_locks"]
