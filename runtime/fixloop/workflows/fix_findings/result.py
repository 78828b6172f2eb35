"""fix-findings' result: the loop state's records, with the FixVerifyLoopOutput buckets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.workflows.fix_findings.escalation import escalation_text
from fixloop.workflows.fix_findings.state import FindingRecord, FixFindingsState
from fixloop.workflows.kernel.result import Result


@dataclass
class FixFindingsResult(Result):
    """Fixes are staged, not committed: exit 1 when a finding was escalated to a person."""

    state: FixFindingsState
    run_dir: Path = Path()  # Path() for a dry run, which has no run

    def work_items(self) -> list[FindingRecord]:
        return self.state.records

    def short(self, item: FindingRecord) -> bool:
        return item.bucket == "escalated"

    def item_json(self, item: FindingRecord) -> dict[str, Any]:
        finding = item.finding
        return {
            "id": finding.id,
            "status": item.bucket or "pending",
            "title": finding.title,
            "severity": finding.severity,
            "file": finding.file,
            "staged_files": item.files,
            "staged_summary": item.staged_summary,
            "attempts": item.attempts(),
            "evidence": item.evidence,
            "new_severity": item.new_severity,
            "notes": item.notes,
        }

    def json_result(self) -> dict[str, Any]:
        return {
            "buckets": self.state.output().model_dump(mode="json"),
            "ignored": self.state.ignored,
            "run_dir": str(self.run_dir) if self.run_id else "",
            "dry_run": self.dry_run,
            "planned": self.planned,
        }

    def summary_lines(self) -> list[str]:
        state = self.state
        if self.dry_run:
            return ["fix-findings --dry-run: nothing was changed", *self.planned]
        if self.nothing_to_do:  # settled already by an earlier run
            return [self.nothing_to_do]
        output = state.output()
        ignored = ", ".join(map(str, state.ignored))
        lines = [
            f"fix-findings run {self.run_id}: {len(state.records)} finding(s) in scope, "
            f"{len(state.ignored)} ignored"
            + (f" (not confirmed P0/P1: {ignored})" if ignored else ""),
            _bucket("resolved", [str(i) for i in output.resolved]),
            _bucket("escalated", [str(e.id) for e in output.escalated]),
            _bucket("dropped", [str(d.id) for d in output.dropped]),
            _bucket("demoted", [f"{d.id} -> {d.new_severity}" for d in output.demoted]),
            "Fixes are staged, not committed: review them with `git diff --staged`.",
            f"Run record: {self.run_dir} (`fixloop runs show {self.run_id}`)",
        ]
        for record in state.records:
            if record.bucket == "escalated":
                lines += ["", escalation_text(record)]
                if record.files and not (record.staged_summary or "").startswith("nothing staged"):
                    lines.append(
                        f"WARNING: staged for finding {record.finding.id} but NOT verified to "
                        f"resolve it: {', '.join(record.files)} ({record.staged_summary}). Keep, "
                        "fix or unstage it before you commit."
                    )
            lines += [f"  note ({record.finding.id}): {note}" for note in record.notes]
        return lines


def _bucket(name: str, ids: list[str]) -> str:
    listed = f" ({', '.join(ids)})" if ids else ""
    return f"  {name + ':':<10} {len(ids)}{listed}"


__all__ = ["FixFindingsResult"]
