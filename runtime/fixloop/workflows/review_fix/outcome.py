"""What review-fix did with each finding, the run's result, and its state on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from fixloop.reviews.fix_report import HUMAN_VERIFICATION
from fixloop.reviews.model import ReviewFinding
from fixloop.runs.state import RunState
from fixloop.workflows.kernel.result import Result


class FindingStatus(StrEnum):
    """A review finding's status: fixed (or fixed, but only a person can vouch for the logic),
    or skipped with its reason."""

    PENDING = "pending"
    RUNNING = "running"
    FIXED = "fixed"
    NEEDS_HUMAN = "needs-human-verification"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class FindingOutcome:
    finding: ReviewFinding
    iteration: int
    status: FindingStatus  # FIXED, NEEDS_HUMAN or SKIPPED
    reason: str = ""  # why it was skipped, one line
    files: tuple[str, ...] = ()
    commit: str = ""
    summary: str = ""  # what the fixer said it did
    detail: str = ""  # errors, concerns: why, in the user's words
    diff: str = ""  # the committed diff, saved in the run folder (relative to it)

    @property
    def fixed(self) -> bool:
        return self.status in (FindingStatus.FIXED, FindingStatus.NEEDS_HUMAN)

    @property
    def label(self) -> str:
        """As REVIEW-FIX.md says it: `fixed`, `fixed: requires human verification`, `skipped: …`"""
        if self.status is FindingStatus.NEEDS_HUMAN:
            return HUMAN_VERIFICATION
        if self.status is FindingStatus.SKIPPED:
            return f"skipped: {self.reason}"
        return str(self.status)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.finding.id,
            "severity": str(self.finding.severity),
            "title": self.finding.title,
            "iteration": self.iteration,
            "status": str(self.status),
            "reason": self.reason,
            "label": self.label,
            "files": list(self.files),
            "commit": self.commit,
            "summary": self.summary,
            "detail": self.detail,
            "diff": self.diff,
        }


@dataclass
class ReviewFixResult(Result):
    review_path: str
    review_status: str
    iterations: int = 0
    outcomes: list[FindingOutcome] = field(default_factory=list)
    report_path: str = ""  # repository-relative, once committed
    report_status: str = ""
    report_commit: str = ""

    @property
    def fixed(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if o.fixed]

    @property
    def skipped(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if not o.fixed]

    def work_items(self) -> list[FindingOutcome]:
        return self.outcomes

    def short(self, item: FindingOutcome) -> bool:
        return not item.fixed

    def incomplete(self) -> bool:
        """Exit 1 also when the report could not be committed."""
        return not self.report_commit

    def details(self) -> dict[str, Any]:
        return {
            "review_path": self.review_path,
            "review_status": self.review_status,
            "iterations": self.iterations,
            "fixed": len(self.fixed),
            "skipped": len(self.skipped),
            "findings": [outcome.to_json() for outcome in self.outcomes],
            "report_path": self.report_path,
            "report_status": self.report_status,
            "report_commit": self.report_commit,
        }


class ReviewFixState(RunState):
    """Review-fix's progress on disk: each finding's outcome as soon as it is known."""

    workflow: Literal["review-fix"] = "review-fix"
    outcomes: list[dict[str, Any]] = Field(default_factory=list)
    base: str = ""  # the commit its worktree started from (what its commits are counted from)
