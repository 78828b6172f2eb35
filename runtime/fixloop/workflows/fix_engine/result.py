"""What a fix-engine run did: the section's status, each item's end, its commits and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from fixloop.workflows.fix_engine.item import outcome_of
from fixloop.workflows.fix_engine.section import ItemRecord

# completed: every item done and COMPLETE written; escalated: an item failed (error_report.yaml);
# stopped: the run ended before every item was decided (a spent budget, a branch kept): resumable;
# already-complete: COMPLETE existed for this very mini-PRD, nothing was done.
SectionStatus = Literal["completed", "escalated", "stopped", "already-complete", ""]


@dataclass
class FixEngineResult:
    mini_prd: str
    section_id: str = ""
    run_id: str = ""
    status: SectionStatus = ""
    items: list[ItemRecord] = field(default_factory=list)
    state_dir: str = ""
    error_report: str = ""
    complete: str = ""  # the COMPLETE marker, once written
    fast_forwarded: bool = False
    kept_branch: str = ""
    stopped_by: str = ""
    warnings: list[str] = field(default_factory=list)

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

    @property
    def exit_code(self) -> int:
        """0 when the section is complete; 1 when an item failed or the run stopped short."""
        return 0 if self.status in ("completed", "already-complete") else 1

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

    def to_json(self) -> dict[str, Any]:
        return {
            "mini_prd": self.mini_prd,
            "section_id": self.section_id,
            "run_id": self.run_id,
            "status": self.status,
            "done": len(self.done),
            "failed": len(self.failed),
            "attempts": self.attempts,
            "commits": self.commits,
            "state_dir": self.state_dir,
            "error_report": self.error_report,
            "complete": self.complete,
            "fast_forwarded": self.fast_forwarded,
            "kept_branch": self.kept_branch,
            "stopped_by": self.stopped_by,
            "warnings": self.warnings,
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


__all__ = ["FixEngineResult", "SectionStatus"]
