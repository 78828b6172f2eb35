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


class GitChangeFailed(Exception):
    """A rollback or commit in the worktree did not happen; the message says why."""


@dataclass
class Worktree:
    git: GitSession
    # review-fix's own files in the worktree (report, backups, re-reviewed REVIEW.md): never a fix.
    artifacts: set[str] = field(default_factory=set)
    # The commit the worktree should be at (the last one we made) and the run's tag at it.
    expected_head: str = ""
    checkpoint: str = "baseline"
    head: str = ""  # the worktree's commit as `changed_paths` last saw it

    def __post_init__(self) -> None:
        self.expected_head = self.expected_head or self.git.base
        self.head = self.head or self.expected_head

    @property
    def path(self) -> Path:
        return self.git.worktree

    @property
    def head_moved(self) -> bool:
        """True when something other than this workflow committed in the worktree."""
        return self.head != self.expected_head

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
        self.expected_head = self.head = commit
        try:
            self.git.tag("last-fix")
            self.checkpoint = "last-fix"
        except FixloopError:
            self.checkpoint = ""  # no checkpoint at this commit: a rogue commit cannot be undone
        return commit

    def undo_foreign_commit(self, changed: Sequence[str], message: str) -> None:
        """Undo commits made behind our back since `expected_head`.

        The paths they touched (and `changed`, left uncommitted) go back to the checkpoint with
        `rollback-files`, then one `commit-paths` records the undo."""
        if not self.checkpoint:
            raise GitChangeFailed("no checkpoint to return to")
        committed = gitrepo.paths_between(self.path, self.expected_head, self.head)
        paths = sorted({*committed, *changed})
        self.rollback(paths, to=self.checkpoint)
        self.commit(paths, message)


def _why(exc: FixloopError) -> str:
    if isinstance(exc, StepFailed):
        return exc.result.describe_failure()
    return str(exc)


__all__ = ["GitChangeFailed", "Worktree"]
