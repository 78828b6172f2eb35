"""The verifier's verdict on one finding, and the verdict → bucket table as data.

`judge` reads an agent outcome fail-closed: anything short of a validated ReviewOutput carrying a
verdict on *this* finding (same id) is `inconclusive`. `decide` is the document's table, with
the last round taking the Round 2 column; `decide_pre_gate` is the pre-gate's three rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from fixloop.agents.backend import AgentOutcome
from fixloop.schemas.findings import Finding, ReviewOutput, Severity
from fixloop.workflows.fix_findings.intake import IN_SCOPE_SEVERITIES

VerdictName = Literal["confirmed", "demoted", "rejected", "inconclusive"]


@dataclass(frozen=True)
class Judgement:
    verdict: VerdictName
    severity: Severity | None = None  # the new severity, for `demoted`
    evidence: str | None = None  # the verifier's evidence, or why the answer is inconclusive

    @property
    def conclusive(self) -> bool:
        return self.verdict != "inconclusive"


def judge(outcome: AgentOutcome, finding: Finding) -> Judgement:
    if not outcome.ok or not isinstance(outcome.output, ReviewOutput):
        return Judgement("inconclusive", evidence=f"verifier {outcome.reason}: {outcome.detail}")
    matching = [f for f in outcome.output.findings if str(f.id) == str(finding.id)]
    if len(matching) != 1:
        return Judgement(
            "inconclusive", evidence=f"verifier returned no single verdict on finding {finding.id}"
        )
    verdict = matching[0]
    if verdict.verdict is None:
        return Judgement("inconclusive", evidence=f"verifier left finding {finding.id} unjudged")
    severity = verdict.new_severity or verdict.severity
    return Judgement(verdict.verdict, severity, verdict.evidence)


class Next(StrEnum):
    RESOLVED = "resolved"
    DEMOTED = "demoted"
    ESCALATED = "escalated"
    DROPPED = "dropped"
    NEXT_ROUND = "next_round"
    FIX = "fix"  # after the pre-gate: go to Round 1


def _row(judgement: Judgement) -> str:
    if judgement.verdict != "demoted":
        return judgement.verdict
    in_scope = judgement.severity in IN_SCOPE_SEVERITIES
    return "demoted-in-scope" if in_scope else "demoted-out-of-scope"


# (row, is the last round) → what happens: the `decide` table of workflows/fix-findings.md.
ROUND_TABLE: dict[tuple[str, bool], Next] = {
    ("rejected", False): Next.RESOLVED,
    ("rejected", True): Next.RESOLVED,
    ("confirmed", False): Next.NEXT_ROUND,
    ("confirmed", True): Next.ESCALATED,
    ("demoted-in-scope", False): Next.NEXT_ROUND,
    ("demoted-in-scope", True): Next.ESCALATED,
    ("demoted-out-of-scope", False): Next.DEMOTED,
    ("demoted-out-of-scope", True): Next.DEMOTED,
    ("inconclusive", False): Next.NEXT_ROUND,
    ("inconclusive", True): Next.ESCALATED,
}

PRE_GATE_TABLE: dict[str, Next] = {
    "rejected": Next.DROPPED,
    "confirmed": Next.FIX,
    "demoted": Next.FIX,  # still real, whatever the new severity: the document proceeds to Round 1
    "inconclusive": Next.FIX,  # but as a failed attempt: the caller counts it
}


def decide(judgement: Judgement, *, last_round: bool) -> Next:
    return ROUND_TABLE[(_row(judgement), last_round)]


def decide_pre_gate(judgement: Judgement) -> Next:
    return PRE_GATE_TABLE[judgement.verdict]
