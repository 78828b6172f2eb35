"""Review-fix's handle on one run: its worktree, its own document steps, and the git session.

Every command that reads or changes git runs as a document step: review-fix's own steps
(`workflows/review-fix.md`: inspect-changes, syntax-check, …) here, the shared protocol's steps
(`workflows/git-protocol.md`: commit-paths, rollback-files, …) through `runs.session.GitSession`.
This module only passes values in (paths as NUL-separated files, messages as environment
variables) and reads outputs back.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.agents.dispatch import Dispatcher
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.session import GitSession, StepFailed, required_output
from fixloop.steps.run import Run
from fixloop.steps.runner import StepResult, run_step, step_inputs


@dataclass(frozen=True)
class CommitResult:
    commit: str = ""
    error: str = ""

    @property
    def short(self) -> str:
        return self.commit[:7]


@dataclass
class Session:
    flow: WorkflowDoc  # review-fix
    git: GitSession
    dispatcher: Dispatcher
    inputs: dict[str, str]  # the review-fix inputs every step of the document receives
    padded_phase: str
    # review-fix's own files in the worktree (report, backups, re-reviewed REVIEW.md): never a fix.
    artifacts: set[str] = field(default_factory=set)
    # The commit the worktree should be at (the last one we made) and the run's tag at it.
    expected_head: str = ""
    checkpoint: str = "baseline"
    head: str = ""  # the worktree's commit as inspect-changes last saw it
    _numbers: itertools.count[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.expected_head = self.expected_head or self.git.base
        self.head = self.head or self.expected_head

    @property
    def head_moved(self) -> bool:
        """True when something other than this workflow committed in the worktree."""
        return self.head != self.expected_head

    @property
    def worktree(self) -> Path:
        return self.git.worktree

    @property
    def run(self) -> Run:
        return self.git.run

    def step(self, name: str, **inputs: str) -> StepResult:
        values = {**step_inputs(self.flow, name, self.inputs), **inputs}
        return run_step(self.flow, name, cwd=self.worktree, inputs=values, run=self.run)

    def paths_file(self, paths: Sequence[str]) -> Path:
        return self.git.paths_file(paths)

    def changes(self) -> dict[str, str]:
        """Path → git's two-letter status, for every path that differs from HEAD in the worktree."""
        target = self.run.dir / f"changes-{next(self._numbers):04d}"
        result = self.step("inspect-changes", CHANGES_FILE=str(target))
        if not result.ok:
            raise StepFailed(result)
        self.head = required_output(result, "HEAD")
        found: dict[str, str] = {}
        for entry in target.read_bytes().split(b"\0"):
            if len(entry) > 3:
                found[os.fsdecode(entry[3:])] = entry[:2].decode("ascii", "replace")
        return found

    def changed_paths(self) -> list[str]:
        return sorted(path for path in self.changes() if path not in self.artifacts)

    def rollback(self, paths: Sequence[str], to: str = "HEAD") -> str:
        """Restore `paths` to HEAD (or a tag of this run), file by file; "" or what failed."""
        if not paths:
            return ""
        try:
            self.git.rollback(paths, to)
        except FixloopError as exc:  # a failed step, or a path the protocol refuses
            return str(exc)
        return ""

    def commit(self, paths: Sequence[str], message: str) -> CommitResult:
        try:
            commit = self.git.commit(paths, message)
        except StepFailed as exc:
            return CommitResult(error=exc.result.describe_failure())
        except FixloopError as exc:  # a path the protocol refuses to commit
            return CommitResult(error=str(exc))
        if not commit:
            return CommitResult(error="the listed files had no change to commit")
        self.expected_head = self.head = commit
        try:
            self.git.tag("last-fix")
            self.checkpoint = "last-fix"
        except FixloopError:
            self.checkpoint = ""  # no checkpoint at this commit: a rogue commit cannot be undone
        return CommitResult(commit=commit)

    def undo_foreign_commit(self, changed: Sequence[str], message: str) -> str:
        """Undo commits made behind our back since `expected_head`; "" or what failed.

        The paths they touched (and `changed`, left uncommitted) go back to the checkpoint with
        `rollback-files`, then one `commit-paths` records the undo: history is never rewritten.
        """
        if not self.checkpoint:
            return "no checkpoint to return to"
        listing = self.run.dir / f"foreign-{next(self._numbers):04d}"
        listed = self.step(
            "paths-between",
            FROM_COMMIT=self.expected_head,
            TO_COMMIT=self.head,
            LIST_FILE=str(listing),
        )
        if not listed.ok:
            return listed.describe_failure()
        committed = [os.fsdecode(p) for p in listing.read_bytes().split(b"\0") if p]
        paths = sorted({*committed, *changed})
        error = self.rollback(paths, to=self.checkpoint)
        if error:
            return error
        undo = self.commit(paths, message)
        return "" if undo.commit else undo.error
