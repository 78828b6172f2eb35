"""What review-fix did with each finding, the run's result, and its state on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from fixloop.reviews.fix_report import HUMAN_VERIFICATION
from fixloop.reviews.model import ReviewFinding
from fixloop.runs.state import RunState
from fixloop.workflows.kernel.items import ItemStatus


@dataclass(frozen=True)
class FindingOutcome:
    finding: ReviewFinding
    iteration: int
    status: ItemStatus  # FIXED, NEEDS_HUMAN or SKIPPED
    reason: str = ""  # why it was skipped, one line
    files: tuple[str, ...] = ()
    commit: str = ""
    summary: str = ""  # what the fixer said it did
    detail: str = ""  # errors, concerns: why, in the user's words

    @property
    def fixed(self) -> bool:
        return self.status in (ItemStatus.FIXED, ItemStatus.NEEDS_HUMAN)

    @property
    def label(self) -> str:
        """As REVIEW-FIX.md says it: `fixed`, `fixed: requires human verification`, `skipped: …`"""
        if self.status is ItemStatus.NEEDS_HUMAN:
            return HUMAN_VERIFICATION
        if self.status is ItemStatus.SKIPPED:
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
        }


@dataclass
class ReviewFixResult:
    review_path: str
    review_status: str
    run_id: str = ""
    iterations: int = 0
    outcomes: list[FindingOutcome] = field(default_factory=list)
    report_path: str = ""  # repository-relative, once committed
    report_status: str = ""
    report_commit: str = ""
    fast_forwarded: bool = False
    kept_branch: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def fixed(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if o.fixed]

    @property
    def skipped(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if not o.fixed]

    @property
    def exit_code(self) -> int:
        """0 when nothing is left to do, 1 when a finding was skipped or the branch was kept."""
        if self.review_status in ("clean", "skipped"):
            return 0
        return 1 if self.skipped or self.kept_branch or not self.report_commit else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "review_path": self.review_path,
            "review_status": self.review_status,
            "run_id": self.run_id,
            "iterations": self.iterations,
            "fixed": len(self.fixed),
            "skipped": len(self.skipped),
            "findings": [outcome.to_json() for outcome in self.outcomes],
            "report_path": self.report_path,
            "report_status": self.report_status,
            "report_commit": self.report_commit,
            "fast_forwarded": self.fast_forwarded,
            "kept_branch": self.kept_branch,
            "warnings": self.warnings,
        }


class ReviewFixState(RunState):
    """Review-fix's progress on disk: each finding's outcome as soon as it is known."""

    workflow: Literal["review-fix"] = "review-fix"
    outcomes: list[dict[str, Any]] = Field(default_factory=list)
