"""Before a run creates anything: can it work in this repository at all?

The git protocol's `preflight` step is the one check (a working tree, a branch checked out, a
commit on it). A workflow runs it first, before its run folder, worktree or lock exist; a
repository it cannot work in is then bad input (exit 2), said in the step's own words and named
by the repository, instead of a failed step inside a started run (exit 1).

A stale `index.lock` is checked here too: git refuses every change to the index while the file
exists, and a run that found out half-way would stop with a fixer's edit unverified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

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


def index_lock_problem(git_dir: Path) -> str | None:
    """Why git cannot change the index now (a leftover `index.lock`), or None."""
    lock = git_dir / "index.lock"
    if not lock.exists():
        return None
    return (
        f"{lock} exists: another git process is running, or one crashed and left it; "
        "remove the file once no git process runs in this repository"
    )


__all__ = ["check_repository", "index_lock_problem"]
