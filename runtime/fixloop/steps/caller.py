"""The one way code calls a document step: a document, the run it is for, and a time limit.

    steps = Steps(doc, run)
    checked = steps.attempt("check-review-status", repo, REVIEW_PATH="02-REVIEW.md")
    steps.must("merge-task", worktree, TASK_ID="3")     # StepFailed unless it succeeded
    protocol = steps.of(git_protocol)                   # the same run, another document

Workflows reach steps through their kernel (`Workflow.step`, `Workflow.steps_of`); the git
session, recovery and the staging helpers hold a `Steps` of their own. Only this module calls the
runner, so what every step call shares (the run's folder for scratch files, the crash switch, the
time limit) is decided once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from fixloop.documents.pack import WorkflowDoc
from fixloop.steps.result import StepFailed, StepResult
from fixloop.steps.runner import StepRun, run_step

DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Steps:
    document: WorkflowDoc
    run: StepRun | None = None  # the run the step works for: its folder holds the scratch files
    timeout_s: float = DEFAULT_TIMEOUT_S

    def attempt(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run step `name` in `cwd`; its `ok` says how it went (bad input: FixloopError)."""
        return run_step(
            self.document, name, cwd=cwd, inputs=inputs, run=self.run, timeout_s=self.timeout_s
        )

    def must(self, name: str, cwd: Path, /, **inputs: str) -> StepResult:
        """Run step `name` in `cwd`; StepFailed unless it succeeded."""
        result = self.attempt(name, cwd, **inputs)
        if not result.ok:
            raise StepFailed(result)
        return result

    def of(self, document: WorkflowDoc) -> Steps:
        """The steps of another document, for the same run."""
        return replace(self, document=document)

    def for_run(self, run: StepRun | None) -> Steps:
        """The same document's steps, on behalf of another run (a task's own run, say)."""
        return replace(self, run=run)


__all__ = ["DEFAULT_TIMEOUT_S", "Steps"]
