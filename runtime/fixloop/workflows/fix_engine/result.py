"""What a fix-engine run did: the section's status, each item's end, its commits and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from fixloop.workflows.fix_engine.section import ItemRecord
from fixloop.workflows.kernel.result import Result


class ChecklistStatus(StrEnum):
    """A checklist item's status: running, then done (verified and committed) or failed;
    pending when the run stopped first."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


# completed: every item done and COMPLETE written; escalated: an item failed (error_report.yaml);
# stopped: the run ended before every item was decided (a spent budget, a branch kept): resumable;
# already-complete: COMPLETE existed for this very mini-PRD, nothing was done.
SectionStatus = Literal["completed", "escalated", "stopped", "already-complete", ""]


def outcome_of(item: ItemRecord, stopped: str) -> tuple[ChecklistStatus, str]:
    """The item's status for events and reports, and one line saying how it ended."""
    attempts = f"{len(item.attempts)} attempt(s)"
    last = item.last
    if item.status == "done":
        return ChecklistStatus.DONE, f"done after {attempts}"
    if item.status == "failed":
        verdict = (last.verdict if last else None) or "none (inconclusive)"
        return ChecklistStatus.FAILED, f"failed after {attempts}; last verdict: {verdict}"
    return ChecklistStatus.PENDING, f"not finished ({stopped or 'the run stopped'})"


@dataclass
class FixEngineResult(Result):
    mini_prd: str
    section_id: str = ""
    status: SectionStatus = ""
    items: list[ItemRecord] = field(default_factory=list)
    state_dir: str = ""
    error_report: str = ""
    complete: str = ""  # the COMPLETE marker, once written
    stopped_by: str = ""

    @property
    def done(self) -> list[ItemRecord]:
        return [item for item in self.items if item.status == "done"]

    @property
    def failed(self) -> list[ItemRecord]:
        return [item for item in self.items if item.status == "failed"]

    @property
    def attempts(self) -> int:
        return sum(len(item.attempts) for item in self.items)

    @property
    def commits(self) -> list[str]:
        return [item.commit for item in self.items if item.commit]

    def work_items(self) -> list[ItemRecord]:
        return self.items

    def incomplete(self) -> bool:
        """Exit 0 only when the section is complete; 1 when an item failed or the run stopped."""
        return self.status not in ("completed", "already-complete")

    @property
    def run_state(self) -> str:
        """A section neither completed nor escalated stays resumable: its run is `failed`,
        which pruning keeps."""
        if self.kept_branch:
            return "kept-branch"
        return "finished" if self.status in ("completed", "escalated") else "failed"

    def item_json(self, item: ItemRecord) -> dict[str, Any]:
        status, message = outcome_of(item, self.stopped_by)
        last = item.last
        return {
            "id": item.id,
            "status": str(status),
            "title": item.text,
            "message": message,
            "attempts": len(item.attempts),
            "commit": item.commit,
            "last_verdict": last.verdict if last else None,
            "evidence": last.evidence if last else "",
        }

    def details(self) -> dict[str, Any]:
        return {
            "mini_prd": self.mini_prd,
            "section_id": self.section_id,
            "status": self.status,
            "done": len(self.done),
            "failed": len(self.failed),
            "attempts": self.attempts,
            "commits": self.commits,
            "state_dir": self.state_dir,
            "error_report": self.error_report,
            "complete": self.complete,
            "stopped_by": self.stopped_by,
        }

    def summary_lines(self) -> list[str]:
        """The closing summary: items done and failed, attempts, commits, where to look."""
        if self.status == "already-complete":
            return [
                f"{self.mini_prd}: section {self.section_id} is already complete ({self.complete})"
            ]
        lines = [
            f"fix-engine {self.section_id} (run {self.run_id}): {len(self.items)} item(s), "
            f"{len(self.done)} done, {len(self.failed)} failed; {self.attempts} attempt(s), "
            f"{len(self.commits)} commit(s); section {self.status}",
        ]
        for item in self.items:
            line = self.item_json(item)
            commit = f" [{item.commit[:7]}]" if item.commit else ""
            lines.append(f"  {item.id}: {line['message']}{commit}")
            if item.status == "failed" and line["evidence"]:
                lines.append(f"      last verdict: {line['evidence']}")
        if self.error_report:
            lines.append(f"Error report: {self.error_report}")
        if self.complete:
            lines.append(f"Complete: {self.complete}")
        if self.status == "stopped":
            lines.append(f"Stopped: {self.stopped_by}; continue with --resume")
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return lines


__all__ = ["FixEngineResult", "SectionStatus", "outcome_of"]
