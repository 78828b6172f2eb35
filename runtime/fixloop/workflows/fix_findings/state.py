"""fix-findings' loop state: every variable the loop needs, saved after every change.

The run's `state.json` (`runs.state`) holds the in-scope findings and, per finding, what has
happened so far: the pre-gate verdict, each round's fix report, whether it was staged, the
verifier's verdict, and the bucket once decided. A killed run leaves the last complete state, and
`--resume` continues from it: decided findings are not replayed, a round whose fix was staged is
verified rather than fixed again.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fixloop.runs.state import RunState
from fixloop.schemas.findings import Finding, Severity
from fixloop.schemas.results import (
    DemotedFinding,
    DroppedFinding,
    EscalatedFinding,
    FixVerifyLoopOutput,
)


class FindingStatus(StrEnum):
    """A confirmed finding's status: running, then one of the four buckets."""

    PENDING = "pending"
    RUNNING = "running"
    RESOLVED = "resolved"
    ESCALATED = "escalated"
    DROPPED = "dropped"
    DEMOTED = "demoted"


# fixed: the fixer reported; staging: `git add` may have run; staged; verified: verdict recorded.
Phase = Literal["fixed", "staging", "staged", "verified"]
Verdict = Literal["confirmed", "demoted", "rejected", "inconclusive"]
Bucket = Literal["resolved", "escalated", "dropped", "demoted"]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoundRecord(_State):
    number: int
    phase: Phase
    summary: str  # the fixer's summary, or why the attempt failed before verification
    files_changed: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    severity: Severity | None = None
    evidence: str | None = None
    verifier_ran: bool = False
    # Before the fixer ran: its files' bytes (in `snapshot_dir`) and their index entries.
    snapshot_dir: str = ""
    snapshot: dict[str, str | None] = Field(default_factory=dict)
    index_before: dict[str, str] = Field(default_factory=dict)
    tree_before: str = ""  # the fingerprint taken before the last fixer call (`tree_guard`)
    diff: str = ""  # the staged diff the verifier saw, saved in the run folder (relative to it)


class FindingRecord(_State):
    finding: Finding
    scope: list[str]  # files the fixer may edit: the finding's file plus approved additions
    approved_files: list[str] = Field(default_factory=list)  # scope expansions the user approved
    pre_gate: Verdict | Literal["skipped"] | None = None
    pre_gate_evidence: str | None = None
    rounds: list[RoundRecord] = Field(default_factory=list)
    # Set while a fixer call runs: a run killed then left its edits unrecorded; resume undoes them.
    in_flight: RoundRecord | None = None
    failed_attempts: int = 0  # an inconclusive pre-gate counts here
    bucket: Bucket | None = None
    new_severity: Severity | None = None
    evidence: str | None = None
    staged_summary: str | None = None
    notes: list[str] = Field(default_factory=list)  # what the loop did besides fixing

    def attempts(self) -> list[str]:
        """One line per failed attempt, in order: an inconclusive pre-gate, then each round."""
        pre_gate = (
            [f"pre-gate: verifier inconclusive ({self.pre_gate_evidence})"]
            if self.pre_gate == "inconclusive"
            else []
        )
        return pre_gate + [f"R{r.number}: {r.summary}" for r in self.rounds]

    @property
    def files(self) -> list[str]:
        """Every file a round of this finding changed (what is staged for it)."""
        seen: dict[str, None] = {}
        for record in self.rounds:
            seen.update(dict.fromkeys(record.files_changed))
        return list(seen)


class FixFindingsState(RunState):
    workflow: Literal["fix-findings"] = "fix-findings"
    repo: str
    records: list[FindingRecord]
    ignored: list[int | str] = Field(default_factory=list)  # out of scope at intake
    # path → "mode blob" this run last staged: such content is the run's own, not the user's.
    staged_by_run: dict[str, str] = Field(default_factory=dict)

    def output(self) -> FixVerifyLoopOutput:
        """The four buckets, from the decided findings, in processing order."""
        envelope = FixVerifyLoopOutput()
        for record in self.records:
            finding_id = record.finding.id
            if record.bucket == "resolved":
                envelope.resolved.append(finding_id)
            elif record.bucket == "dropped":
                envelope.dropped.append(DroppedFinding(id=finding_id, reason=record.evidence or ""))
            elif record.bucket == "demoted" and record.new_severity in ("P2", "P3"):
                envelope.demoted.append(
                    DemotedFinding(
                        id=finding_id,
                        new_severity=record.new_severity,
                        evidence=record.evidence or "",
                    )
                )
            elif record.bucket == "escalated":
                envelope.escalated.append(
                    EscalatedFinding(
                        id=finding_id,
                        attempts=record.attempts(),
                        evidence=record.evidence,
                        staged_summary=record.staged_summary or "nothing staged",
                    )
                )
        return envelope
