"""Review-fix's worktree: what changed in it, and the commits this run made there.

The git session (`runs.git_session.GitSession`) runs the protocol's steps; this adds what
review-fix must know on top: which files are its own artifacts (the report, backups), and which
commit the worktree should be at. A fixer or reviewer that commits on its own moves HEAD away
from that commit; `undo_foreign_commit` takes the paths it touched back to the last checkpoint
and records the undo as a new commit (history is never rewritten).

Reads go through `fixloop.gitrepo` (gitpython); every change through a protocol step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop import gitrepo
from fixloop.diagnostics import FixloopError
from fixloop.runs.git_session import GitSession
from fixloop.steps.result import StepFailed

CHECKPOINT = "last-fix"  # the run's tag at its last fix commit


class GitChangeFailed(Exception):
    """A rollback or commit in the worktree did not happen; the message says why."""


@dataclass
class Worktree:
    git: GitSession
    # review-fix's own files in the worktree (report, backups, re-reviewed REVIEW.md): never a fix.
    artifacts: set[str] = field(default_factory=set)
    head: str = ""  # the worktree's commit as `changed_paths` last saw it

    def __post_init__(self) -> None:
        self.head = self.head or self.git.expected_head

    @property
    def path(self) -> Path:
        return self.git.worktree

    @property
    def head_moved(self) -> bool:
        """True when something other than this workflow committed in the worktree."""
        return self.head != self.git.expected_head

    def changed_paths(self) -> list[str]:
        """Paths that differ from HEAD in the worktree (tracked or not), artifacts excepted."""
        self.head = gitrepo.head(self.path)
        changes = gitrepo.changed_paths(self.path)
        return sorted(path for path in changes if path not in self.artifacts)

    def is_tracked(self, path: str) -> bool:
        return gitrepo.changed_paths(self.path).get(path, "??") != "??"

    def rollback(self, paths: Sequence[str], to: str = "HEAD") -> None:
        """Restore `paths` to HEAD (or a tag of this run), file by file."""
        if not paths:
            return
        try:
            self.git.rollback(paths, to)
        except FixloopError as exc:  # a failed step, or a path the protocol refuses
            raise GitChangeFailed(_why(exc)) from None

    def commit(self, paths: Sequence[str], message: str) -> str:
        """Commit exactly `paths`; returns the commit and moves the `last-fix` checkpoint to it."""
        try:
            commit = self.git.commit(paths, message)
        except FixloopError as exc:
            raise GitChangeFailed(_why(exc)) from None
        if not commit:
            raise GitChangeFailed("the listed files had no change to commit")
        self.head = commit
        self.git.checkpoint_at(commit, CHECKPOINT)
        return commit

    def undo_foreign_commit(self, changed: Sequence[str], message: str) -> None:
        """Undo commits made behind our back since the checkpoint (`undo-agent-commit` of the
        git protocol): the paths they touched and `changed` go back to it, one commit records
        the undo."""
        try:
            self.head = self.git.undo_agent_commit(changed, message, CHECKPOINT)
        except FixloopError as exc:
            raise GitChangeFailed(_why(exc)) from None


def _why(exc: FixloopError) -> str:
    if isinstance(exc, StepFailed):
        return exc.result.describe_failure()
    return str(exc)


__all__ = ["GitChangeFailed", "Worktree"]
